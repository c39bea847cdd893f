"""What the attention backend is handed, release by release: the kernel-block table and the
lengths FlashInfer's page index (CSR) is built from.

* ``kernel_block_table``: from v0.32.0 the persistent block tables hold KV-manager block ids;
  a backend that needs kernel blocks of ``kbs < bs`` tokens gets its attention group's own table,
  written at metadata build for every column of the rows passed in: entry ``(i, c*r + j)`` is
  ``r * table[i, c] + j`` (r = bs // kbs). A manager entry 0 (unused column, padded row) therefore
  reads ``0, 1, .., r-1``. (vLLM v1/worker/utils.py ``AttentionGroup.map_to_kernel_block_table``.)
* ``csr_lengths``: FlashInfer under DCP. Up to v0.29.x the page counts come from the global
  sequence lengths, and ``last_page_len`` from global lengths too, with prefill rows cut to their
  context (seq_len - query_len: the builder shortens those rows in place, and the array the last
  page is read from is a view of them). From v0.30.0 both come from the rank-local lengths of those
  same numbers. (vLLM v1/attention/backends/flashinfer.py ``FlashInferMetadataBuilder.build``.)
"""
from __future__ import annotations

import numpy as np

from kvviz.core.geometry import Geometry


def kernel_block_table(manager_table, blocks_per_kv_block: int) -> np.ndarray:
    """The attention group's kernel-block table for the rows of ``manager_table`` (every column)."""
    t = np.asarray(manager_table, dtype=np.int64)
    r = int(blocks_per_kv_block)
    out = t[:, :, None] * r + np.arange(r, dtype=np.int64)[None, None, :]
    return out.reshape(t.shape[0], t.shape[1] * r).astype(np.int32)


def num_decodes(query_lens) -> int:
    """Rows counted as decodes by ``split_decodes_and_prefills`` (threshold 1, uniform decodes:
    FlashInfer's non-XQA setting) on a decode-first batch: the leading rows before the first row
    whose query length differs from the first row's; none when the first row is a prefill."""
    q = np.asarray(query_lens, dtype=np.int64)
    if len(q) == 0 or q.max() <= 1:
        return len(q)
    if q[0] > 1:
        return 0
    if np.all((q == q[0]) | (q == 0)):
        return len(q)
    return int(np.argmax(q != q[0]))


def csr_lengths(seq_lens, query_lens, geo: Geometry, *, local: bool) -> tuple[np.ndarray, np.ndarray]:
    """(lengths the page counts come from, lengths ``last_page_len`` comes from) for FlashInfer's
    CSR on DCP rank ``geo.dcp_rank``; ``local``: the v0.30.0 rule (both rank-local). Without DCP
    both are the sequence lengths."""
    seq = np.asarray(seq_lens, dtype=np.int64)
    if geo.dcp_world_size == 1:
        return seq.astype(np.int32), seq.astype(np.int32)
    q = np.zeros(len(seq), dtype=np.int64)
    q[: len(query_lens)] = np.asarray(query_lens, dtype=np.int64)
    d = num_decodes(q)
    cut = seq.copy()
    cut[d:] = seq[d:] - q[d:]                       # prefill rows: context only
    if local:
        loc = geo.local_seq_lens(cut)
        return loc, loc
    return seq.astype(np.int32), cut.astype(np.int32)


def csr_overruns(page_lens, block_table, page_size: int) -> bool:
    """Whether some request's page count reads past the end of the table given (pages beyond its
    row are read from the rows after it, as vLLM's copy kernel does: it has no width mask)."""
    bt = np.asarray(block_table)
    pages = Geometry(page_size).page_count(page_lens).astype(np.int64)
    ends = np.arange(len(pages), dtype=np.int64) * bt.shape[1] + pages
    return bool(len(pages)) and int(ends.max()) > bt.size
