"""The vLLM version and model runner the table pages simulate (no streamlit): the choices their
selectors offer, what "auto" means for a version, and whether a model can leave V1 at all.

Model Runner V2 first shipped in v0.12.0 (#25266), opt-in; from v0.25.0 it is the default for dense
models (a model with a state group (Mamba-like) or several KV-cache groups (hybrid) stays on V1); from
v0.29.0 (#53183) it is the default for every model; v0.34.0 has no V1 at all.
"""
from __future__ import annotations

from dataclasses import dataclass

from kvviz.core.versions import MAIN, MAIN_COMMIT, NEWEST, RELEASES, RUNNERS, VERSIONS, resolve_runner, rules_for

AUTO = "auto"
VERSION_CHOICES = tuple(reversed(VERSIONS))     # newest first; main (2026-08-18) in its place
RUNNER_CHOICES = (AUTO, *RUNNERS)
DEFAULT_VERSION = MAIN
DEFAULT_RUNNER = AUTO


def runner_choices(version: str) -> tuple[str, ...]:
    """The runner selector's options for ``version``: v2 only where V2 exists (v0.12.0 on), v1 only
    where V1 still ships (up to v0.33.0)."""
    rules = rules_for(version)
    if not rules.has_runner_v2:
        return (AUTO, "v1")
    if not rules.has_runner_v1:
        return (AUTO, "v2")
    return RUNNER_CHOICES


def v1_only(groups, version: str | None = None) -> bool:
    """A model vLLM keeps on Model Runner V1: a state group, or several KV-cache groups, in a release
    that does not yet run every model on V2 (before v0.29.0; ``version`` None: the kind alone)."""
    groups = list(groups)
    kind_v1 = len(groups) > 1 or any(getattr(g, "kind", "full") == "state" for g in groups)
    if not kind_v1 or version is None:
        return kind_v1
    return rules_for(version).runner_for(state_groups=True, hybrid=True) == "v1"


@dataclass(frozen=True)
class RunnerChoice:
    """The runner in effect on a page: ``runner`` (v1 | v2), for ``version`` (a known version), as
    chosen (``choice``: auto | v1 | v2). ``forced_v1``: v2 was asked (or would be picked) but the
    model is V1 only. ``refused``: the choice named a runner the version does not ship (v2 before
    v0.12.0: then v1; v1 in v0.34.0: then v2)."""
    version: str
    choice: str
    runner: str
    auto_runner: str
    forced_v1: bool = False
    refused: bool = False

    @property
    def override(self) -> str | None:
        """The scenario config's ``runner`` for this choice (None: the version picks)."""
        if self.forced_v1:
            return "v1"
        if self.refused:
            return self.runner
        return None if self.choice == AUTO else self.choice


def pick_runner(version: str | None, choice: str | None = AUTO, *, groups=None) -> RunnerChoice:
    """The runner a page simulates for ``version`` and the selector's ``choice``; ``groups`` (the
    model's KV-cache groups, default one full group) can keep it on V1."""
    rules = rules_for(version or DEFAULT_VERSION)
    only_v1 = v1_only(groups, rules.name) if groups is not None else False
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
        return RunnerChoice(rules.name, choice, "v1" if choice == "v2" else "v2", auto, refused=True)
    return RunnerChoice(rules.name, choice, runner, auto)


def shown_version(version: str) -> str:
    """A version as a page's caption names it: the release, or main with its commit and date."""
    return f"main {MAIN_COMMIT}" if version == MAIN else version


def version_option(version: str, lang: str = "en") -> str:
    """A version picker's label for ``version``: the version itself first (typing its start filters
    the list by prefix), the newest release marked, main with its date."""
    from kvviz.texts.i18n import t

    if version == MAIN:
        return t("step_through", "vllm_main", lang)
    if version == NEWEST:
        return t("app", "newest", lang, version=version)
    return version


def picker_help(lang: str = "en") -> str:
    """What every version picker says: newest first, the newest release kvviz knows, the prefix filter."""
    from kvviz.texts.i18n import t

    return t("app", "picker_help", lang, newest=NEWEST, oldest=RELEASES[0], main=MAIN_COMMIT)


def prefix_matches(options, typed: str, label=str) -> list:
    """The options a prefix filter keeps for ``typed`` (case-insensitive, on the labels): what the
    pickers' ``filter_mode="prefix"`` does in the browser."""
    typed = typed.strip().lower()
    return [o for o in options if label(o).lower().startswith(typed)]
