"""`kvviz bench [--json OUT] [--quick]`: time the kernels and print a table."""
from __future__ import annotations

import contextlib
import json
import sys


def register(sub) -> None:
    p = sub.add_parser("bench", help="time the Triton kernels (GPU, or the interpreter on a CPU)",
                       description="Per kernel and shape: median µs, GB/s, ratio to an empty launch and to "
                       "the byte floor; slot mapping per-request vs flat vs torch indexing; block-table "
                       "H2D commits. Prints a table; --json writes every figure.")
    p.add_argument("--json", metavar="OUT", help="write the full results as JSON here")
    p.add_argument("--quick", action="store_true", help="fewer shapes")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=run)


def _bar(done: int, total: int, msg: str) -> None:
    width = 30
    fill = int(width * done / max(total, 1))
    sys.stderr.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total} {msg[:60]:<60}")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def run(args) -> int:
    from kvviz.gpu.bench.run import format_table, run_bench
    from kvviz.errors import BadInput
    from kvviz.files import atomic_writer

    with contextlib.ExitStack() as stack:
        out = None
        if args.json:  # opened first (a bad path should not cost a whole run), renamed into place last
            try:
                out = stack.enter_context(atomic_writer(args.json))
            except OSError as e:
                raise BadInput(f"cannot write {args.json}: {e.strerror or e}") from None
        result = run_bench(quick=args.quick, progress=None if args.no_progress else _bar)
        if not args.no_progress:
            sys.stderr.write("\n")
        if out is not None:
            json.dump(result, out, indent=1)
    print(format_table(result))
    return 0
