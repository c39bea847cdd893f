"""One step's attention inputs, built from per-request block ids and lengths.

Everything here is vectorised numpy; ``kvviz.reference`` is the loop version it
is tested against, and the Triton kernels are tested against both.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID
from kvviz.core.geometry import MAX_BLOCK_SIZE, MAX_DCP_WORLD, Geometry
from kvviz.core.kernel_tables import csr_lengths, csr_overruns, kernel_block_table
from kvviz.core.scenario import check_keys
from kvviz.errors import BadInput


@dataclass
class StepInputs:
    block_size: int               # manager block size
    kernel_block_size: int        # what the table entries and slots are counted in
    num_reqs: int
    num_reqs_padded: int
    num_tokens: int
    num_tokens_padded: int
    query_start_loc: np.ndarray   # int32 [num_reqs_padded + 1], padded with its last value
    positions: np.ndarray         # int64 [num_tokens_padded], padded with 0
    seq_lens: np.ndarray          # int32 [num_reqs_padded], padded with 0
    block_table: np.ndarray       # int32 [num_reqs_padded, width]: what the backend reads (kernel blocks)
    slot_mapping: np.ndarray | None  # int64 [num_tokens_padded], -1 tail; None for state groups
    dcp_world_size: int = 1
    dcp_rank: int = 0
    interleave: int = 1
    paged_kv_indptr: np.ndarray | None = None
    paged_kv_indices: np.ndarray | None = None
    paged_kv_last_page_len: np.ndarray | None = None
    # v0.32.0+ with kernel blocks smaller than manager blocks: the persistent table (KV-manager ids,
    # padded rows 0); ``block_table`` is then the attention group's kernel-block table mapped from it
    manager_block_table: np.ndarray | None = None
    csr_page_lens: np.ndarray | None = None   # lengths the CSR's page counts come from (None: seq_lens)
    csr_last_lens: np.ndarray | None = None   # lengths its last_page_len comes from (None: seq_lens)

    @property
    def geometry(self) -> Geometry:
        """The geometry these inputs were built with (block sizes and DCP layout)."""
        return Geometry(self.block_size, self.kernel_block_size, self.dcp_world_size, self.dcp_rank,
                        self.interleave)

    def to_json(self, backend: str) -> dict:
        out = {
            "backend": backend,
            "query_start_loc": self.query_start_loc.tolist(),
            "positions": self.positions.tolist(),
            "seq_lens": self.seq_lens.tolist(),
            "slot_mapping": None if self.slot_mapping is None else self.slot_mapping.tolist(),
            "block_table": (self.block_table if self.manager_block_table is None
                            else self.manager_block_table).tolist(),
        }
        if self.manager_block_table is not None:
            out["kernel_block_table"] = self.block_table.tolist()
        if self.paged_kv_indptr is not None:
            out["paged_kv_indptr"] = self.paged_kv_indptr.tolist()
            out["paged_kv_indices"] = self.paged_kv_indices.tolist()
            out["paged_kv_last_page_len"] = self.paged_kv_last_page_len.tolist()
        return out


def compute_slot_mapping(query_start_loc, positions, block_table, *, num_reqs: int,
                         num_tokens_padded: int, block_size: int | None = None,
                         kernel_block_size: int | None = None, dcp_world_size: int = 1, dcp_rank: int = 0,
                         interleave: int = 1, geometry: Geometry | None = None) -> np.ndarray:
    """Vectorised slot mapping (the kernel's arithmetic, one numpy pass). ``geometry``, or the
    loose block sizes and DCP numbers it stands for, says where each position lives."""
    geo = geometry or Geometry(block_size, kernel_block_size, dcp_world_size, dcp_rank, interleave)
    qsl = np.asarray(query_start_loc[: num_reqs + 1], dtype=np.int64)
    num_tokens = int(qsl[-1]) if num_reqs else 0
    out = np.full(num_tokens_padded, PAD_SLOT_ID, dtype=np.int64)
    if num_tokens == 0:
        return out
    rows = np.repeat(np.arange(num_reqs), np.diff(qsl))
    out[:num_tokens] = geo.slots(positions[:num_tokens], rows, block_table)
    return out


def compute_csr(block_table, seq_lens, page_size: int, *, empty_last_page_len_is_zero: bool = True,
                last_page_lens=None):
    """FlashInfer's paged_kv_indptr / indices / last_page_len, vectorised (a page is a kernel
    block of ``page_size`` tokens). Page counts come from ``seq_lens``, last_page_len from
    ``last_page_lens`` (default: the same). Row r's pages are read row-major from the start of
    row r, like vLLM's ``_copy_page_indices_kernel`` (no width mask): a page count past the row's
    width reads the rows after it (global page counts under DCP before v0.30.0)."""
    pages_of = Geometry(page_size)
    seq = np.asarray(seq_lens, dtype=np.int64)
    pages = pages_of.page_count(seq)
    indptr = np.zeros(len(seq) + 1, dtype=np.int32)
    np.cumsum(pages, out=indptr[1:])
    bt = np.asarray(block_table)
    total = int(indptr[-1])
    flat_at = np.repeat(np.arange(len(seq), dtype=np.int64) * bt.shape[1] - indptr[:-1], pages)
    at = flat_at + np.arange(total, dtype=np.int64)
    if total and int(at.max()) >= bt.size:
        raise ValueError("a request's pages read past the end of the block table")
    indices = bt.reshape(-1)[at].astype(np.int32)
    lens = seq if last_page_lens is None else np.asarray(last_page_lens, dtype=np.int64)
    last = pages_of.last_page_len(lens, empty_is_zero=empty_last_page_len_is_zero)
    return indptr, indices, last.astype(np.int32)


def dcp_local_seq_lens(seq_lens, *, block_size: int, dcp_world_size: int, dcp_rank: int,
                       interleave: int = 1) -> np.ndarray:
    """How many of each request's tokens this DCP rank stores."""
    return Geometry(block_size, None, dcp_world_size, dcp_rank, interleave).local_seq_lens(seq_lens)


