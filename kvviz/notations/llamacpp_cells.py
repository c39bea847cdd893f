"""kvviz's llama.cpp cells next to llama.cpp's own: the model's answer in the driver's format
(the model itself, from llama.cpp's code, is ``llamacpp_rules``), a step of it for the
Notations page, the comparison, the driver request for a scenario, and the recorded real run.

An answer (the driver's, or :func:`predict`'s) is ``{"engine", "kv_unified", "n_ctx",
"n_ubatch", "steps": [{"index", "failed", "streams": [{"stream", "head", "used", "strip",
"cells": [{"cell", "pos", "mark"}]}], "seq_pos": {seq: [min, max]}}]}`` where a step's
streams are the cells as the step's ``llama_decode`` left them (before its finished requests
are removed); with ``kv_unified`` the step also carries ``strip`` and ``cells`` of its stream.
"""
from __future__ import annotations

from kvviz.errors import BadInput
from kvviz.notations.llamacpp_rules import (CHECKED_AGAINST, LlamaCells, default_n_ctx,
                                            plan_calls, seq_ids)


def model_answer(schedule: dict, kv_unified: bool = True, n_ctx: int | None = None,
                 n_ubatch: int | None = None, *, strict: bool = True) -> dict:
    """kvviz's model run over ``schedule``: the answer the driver would give (its knobs as in
    :func:`driver_request`). ``strict``: only what the driver can read back (10 sequences,
    8192 cells); otherwise llama.cpp's own bounds (its strip then writes ids 10+ in digits)."""
    ids = seq_ids(schedule, strict)
    cells = LlamaCells(len(ids), n_ctx or default_n_ctx(schedule, kv_unified), kv_unified, n_ubatch,
                       strict=strict)
    steps = []
    for plan in plan_calls(schedule, cells.n_batch, strict):
        for op in plan["pre"]:
            _op(cells, op)
        ok = True
        for call in plan["decode"]:
            ok = cells.decode([(s, p) for s, a, b in call for p in range(a, b)])
            if not ok:
                break
        step = {"index": plan["index"], "failed": not ok, "calls": plan, **cells.snapshot(len(ids))}
        if kv_unified and step["streams"]:
            step["strip"], step["cells"] = step["streams"][0]["strip"], step["streams"][0]["cells"]
        steps.append(step)
        if not ok:
            break
        for op in plan["post"]:
            _op(cells, op)
    return {"engine": "kvviz", "kv_unified": bool(kv_unified), "n_ctx": cells.n_ctx,
            "n_ubatch": cells.n_ubatch, "steps": steps}


def _op(cells: LlamaCells, op: list) -> None:
    if op[0] == "rm":
        cells.seq_rm(op[1])
    else:
        cells.share(op[1], op[2], op[3])


def compare_llamacpp(real: dict, model: dict) -> list[str]:
    """Where kvviz's answer differs from llama.cpp's, in plain words: the first differing step
    (its cell, head, or a sequence's range) and nothing after it; empty when they agree."""
    if bool(real.get("kv_unified")) != bool(model.get("kv_unified")):
        return ["one answer is for the unified cache, the other for per-sequence streams"]
    if real.get("n_ctx") != model.get("n_ctx"):
        return [f"llama.cpp had {real.get('n_ctx')} cells (n_ctx), kvviz {model.get('n_ctx')}"]
    rs, ms = real.get("steps", []), model.get("steps", [])
    for r, m in zip(rs, ms):
        out = _step_diff(r, m)
        if out:
            return out
    if len(rs) != len(ms):
        return [f"llama.cpp ran {len(rs)} steps, kvviz {len(ms)}"]
    return []


def _step_diff(r: dict, m: dict) -> list[str]:
    k = r.get("index")
    if r.get("index") != m.get("index"):
        return [f"step {k}: kvviz has step {m.get('index')} in its place"]
    if bool(r.get("failed")) != bool(m.get("failed")):
        who = "llama.cpp" if r.get("failed") else "kvviz"
        return [f"step {k}: {who} found no cells for the batch, the other did"]
    rst = {s["stream"]: s for s in r.get("streams", [])}
    mst = {s["stream"]: s for s in m.get("streams", [])}
    if sorted(rst) != sorted(mst):
        return [f"step {k}: llama.cpp shows streams {sorted(rst)}, kvviz {sorted(mst)}"]
    out = []
    for g in sorted(rst):
        a, b = rst[g], mst[g]
        where = f"step {k}" + ("" if r.get("strip") is not None else f", stream {g}")
        ca = {c["cell"]: (c["pos"], c["mark"]) for c in a["cells"]}
        cb = {c["cell"]: (c["pos"], c["mark"]) for c in b["cells"]}
        for c in sorted(set(ca) | set(cb)):
            if ca.get(c) != cb.get(c):
                out.append(f"{where}, cell {c}: llama.cpp holds {_say(ca.get(c))}, "
                           f"kvviz {_say(cb.get(c))}")
                break
        if not out and a["head"] != b["head"]:
            out.append(f"{where}: llama.cpp's head is {a['head']}, kvviz's {b['head']}")
        if out:
            return out
    if r.get("seq_pos") != m.get("seq_pos"):
        return [f"step {k}: the sequences' [min, max] positions differ: llama.cpp "
                f"{r.get('seq_pos')}, kvviz {m.get('seq_pos')}"]
    return []


