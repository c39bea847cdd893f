"""`kvviz check DUMP`: every invariant a dump of a step's tables can be tested against."""
from __future__ import annotations

from kvviz.core.versions import ALIASES, LAST_V1_RELEASE, range_sentence  # noqa: F401 (ALIASES kept importable)
from kvviz.dumps.check import CHECKS, first_wrong_row, findings_to_json, resolve_profile, run_checks
from kvviz.cli import dump_json
from kvviz.cli.versions import announce_beyond_newest, requested
from kvviz.dumps.format import load_dump
from kvviz.errors import BadInput

PROFILE_SOURCE = {"option": "--vllm", "dump": "the dump's own key",
                  "default": "the default; the dump names none"}


def register(sub) -> None:
    p = sub.add_parser(
        "check", help="check a dump (.npz or .json) of one step's tables",
        description="Load a dump (format: docs/dumps.md) and run every check its tables allow: "
        + ", ".join(CHECKS) + ". Findings are ordered by row, so the first one names the first wrong "
        "row. Exit 0 when clean, 1 with findings, 2 when the file cannot be read.")
    p.add_argument("dump", metavar="DUMP", help="a dump, or a captured run (a directory holding manifest.json, or a "
                   ".zip of one): every step is checked under the run's own release and runner, the first wrong "
                   "step and row first")
    p.add_argument("--json", action="store_true",
                   help='print {"findings": [{"check", "row"?, "index"?, "message"}], "profile": P}')
    p.add_argument("--vllm", "--profile", dest="profile", metavar="VERSION", default=None,
                   help="check under the rules of vLLM VERSION (--profile is its old name; default: the dump's own "
                   "vllm/profile key, else main). " + range_sentence())
    p.add_argument("--runner", choices=["v1", "v2"], default=None,
                   help="the model runner the dump comes from, for a dump without a \"runner\" key (v2: its "
                        "block_table is the gathered input table, checked against state_block_table through "
                        "idx_mapping); a dump that names another runner is refused")
    p.set_defaults(func=run)


def run(args) -> int:
    from kvviz.cli import runs

    if runs.is_run(args.dump):
        return runs.check(args)
    dump = load_dump(args.dump, runner=args.runner)
    try:
        profile, source = resolve_profile(dump, args.profile)
    except ValueError as e:
        raise BadInput(str(e)) from None
    if (dump.runner or "v1") == "v1" and not profile.has_runner_v1:
        raise BadInput(f"this is a V1 dump, but vLLM {profile.name} has no V1 model runner (v0.34.0 deleted "
                       f"it; {LAST_V1_RELEASE} is the last release with V1): check it under an older --vllm")
    asked = args.profile if args.profile is not None else dump.vllm
    announce_beyond_newest(asked)
    findings = run_checks(dump, profile=profile)
    if args.json:
        out = findings_to_json(findings, profile)
        out.update(requested(asked, profile))
        if dump.runner is not None:
            out["runner"] = dump.runner
        print(dump_json(out))
    elif not findings:
        print(f"{args.dump}: clean ({dump.num_reqs} live rows)")
    else:
        first = first_wrong_row(findings)
        head = f"first wrong row: {first}" if first is not None else "no row is wrong; see below"
        print(f"{args.dump}: {len(findings)} finding(s); {head}")
        for f in findings:
            where = f"row {f.row}" if f.row is not None else "-"
            print(f"  [{f.check}] {where}: {f.message}")
    if not args.json:
        print(f"checked under vLLM {profile.name} ({PROFILE_SOURCE[source]})")
    return 1 if findings else 0
