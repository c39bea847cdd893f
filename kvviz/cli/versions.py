"""The ``--vllm VERSION`` (old name ``--profile``) and ``--runner v1|v2`` options shared by the
commands, and their resolution into one release's rules (exit 2 with one sentence when bad)."""
from __future__ import annotations

import sys

from kvviz.core.versions import (RUNNERS, Rules, beyond_newest_note, is_version_number, newer_than_known,
                                 range_sentence, resolve_runner, rules_for)
from kvviz.errors import BadInput


def add_version_args(p, *, runner: bool = True, default: str | None = "main") -> None:
    p.add_argument("--vllm", "--profile", dest="vllm", metavar="VERSION", default=default,
                   help="follow the rules of this vLLM release (--profile is its old name). "
                        + range_sentence())
    if runner:
        p.add_argument("--runner", choices=RUNNERS, default=None,
                       help="model runner: v1 (persistent batch) or v2 (request states, gathered tables; "
                            "vLLM's default for dense models from v0.25.0)")


def rules_from_args(args) -> Rules | None:
    """The rules ``--vllm`` names (None when it was not given and has no default). A version newer
    than every known release follows the newest, and one line on stderr says so."""
    if args.vllm is None:
        return None
    return checked_rules(args.vllm)


def checked_rules(name, prefix: str = "") -> Rules:
    """``rules_for(name)`` for a command line: BadInput (exit 2) when unknown, the newest-release
    note on stderr when ``name`` is newer than every known release."""
    try:
        rules = rules_for(name)
    except ValueError as e:
        raise BadInput(prefix + str(e)) from None
    announce_beyond_newest(name)
    return rules


def announce_beyond_newest(name) -> None:
    if newer_than_known(name):
        print(f"kvviz: {beyond_newest_note(name)}", file=sys.stderr)


def requested(name, rules: Rules) -> dict:
    """``{"vllm_requested": name}`` where the version number asked for is not the release whose rules
    ran (one newer than every known release, or one between two releases); else nothing (the old
    alias names are not version numbers and add nothing)."""
    if not isinstance(name, str) or not is_version_number(name) or name.strip().lstrip("v") == rules.name.lstrip("v"):
        return {}
    return {"vllm_requested": name.strip()[:60]}


def runner_from_args(rules: Rules, args, **model) -> str:
    try:
        return resolve_runner(rules, getattr(args, "runner", None), **model)
    except ValueError as e:
        raise BadInput(str(e)) from None
