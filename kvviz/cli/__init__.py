"""``python -m kvviz <command>``: every computation and check, from scripts and CI.

Exit codes: 0 success (or clean), 1 findings/differences, 2 bad input (one line on stderr).
Each command lives in a ``register(subparsers)`` function; COMMANDS lists their modules.
"""
from __future__ import annotations

import argparse
import importlib
import os
import json
import sys

from kvviz.errors import BadInput, parse_json
from kvviz.files import read_bounded

# module paths that define register(subparsers); each adds one or more commands
COMMANDS = [
    "kvviz.cli.compute",
    "kvviz.cli.offset",
    "kvviz.cli.bench",
    "kvviz.cli.run",
    "kvviz.cli.check",
    "kvviz.cli.diff",
    "kvviz.cli.dcp",
    "kvviz.cli.replay",
    "kvviz.cli.engines",
]

MAX_INPUT_BYTES = 64 << 20


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse already exits 2; keep it to one line
        self.exit(2, f"{self.prog}: error: {message}\n")


def read_json_file(path: str):
    """Read an untrusted JSON file (a regular file, at most MAX_INPUT_BYTES); BadInput on any problem."""
    return parse_json(read_bounded(path, MAX_INPUT_BYTES), path)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kvviz", description=__doc__.splitlines()[0],
                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in COMMANDS:
        importlib.import_module(mod).register(sub)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BadInput as e:
        print(f"kvviz {args.command}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - one line and exit 2, never a traceback (KVVIZ_DEBUG=1 shows it)
        if os.environ.get("KVVIZ_DEBUG"):
            raise
        msg = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
        print(f"kvviz {args.command}: could not process the input ({type(e).__name__}{': ' + msg if msg else ''}); "
              "set KVVIZ_DEBUG=1 for the traceback", file=sys.stderr)
        return 2


def dump_json(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))
