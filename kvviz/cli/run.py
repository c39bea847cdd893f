"""`kvviz run SCENARIO.json`: replay a scenario and print every step's tables and events."""
from __future__ import annotations

import json
import sys

from kvviz.cli import MAX_INPUT_BYTES
from kvviz.core.engine import FAULTS, Engine
from kvviz.errors import BadInput, parse_json
from kvviz.files import read_bounded
from kvviz.views.report import step_to_json, step_to_text
from kvviz.core.scenario import parse_scenario
from kvviz.core.versions import resolve_runner, rules_for
from kvviz.cli.versions import add_version_args, announce_beyond_newest, requested, rules_from_args, runner_from_args

EXIT_CUT_SHORT = 3
"""`run`'s exit status when --max-steps stopped the replay before every request finished."""


def register(sub) -> None:
    p = sub.add_parser(
        "run", help="replay a scenario step by step",
        description="Replay a scenario deterministically and print each step's scheduled requests, "
        "block tables (CPU and device mirror), slot mapping, FlashInfer CSR arrays and events. "
        "See docs/cli.md (the scenario format) and kvviz/core/scenario.py; unknown keys and mistyped values are refused (exit 2).")
    p.add_argument("scenario", metavar="SCENARIO.json")
    p.add_argument("--json", action="store_true", help="one JSON object: {scenario, steps: [...]}")
    p.add_argument("--max-steps", type=int, default=1000)
    add_version_args(p, default=None)
    p.add_argument("--fault", action="append", default=[], choices=list(FAULTS),
                   help="inject a classic bookkeeping bug (repeatable)")
    p.add_argument("--dump", type=int, metavar="STEP",
                   help="write the table dump of step STEP (0-based, as printed) to --out instead of printing "
                        "the replay; read it back with `kvviz check` / `kvviz diff`")
    p.add_argument("--out", metavar="FILE.npz|FILE.json", help="where --dump writes (JSON if it ends in .json)")
    p.add_argument("--group", type=int, default=0, help="the KV-cache group --dump writes (default 0)")
    p.set_defaults(func=run)


def _refuse_npz(path: str, raw: bytes) -> None:
    """A .npz table dump is a zip archive: say what `run` expected instead of "not UTF-8"."""
    if raw[:4] == b"PK\x03\x04":
        raise BadInput(f"{path}: expected a scenario JSON file (an object with 'config', 'requests' and "
                       f"'actions'), but this is a .npz table dump; read it with `kvviz check` or `kvviz diff`")


def _override_version(config, args) -> None:
    """--vllm and --runner replace the scenario's own 'vllm' and 'runner' keys."""
    rules = rules_from_args(args)
    if rules is not None:
        config.profile, config.vllm = args.vllm, rules.name
    if args.runner is not None:
        runner_from_args(rules_for(config.vllm), args)   # refuses v2 before v0.12.0, exit 2
        config.runner = args.runner
    elif config.runner is not None:
        try:   # the scenario's own runner under the --vllm asked for (v1 is gone in v0.34.0)
            resolve_runner(rules_for(config.vllm), config.runner)
        except ValueError as e:
            raise BadInput(f"the scenario's \"runner\": {config.runner!r}: {e}") from None


def run(args) -> int:
    if args.max_steps < 1:
        raise BadInput("--max-steps must be positive")
    raw = read_bounded(args.scenario, MAX_INPUT_BYTES)
    _refuse_npz(args.scenario, raw)
    scenario = parse_scenario(parse_json(raw, args.scenario))
    if args.vllm is None:
        announce_beyond_newest(scenario.config.profile)
    _override_version(scenario.config, args)
    if (args.dump is None) != (args.out is None):
        raise BadInput("--dump STEP and --out FILE go together")
    engine = Engine(scenario, faults=set(args.fault))
    history = engine.run(args.max_steps)
    if args.dump is not None:
        return _write_dump(args, scenario, history)
    if args.json:
        print(json.dumps({"scenario": scenario.name, "profile": scenario.config.profile,
                          "vllm": scenario.config.vllm,
                          **requested(scenario.config.profile, rules_for(scenario.config.vllm)),
                          "runner": engine.runner,
                          "steps": [step_to_json(r, scenario.config) for r in history]},
                         separators=(",", ":")))
    else:
        print(f"# {scenario.name} ({len(history)} steps, vLLM {scenario.config.vllm}, "
              f"runner {engine.runner})")
        for r in history:
            print(step_to_text(r, scenario.config))
    if not engine.done():
        print(f"kvviz run: stopped at --max-steps {args.max_steps} with {engine.unfinished_count()} "
              "request(s) not finished; the output above is a partial replay", file=sys.stderr)
        return EXIT_CUT_SHORT
    return 0


def _write_dump(args, scenario, history) -> int:
    """`--dump STEP --out FILE`: the dump of one step of one group, written atomically."""
    from kvviz.dumps.capture import dump_from_step
    from kvviz.dumps.format import save_dump

    if not history:
        raise BadInput("the scenario has no step (no request ever arrives)")
    if not 0 <= args.dump < len(history):
        raise BadInput(f"--dump {args.dump}: the replay has steps 0 .. {len(history) - 1}")
    groups = len(scenario.config.groups)
    if not 0 <= args.group < groups:
        raise BadInput(f"--group {args.group}: the scenario has groups 0 .. {groups - 1}")
    if not args.out.endswith((".npz", ".json")):
        raise BadInput(f"--out {args.out[:80]!r} must end in .npz or .json")
    try:
        save_dump(dump_from_step(history[args.dump], scenario.config, group=args.group), args.out)
    except OSError as e:
        raise BadInput(f"cannot write {args.out}: {e.strerror or e}") from None
    print(f"wrote {args.out}: step {args.dump}, group {args.group}", file=sys.stderr)
    return 0
