"""Recorded bench runs: ``kvviz bench --json`` files read back, validated and rebuilt from the keys
kvviz knows (they are untrusted input to the kernel lab), and the runs shipped in examples/bench."""
from __future__ import annotations

from pathlib import Path

import numpy as np

MAX_BENCH_JSON_BYTES = 8 << 20
MAX_BENCH_ROWS = 20000
ROW_TEXT_KEYS = ("kernel", "variant", "shape", "picked")
ROW_NUMBER_KEYS = ("us", "bytes", "gbps", "x_empty", "x_bytes", "graph_us", "graph_x_empty", "dev_us", "dev_x_empty",
                   "dev_warm_us", "dev_warm_x_empty", "host_us", "of_copy_bw")
FLOOR_KEYS = ("empty_us", "empty_graph_us", "empty_host_us", "empty_dev_us", "empty_dev_warm_us", "copy_gbps",
              "copy_bytes")
EXAMPLE_RUNS_DIR = Path(__file__).resolve().parents[3] / "examples" / "bench"


def _number(v, where: str):
    """``v`` if it is a finite number >= 0 or None; BadInput otherwise."""
    from kvviz.errors import BadInput

    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise BadInput(f"{where} must be a finite number >= 0 or null, not {str(v)[:40]!r}")
    try:
        f = float(v)
    except OverflowError:   # a 400-digit integer
        raise BadInput(f"{where} is too large a number") from None
    if not np.isfinite(f) or f < 0:
        raise BadInput(f"{where} must be a finite number >= 0 or null, not {str(v)[:40]!r}")
    return v


def _text(v, where: str, limit: int = 300) -> str:
    """``v`` if it is text of at most ``limit`` characters; BadInput otherwise."""
    from kvviz.errors import BadInput

    if not isinstance(v, str) or len(v) > limit:
        raise BadInput(f"{where} must be text of at most {limit} characters")
    return v


def load_bench_json(raw: bytes, name: str = "the bench file") -> dict:
    """A ``kvviz bench --json`` file, validated and rebuilt from the keys kvviz knows (unknown keys
    are dropped); BadInput with one sentence otherwise."""
    from kvviz.errors import BadInput, parse_json

    if len(raw) > MAX_BENCH_JSON_BYTES:
        raise BadInput(f"{name} is {len(raw) >> 20} MiB; a bench file is at most {MAX_BENCH_JSON_BYTES >> 20} MiB")
    d = parse_json(raw, name)
    if not isinstance(d, dict) or not {"label", "floors", "rows"} <= set(d):
        raise BadInput(f"{name} is not a kvviz bench result (it needs 'label', 'floors' and 'rows')")
    label, floors, rows, goals = d["label"], d["floors"], d["rows"], d.get("goals", [])
    if not isinstance(label, dict) or not isinstance(floors, dict):
        raise BadInput(f"{name}: 'label' and 'floors' must be objects")
    if not isinstance(rows, list) or not rows or len(rows) > MAX_BENCH_ROWS:
        raise BadInput(f"{name}: 'rows' must be a list of 1 to {MAX_BENCH_ROWS} measurements")
    if not isinstance(goals, list) or len(goals) > 1000:
        raise BadInput(f"{name}: 'goals' must be a list of at most 1000 goals")
    out = {"label": {k: _text(label[k], f"{name}: label.{k}") for k in ("device", "mode", "triton", "torch")
                     if k in label},
           "date": _text(d.get("date", "?"), f"{name}: date", 40),
           "quick": bool(d.get("quick", False)),
           "note": _text(d.get("note", ""), f"{name}: note", 1000),
           "floors": {k: _number(floors.get(k), f"{name}: floors.{k}") for k in FLOOR_KEYS},
           "rows": [], "goals": []}
    if out["label"].get("mode") not in ("compiled", "interpreter"):
        raise BadInput(f"{name}: label.mode must be 'compiled' or 'interpreter'")
    out["label"].setdefault("device", "unknown device")
    if not out["floors"]["empty_us"]:
        raise BadInput(f"{name}: floors.empty_us (the empty-launch floor) is missing")
    for i, r in enumerate(rows):
        where = f"{name}: row {i}"
        if not isinstance(r, dict) or not all(k in r for k in ("kernel", "variant", "shape", "us")):
            raise BadInput(f"{where} needs 'kernel', 'variant', 'shape' and 'us'")
        row = {k: _text(r[k], f"{where}.{k}") for k in ROW_TEXT_KEYS if k in r}
        row.update({k: _number(r.get(k), f"{where}.{k}") for k in ROW_NUMBER_KEYS})
        if row["us"] is None:
            raise BadInput(f"{where}.us must be a number")
        out["rows"].append(row)
    for i, g in enumerate(goals):
        if not isinstance(g, dict) or not isinstance(g.get("met"), bool):
            raise BadInput(f"{name}: goal {i} needs 'goal', 'met' (true/false) and 'figure'")
        out["goals"].append({"goal": _text(g.get("goal"), f"{name}: goal {i}", 500), "met": g["met"],
                             "figure": _text(g.get("figure"), f"{name}: goal {i} figure", 1000)})
    return out


def example_runs() -> list[str]:
    """Names of the recorded runs shipped in examples/bench (newest first)."""
    return sorted((p.stem for p in EXAMPLE_RUNS_DIR.glob("*.json")), reverse=True)


def load_example_run(name: str) -> dict:
    """A recorded run by name (one of ``example_runs()``), validated as any bench file."""
    from kvviz.errors import BadInput

    if name not in example_runs():
        raise BadInput(f"no recorded run named {name!r}")
    return load_bench_json((EXAMPLE_RUNS_DIR / f"{name}.json").read_bytes(), name)