# --- the `compute` command's batch format -------------------------------------------

MAX_BATCH_REQS = 1 << 16
MAX_BATCH_TOKENS = 1 << 22
MAX_BLOCKS_PER_REQ = 1 << 20
MAX_TABLE_ENTRIES = 1 << 26  # 256 MiB of int32


def _int(spec: dict, key: str, default=None, *, lo: int | None = None, hi: int | None = None) -> int:
    v = spec.get(key, default)
    if v is None:
        raise BadInput(f"missing required key {key!r}")
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadInput(f"{key!r} must be an integer, got {type(v).__name__}")
    if lo is not None and v < lo:
        raise BadInput(f"{key!r} must be >= {lo}, got {v}")
    if hi is not None and v > hi:
        raise BadInput(f"{key!r} must be <= {hi}, got {v}")
    return v


def build_step_from_batch(spec: dict, *, empty_last_page_len_is_zero: bool = True,
                          width_alignment: str = "lcm", max_table_entries: int = MAX_TABLE_ENTRIES,
                          kernel_block_table_per_group: bool = False, csr_under_dcp: bool = False,
                          csr_dcp_local_lengths: bool = False) -> StepInputs:
    """Validate a BATCH dict (the `compute` command's input) and build its step inputs.

    BATCH: {"block_size": B, "requests": [{"block_ids": [...], "seq_len": S, "query_len": Q?}],
            "num_reqs_padded": R?, "num_tokens_padded": T?, "dcp_world_size": W?, "dcp_rank": r?,
            "cp_kv_cache_interleave_size": I?, "kernel_block_size": K?}
    Request r is row r; its positions are S-Q .. S-1. Unknown keys (top level or per request)
    are refused, naming the closest known key, so a typo never falls back to a default. A table of
    more than ``max_table_entries`` entries is refused before it is allocated.

    ``kernel_block_table_per_group`` (v0.32.0+): the persistent table holds KV-manager ids and the
    backend reads the kernel-block table mapped from it (``StepInputs.manager_block_table``);
    ``csr_under_dcp``: build FlashInfer's CSR with DCP > 1 too, from global lengths or, with
    ``csr_dcp_local_lengths`` (v0.30.0+), rank-local ones (``kvviz.core.kernel_tables``).
    """
    _refuse_other_inputs(spec)
    geo = _batch_geometry(spec)
    rows, seq_lens, qlens = _batch_requests(spec.get("requests"), geo)
    num_reqs, num_tokens = len(rows), sum(qlens)
    if num_tokens > MAX_BATCH_TOKENS:
        raise BadInput(f"too many tokens in one step ({num_tokens} > {MAX_BATCH_TOKENS})")
    r_pad = _int(spec, "num_reqs_padded", num_reqs, lo=num_reqs, hi=MAX_BATCH_REQS)
    t_pad = _int(spec, "num_tokens_padded", num_tokens, lo=num_tokens, hi=MAX_BATCH_TOKENS)
    manager_ids = kernel_block_table_per_group and geo.blocks_per_kv_block > 1
    bt = _batch_block_table(rows, r_pad, geo, width_alignment, max_table_entries, manager_ids=manager_ids)
    return build_step(bt, seq_lens, qlens, geometry=geo, num_reqs_padded=r_pad, num_tokens_padded=t_pad,
                      empty_last_page_len_is_zero=empty_last_page_len_is_zero,
                      kernel_block_table_per_group=kernel_block_table_per_group, csr_under_dcp=csr_under_dcp,
                      csr_dcp_local_lengths=csr_dcp_local_lengths)


