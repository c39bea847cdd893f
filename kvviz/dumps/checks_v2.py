"""The checks of a Model Runner V2 dump (``runner: "v2"``): its own tables, which V1 has not.

Model Runner V2 keeps each request's block ids in a *request-state* row (``state_block_table``,
rows by request-state index, ``state_num_blocks`` counts) and, every step, gathers the scheduled
requests' rows in batch order (``idx_mapping[b]`` = the state index of batch position ``b``) into
the input table the kernels read (the dump's ``block_table``), zeroing the padded rows. Entries of
a gathered row past its count are whatever an earlier step left there: never read, never flagged.

* ``v2-idx-mapping``: ``idx_mapping`` points outside the state rows, twice at one state, or at a
  state that holds no block for a row that has tokens;
* ``v2-gather``: a gathered row differs from its state row inside the state's count;
* ``v2-pad-row``: a padded row of the gathered table (``num_reqs`` .. ``num_reqs_padded``) is not
  all 0.
"""
from __future__ import annotations

import numpy as np

from kvviz.dumps.catalogue import Msg, more_clause
from kvviz.dumps.context import CheckRun


def _live_idx(run: CheckRun) -> tuple[np.ndarray, np.ndarray]:
    """(idx_mapping of the live rows as int64, which of them name a state row)."""
    idx = run.d.idx_mapping[: run.n].astype(np.int64)
    states = run.d.state_block_table.shape[0]
    return idx, (idx >= 0) & (idx < states)


def idx_mapping(run: CheckRun) -> None:
    """v2-idx-mapping: a live row's state index is out of range, repeated, or names an empty state."""
    d = run.d
    if not d.is_v2:
        return
    idx, ok = _live_idx(run)
    S = d.state_block_table.shape[0]
    found: dict[int, Msg] = {}
    for r in np.flatnonzero(~ok)[: run.limit].tolist():
        found[r] = Msg("v2-idx-mapping.range", {"r": r, "s": int(idx[r]), "last": S - 1})
    seen: dict[int, int] = {}
    for r in np.flatnonzero(ok).tolist():
        s = int(idx[r])
        if s in seen:
            found.setdefault(r, Msg("v2-idx-mapping.duplicate", {"r": r, "s": s, "first": seen[s]}))
        else:
            seen[s] = r
    if run.seq is not None:
        cnt = d.state_num_blocks.astype(np.int64)
        empty = ok & (run.seq > 0)
        empty[ok] &= cnt[idx[ok]] == 0
        for r in np.flatnonzero(empty).tolist():
            found.setdefault(r, Msg("v2-idx-mapping.empty", {"r": r, "s": int(idx[r]), "t": int(run.seq[r])}))
    rows = sorted(found)
    run.add("v2-idx-mapping", rows, [int(idx[r]) for r in rows], np.ones(len(rows)), lambda r, c, k: found[r])


def gather_mismatches(d) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rows, their states, first differing column, differing entries) of the live gathered rows of a
    V2 dump that differ from their state row inside ``state_num_blocks`` (rows whose idx_mapping
    names no state row are left to v2-idx-mapping). Shared by the checker and ``diff``'s stale rows."""
    idx = d.idx_mapping[: d.num_reqs].astype(np.int64)
    ok = (idx >= 0) & (idx < d.state_block_table.shape[0])
    rows = np.flatnonzero(ok)
    states = idx[rows]
    cnt = d.state_num_blocks.astype(np.int64)[states]
    inside = np.arange(d.width)[None, :] < cnt[:, None]
    diff = (d.block_table[rows] != d.state_block_table[states]) & inside
    bad = diff.any(axis=1)
    return rows[bad], states[bad], diff[bad].argmax(axis=1), diff[bad].sum(axis=1)


def gather(run: CheckRun) -> None:
    """v2-gather: a gathered row is not the first state_num_blocks entries of its state row."""
    d = run.d
    if not d.is_v2:
        return
    rr, states, first, many = gather_mismatches(d)
    if not rr.size:
        return
    cnt = d.state_num_blocks.astype(np.int64)
    info = {int(r): (int(s), int(cnt[s])) for r, s in zip(rr, states)}

    def msg(r, c, k):
        s, n = info[r]
        return Msg("v2-gather", {"r": r, "c": c, "got": int(run.bt[r, c]), "s": s,
                                 "want": int(d.state_block_table[s, c]), "n": n, "more": more_clause(k)})
    run.add("v2-gather", rr, first, many, msg)


def pad_row(run: CheckRun) -> None:
    """v2-pad-row: a padded row of the gathered input table is not all 0 (the gather zeroes them)."""
    d = run.d
    if not d.is_v2 or d.padded_reqs <= run.n:
        return
    pad = run.bt[run.n: d.padded_reqs]
    nz = pad != 0
    bad = np.flatnonzero(nz.any(axis=1))
    if not bad.size:
        return
    first = nz[bad].argmax(axis=1)
    rows = bad + run.n
    run.add("v2-pad-row", rows, first, nz[bad].sum(axis=1), lambda r, c, k: Msg("v2-pad-row", {
        "r": r, "c": c, "b": int(run.bt[r, c]), "more": more_clause(k)}))
