"""`kvviz run SCENARIO.json`: replay a scenario and print every step's tables and events."""
from __future__ import annotations

import json

from kvviz.cli import read_json_file
from kvviz.core.engine import FAULTS, Engine
from kvviz.errors import BadInput
from kvviz.views.report import step_to_json, step_to_text
from kvviz.core.scenario import parse_scenario


def register(sub) -> None:
    p = sub.add_parser(
        "run", help="replay a scenario step by step",
        description="Replay a scenario deterministically and print each step's scheduled requests, "
        "block tables (CPU and device mirror), slot mapping, FlashInfer CSR arrays and events. "
        "See README.md (the scenario format) and kvviz/core/scenario.py; unknown keys and mistyped values are refused (exit 2).")
    p.add_argument("scenario", metavar="SCENARIO.json")
    p.add_argument("--json", action="store_true", help="one JSON object: {scenario, steps: [...]}")
    p.add_argument("--max-steps", type=int, default=1000)
    p.add_argument("--fault", action="append", default=[], choices=list(FAULTS),
                   help="inject a classic bookkeeping bug (repeatable)")
    p.set_defaults(func=run)


def _refuse_npz(path: str) -> None:
    """A .npz table dump is a zip archive: say what `run` expected instead of "not UTF-8"."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return  # read_json_file says why, in its own words
    if head == b"PK\x03\x04":
        raise BadInput(f"{path}: expected a scenario JSON file (an object with 'config', 'requests' and "
                       f"'actions'), but this is a .npz table dump; read it with `kvviz check` or `kvviz diff`")


def run(args) -> int:
    if args.max_steps < 1:
        raise BadInput("--max-steps must be positive")
    _refuse_npz(args.scenario)
    scenario = parse_scenario(read_json_file(args.scenario))
    engine = Engine(scenario, faults=set(args.fault))
    history = engine.run(args.max_steps)
    if args.json:
        print(json.dumps({"scenario": scenario.name, "profile": scenario.config.profile,
                          "steps": [step_to_json(r, scenario.config) for r in history]},
                         separators=(",", ":")))
    else:
        print(f"# {scenario.name} ({len(history)} steps, profile {scenario.config.profile})")
        for r in history:
            print(step_to_text(r, scenario.config))
    return 0
