"""The block-pool checks: freed blocks still in use, ref counts against the holders, shared
partially filled blocks (copy-on-write), and the free queue."""
from __future__ import annotations

import numpy as np

from kvviz.constants import NULL_BLOCK_ID
from kvviz.dumps.arrays import Counts, first_per_row, isin_ids
from kvviz.dumps.catalogue import Msg, more_clause, plural_clause
from kvviz.dumps.context import CheckRun


def _freed_positions(run: CheckRun) -> np.ndarray | None:
    """Indices into the held entries whose block is on the free list or has ref count 0."""
    d, holders, mids = run.d, run.holders, run.held.manager_ids
    N = d.num_blocks
    free = None
    if d.free_block_ids is not None:
        f = d.free_block_ids.astype(np.int64)
        free = f[(f >= 0) & (f < N)]
    if holders.dense is not None:   # per block: held and (free or unreferenced)
        bad = np.zeros(N, dtype=bool)
        if free is not None and free.size:
            bad[free] = True
        if d.ref_cnt is not None:
            bad |= d.ref_cnt == 0
        bad &= holders.dense.astype(bool, copy=False)
        return np.flatnonzero(bad[mids]) if bad.any() else None
    uniq = holders.uniq
    bad = np.zeros(uniq.size, dtype=bool)
    if free is not None:
        bad |= isin_ids(uniq, free, N)
    if d.ref_cnt is not None:
        bad |= d.ref_cnt[uniq] == 0
    return np.flatnonzero(isin_ids(mids, uniq[bad], N)) if bad.any() else None


def freed_block_in_use(run: CheckRun) -> None:
    """freed-block-in-use: a live row counts a block that is free or unreferenced."""
    d = run.d
    if not run.held.window_known:
        return
    hit = _freed_positions(run)
    if hit is None:
        return
    rows, cols = run.prefix.locate(run.held.pos_of(hit))
    v = run.vals

    def msg(r, c, k):
        b = int(run.geo.manager_block_of(int(v[run.prefix.off[r] + c])))
        free_at = None
        if d.free_block_ids is not None:
            at = np.flatnonzero(d.free_block_ids == b)
            if at.size:
                free_at = int(at[0])
        zero = d.ref_cnt is not None and int(d.ref_cnt[b]) == 0
        kind = ("free" if free_at is not None else "") + ("ref" if zero else "")
        why = Msg(f"freed-block-in-use.why_{kind}", {"pos": free_at}) if kind else ""
        return Msg("freed-block-in-use", {"r": r, "c": c, "b": b, "why": why, "more": more_clause(k)})
    run.add("freed-block-in-use", *first_per_row(rows, cols), msg)


def refcount_mismatch(run: CheckRun) -> None:
    """refcount-mismatch: a block's ref count differs from the number of live rows holding it."""
    ref = run.d.ref_cnt
    if ref is None or not run.held.window_known:
        return
    holders = run.holders
    if holders.dense is not None:
        diff = ref != holders.dense
        diff[NULL_BLOCK_ID] = False
        bad = np.flatnonzero(diff)
    else:  # few held blocks in a huge pool: compare the held ones, then the rest must be 0
        uniq = holders.uniq
        bad_h = uniq[ref[uniq] != holders.counts]
        nonzero = np.flatnonzero(ref)
        bad = np.union1d(bad_h, nonzero[~np.isin(nonzero, uniq)])
        bad = bad[bad != NULL_BLOCK_ID]
    if not bad.size:
        return
    h_all = holders.at(bad[: run.limit])
    for b, h in zip(bad[: run.limit].tolist(), h_all.tolist()):
        rc = int(ref[b])
        key = "refcount-mismatch.leak" if rc > h else "refcount-mismatch.early"
        run.add_one("refcount-mismatch", b, Msg(key, {"b": b, "rc": rc,
                                                      "holders": plural_clause(h, "live_rows_hold")}))
    run.truncated("refcount-mismatch", bad.size, "blocks")


