"""`kvviz diff A B`: where two dumps of a step's tables differ."""
from __future__ import annotations

from kvviz.cli import dump_json
from kvviz.cli.versions import announce_beyond_newest, requested
from kvviz.dumps.diff import diff_dumps
from kvviz.dumps.format import load_dump
from kvviz.errors import BadInput


def register(sub) -> None:
    p = sub.add_parser(
        "diff", help="compare two dumps table by table",
        description="For every table both dumps carry, list the rows that differ with the first "
        "differing column and both values (a 1-D array is one row), then each dump's stale rows "
        "(CPU table vs device mirror). Equal means the same keys with the same values: a table only "
        "one dump carries is a difference. Exit 0 when equal, 1 when different, 2 when a file cannot "
        "be read.")
    p.add_argument("a", metavar="A", help="a dump, or a captured run (directory or .zip): runs are compared step by "
                   "step (rows by request id, then each group's tables); the first differing step, table and row")
    p.add_argument("b", metavar="B")
    p.add_argument("--json", action="store_true",
                   help='print {"differences": [{"table", "row", "col", "a", "b"}], "stale_rows": '
                        '{"a": [...], "b": [...]}, "only_in"?: {...}, "equal": bool}')
    p.add_argument("--vllm", "--profile", dest="vllm", metavar="VERSION", default=None,
                   help="the vLLM release whose rules say which rows past num_reqs may differ on the device "
                        "(default: each dump's own \"vllm\"/\"profile\" key, else main); the JSON output then "
                        'has "vllm": {"a": ..., "b": ...} and each non-live stale row an "expected" flag')
    p.set_defaults(func=run)


def _rules(dump, option):
    from kvviz.dumps.check import resolve_profile
    try:
        return resolve_profile(dump, option)[0]
    except ValueError as e:
        raise BadInput(f"--vllm: {e}") from None


def run(args) -> int:
    from kvviz.cli import runs

    if runs.is_run(args.a) or runs.is_run(args.b):
        return runs.diff(args)
    a, b = load_dump(args.a), load_dump(args.b)
    rules = {"a": _rules(a, args.vllm), "b": _rules(b, args.vllm)}
    asked = {"a": args.vllm if args.vllm is not None else a.vllm, "b": args.vllm if args.vllm is not None else b.vllm}
    for name in dict.fromkeys(asked.values()):
        announce_beyond_newest(name)
    res = diff_dumps(a, b, rules_a=rules["a"], rules_b=rules["b"])
    if args.json:
        out = res.to_json()
        out["vllm"] = {side: r.name for side, r in rules.items()}
        extra = {side: requested(asked[side], r).get("vllm_requested") for side, r in rules.items()}
        if any(extra.values()):
            out["vllm_requested"] = {side: v for side, v in extra.items() if v}
        print(dump_json(out))
        return 0 if res.equal else 1
    if res.equal:
        print("equal")
    else:
        n_only = sum(len(v) for v in res.only_in.values())
        parts = [f"{len(res.differences)} difference(s)"] if res.differences else []
        if n_only:
            parts.append(f"{n_only} table(s) in one dump only")
        print("; ".join(parts) if res.differences else "different: " + parts[0])
    for d in res.differences:
        print(f"  {d.table}{d.where()}: a={d.a} b={d.b}")
    for k, n in res.truncated.items():
        print(f"  {k}: {n} more differing rows not listed")
    for side, only in res.only_in.items():
        print(f"  only {side.upper()} has: {', '.join(only)}")
    for side, path in (("a", args.a), ("b", args.b)):
        rows = res.stale_rows[side]
        live = [s for s in rows if s["live"]]
        rest = [s for s in rows if not s["live"]]
        if live:
            print(f"stale rows in {path} (live rows whose device mirror differs from the CPU table):")
            for s in live:
                print(f"  row {s['row']} (live) col {s['col']}: cpu={s['cpu']} device={s['device']}")
        if rest:
            print(f"rows past num_reqs in {path} where the device copy differs from the CPU table "
                  f"(not live, so not stale; `kvviz check` judges the padded ones): "
                  + ", ".join(str(s["row"]) + ("" if s.get("expected") else " (not what vLLM "
                                               f"{rules[side].name} leaves)") for s in rest))
    return 0 if res.equal else 1
