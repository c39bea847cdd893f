"""`kvviz engine-notation ENGINE [SCENARIO]`: a kvviz scenario through another engine's own code
(SGLang's pools and radix cache, llama.cpp's cells, each in its venv: scripts/engines.sh), beside
kvviz's model of that engine, and where vLLM (kvviz's simulation) keeps the same tokens.

Exit codes: 0 the engine and kvviz's model agree, 1 they differ, 2 bad input or no engine here.
``--model-only`` answers from kvviz's model alone (no engine needed).
"""
from __future__ import annotations

from kvviz.cli import dump_json, read_json_file
from kvviz.errors import BadInput


def register(sub) -> None:
    p = sub.add_parser("engine-notation", help="a scenario through SGLang's or llama.cpp's own code, "
                       "beside kvviz's model of it", description=__doc__,
                       formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
    p.add_argument("engine", choices=["sglang", "llamacpp"])
    p.add_argument("scenario", nargs="?", help="a kvviz scenario JSON (default: the Notations page's batch)")
    p.add_argument("--step", type=int, default=None, help="only this step (counted from 1)")
    p.add_argument("--page-size", type=int, default=16, help="SGLang's page size (default 16)")
    p.add_argument("--pool-tokens", type=int, default=None,
                   help="SGLang's pool in tokens (default: the scenario's num_blocks x block_size)")
    p.add_argument("--kv-unified", action=__import__("argparse").BooleanOptionalAction, default=True,
                   help="llama.cpp: one cell array for every sequence (default) or one stream each")
    p.add_argument("--model-only", action="store_true", help="kvviz's model alone; no engine run")
    p.add_argument("--engine-python", default=None, help="the engine venv's python (default: scripts/engines.sh's)")
    p.add_argument("--timeout", type=float, default=300.0)
    p.set_defaults(func=run)


def _scenario(path):
    if path is None:
        from kvviz.notations.engine_examples import example_scenario
        return example_scenario()
    return read_json_file(path)


def _vllm_slots(scenario: dict, n_steps: int) -> list[dict]:
    """Per step, each scheduled request's slots in kvviz's vLLM simulation."""
    from kvviz.core.engine import Engine
    from kvviz.core.scenario import parse_scenario
    from kvviz.notations.canonical import NotRepresentable, canonical_from_record

    sc = parse_scenario(scenario)
    eng, out = Engine(sc), []
    while len(out) < n_steps and not eng.done():
        rec = eng.step()
        try:
            c = canonical_from_record(rec, sc.config)
            out.append({r.req_id: list(r.slots) for r in c.requests})
        except NotRepresentable:
            out.append({})
    return out


def _sglang(args, scenario, schedule):
    from kvviz.notations.sglang_model import compare_sglang, driver_request, model_answer
    cfg = scenario.get("config", {})
    pool = args.pool_tokens or int(cfg.get("num_blocks", 32)) * int(cfg.get("block_size", 4))
    model = model_answer(schedule, page_size=args.page_size, pool_tokens=pool)
    real = None
    if not args.model_only:
        from kvviz.notations.engine_runs import run_driver
        real = run_driver("sglang", driver_request(schedule, page_size=args.page_size, pool_tokens=pool),
                          python=args.engine_python, timeout=args.timeout)
    knobs = {"page_size": args.page_size, "pool_tokens": pool}
    return knobs, real, model, (compare_sglang(real, model) if real else [])


def _llamacpp(args, scenario, schedule):
    from kvviz.notations import llamacpp_cells as lc
    model = lc.model_answer(schedule, kv_unified=args.kv_unified)
    real = None
    if not args.model_only:
        from kvviz.notations.engine_runs import run_driver
        real = run_driver("llamacpp", lc.driver_request(schedule, kv_unified=args.kv_unified),
                          python=args.engine_python, timeout=args.timeout)
    return ({"kv_unified": args.kv_unified}, real, model,
            (lc.compare_llamacpp(real, model) if real else []))


def _at(answer: dict | None, k: int):
    """Step ``k`` of an answer, or None (no engine run, or the run stopped before it: llama.cpp
    refuses a batch its cells cannot hold, and nothing after it is driven)."""
    if not answer:
        return None
    return next((st for st in answer["steps"] if st["index"] == k), None)


def run(args) -> int:
    from kvviz.notations.engine_runs import REAL_ENGINES
    from kvviz.notations.engine_schedule import schedule_from_scenario

    scenario = _scenario(args.scenario)
    schedule = schedule_from_scenario(scenario)
    n = len(schedule["steps"])
    if args.step is not None and not 1 <= args.step <= n:
        raise BadInput(f"--step {args.step}: the scenario runs {n} step(s), counted from 1")
    knobs, real, model, diff = (_sglang if args.engine == "sglang" else _llamacpp)(args, scenario, schedule)
    if "error" in model or (real and "error" in real):   # SGLang's own out-of-memory
        raise BadInput(f"{args.engine}: {(real or {}).get('error') or model.get('error')}")
    slots = _vllm_slots(scenario, n)
    pick = range(n) if args.step is None else [args.step - 1]
    eng = REAL_ENGINES[args.engine]
    print(dump_json({
        "engine": args.engine, "version": (real or {}).get("version", eng.version),
        "ran_engine": real is not None, "scenario": scenario.get("name", ""), "knobs": knobs,
        "equal": real is not None and not diff, "differences": diff,
        "steps": [{"step": k + 1, "engine": _at(real, k), "kvviz": _at(model, k),
                   "vllm_slots": slots[k] if k < len(slots) else {}} for k in pick]}))
    return 1 if diff else 0
