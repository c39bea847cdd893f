"""`kvviz replay RUN`: simulate a captured vLLM run with kvviz's engine and compare every captured step."""
from __future__ import annotations

import time

from kvviz.cli import dump_json
from kvviz.cli.versions import announce_beyond_newest


def register(sub) -> None:
    p = sub.add_parser(
        "replay", help="simulate a captured vLLM run and compare it step by step",
        description="Simulate a captured run (a directory holding manifest.json, or a .zip of one) with kvviz's "
        "engine under the run's own release, runner and config, with its requests and generated tokens, and "
        "compare every captured step: the scheduled requests and token counts, the scheduler's running "
        "requests and blocks, each row's blocks, the block tables, slot mapping, positions, query_start_loc, "
        "seq_lens, the CSR, ref counts and the free queue where captured. Exit 0 when every step is equal, 1 "
        "with the first divergence, 2 when the run is unreadable or uses a setting kvviz does not model.")
    p.add_argument("run", metavar="RUN_DIR", help="a captured run (kvviz.capture), a directory or a .zip")
    p.add_argument("--json", action="store_true",
                   help='print {"equal", "first": {"step", "group", "table", "row", "index", "where", "req_id", '
                        '"captured", "kvviz"} | null, "steps_compared", ...}')
    p.set_defaults(func=run)


def run(args) -> int:
    from kvviz.capture.run import load_run
    from kvviz.replay import replay_run

    t0 = time.perf_counter()
    captured = load_run(args.run)
    announce_beyond_newest(captured.vllm)
    result = replay_run(captured)
    seconds = time.perf_counter() - t0
    if args.json:
        print(dump_json({**result.to_json(), "seconds": round(seconds, 3)}))
        return 0 if result.equal else 1
    head = (f"{result.label}: vLLM {captured.manifest.get('vllm_version', captured.vllm)} (rules {result.vllm}), "
            f"runner {result.runner}")
    if result.equal:
        print(f"{head}: equal at all {result.steps_compared} captured step(s) "
              f"({result.steps_simulated} simulated, {seconds:.2f} s)")
    else:
        print(f"{head}: first divergence at {result.first.text()}")
        print(f"{result.steps_compared} captured step(s) before it were equal")
    for note in result.notes:
        print(f"note: {note}")
    return 0 if result.equal else 1