def _other_holders(run: CheckRun, block: int, row: int) -> Msg:
    """The " (row i, j)" clause naming up to three other rows that hold ``block``."""
    where = np.flatnonzero(run.held.manager_ids == block)
    rows = sorted(set(run.prefix.locate(run.held.pos_of(where))[0].tolist()) - {row})[:3]
    return Msg("shared-partial-block.named", {"rows": ", ".join(map(str, rows))})


def shared_partial_block(run: CheckRun) -> None:
    """shared-partial-block: two live rows hold the partially filled last block of one of them
    (state blocks are not filled token by token: not looked at)."""
    if run.seq is None or run.state:
        return
    s, geo = run.seq, run.geo
    last_block = geo.logical_block(s - 1)
    fill = s - geo.tokens_held(last_block)            # tokens in the last block
    last = geo.kernel_block_count(last_block)          # its first column
    partial = (s > 0) & (fill != run.span) & (last < run.cnt)
    rows = np.flatnonzero(partial)
    if not rows.size:
        return
    blk = run.bt[rows, last[rows]].astype(np.int64)
    ok = (blk >= run.bpk) & (blk < run.kernel_ids)
    rows, blk = rows[ok], geo.manager_block_of(blk[ok])
    h = run.holders.at(blk)
    shared = h >= 2
    rows, blk, h = rows[shared], blk[shared], h[shared]
    if not rows.size:
        return
    info = {int(r): (int(b), int(k)) for r, b, k in zip(rows[: run.limit], blk[: run.limit],
                                                        h[: run.limit])}
    named = set(rows[:5].tolist())   # naming the other holders costs a pass over the table

    def msg(r, c, k):
        b, holders = info[r]
        others = _other_holders(run, b, r) if r in named else ""
        n = holders - 1
        return Msg("shared-partial-block", {
            "r": r, "b": b, "fill": int(fill[r]), "span": run.span,
            "others": Msg(f"other_rows_hold.{'one' if n == 1 else 'many'}", {"n": n, "named": others})})
    run.add("shared-partial-block", rows, last[rows], np.ones(rows.size), msg)


def _repeats(f: np.ndarray, num_blocks: int) -> list[tuple[int, Msg]]:
    """(position, message) of each block's second appearance in the free list ``f``."""
    valid = np.flatnonzero((f > NULL_BLOCK_ID) & (f < num_blocks))
    occ = Counts(f[valid], num_blocks).per_entry
    if occ is None:
        return []
    multi = valid[occ >= 2]
    order = np.lexsort((multi, f[multi]))
    m_s, b_s = multi[order], f[multi][order]
    second = np.flatnonzero(np.concatenate(([False], b_s[1:] == b_s[:-1])))
    firsts = {}
    for j in second.tolist():
        b = int(b_s[j])
        if b not in firsts:
            firsts[b] = (int(m_s[j - 1]), int(m_s[j]))
    return [(j, Msg("free-list-duplicate", {"b": b, "i": i, "j": j}))
            for b, (i, j) in sorted(firsts.items(), key=lambda x: x[1][1])]


def free_list_duplicate(run: CheckRun) -> None:
    """free-list-duplicate: the null block in the free list, or a block in it twice."""
    if run.d.free_block_ids is None:
        return
    f = run.d.free_block_ids.astype(np.int64)
    nulls = np.flatnonzero(f == NULL_BLOCK_ID)
    msgs = [(int(i), Msg("free-list-duplicate.null", {"i": int(i)})) for i in nulls[:1]]
    msgs += _repeats(f, run.d.num_blocks)
    msgs.sort(key=lambda x: x[0])      # positions are distinct
    for i, m in msgs[: run.limit]:
        run.add_one("free-list-duplicate", i, m)
    run.truncated("free-list-duplicate", len(msgs), "entries")