def _refuse_other_inputs(spec) -> None:
    """A batch is an object with known keys only; a table dump or a scenario handed over as a
    batch is named, with the command that reads it."""
    expected = "expected a `compute` batch (an object with 'block_size' and 'requests')"
    if not isinstance(spec, dict):
        raise BadInput("the batch must be a JSON object")
    reqs = spec.get("requests")
    if "kvviz_dump_version" in spec or "block_table" in spec:
        raise BadInput(f"{expected}, but this is a table dump; read it with `kvviz check` or `kvviz diff`")
    if "config" in spec or "actions" in spec or (isinstance(reqs, list) and any(
            isinstance(r, dict) and ("prompt" in r or "prompt_len" in r) for r in reqs)):
        raise BadInput(f"{expected}, but this is a scenario; replay it with `kvviz run`")
    check_keys(spec, ("block_size", "requests", "num_reqs_padded", "num_tokens_padded", "dcp_world_size",
                      "dcp_rank", "cp_kv_cache_interleave_size", "kernel_block_size"), "batch",
               hints={"profile": "the profile is chosen with `kvviz compute --profile P`"})


def _batch_geometry(spec: dict) -> Geometry:
    """The batch's block sizes and DCP layout. Keys are read in the order a user fixes them, so
    the first problem is the one named; Geometry refuses the combinations that do not fit."""
    bs = _int(spec, "block_size", lo=1, hi=MAX_BLOCK_SIZE)
    geo = Geometry(bs, _int(spec, "kernel_block_size", bs, lo=1, hi=bs))
    world = _int(spec, "dcp_world_size", 1, lo=1, hi=MAX_DCP_WORLD)
    geo = replace(geo, dcp_world_size=world, dcp_rank=_int(spec, "dcp_rank", 0, lo=0))
    return replace(geo, interleave=_int(spec, "cp_kv_cache_interleave_size", 1, lo=1))


def _batch_requests(reqs, geo: Geometry) -> tuple[list[list[int]], list[int], list[int]]:
    """Each request's (block ids, seq_len, query_len), validated; row r is request r."""
    if not isinstance(reqs, list):
        raise BadInput("'requests' must be a list")
    if len(reqs) > MAX_BATCH_REQS:
        raise BadInput(f"too many requests ({len(reqs)} > {MAX_BATCH_REQS})")
    rows, seq_lens, qlens = [], [], []
    for i, r in enumerate(reqs):
        ids, s, q = _batch_request(i, r, geo)
        rows.append(ids)
        seq_lens.append(s)
        qlens.append(q)
    return rows, seq_lens, qlens


