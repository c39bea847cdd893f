"""`kvviz diff A B`: where two dumps of a step's tables differ."""
from __future__ import annotations

from ..cli import dump_json
from ..diff import diff_dumps
from ..dump import load_dump


def register(sub) -> None:
    p = sub.add_parser(
        "diff", help="compare two dumps table by table",
        description="For every table both dumps carry, list the rows that differ with the first "
        "differing column and both values (a 1-D array is one row), then each dump's stale rows "
        "(CPU table vs device mirror). Exit 0 when equal, 1 when different, 2 when a file cannot "
        "be read.")
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--json", action="store_true",
                   help='print {"differences": [{"table", "row", "col", "a", "b"}], "stale_rows": '
                        '{"a": [...], "b": [...]}}')
    p.set_defaults(func=run)


def run(args) -> int:
    a, b = load_dump(args.a), load_dump(args.b)
    res = diff_dumps(a, b)
    if args.json:
        print(dump_json(res.to_json()))
        return 0 if res.equal else 1
    print("equal" if res.equal else f"{len(res.differences)} difference(s)")
    for d in res.differences:
        where = "" if d.row is None else f" row {d.row} col {d.col}"
        print(f"  {d.table}{where}: a={d.a} b={d.b}")
    for k, n in res.truncated.items():
        print(f"  {k}: {n} more differing rows not listed")
    for side, only in res.only_in.items():
        print(f"  only {side.upper()} has: {', '.join(only)}")
    for side, path in (("a", args.a), ("b", args.b)):
        rows = res.stale_rows[side]
        if rows:
            print(f"stale rows in {path} (device mirror differs from the CPU table):")
            for s in rows:
                print(f"  row {s['row']}{' (live)' if s['live'] else ''} col {s['col']}: "
                      f"cpu={s['cpu']} device={s['device']}")
    return 0 if res.equal else 1
