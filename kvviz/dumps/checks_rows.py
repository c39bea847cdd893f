"""The checks of each live row's counted prefix: the device mirror against the CPU table, block ids
inside the pool, no null block, no block twice, and enough blocks for the row's tokens."""
from __future__ import annotations

import numpy as np

from kvviz.dumps.catalogue import Msg, more_clause
from kvviz.dumps.context import CheckRun, clears_vacated_rows


def mirror_stale(run: CheckRun) -> None:
    """mirror-stale: the device copy of a live row differs from the CPU table in its counted prefix."""
    dev = run.d.block_table_device
    if dev is None:
        return
    dv = run.prefix.take(dev)
    bad = np.flatnonzero(run.vals != dv)
    if not bad.size:
        return
    cpu_v, dev_v = run.vals, dv

    def msg(r, c, k):
        i = int(run.prefix.off[r] + c)
        return Msg("mirror-stale", {"r": r, "c": c, "dev": int(dev_v[i]), "cpu": int(cpu_v[i]),
                                    "more": more_clause(k)})
    run.add_flat("mirror-stale", bad, msg)


def block_out_of_range(run: CheckRun) -> None:
    """block-out-of-range: a counted entry, then a free-list entry, that is no block of the pool."""
    in_range = run.ranges.in_range
    bad = np.flatnonzero(~in_range) if in_range is not None else np.zeros(0, np.int64)
    if bad.size:
        v = run.vals
        run.add_flat("block-out-of-range", bad, lambda r, c, k: Msg("block-out-of-range.row", {
            "r": r, "c": c, "b": int(v[run.prefix.off[r] + c]), "last": run.kernel_ids - 1,
            "more": more_clause(k)}))
    if run.d.free_block_ids is None:
        return
    f = run.d.free_block_ids.astype(np.int64)
    last = run.d.num_blocks - 1
    oor = np.flatnonzero((f < 0) | (f > last))
    for i in oor[: run.limit].tolist():
        run.add_one("block-out-of-range", i, Msg("block-out-of-range.free", {"i": i, "b": int(f[i]),
                                                                             "last": last}))
    run.truncated("block-out-of-range", oor.size, "free_entries")


def null_in_live_row(run: CheckRun) -> None:
    """null-in-live-row: the null block among a live row's counted blocks (no sliding window)."""
    r = run.ranges
    if run.d.sliding_window is not None or r.lowest >= run.bpk:
        return
    bad = np.flatnonzero(r.ids < run.bpk)
    # declared states that put null blocks in live rows: chunked-local attention's blocks before the
    # current chunk, Mamba align mode's state blocks but the last (freed, replaced by the null block)
    bad = bad[~run.in_skipped(bad)]
    if bad.size:
        run.add_flat("null-in-live-row", bad, lambda r, c, k: Msg("null-in-live-row", {
            "r": r, "c": c, "n": int(run.cnt[r]), "more": more_clause(k)}))


def duplicate_block_in_row(run: CheckRun) -> None:
    """duplicate-block-in-row: a kernel block id twice in one row's held entries. With a sliding
    window but no seq_lens the ids that fell out of the window cannot be told apart (a freed one may
    come back), so nothing is said."""
    per_entry = run.kernel_counts.per_entry
    if per_entry is None or not run.held.window_known:
        return
    ids, pos_of = run.held.ids, run.held.pos_of
    multi = np.flatnonzero(per_entry >= 2)
    rows, cols = run.prefix.locate(pos_of(multi))
    v = ids[multi]
    order = np.lexsort((cols, v, rows))
    r_s, v_s, c_s = rows[order], v[order], cols[order]
    same = np.concatenate(([False], (r_s[1:] == r_s[:-1]) & (v_s[1:] == v_s[:-1])))
    dup = np.flatnonzero(same)
    if not dup.size:
        return
    rr, idx = np.unique(r_s[dup], return_index=True)
    counts = np.diff(np.append(idx, dup.size))
    at = dup[idx]
    first_c = {}
    for r, i in zip(rr[: run.limit].tolist(), at[: run.limit].tolist()):
        j = i
        while j > 0 and r_s[j - 1] == r_s[i] and v_s[j - 1] == v_s[i]:
            j -= 1
        first_c[r] = (int(v_s[i]), int(c_s[j]), int(c_s[i]))
    run.add("duplicate-block-in-row", rr, c_s[at], counts, lambda r, c, k: Msg(
        "duplicate-block-in-row", {"r": r, "b": first_c[r][0], "c1": first_c[r][1], "c2": first_c[r][2],
                                   "more": more_clause(k, "repeats")}))


def too_few_blocks(run: CheckRun) -> None:
    """too-few-blocks: a row counts fewer blocks than its tokens need (a state group: one state
    block per request that has tokens, whatever its length)."""
    if run.seq is None:
        return
    if run.state:
        need = run.geo.kernel_block_count((run.seq > 0).astype(np.int64))
        rows = np.flatnonzero(run.cnt < need)
        run.add("too-few-blocks", rows, run.cnt[rows], np.ones(rows.size), lambda r, c, k: Msg(
            "too-few-blocks.state", {"r": r, "c": c, "s": int(run.seq[r])}))
        return
    blocks = run.geo.blocks_for(run.seq)
    need = run.geo.kernel_block_count(blocks)
    rows = np.flatnonzero(run.cnt < need)
    if rows.size:
        run.add("too-few-blocks", rows, run.cnt[rows], np.ones(rows.size), lambda r, c, k: Msg(
            "too-few-blocks", {"r": r, "c": c, "s": int(run.seq[r]), "span": run.span,
                               "need": int(blocks[r]),
                               "kernel": Msg("too-few-blocks.kernel", {"n": int(need[r])})
                               if run.bpk > 1 else ""}))


def stale_tail(run: CheckRun) -> None:
    """stale-tail: an entry of the CPU table past its row's count that is not the null block, under a
    release that zeroes what a row stops counting (clear_row #37728, v0.19.0; move_row's source
    #49757, v0.27.0): a row reused or moved kept its old occupant's ids (the vllm#39589 mechanism)."""
    d = run.d
    if d.is_v2 or run.state or not clears_vacated_rows(run.profile):
        return
    counts = d.num_blocks_per_row.astype(np.int64)
    rows = min(d.block_table.shape[0], counts.shape[0])
    past = np.arange(run.W)[None, :] >= counts[:rows, None]
    past[run.n: d.padded_reqs] = False           # padded rows: pad-row's (they must be all 0)
    bad_r, bad_c = np.nonzero(past & (d.block_table[:rows] != 0))
    if not bad_r.size:
        return
    first = np.r_[True, bad_r[1:] != bad_r[:-1]]
    r_first, c_first = bad_r[first], bad_c[first]
    k = np.diff(np.r_[np.flatnonzero(first), bad_r.size])
    run.add("stale-tail", r_first, c_first, k, lambda r, c, n: Msg("stale-tail", {
        "r": r, "c": c, "b": int(d.block_table[r, c]), "n": int(counts[r]), "more": more_clause(n)}))
