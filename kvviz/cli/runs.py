"""`kvviz check RUN` and `kvviz diff RUN_A RUN_B` on captured runs (a directory or a .zip of one).

A run is recognised by its ``manifest.json`` (or a ``.zip`` name); the same exit codes as for dumps:
0 clean / equal, 1 findings / different, 2 unreadable."""
from __future__ import annotations

from kvviz.capture.report import check_run, diff_runs
from kvviz.capture.run import is_run_path, load_run
from kvviz.cli import dump_json
from kvviz.cli.versions import announce_beyond_newest

MAX_LISTED = 20


def is_run(path: str) -> bool:
    return is_run_path(path)


def _where(f: dict) -> str:
    req = f" (request {f['req_id']})" if f.get("req_id") is not None else ""
    row = f"row {f['row']}{req}" if f.get("row") is not None else "-"
    return f"step {f['step']} group {f['group']} {row}"


def check(args) -> int:
    run = load_run(args.dump)
    if args.runner is not None and args.runner != run.runner:
        from kvviz.errors import BadInput

        raise BadInput(f"{run.label} was captured under runner {run.runner!r}; --runner says {args.runner!r}")
    announce_beyond_newest(args.profile if args.profile is not None else run.vllm)
    report = check_run(run, args.profile)
    findings = [f for s in report.bad for f in s.to_json()]
    if args.json:
        print(dump_json({"run": run.label, "vllm": report.vllm, "runner": report.runner, "steps": report.steps,
                         "steps_with_findings": sorted({s.step for s in report.bad}),
                         "dropped_steps": run.manifest.get("dropped_steps", 0),
                         "first": report.first_json(), "findings": findings}))
        return 1 if report.bad else 0
    head = f"{run.label}: {report.steps} captured step(s) of vLLM {run.manifest.get('vllm_version', run.vllm)}, runner {run.runner}"
    if not report.bad:
        print(f"{head}: clean")
    else:
        first = report.first_json()
        steps = sorted({s.step for s in report.bad})
        print(f"{head}: findings at {len(steps)} step(s)")
        print(f"first wrong: {_where(first)}: [{first['check']}] {first['message']}")
        for f in findings[:MAX_LISTED]:
            print(f"  {_where(f)}: [{f['check']}] {f['message']}")
        if len(findings) > MAX_LISTED:
            print(f"  ... {len(findings) - MAX_LISTED} more finding(s); --json lists them all")
    if run.manifest.get("dropped_steps"):
        print(f"note: the capture dropped {run.manifest['dropped_steps']} step(s) (its writer fell behind)")
    print(f"checked under vLLM {report.vllm} ({'--vllm' if args.profile is not None else 'the run manifest'})")
    return 1 if report.bad else 0


def diff(args) -> int:
    a, b = load_run(args.a), load_run(args.b)
    res = diff_runs(a, b)
    if args.json:
        print(dump_json(res))
        return 0 if res["equal"] else 1
    s = res["steps"]
    if res["equal"]:
        print(f"equal: {s['common']} step(s)")
        return 0
    first = res["first"]
    if first is not None:
        where = f"step {first['step']}" + (f" group {first['group']}" if first.get("group") is not None else "")
        where += f" {first['table']}" + (f" row {first['row']}" if first.get("row") is not None else "")
        where += f" col {first['col']}" if first.get("col") is not None else ""
        print(f"first difference: {where}: a={first['a']} b={first['b']}")
        print(f"{res['differing_steps']} of {s['common']} common step(s) differ")
    for side in ("a", "b"):
        if res["only_in"][side]:
            print(f"steps only in {side.upper()}: {', '.join(map(str, res['only_in'][side]))}")
    return 1