def _batch_request(i: int, r, geo: Geometry) -> tuple[list[int], int, int]:
    """Request ``i``: its block ids must be able to hold its sequence (every DCP rank's share)."""
    if not isinstance(r, dict):
        raise BadInput(f"request {i} must be an object")
    check_keys(r, ("block_ids", "seq_len", "query_len"), f"request {i}")
    ids = r.get("block_ids")
    if not isinstance(ids, list) or not all(isinstance(b, int) and not isinstance(b, bool) for b in ids):
        raise BadInput(f"request {i}: 'block_ids' must be a list of integers")
    if len(ids) > MAX_BLOCKS_PER_REQ:
        raise BadInput(f"request {i}: too many block ids ({len(ids)})")
    if any(b < 0 or b >= 2**31 for b in ids):
        raise BadInput(f"request {i}: block ids must be in [0, 2^31)")
    _refuse_impossible_row(i, ids)
    s = _int(r, "seq_len", lo=0, hi=MAX_BATCH_TOKENS * 64)
    q = _int(r, "query_len", 1, lo=0)
    if q > s:
        raise BadInput(f"request {i}: query_len {q} exceeds seq_len {s}")
    if geo.tokens_held(len(ids)) < s:
        world = geo.dcp_world_size
        raise BadInput(f"request {i}: {len(ids)} block(s) of {geo.block_size} tokens"
                       + (f" x {world} DCP ranks" if world > 1 else "")
                       + f" cannot hold seq_len {s}")
    return ids, s, q


def _refuse_impossible_row(i: int, ids: list[int]) -> None:
    """A row vLLM never builds: block 0 is the null block (the pool keeps it out of the free queue for
    good, so no request ever holds it), and a request's row never names one block twice (each of
    its positions has its own slot). Two *rows* may share a block: prefix caching does that."""
    if NULL_BLOCK_ID in ids:
        raise BadInput(f"request {i}: block_ids column {ids.index(NULL_BLOCK_ID)} is block 0, the null block "
                       "vLLM reserves and never gives to a request")
    seen: dict[int, int] = {}
    for col, b in enumerate(ids):
        if b in seen:
            raise BadInput(f"request {i}: block {b} is in block_ids twice (columns {seen[b]} and {col}); a "
                           "request's row never repeats a block")
        seen[b] = col


def _batch_block_table(rows: list[list[int]], r_pad: int, geo: Geometry, alignment: str,
                       max_entries: int = MAX_TABLE_ENTRIES, *, manager_ids: bool = False) -> np.ndarray:
    """The padded block table: row i holds request i's kernel blocks (``manager_ids``: its manager
    block ids, the aligned manager width), everything else NULL. The kernel-block width counts
    against ``max_entries`` either way (the backend's table has that many)."""
    max_blocks = max((len(x) for x in rows), default=1) or 1
    width = geo.table_width(max_blocks, alignment)
    if r_pad * width > max_entries:
        raise BadInput(f"the block table would be {r_pad} x {width} entries; the limit is "
                       f"{max_entries} entries")
    if manager_ids:
        width //= geo.blocks_per_kv_block
    bt = np.full((r_pad, width), NULL_BLOCK_ID, dtype=np.int32)
    for i, ids in enumerate(rows):
        k = ids if manager_ids else geo.kernel_blocks(ids)
        bt[i, : len(k)] = k
    return bt


