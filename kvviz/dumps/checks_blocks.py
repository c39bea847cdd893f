"""The block-pool checks: duplicates in a row, freed blocks still in use, ref counts, shared partial
blocks (copy-on-write), and the free queue."""
from __future__ import annotations

import numpy as np

from kvviz.constants import NULL_BLOCK_ID
from kvviz.dumps.arrays import Counts, first_per_row, isin_ids, more_clause, plural_clause
from kvviz.dumps.catalogue import Finding, Msg
from kvviz.dumps.context import CheckRun


def check_accounting(run: CheckRun) -> None:
    d = run.d
    # entries that hold a block: in range, not null, not fallen out of a sliding window
    if run.all_held:
        held = np.ones(run.vals.size, dtype=bool) if d.sliding_window is not None else None
    else:
        held = run.vals.view(np.uint32) >= run.bpk
        if run.in_range is not None:
            held &= run.in_range
    window_ok = True
    if d.sliding_window is not None:
        if run.seq is None:
            window_ok = False  # cannot tell which old ids the scheduler already freed
        else:
            skipped = np.maximum(run.seq - d.sliding_window + 1, 0) // run.span * run.bpk
            rows, cols = run.prefix.locate(np.arange(run.vals.size))
            held &= cols >= skipped[rows]
    pos = None if held is None or held.all() else np.flatnonzero(held)
    ids = run.vals if pos is None else run.vals[pos]
    run.pos_of = (lambda p: p) if pos is None else (lambda p: pos[p])
    mids = ids // run.bpk if run.bpk > 1 else ids

    # duplicate kernel ids inside one row; with a sliding window but no seq_lens the ids of
    # blocks that fell out of the window cannot be told apart, and a freed one may come back
    kcount = Counts(ids, run.kernel_ids)
    if kcount.per_entry is not None and (d.sliding_window is None or run.seq is not None):
        _duplicates(run, ids, np.flatnonzero(kcount.per_entry >= 2))

    # holders: distinct live rows per block
    holders = kcount if run.bpk == 1 else Counts(mids, d.num_blocks)
    if holders.per_entry is not None:
        multi = np.flatnonzero(holders.per_entry >= 2)
        rows, _ = run.prefix.locate(run.pos_of(multi))
        m = mids[multi]
        order = np.lexsort((rows, m))
        m_s, r_s = m[order], rows[order]
        new = np.concatenate(([True], (m_s[1:] != m_s[:-1]) | (r_s[1:] != r_s[:-1])))
        pm, pc = np.unique(m_s[new], return_counts=True)
        holders.set(pm, pc)
    run.holders, run.mids = holders, mids

    if window_ok:
        _freed(run, holders, mids)
        _refcount(run, holders)
    if not run.state:   # state blocks are not filled token by token
        _shared_partial(run, )


def _duplicates(run: CheckRun, ids, multi) -> None:
    rows, cols = run.prefix.locate(run.pos_of(multi))
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


def _freed(run: CheckRun, holders: Counts, mids) -> None:
    d = run.d
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
        if not bad.any():
            return
        hit = np.flatnonzero(bad[mids])
    else:
        uniq = holders.uniq
        bad = np.zeros(uniq.size, dtype=bool)
        if free is not None:
            bad |= isin_ids(uniq, free, N)
        if d.ref_cnt is not None:
            bad |= d.ref_cnt[uniq] == 0
        if not bad.any():
            return
        hit = np.flatnonzero(isin_ids(mids, uniq[bad], N))
    rows, cols = run.prefix.locate(run.pos_of(hit))
    v = run.vals

    def msg(r, c, k):
        b = int(v[run.prefix.off[r] + c]) // run.bpk
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


def _refcount(run: CheckRun, holders: Counts) -> None:
    d = run.d
    if d.ref_cnt is None:
        return
    ref = d.ref_cnt
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
        run.out.append(Finding.of("refcount-mismatch", None, b, Msg(key, {
            "b": b, "rc": rc, "holders": plural_clause(h, "live_rows_hold")})))
    run._truncated("refcount-mismatch", bad.size, "blocks")


def _shared_partial(run: CheckRun) -> None:
    if run.seq is None:
        return
    s = run.seq
    last = (s - 1) // run.span * run.bpk          # column of the last block
    partial = (s > 0) & (s % run.span != 0) & (last < run.cnt)
    rows = np.flatnonzero(partial)
    if not rows.size:
        return
    blk = run.bt[rows, last[rows]].astype(np.int64)
    ok = (blk >= run.bpk) & (blk < run.kernel_ids)
    rows, blk = rows[ok], blk[ok] // run.bpk
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
        fill = int(s[r] - (s[r] - 1) // run.span * run.span)
        others = ""
        if r in named:
            where = np.flatnonzero(run.mids == b)
            rows_b = sorted(set(run.prefix.locate(run.pos_of(where))[0].tolist()) - {r})[:3]
            others = Msg("shared-partial-block.named", {"rows": ", ".join(map(str, rows_b))})
        n = holders - 1
        return Msg("shared-partial-block", {
            "r": r, "b": b, "fill": fill, "span": run.span,
            "others": Msg(f"other_rows_hold.{'one' if n == 1 else 'many'}", {"n": n, "named": others})})
    run.add("shared-partial-block", rows, last[rows], np.ones(rows.size), msg)


def check_free_list(run: CheckRun) -> None:
    d = run.d
    if d.free_block_ids is None:
        return
    f = d.free_block_ids.astype(np.int64)
    N = d.num_blocks
    oor = np.flatnonzero((f < 0) | (f >= N))
    for i in oor[: run.limit].tolist():
        run.out.append(Finding.of("block-out-of-range", None, i, Msg("block-out-of-range.free", {
            "i": i, "b": int(f[i]), "last": N - 1})))
    run._truncated("block-out-of-range", oor.size, "free_entries")
    nulls = np.flatnonzero(f == NULL_BLOCK_ID)
    msgs = [(int(i), Msg("free-list-duplicate.null", {"i": int(i)})) for i in nulls[:1]]
    valid = np.flatnonzero((f > NULL_BLOCK_ID) & (f < N))
    occ = Counts(f[valid], N).per_entry
    if occ is not None:
        multi = valid[occ >= 2]
        order = np.lexsort((multi, f[multi]))
        m_s, b_s = multi[order], f[multi][order]
        second = np.flatnonzero(np.concatenate(([False], b_s[1:] == b_s[:-1])))
        firsts = {}
        for j in second.tolist():
            b = int(b_s[j])
            if b not in firsts:
                firsts[b] = (int(m_s[j - 1]), int(m_s[j]))
        for b, (i, j) in sorted(firsts.items(), key=lambda x: x[1][1]):
            msgs.append((j, Msg("free-list-duplicate", {"b": b, "i": i, "j": j})))
    msgs.sort(key=lambda x: x[0])      # positions are distinct
    for i, m in msgs[: run.limit]:
        run.out.append(Finding.of("free-list-duplicate", None, i, m))
    run._truncated("free-list-duplicate", len(msgs), "entries")