def _say(cell) -> str:
    if cell is None:
        return "nothing (empty)"
    pos, mark = cell
    who = "several sequences (M)" if mark == "M" else f"sequence {mark}"
    return f"position {pos} of {who}"


def llamacpp_side_by_side(scenario: dict, step: int, *, kv_unified: bool = True,
                          n_ctx: int | None = None) -> dict:
    """kvviz's predicted llama.cpp cells after ``step`` of ``scenario`` (no engine needed):
    ``{"step", "kv_unified", "n_ctx", "strip", "streams", "cells": [{"cell", "pos", "mark",
    "seqs", "reqs"}], "requests": {seq: req id}, "calls", "checked_against"}``. ``strip`` is
    the stream's line in llama.cpp's own debug format (the unified cache's, or each stream's
    joined by newlines)."""
    from kvviz.notations.engine_schedule import schedule_from_scenario

    sched = schedule_from_scenario(scenario)
    ans = model_answer(sched, kv_unified, n_ctx, strict=False)
    steps = {s["index"]: s for s in ans["steps"]}
    if step not in steps:
        raise BadInput(f"step {step} is not one of the scenario's steps "
                       f"(0..{len(ans['steps']) - 1})")
    st, names = steps[step], {k: rid for rid, k in seq_ids(sched, False).items()}
    cells = [{**c, "stream": g["stream"], "reqs": [names[s] for s in c["seqs"]]}
             for g in st["streams"] for c in g["cells"]]
    return {"step": step, "kv_unified": bool(kv_unified), "n_ctx": ans["n_ctx"],
            "strip": "\n".join(g["strip"] for g in st["streams"]), "streams": st["streams"],
            "cells": cells, "seq_pos": st["seq_pos"], "failed": st["failed"],
            "requests": {str(k): v for k, v in names.items()}, "calls": st["calls"],
            "checked_against": CHECKED_AGAINST}


def driver_request(schedule: dict, kv_unified: bool = True, n_ctx: int | None = None,
                   n_ubatch: int | None = None) -> dict:
    """The request ``run_driver("llamacpp", ...)`` takes: the schedule and llama.cpp's knobs
    (``n_ctx``: default every token's cell, ``n_ubatch``: default llama.cpp's 512)."""
    req = {"schedule": schedule, "kv_unified": bool(kv_unified)}
    if n_ctx:
        req["n_ctx"] = int(n_ctx)
    if n_ubatch:
        req["n_ubatch"] = int(n_ubatch)
    return req


def record_request(scenario: dict, *, kv_unified: bool = True, n_ctx: int | None = None) -> dict:
    """The driver request that runs ``scenario`` through llama.cpp."""
    from kvviz.notations.engine_schedule import schedule_from_scenario

    return driver_request(schedule_from_scenario(scenario), kv_unified, n_ctx)


def record_example(python: str | None = None) -> dict:
    """The Notations page's scenario through llama.cpp, both layouts, packed for
    ``recorded/llamacpp.json`` (``scripts/record_engine_notations.py llamacpp`` writes it)."""
    from kvviz.notations.engine_examples import example_scenario
    from kvviz.notations.engine_runs import run_driver

    sc = example_scenario()
    runs = [run_driver("llamacpp", record_request(sc, kv_unified=u), python=python) for u in (True, False)]
    return {"engine": "llamacpp", "version": runs[0]["version"], "scenario": sc["name"],
            "checked_against": CHECKED_AGAINST, "runs": [pack(r) for r in runs]}


def recorded_example() -> dict:
    """The recorded real runs of the page's example: ``{"unified": answer, "streams": answer}``."""
    from kvviz.notations.engine_examples import recorded

    rec = recorded("llamacpp")
    runs = rec.get("runs") if isinstance(rec, dict) else None
    if not isinstance(runs, list) or len(runs) != 2:
        raise BadInput("recorded/llamacpp.json holds no two runs (unified, streams)")
    return {("unified" if r.get("kv_unified") else "streams"): unpack(r) for r in runs}


def pack(answer: dict) -> dict:
    """An answer made small for a recorded file: each stream's cells as the positions of its
    non-empty cells, in cell order (the strip says which cells); no step-level copies."""
    steps = []
    for st in answer["steps"]:
        streams = [{k: g[k] for k in ("stream", "head", "used", "strip")}
                   | {"pos": [c["pos"] for c in g["cells"]]} for g in st["streams"]]
        steps.append({k: v for k, v in st.items() if k not in ("strip", "cells", "streams")}
                     | {"streams": streams})
    return {**answer, "steps": steps}


def unpack(packed: dict) -> dict:
    """:func:`pack` undone; BadInput when the strip and the positions disagree."""
    steps = []
    for st in packed["steps"]:
        streams = []
        for g in st["streams"]:
            where = [i for i, ch in enumerate(g["strip"]) if ch != "."]
            if len(where) != len(g["pos"]):
                raise BadInput(f"step {st.get('index')}: {len(where)} cells in the strip, "
                               f"{len(g['pos'])} positions")
            cells = [{"cell": i, "pos": p, "mark": g["strip"][i]} for i, p in zip(where, g["pos"])]
            streams.append({k: g[k] for k in ("stream", "head", "used", "strip")} | {"cells": cells})
        step = {**st, "streams": streams}
        if packed.get("kv_unified") and streams:
            step["strip"], step["cells"] = streams[0]["strip"], streams[0]["cells"]
        steps.append(step)
    return {**packed, "steps": steps}

