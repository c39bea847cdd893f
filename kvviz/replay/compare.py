"""One captured step against kvviz's: the divergence type, the scheduled rows and the scheduler's side.

Order within a step (the first difference found is the one reported): the rows' requests and token
counts (V2: their request-state rows), then the scheduler's side (preempted, finished, newly admitted,
the running requests in order, each one's computed tokens and block ids per group), then each group's
tables (``kvviz.replay.tables``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kvviz.errors import BadInput

MAX_SHOWN = 24      # entries of a list shown as a value


def plain(v):
    """A value as JSON shows it: numpy numbers as ints, long lists cut."""
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, (list, tuple)):
        out = [plain(x) for x in v[:MAX_SHOWN]]
        return out + ["..."] if len(v) > MAX_SHOWN else out
    return v


@dataclass
class Divergence:
    """Where kvviz first differs from the run. ``where`` says what ``index`` counts: "col" (a table's
    column), "token" (a token of the step), "block" (a block id), "entry" (a list's position) or
    None (no index)."""
    step: int
    table: str
    captured: object
    kvviz: object
    group: int | None = None
    row: int | None = None
    index: int | None = None
    where: str | None = None
    req_id: str | None = None

    def to_json(self) -> dict:
        return {"step": self.step, "group": self.group, "table": self.table, "row": self.row,
                "index": self.index, "where": self.where, "req_id": self.req_id,
                "captured": plain(self.captured), "kvviz": plain(self.kvviz)}

    def text(self) -> str:
        out = f"step {self.step}"
        if self.group is not None:
            out += f" group {self.group}"
        out += f" {self.table}"
        if self.row is not None:
            out += f" row {self.row}"
        if self.index is not None:
            out += f" {self.where or 'entry'} {self.index}"
        if self.req_id is not None:
            out += f" (request {self.req_id})"
        return out + f": captured {_shown(self.captured)}, kvviz {_shown(self.kvviz)}"


def _shown(v) -> str:
    v = plain(v)
    return "nothing" if v is None else str(v)


def first_in_lists(a: list, b: list) -> int | None:
    """The first position where two lists differ (one ending early counts), else None."""
    for i in range(max(len(a), len(b))):
        if i >= len(a) or i >= len(b) or a[i] != b[i]:
            return i
    return None


def _at(xs: list, i: int):
    return xs[i] if i < len(xs) else None


def _int_list(v, what: str) -> list[int]:
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise BadInput(f"{what} is not a list of integers")
    return v


def _str_list(v, what: str) -> list:
    if not isinstance(v, list) or not all(x is None or isinstance(x, str) for x in v):
        raise BadInput(f"{what} is not a list of request ids")
    return v


def compare_rows(step: int, meta: dict, record, names: dict[str, str], runner: str) -> Divergence | None:
    """Each row's request and token count (V2: each batch position's request and its state row)."""
    cap_ids = _str_list(meta.get("req_ids") or [], f"step {step}'s req_ids")
    cap_n = _int_list(meta.get("num_scheduled_tokens") or [], f"step {step}'s num_scheduled_tokens")
    kv_ids = [names.get(s.req_id, s.req_id) for s in record.scheduled]
    kv_n = [s.num_tokens for s in record.scheduled]
    for i in range(max(len(cap_ids), len(kv_ids), len(cap_n))):   # row by row: its request, then its count
        if _at(cap_ids, i) != _at(kv_ids, i):
            return Divergence(step, "req_ids", _at(cap_ids, i), _at(kv_ids, i), row=i, req_id=_at(cap_ids, i))
        if _at(cap_n, i) != _at(kv_n, i):
            return Divergence(step, "num_scheduled_tokens", _at(cap_n, i), _at(kv_n, i), row=i,
                              req_id=_at(cap_ids, i))
    if runner == "v2" and meta.get("state_rows") is not None:
        cap_rows = meta["state_rows"]
        if not isinstance(cap_rows, list) or not all(x is None or (isinstance(x, int) and not isinstance(x, bool))
                                                      for x in cap_rows):
            raise BadInput(f"step {step}'s state_rows is not a list of request-state rows")
        kv_rows = [s.state_index for s in record.scheduled]
        i = first_in_lists(cap_rows, kv_rows)
        if i is not None:
            return Divergence(step, "state_rows", _at(cap_rows, i), _at(kv_rows, i), row=i, req_id=_at(cap_ids, i))
    return None


def _side_dict(side: dict, key: str, step: int) -> dict:
    v = side.get(key) or {}
    if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
        raise BadInput(f"step {step}'s scheduler {key} is not an object keyed by request id")
    return v


def compare_side(step: int, side: dict | None, mine, names: dict[str, str]) -> Divergence | None:
    """The scheduler after schedule(): preempted, finished, admitted fresh, the running requests in
    order, then each one's computed tokens and blocks per group. Nothing when the capture has no
    scheduler side for the step."""
    if not isinstance(side, dict):
        return None
    name = lambda rids: [names.get(r, r) for r in rids]  # noqa: E731
    for key, cap, kv, ordered in (("preempted", side.get("preempted"), mine.preempted, False),
                                  ("finished", side.get("finished"), mine.finished, False),
                                  ("new", side.get("new"), mine.new, True)):
        if cap is None:
            continue
        cap = _str_list(cap, f"step {step}'s scheduler {key}")
        kv = name(kv)
        if (cap if ordered else sorted(cap)) != (kv if ordered else sorted(kv)):
            return Divergence(step, f"scheduler.{key}", cap if ordered else sorted(cap), kv if ordered else sorted(kv))
    computed = _side_dict(side, "num_computed_tokens", step)
    blocks = _side_dict(side, "block_ids", step)
    running = name(mine.running)
    cap_running = list(computed) or list(blocks)
    i = first_in_lists(cap_running, running)
    if i is not None:
        return Divergence(step, "scheduler.running", _at(cap_running, i), _at(running, i), index=i, where="entry",
                          req_id=_at(cap_running, i))
    by_name = {names.get(r, r): r for r in mine.running}
    for rid in cap_running:
        kid = by_name[rid]
        if rid in computed and computed[rid] != mine.num_computed_tokens[kid]:
            return Divergence(step, "scheduler.num_computed_tokens", computed[rid], mine.num_computed_tokens[kid],
                              req_id=rid)
        if rid in blocks:
            d = _compare_block_ids(step, rid, blocks[rid], mine.block_ids[kid])
            if d is not None:
                return d
    return None


def _compare_block_ids(step: int, rid: str, cap, kv: list[list[int]]) -> Divergence | None:
    if not isinstance(cap, list) or not all(isinstance(g, list) for g in cap):
        raise BadInput(f"step {step}'s scheduler block_ids of {rid[:60]!r} is not a list per group")
    if len(cap) != len(kv):
        return Divergence(step, "scheduler.block_ids", f"{len(cap)} group(s)", f"{len(kv)} group(s)", req_id=rid)
    for g, (c, k) in enumerate(zip(cap, kv)):
        c = _int_list(c, f"step {step}'s scheduler block_ids of {rid[:60]!r}")
        i = first_in_lists(c, k)
        if i is not None:
            return Divergence(step, "scheduler.block_ids", _at(c, i), _at(k, i), group=g, index=i, where="entry",
                              req_id=rid)
    return None
