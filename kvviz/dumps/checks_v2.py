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
  all 0; from v0.33.0 (``mrv2_zero_dirty_rows``) the rows up to ``previous_num_reqs`` (the previous
  gather's num_reqs, an optional key) too, where the dump's table is the gathered one itself
  (not the attention's kernel-block table of manager ids, which only the rows passed in reach).

Releases (``kvviz.core.versions``; vLLM ``vllm/v1/worker/gpu/block_table.py``):

* v0.32.0 on (``mrv2_dcp_slots`` "manager_ids"): the state rows hold KV-manager ids and the table
  the attention reads is the attention group's kernel-block table, ``b * r + j`` for every column
  of the rows passed in (``AttentionGroup.map_to_kernel_block_table``; r = block_size /
  kernel_block_size): a dump says so by a state table r times narrower than ``block_table``. Its
  gathered rows are the expansion of the state rows, and its padded rows read ``0, 1, .., r-1``
  (the kernel blocks of the null block), not 0. Under an earlier release the state rows hold
  kernel ids, copied as they are, and padded rows are 0: such a dump is a finding there.
* v0.33.0 on (``mrv2_swa_gather_zero``): a sliding-window group's entries wholly below the window
  of the request's first scheduled token (``max(num_computed - (window - 1), 0) // block_size``
  entries; num_computed = seq_lens - the query length) may read the null block; the dump must
  declare ``sliding_window`` and carry ``seq_lens`` and ``query_start_loc``. Before v0.33.0 (or
  without them) such a null is a v2-gather finding. (vLLM's reach also counts MTP's
  ``extra_retained_tokens``, which a dump does not carry: the check accepts the null block there
  but does not require it.)
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


def manager_rules(rules, d) -> bool:
    """Whether ``rules`` (None: the layout the dump shows) hold manager ids in the state rows."""
    if rules is None:
        return state_per_entry(d) > 1
    return rules.mrv2_dcp_slots == "manager_ids"


def state_per_entry(d) -> int:
    """Kernel blocks one state-row entry stands for: blocks_per_kv_block when the state table is
    narrower than the gathered one (it holds KV-manager ids, v0.32.0 on), else 1."""
    if d.state_block_table is None or d.state_block_table.shape[1] == d.width:
        return 1
    return d.blocks_per_kv_block


def expected_rows(d, states, rules=None) -> np.ndarray:
    """[len(states), W] int64: the gathered rows of these state rows under ``rules``: the expansion
    ``b * r + j`` of manager-id rows (v0.32.0 on), the rows as they are before (a narrower state
    table fills only its own columns; the rest: -1, never equal to a table entry)."""
    st = d.state_block_table[states].astype(np.int64)
    per = state_per_entry(d)
    if per > 1 and manager_rules(rules, d):
        return (st[:, :, None] * per + np.arange(per)[None, None, :]).reshape(len(states), d.width)
    out = np.full((len(states), d.width), -1, np.int64)
    out[:, : st.shape[1]] = st
    return out


def swa_null_columns(d, rows, rules) -> np.ndarray | None:
    """Per live row, how many leading gathered columns v0.33.0's gather may write as the null block
    (vllm/v1/worker/gpu/block_table.py:315 of the 0.33.0 wheel, MASK_SLIDING_WINDOW: ``max(first_pos
    - reach, 0) // block_size`` entries, reach = window - 1, none under DCP, line 59); None when
    the release never does it or the dump lacks ``sliding_window``, ``seq_lens`` or
    ``query_start_loc``."""
    if rules is None or not rules.mrv2_swa_gather_zero or d.sliding_window is None or d.dcp_world_size != 1:
        return None
    if d.seq_lens is None or d.query_start_loc is None:
        return None
    qsl = d.query_start_loc.astype(np.int64)
    num_computed = d.seq_lens[rows].astype(np.int64) - (qsl[rows + 1] - qsl[rows])
    per = state_per_entry(d)
    entry = d.block_size if per > 1 else d.kbs
    return np.maximum(num_computed - (d.sliding_window - 1), 0) // entry * per


def gather_mismatches(d, rules=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rows, their states, first differing column, differing entries) of the live gathered rows of a
    V2 dump that differ from their state row inside ``state_num_blocks`` (rows whose idx_mapping
    names no state row are left to v2-idx-mapping), under ``rules`` (None: the dump's own layout,
    no sliding-window nulls). Shared by the checker and ``diff``'s stale rows."""
    idx = d.idx_mapping[: d.num_reqs].astype(np.int64)
    ok = (idx >= 0) & (idx < d.state_block_table.shape[0])
    rows = np.flatnonzero(ok)
    states = idx[rows]
    per = state_per_entry(d) if manager_rules(rules, d) else 1
    cnt = d.state_num_blocks.astype(np.int64)[states] * per
    cols = np.arange(d.width)[None, :]
    inside = cols < cnt[:, None]
    got = d.block_table[rows].astype(np.int64)
    diff = (got != expected_rows(d, states, rules)) & inside
    nulls = swa_null_columns(d, rows, rules)
    if nulls is not None:
        diff &= ~((cols < nulls[:, None]) & (got == cols % per))   # the null block's kernel blocks
    bad = diff.any(axis=1)
    return rows[bad], states[bad], diff[bad].argmax(axis=1), diff[bad].sum(axis=1)


def gather(run: CheckRun) -> None:
    """v2-gather: a gathered row is not the first state_num_blocks entries of its state row."""
    d = run.d
    if not d.is_v2:
        return
    rr, states, first, many = gather_mismatches(d, run.profile)
    if not rr.size:
        return
    cnt = d.state_num_blocks.astype(np.int64)
    want = expected_rows(d, states, run.profile)
    info = {int(r): (int(s), int(cnt[s]), w) for r, s, w in zip(rr, states, want)}

    def msg(r, c, k):
        s, n, w = info[r]
        return Msg("v2-gather", {"r": r, "c": c, "got": int(run.bt[r, c]), "s": s,
                                 "want": int(w[c]), "n": n, "more": more_clause(k)})
    run.add("v2-gather", rr, first, many, msg)


def pad_row(run: CheckRun) -> None:
    """v2-pad-row: a padded row of the gathered input table is not all 0 (the gather zeroes them);
    from v0.32.0 with kernel blocks smaller than the block, ``0, 1, .., r-1`` repeated: the
    attention group's ``b * r + j`` of the zeroed row (vllm/v1/worker/utils.py
    ``AttentionGroup.map_to_kernel_block_table`` writes every column of the rows passed in)."""
    d = run.d
    end = d.padded_reqs
    if d.previous_num_reqs is not None and run.profile.mrv2_zero_dirty_rows and state_per_entry(d) == 1:
        end = max(end, min(d.previous_num_reqs, d.rows))   # 0.33.0 block_table.py:191 _num_dirty_rows
    if not d.is_v2 or end <= run.n:
        return
    pad = run.bt[run.n: end]
    per = d.blocks_per_kv_block if manager_rules(run.profile, d) and not d.is_state_group else 1
    nz = pad != np.arange(d.width)[None, :] % per
    bad = np.flatnonzero(nz.any(axis=1))
    if not bad.size:
        return
    first = nz[bad].argmax(axis=1)
    rows = bad + run.n
    run.add("v2-pad-row", rows, first, nz[bad].sum(axis=1), lambda r, c, k: Msg("v2-pad-row", {
        "r": r, "c": c, "b": int(run.bt[r, c]), "more": more_clause(k)}))
