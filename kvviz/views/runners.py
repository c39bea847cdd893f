"""The vLLM version and model runner the table pages simulate (no streamlit): the choices their
selectors offer, what "auto" means for a version, and whether a model can leave V1 at all.

Model Runner V2 first shipped in v0.12.0 (#25266), opt-in; from v0.25.0 it is the default for dense
models. A model with a state group (Mamba-like) or several KV-cache groups (hybrid) stays on V1.
"""
from __future__ import annotations

from dataclasses import dataclass

from kvviz.core.versions import MAIN, RUNNERS, VERSIONS, resolve_runner, rules_for

AUTO = "auto"
VERSION_CHOICES = tuple(reversed(VERSIONS))     # main first, then the releases newest first
RUNNER_CHOICES = (AUTO, *RUNNERS)
DEFAULT_VERSION = MAIN
DEFAULT_RUNNER = AUTO


def runner_choices(version: str) -> tuple[str, ...]:
    """The runner selector's options for ``version``: v2 only where V2 exists (v0.12.0 on)."""
    return RUNNER_CHOICES if rules_for(version).has_runner_v2 else (AUTO, "v1")


def v1_only(groups) -> bool:
    """A model vLLM keeps on Model Runner V1: a state group, or several KV-cache groups."""
    groups = list(groups)
    return len(groups) > 1 or any(getattr(g, "kind", "full") == "state" for g in groups)


@dataclass(frozen=True)
class RunnerChoice:
    """The runner in effect on a page: ``runner`` (v1 | v2), for ``version`` (a known version), as
    chosen (``choice``: auto | v1 | v2). ``forced_v1``: v2 was asked (or would be picked) but the
    model is V1 only. ``refused``: the choice named v2 on a version without it (then v1)."""
    version: str
    choice: str
    runner: str
    auto_runner: str
    forced_v1: bool = False
    refused: bool = False

    @property
    def override(self) -> str | None:
        """The scenario config's ``runner`` for this choice (None: the version picks)."""
        if self.forced_v1 or self.refused:
            return "v1"
        return None if self.choice == AUTO else self.choice


def pick_runner(version: str | None, choice: str | None = AUTO, *, groups=None) -> RunnerChoice:
    """The runner a page simulates for ``version`` and the selector's ``choice``; ``groups`` (the
    model's KV-cache groups, default one full group) can keep it on V1."""
    rules = rules_for(version or DEFAULT_VERSION)
    only_v1 = v1_only(groups) if groups is not None else False
    auto = rules.runner_for(state_groups=only_v1, hybrid=only_v1)
    choice = choice if choice in RUNNER_CHOICES else AUTO
    if choice == AUTO:
        dense_auto = rules.runner_for()
        return RunnerChoice(rules.name, choice, auto, auto, forced_v1=only_v1 and dense_auto == "v2")
    if only_v1 and choice == "v2":
        return RunnerChoice(rules.name, choice, "v1", auto, forced_v1=True)
    try:
        runner = resolve_runner(rules, choice)
    except ValueError:
        return RunnerChoice(rules.name, choice, "v1", auto, refused=True)
    return RunnerChoice(rules.name, choice, runner, auto)
