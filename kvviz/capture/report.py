"""Checking and diffing captured runs, step by step (``kvviz check RUN`` / ``kvviz diff RUN_A RUN_B``).

A run is checked under its own release and runner (its manifest), unless told otherwise. Findings
keep the dump checker's meaning; each is placed at its step and group and named by the request that
held the row. The first wrong step, group and row come first.

Request ids: vLLM's input processor makes each request id unique by appending ``-`` and 8 random
characters (``input_processor.py``: ``f"{external_req_id}-{random_uuid():.8}"`` in v0.28.0 and
v0.32.0), so two runs of one script name the same request differently. ``diff`` compares rows by the
id the user gave (``external_id``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from kvviz.dumps.check import first_wrong_row, run_checks
from kvviz.dumps.diff import diff_dumps
from kvviz.errors import BadInput

_SUFFIX = re.compile(r"^(.*)-[0-9A-Za-z]{8}$")


def external_id(req_id):
    """The request id the user gave, without vLLM's uniquifying suffix (None stays None)."""
    if req_id is None:
        return None
    m = _SUFFIX.match(str(req_id))
    return m[1] if m else str(req_id)


def row_request(meta: dict, row: int | None):
    ids = meta.get("req_ids") or []
    return ids[row] if row is not None and 0 <= row < len(ids) else None


@dataclass
class StepReport:
    step: int
    group: int
    findings: list
    req_ids: list
    error: str | None = None

    @property
    def first_row(self) -> int | None:
        return first_wrong_row(self.findings)

    def to_json(self) -> list[dict]:
        out = []
        if self.error:
            out.append({"step": self.step, "group": self.group, "check": "capture-error", "row": None,
                        "index": None, "message": self.error})
        for f in self.findings:
            out.append({"step": self.step, "group": self.group, **f.to_json(),
                        "req_id": row_request({"req_ids": self.req_ids}, f.row)})
        return out


@dataclass
class RunReport:
    vllm: str
    runner: str
    steps: int
    bad: list[StepReport] = field(default_factory=list)

    @property
    def first(self) -> StepReport | None:
        return self.bad[0] if self.bad else None

    def first_json(self) -> dict | None:
        s = self.first
        if s is None:
            return None
        row = s.first_row
        first = next((f for f in s.findings if f.row == row), s.findings[0] if s.findings else None)
        return {"step": s.step, "group": s.group, "row": row, "req_id": row_request({"req_ids": s.req_ids}, row),
                "check": first.check if first else "capture-error",
                "message": first.message if first else s.error}


def rules_of(run, vllm: str | None = None):
    from kvviz.core.versions import get_profile

    try:
        return get_profile(vllm if vllm is not None else run.vllm)
    except ValueError as e:
        raise BadInput(str(e)) from None


def check_step(run, step: int, rules) -> list[StepReport]:
    """Every group of one step, checked; a StepReport per group (clean ones included)."""
    meta = run.meta(step)
    out = []
    errors = meta.get("errors") or []
    for g, dump in enumerate(run.dumps(step)):
        if dump is None:
            err = next((e for e in errors if str(e).startswith(f"group {g}:")), "the capture recorded no dump")
            out.append(StepReport(step, g, [], meta.get("req_ids") or [], error=str(err)))
            continue
        out.append(StepReport(step, g, run_checks(dump, profile=rules), meta.get("req_ids") or []))
    return out


def check_run(run, vllm: str | None = None) -> RunReport:
    rules = rules_of(run, vllm)
    report = RunReport(rules.name, run.runner, len(run.steps))
    for step in run.steps:
        for s in check_step(run, step, rules):
            if s.findings or s.error:
                report.bad.append(s)
    return report


# --- diff -----------------------------------------------------------------------------------------

def _rows(run, step: int) -> list:
    return [external_id(r) for r in (run.meta(step).get("req_ids") or [])]


def first_step_difference(a, b, step: int, rules_a=None, rules_b=None) -> dict | None:
    """The first difference at ``step``: the rows' requests, then each group's tables."""
    ra, rb = _rows(a, step), _rows(b, step)
    if ra != rb:
        row = next((i for i, (x, y) in enumerate(zip(ra, rb)) if x != y), min(len(ra), len(rb)))
        return {"step": step, "group": None, "table": "req_ids", "row": row,
                "a": ra[row] if row < len(ra) else None, "b": rb[row] if row < len(rb) else None}
    da, db = a.dumps(step), b.dumps(step)
    for g in range(max(len(da), len(db))):
        x = da[g] if g < len(da) else None
        y = db[g] if g < len(db) else None
        if x is None or y is None:
            if (x is None) != (y is None):
                return {"step": step, "group": g, "table": "group", "row": None, "a": x is not None, "b": y is not None}
            continue
        res = diff_dumps(x, y, rules_a=rules_a, rules_b=rules_b)
        if res.differences:
            return {"step": step, "group": g, **res.differences[0].to_json()}
        if any(res.only_in.values()):
            side = "a" if res.only_in.get("a") else "b"
            return {"step": step, "group": g, "table": res.only_in[side][0], "row": None,
                    "a": side == "a", "b": side == "b"}
    return None


def diff_runs(a, b) -> dict:
    rules_a, rules_b = rules_of(a), rules_of(b)
    sa, sb = set(a.steps), set(b.steps)
    common = sorted(sa & sb)
    out = {"equal": True, "steps": {"a": len(sa), "b": len(sb), "common": len(common)},
           "only_in": {"a": sorted(sa - sb)[:50], "b": sorted(sb - sa)[:50]}, "first": None,
           "differing_steps": 0, "vllm": {"a": rules_a.name, "b": rules_b.name}}
    for step in common:
        d = first_step_difference(a, b, step, rules_a, rules_b)
        if d is not None:
            out["differing_steps"] += 1
            if out["first"] is None:
                out["first"] = d
    out["equal"] = out["first"] is None and sa == sb
    return out