def build_step(block_table, seq_lens, query_lens, *, geometry: Geometry | None = None,
               block_size: int | None = None, kernel_block_size: int | None = None,
               num_reqs_padded: int | None = None, num_tokens_padded: int | None = None,
               dcp_world_size: int = 1, dcp_rank: int = 0, interleave: int = 1,
               has_slot_mapping: bool = True, empty_last_page_len_is_zero: bool = True,
               padded_row_fill: int | None = NULL_BLOCK_ID, padded_last_page_len_one: bool = False,
               kernel_block_table_per_group: bool = False, csr_under_dcp: bool = False,
               csr_dcp_local_lengths: bool = False) -> StepInputs:
    """Step inputs from a device block-table view (rows [0, num_reqs) real) and lengths.

    Padded rows [num_reqs, num_reqs_padded) are filled with ``padded_row_fill`` (None: left as the
    view has them); ``padded_last_page_len_one``: FlashInfer's padded decode rows carry
    last_page_len 1 (vLLM v0.10.1 to v0.11.x).

    ``geometry`` says how positions become slots; the loose ``block_size``, ``kernel_block_size``
    and DCP numbers are a shorthand for it.

    ``kernel_block_table_per_group`` (vLLM v0.32.0+, v1/worker/utils.py
    ``AttentionGroup.map_to_kernel_block_table``): the view holds KV-manager ids; slots are
    ``manager block * block_size + local offset`` and, with kernel blocks smaller than manager
    blocks, the backend's table (``block_table``) is ``r*b + j`` for every column of rows
    [0, num_reqs_padded), the view kept as ``manager_block_table``. ``csr_under_dcp``: the CSR is
    built with DCP > 1 too (``kvviz.core.kernel_tables.csr_lengths``; omitted when a page count
    would read past the table given)."""
    geo = geometry or Geometry(block_size, kernel_block_size or None, dcp_world_size, dcp_rank, interleave)
    num_reqs = len(seq_lens)
    r_pad = num_reqs if num_reqs_padded is None else num_reqs_padded
    q = np.asarray(query_lens, dtype=np.int64)
    s = np.asarray(seq_lens, dtype=np.int64)
    num_tokens = int(q.sum())
    t_pad = num_tokens if num_tokens_padded is None else num_tokens_padded
    qsl = np.zeros(r_pad + 1, dtype=np.int32)
    np.cumsum(q, out=qsl[1 : num_reqs + 1])
    qsl[num_reqs + 1 :] = qsl[num_reqs]
    positions = np.zeros(t_pad, dtype=np.int64)
    if num_tokens:
        starts = np.repeat(s - q, q)
        within = np.arange(num_tokens) - np.repeat(qsl[:num_reqs].astype(np.int64), q)
        positions[:num_tokens] = starts + within
    seq_padded = np.zeros(r_pad, dtype=np.int32)
    seq_padded[:num_reqs] = s
    bt = np.array(block_table[:r_pad], dtype=np.int32, copy=True)
    if padded_row_fill is not None:
        bt[num_reqs:] = padded_row_fill
    slots = None
    manager_bt = None
    if kernel_block_table_per_group and has_slot_mapping:
        # the v0.32.0 arithmetic: manager ids, manager block size
        slots = compute_slot_mapping(qsl, positions, bt, num_reqs=num_reqs, num_tokens_padded=t_pad,
                                     geometry=replace(geo, kernel_block_size=geo.block_size))
        if geo.blocks_per_kv_block > 1:
            manager_bt, bt = bt, kernel_block_table(bt, geo.blocks_per_kv_block)
    elif has_slot_mapping:
        slots = compute_slot_mapping(qsl, positions, bt, num_reqs=num_reqs, num_tokens_padded=t_pad,
                                     geometry=geo)
    step = StepInputs(block_size=geo.block_size, kernel_block_size=geo.kernel_block_size, num_reqs=num_reqs,
                      num_reqs_padded=r_pad, num_tokens=num_tokens, num_tokens_padded=t_pad,
                      query_start_loc=qsl, positions=positions, seq_lens=seq_padded,
                      block_table=bt, slot_mapping=slots, dcp_world_size=geo.dcp_world_size,
                      dcp_rank=geo.dcp_rank, interleave=geo.interleave, manager_block_table=manager_bt)
    if has_slot_mapping and (geo.dcp_world_size == 1 or csr_under_dcp):
        _add_csr(step, q, empty_last_page_len_is_zero, csr_dcp_local_lengths, padded_last_page_len_one)
    return step


def _add_csr(step: StepInputs, query_lens, empty_is_zero: bool, local: bool, padded_one: bool) -> None:
    """FlashInfer's CSR over the step's (kernel-block) table; left out when a page count would read
    past the end of the table given (global page counts under DCP before v0.30.0)."""
    geo = step.geometry
    pages, last = csr_lengths(step.seq_lens, query_lens, geo, local=local)
    if csr_overruns(pages, step.block_table, geo.kernel_block_size):
        return
    if geo.dcp_world_size > 1:
        step.csr_page_lens, step.csr_last_lens = pages, last
    (step.paged_kv_indptr, step.paged_kv_indices,
     step.paged_kv_last_page_len) = compute_csr(step.block_table, pages, geo.kernel_block_size,
                                                empty_last_page_len_is_zero=empty_is_zero, last_page_lens=last)
    if padded_one:
        step.paged_kv_last_page_len[step.num_reqs:] = 1
