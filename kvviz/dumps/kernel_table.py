"""The ``kernel_block_table`` key of a dump: the attention group's kernel-block table (vLLM v0.32.0+).

From v0.32.0 the V1 runner's persistent block table holds KV-manager block ids (vLLM
v1/worker/block_table.py); a backend that needs kernel blocks of ``kbs < block_size`` tokens reads
its attention group's own table, written at metadata build for every column of the rows passed in
(``num_reqs_padded`` rows, padded ones NULL): entry ``(i, c*r + j)`` is ``r * table[i, c] + j``
(v1/worker/utils.py ``AttentionGroup.map_to_kernel_block_table``). A dump carrying the key holds
that manager-id table in ``block_table`` / ``block_table_device`` (``block_size`` is the manager
block size, ``kernel_block_size`` the backend's) and the backend's table in ``kernel_block_table``.

The checker reads such a dump twice: every table check on the manager ids (slots are then
``manager block * block_size + offset``, as v0.32.0 computes them), the CSR checks on the kernel
blocks, and ``kernel-table`` compares the backend's table with the release's rule: v0.32.0+ the
mapping of every column (unused columns and padded rows read ``0, 1, .., r-1``); before, the table
expanded at append (entries past a row's count stay 0 where the manager entry is 0, padded rows
hold the release's fill).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from kvviz.core.geometry import Geometry
from kvviz.dumps.arrays import first_per_row
from kvviz.dumps.catalogue import Msg, more_clause
from kvviz.dumps.fields import check_table_shape, int_array
from kvviz.errors import BadInput

KEY = "kernel_block_table"
CSR_CHECKS = ("csr-indptr", "csr-indices", "csr-last-page-len")


def validate(m: dict, head: dict, shape, need: int) -> np.ndarray | None:
    """The key, when present: int32 [need .. R rows, W * r], r = block_size / kernel_block_size > 1,
    every entry -1 (a v0.12-v0.19 padded row) or a kernel block id below num_blocks * r."""
    v = m.get(KEY)
    if v is None:
        return None
    bs, kbs = head["block_size"], head["kernel_block_size"]
    if kbs is None or kbs == bs:
        raise BadInput(f"{KEY!r} needs a 'kernel_block_size' smaller than block_size ({bs}): without "
                       "split blocks the backend reads block_table itself")
    if head["runner"] == "v2" or head["group_kind"] == "state":
        raise BadInput(f"{KEY!r} is read in a V1 attention-group dump only")
    kbt = int_array(KEY, v, 2, np.int32)
    check_table_shape(KEY, kbt.shape)
    R, W = shape
    geo = Geometry(bs, kbs)
    r, wide = geo.blocks_per_kv_block, geo.kernel_block_count(W)
    if kbt.shape[1] != wide or not need <= kbt.shape[0] <= R:
        raise BadInput(f"{KEY!r} has shape {tuple(kbt.shape)}; it must be {wide} wide ({W} manager "
                       f"blocks x {r} kernel blocks) with {need} to {R} rows like block_table")
    hi = head["num_blocks"] * r
    if kbt.size and (int(kbt.min()) < -1 or int(kbt.max()) >= hi):
        bad = np.flatnonzero((kbt.reshape(-1) < -1) | (kbt.reshape(-1) >= hi))[0]
        i, c = divmod(int(bad), kbt.shape[1])
        raise BadInput(f"{KEY}[{i}, {c}] = {int(kbt[i, c])} is outside [-1, {hi}) (num_blocks x {r} "
                       "kernel blocks)")
    return kbt


def views(d):
    """(the dump read in manager blocks: no kernel split, no CSR; the dump read in kernel blocks for
    the CSR checks: block_table expanded r*b+j, counts x r)."""
    r = d.blocks_per_kv_block
    none = dict.fromkeys(("paged_kv_indptr", "paged_kv_indices", "paged_kv_last_page_len"))
    manager = replace(d, kernel_block_size=None, **none)    # keeps kernel_block_table: kernel-table reads it
    kernel = replace(d, block_table=expand(d.block_table, r), block_table_device=None, kernel_block_table=None,
                     num_blocks_per_row=(d.num_blocks_per_row.astype(np.int64) * r).astype(np.int32))
    return manager, kernel


def expand(table, r: int) -> np.ndarray:
    """Every entry b of a manager-id table as the kernel blocks r*b .. r*b+r-1."""
    t = np.asarray(table, dtype=np.int64)
    return (t[:, :, None] * r + np.arange(r)).reshape(t.shape[0], -1).astype(np.int32)


def expected(d, profile) -> tuple[np.ndarray, np.ndarray]:
    """(the backend's table the release writes for rows [0, num_reqs_padded), which rows to check);
    r is the kernel table's width over block_table's (the dump was validated so)."""
    r = d.kernel_block_table.shape[1] // d.width
    n, pad = d.num_reqs, d.padded_reqs
    src = d.block_table_device if d.block_table_device is not None else d.block_table
    mgr = src[:pad].astype(np.int64).copy()
    rows = np.arange(pad)
    if profile.kernel_block_table_per_group:
        mgr[n:] = 0                       # gpu_model_runner fills the padded rows with NULL, then maps
        return expand(mgr, r), rows
    # before v0.32.0: the persistent table itself held kernel ids, expanded at append
    cnt = np.zeros(pad, np.int64)
    cnt[:n] = d.num_blocks_per_row[:n]
    used = (np.arange(mgr.shape[1])[None, :] < cnt[:, None]) | (mgr != 0)
    exp = np.where(np.repeat(used, r, axis=1), expand(mgr, r), 0)
    fill = profile.padded_row_fill
    if fill is None:                      # v0.11.x: padded rows never written
        return exp[:n], rows[:n]
    exp[n:] = fill
    return exp, rows


def kernel_table(run) -> None:
    """kernel-table: the backend's kernel-block table is not what the release writes."""
    d = run.d
    if d.kernel_block_table is None:
        return
    exp, rows = expected(d, run.profile)
    got = d.kernel_block_table[: len(rows)]
    bad_r, bad_c = np.nonzero(got != exp)
    if not bad_r.size:
        return
    rr, cc, kk = first_per_row(bad_r, bad_c)
    mapped = run.profile.kernel_block_table_per_group
    r = d.kernel_block_table.shape[1] // d.width

    def msg(i, c, k):
        key = "kernel-table.mapped" if mapped else "kernel-table.expanded"
        return Msg(key, {"r": i, "c": c, "got": int(got[i, c]), "exp": int(exp[i, c]), "k": r, "last": r - 1,
                         "profile": run.profile.name, "more": more_clause(k)})
    run.add("kernel-table", rr, cc, kk, msg)
