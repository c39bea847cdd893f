"""The ``--vllm VERSION`` (old name ``--profile``) and ``--runner v1|v2`` options shared by the
commands, and their resolution into one release's rules (exit 2 with one sentence when bad)."""
from __future__ import annotations

from kvviz.core.versions import RUNNERS, Rules, range_sentence, resolve_runner, rules_for
from kvviz.errors import BadInput


def add_version_args(p, *, runner: bool = True, default: str | None = "main") -> None:
    p.add_argument("--vllm", "--profile", dest="vllm", metavar="VERSION", default=default,
                   help="follow the rules of this vLLM release (v0.11.0 .. v0.27.1, or main; a version "
                        "between releases follows the older one; the old profile names current, "
                        "2025-11 and 2025-early still work). --profile is its old name. "
                        + range_sentence())
    if runner:
        p.add_argument("--runner", choices=RUNNERS, default=None,
                       help="model runner: v1 (persistent batch) or v2 (request states, gathered tables; "
                            "vLLM's default for dense models from v0.25.0)")


def rules_from_args(args) -> Rules | None:
    """The rules ``--vllm`` names (None when it was not given and has no default)."""
    if args.vllm is None:
        return None
    try:
        return rules_for(args.vllm)
    except ValueError as e:
        raise BadInput(str(e)) from None


def runner_from_args(rules: Rules, args, **model) -> str:
    try:
        return resolve_runner(rules, getattr(args, "runner", None), **model)
    except ValueError as e:
        raise BadInput(str(e)) from None
