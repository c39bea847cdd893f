"""The per-row checks: the device mirror against the CPU table, block ids inside the pool, enough
blocks for each row's tokens, and CUDA-graph padded rows."""
from __future__ import annotations

import numpy as np

from kvviz.constants import NULL_BLOCK_ID
from kvviz.dumps.arrays import Segments, first_per_row, more_clause
from kvviz.dumps.catalogue import Msg
from kvviz.dumps.context import CheckRun, clears_vacated_rows


def check_mirror(run: CheckRun) -> None:
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


def check_ranges(run: CheckRun) -> None:
    limit = min(run.kernel_ids, 1 << 31)
    u = run.vals.view(np.uint32)
    # one min/max pass settles the common all-valid case without per-entry masks
    lo, hi = (int(u.min()), int(u.max())) if u.size else (run.bpk, 0)
    run.all_held = hi < limit and lo >= run.bpk
    run.in_range = None if hi < limit else u < limit
    bad = np.flatnonzero(~run.in_range) if run.in_range is not None else np.zeros(0, np.int64)
    if bad.size:
        v = run.vals
        run.add_flat("block-out-of-range", bad, lambda r, c, k: Msg("block-out-of-range.row", {
            "r": r, "c": c, "b": int(v[run.prefix.off[r] + c]), "last": run.kernel_ids - 1,
            "more": more_clause(k)}))
    if run.d.sliding_window is None and lo < run.bpk:
        bad = np.flatnonzero(u < run.bpk)
        if bad.size:
            run.add_flat("null-in-live-row", bad, lambda r, c, k: Msg("null-in-live-row", {
                "r": r, "c": c, "n": int(run.cnt[r]), "more": more_clause(k)}))


def check_too_few(run: CheckRun) -> None:
    if run.seq is None:
        return
    if run.state:   # one state block per request that has tokens, whatever its length
        need = (run.seq > 0).astype(np.int64) * run.bpk
        rows = np.flatnonzero(run.cnt < need)
        run.add("too-few-blocks", rows, run.cnt[rows], np.ones(rows.size), lambda r, c, k: Msg(
            "too-few-blocks.state", {"r": r, "c": c, "s": int(run.seq[r])}))
        return
    need = -(-run.seq // run.span) * run.bpk
    rows = np.flatnonzero(run.cnt < need)
    if rows.size:
        run.add("too-few-blocks", rows, run.cnt[rows], np.ones(rows.size), lambda r, c, k: Msg(
            "too-few-blocks", {"r": r, "c": c, "s": int(run.seq[r]), "span": run.span,
                               "need": int(need[r]) // run.bpk,
                               "kernel": Msg("too-few-blocks.kernel", {"n": int(need[r])})
                               if run.bpk > 1 else ""}))


def check_pad_rows(run: CheckRun) -> None:
    d = run.d
    lo, hi = run.n, d.padded_reqs
    clears = clears_vacated_rows(run.profile)
    found = {}
    # the padded rows the kernel reads: the device table when captured, else the CPU table (under
    # a 2025 profile the CPU rows of vacated requests legitimately keep their ids: not looked at)
    if hi > lo and (d.block_table_device is not None or clears):
        table = d.block_table_device if d.block_table_device is not None else run.bt
        which = "device" if d.block_table_device is not None else "cpu"
        pad = table[lo:hi]
        nz = pad != NULL_BLOCK_ID
        first = nz.argmax(axis=1)
        bad = nz[np.arange(hi - lo), first]
        for j in np.flatnonzero(bad).tolist():
            r, c = lo + j, int(first[j])
            found[r] = (c, Msg(f"pad-row.nonzero_{which}", {"r": r, "b": int(pad[j, c]), "c": c}))
    if clears:
        # current vLLM clears every row it vacates (remove_request's clear_row, condense's
        # move_row), so no row past num_reqs counts a block; one that does reaches the kernel at
        # the next commit that copies it (a dummy run commits its num_reqs_padded rows)
        cnt_all = d.num_blocks_per_row[lo:].astype(np.int64)
        vac = np.flatnonzero(cnt_all > 0)
        if vac.size:
            rows_v = lo + vac
            cnt = cnt_all[vac]
            seg = Segments(run.W, np.zeros(vac.size, np.int64), cnt)
            v = seg.take(run.bt[rows_v])
            rows, cols = seg.locate(np.flatnonzero(v != NULL_BLOCK_ID))
            first_c = dict(zip(*(x.tolist() for x in first_per_row(rows, cols)[:2])))
            for j, r in enumerate(rows_v.tolist()):
                if r in found:
                    continue
                n = int(cnt[j])
                if j not in first_c:
                    found[r] = (None, Msg("pad-row.count_only", {"r": r, "n": n, "live": lo}))
                    continue
                c = int(first_c[j])
                key = "pad-row.not_cleared" if r < hi else "pad-row.vacated"
                found[r] = (c, Msg(key, {"r": r, "n": n, "b": int(run.bt[r, c]), "c": c, "live": lo}))
    keys = sorted(found)
    run.add("pad-row", keys, np.array([found[r][0] for r in keys], dtype=object), np.ones(len(keys)),
             lambda r, c, k: found[r][1])
