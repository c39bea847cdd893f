"""vLLM's bookkeeping rules, release by release.

Every rule kvviz models is a ``Rule``: the field of ``Rules`` it sets, the vLLM pull request that
introduced it, that PR's merge date and the first plain release tag containing it (read from vLLM's
git history with ``git tag --contains``). ``rules_for("v0.21.1")`` gives the rules of the newest known
release at or before the version asked for; nothing is ever mixed across releases. The dated
profile names of earlier kvviz versions are aliases: ``current`` = ``main``, ``2025-11`` = ``v0.11.1``,
``2025-early`` = ``v0.11.0``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

# every plain release tag from v0.11.0 on (release candidates are not releases), then main
RELEASES = ("v0.11.0", "v0.11.1", "v0.11.2", "v0.12.0", "v0.13.0", "v0.14.0", "v0.14.1", "v0.15.0",
            "v0.15.1", "v0.16.0", "v0.17.0", "v0.17.1", "v0.18.0", "v0.18.1", "v0.19.0", "v0.19.1",
            "v0.20.0", "v0.20.1", "v0.20.2", "v0.21.0", "v0.22.0", "v0.22.1", "v0.23.0", "v0.24.0",
            "v0.25.0", "v0.25.1", "v0.26.0", "v0.27.0", "v0.27.1")
MAIN = "main"
MAIN_COMMIT = "ef47a897e (2026-08-18)"
VERSIONS = (*RELEASES, MAIN)
ALIASES = {"current": MAIN, "2025-11": "v0.11.1", "2025-early": "v0.11.0"}
RUNNERS = ("v1", "v2")
ATTN_BACKENDS = ("flash_attn", "flashinfer", "triton", "flex")


@dataclass(frozen=True)
class Rules:
    """What one vLLM release does. The defaults are v0.11.0's; ``RULES`` changes them release by
    release."""
    name: str = "v0.11.0"
    # --- block pool ---
    # freed blocks without a hash go to the front of the free queue (reused first); hashed ones to
    # the back (LRU). Before: every freed block appended.
    prepend_unhashed_on_free: bool = False
    # with prefix caching off every block is hash-less; whether the rule above applies then
    prepend_when_caching_off: bool = False
    # --- scheduler ---
    # a waiting request is admitted only when its whole prompt fits (scheduler_reserve_full_isl)
    reserve_full_prompt: bool = False
    # --- V1 persistent batch ---
    remove_clears_row: bool = False          # clear_row on removal
    move_row_clears_source: bool = False     # move_row zeroes its source
    reorder: str = "pairs"                   # pairs | regions3 | regions4 (decode-first reorder)
    width_alignment: str = "none"            # none | pow2 | lcm (row width rounded to 128 tokens)
    # the slot mapping is computed on the device from the committed mirror (before: numpy on the CPU)
    slot_mapping_from_device_table: bool = False
    # padded block-table rows on the device: None (never written: the mirror as it is), -1, or 0
    padded_row_fill: int | None = None
    # --- FlashInfer page index ---
    empty_last_page_len_is_zero: bool = False   # a row with no (local) token: 0, before: page size
    padded_last_page_len_one: bool = True       # padded decode rows carry last_page_len 1
    mamba_align_mode: bool = False              # Mamba prefix caching in align mode exists
    # --- cache layout: flash_attn/flex: kv_first (2,N,B,H,D) | blocks_first (N,2,B,H,D); packed:
    # every backend [N,B,H,2D]
    cache_layout_era: str = "kv_first"
    # --- model runners ---
    has_runner_v2: bool = False               # Model Runner V2 exists (opt-in)
    default_runner: str = "v1"                # what a dense generate model gets

    @property
    def alias(self) -> str | None:
        """The dated name earlier kvviz versions gave these rules, if any."""
        return next((a for a, v in ALIASES.items() if v == self.name), None)

    @property
    def label(self) -> str:
        """The name shown in messages and outputs: the old dated alias where there is one (so
        earlier outputs stay the same), else the release."""
        return self.alias or self.name

    @property
    def description(self) -> str:
        where = f"vLLM main at {MAIN_COMMIT}" if self.name == MAIN else f"vLLM {self.name}"
        return f"{where}: " + "; ".join(r.summary for r in RULES if version_key(r.first_release)
                                        <= version_key(self.name))

    def runner_for(self, *, state_groups: bool = False, hybrid: bool = False) -> str:
        """The model runner this release picks: V2 for dense models from v0.25.0, V1 otherwise
        (hybrid models and models with state groups stay on V1)."""
        if state_groups or hybrid:
            return "v1"
        return self.default_runner


@dataclass(frozen=True)
class Rule:
    field: str
    value: object
    pr: int
    date: str
    first_release: str        # a tag in RELEASES, or "main"
    summary: str


RULES = (
    Rule("reorder", "regions3", 27367, "2025-10-28", "v0.11.1",
         "decode-first reorder in three regions (decode, extend, prefill) by a cycle-following permutation"),
    Rule("empty_last_page_len_is_zero", True, 25438, "2025-11-14", "v0.11.1",
         "last_page_len 0 for a row with no local token"),
    Rule("padded_row_fill", -1, 28579, "2025-11-26", "v0.12.0",
         "padded block-table rows filled with -1 on the device"),
    Rule("padded_last_page_len_one", False, 28579, "2025-11-26", "v0.12.0",
         "padded decode rows no longer given last_page_len 1"),
    Rule("has_runner_v2", True, 25266, "2025-11-21", "v0.12.0",
         "Model Runner V2 available (opt-in, VLLM_USE_V2_MODEL_RUNNER=1)"),
    Rule("mamba_align_mode", True, 30877, "2026-01-24", "v0.15.0",
         "Mamba prefix caching in align mode: a state row keeps null blocks before its last state block"),
    Rule("reorder", "regions4", 37303, "2026-03-20", "v0.19.0",
         "reorder gains a short_extend region (a 1-token prefill chunk is not a decode)"),
    Rule("slot_mapping_from_device_table", True, 32951, "2026-03-23", "v0.19.0",
         "slot mapping computed on the device from the committed table"),
    Rule("remove_clears_row", True, 37728, "2026-03-24", "v0.19.0",
         "clear_row when a request is removed"),
    Rule("reserve_full_prompt", True, 37307, "2026-03-24", "v0.19.0",
         "a waiting request is admitted only if its whole prompt fits (scheduler_reserve_full_isl)"),
    Rule("padded_row_fill", 0, 35431, "2026-03-30", "v0.20.0",
         "padded block-table rows point at the null block 0"),
    Rule("width_alignment", "pow2", 39324, "2026-05-06", "v0.21.0",
         "block-table width aligned to 128 tokens (block sizes up to 128)"),
    Rule("cache_layout_era", "blocks_first", 42095, "2026-05-26", "v0.23.0",
         "FlashAttention and Flex caches num-blocks-first (N, 2, B, H, D)"),
    Rule("prepend_unhashed_on_free", True, 42656, "2026-06-16", "v0.24.0",
         "freed blocks without a hash go to the front of the free queue"),
    Rule("prepend_when_caching_off", True, 42656, "2026-06-16", "v0.24.0",
         "with prefix caching off every freed block goes to the front"),
    Rule("default_runner", "v2", 44443, "2026-07-02", "v0.25.0",
         "Model Runner V2 is the default for dense generate models"),
    Rule("cache_layout_era", "packed", 44455, "2026-07-11", "v0.26.0",
         "K and V packed into the content dim for every backend: [N, B, H, 2D]"),
    Rule("prepend_when_caching_off", False, 48017, "2026-07-25", "v0.27.0",
         "with prefix caching off every freed block is appended again"),
    Rule("move_row_clears_source", True, 49757, "2026-07-29", "v0.27.0",
         "move_row clears its source row"),
    Rule("width_alignment", "lcm", 50302, "2026-07-31", "v0.27.0",
         "block-table width aligned to 128 tokens for every block size (lcm rule)"),
    Rule("prepend_when_caching_off", True, 51482, "2026-08-11", "main",
         "with prefix caching off freed blocks go to the front again"),
)

_VERSION = re.compile(r"v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?([.+-]?[0-9A-Za-z.+-]{0,40})?")


def version_key(name: str) -> tuple[int, int, int]:
    """A sortable key for a release tag or "main" (after every release)."""
    if name == MAIN:
        return (1 << 30, 0, 0)
    m = _VERSION.fullmatch(name)
    if not m:
        raise ValueError(name)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


def _build(name: str) -> Rules:
    rules = Rules(name=name)
    for r in RULES:   # in date order per field, so later rules win
        if version_key(r.first_release) <= version_key(name):
            rules = replace(rules, **{r.field: r.value})
    return rules


_TABLE = {v: _build(v) for v in VERSIONS}
Profile = Rules                                   # the name earlier kvviz versions used
PROFILES = {**_TABLE, **{a: _TABLE[v] for a, v in ALIASES.items()}}
CURRENT = _TABLE[MAIN]
V2025_11 = _TABLE["v0.11.1"]
V2025_EARLY = _TABLE["v0.11.0"]


def range_sentence() -> str:
    return (f"kvviz knows vLLM {RELEASES[0]} to {RELEASES[-1]} and main (a version between two releases "
            f"follows the older one); the old names {', '.join(ALIASES)} still work")


def resolve_version(name: str) -> str:
    """The known version whose rules ``name`` follows: itself, an alias's target, or the newest
    release at or before it. Raises ValueError with one sentence naming the range."""
    if not isinstance(name, str):
        raise ValueError(f"a vLLM version is text like v0.25.1; got {type(name).__name__}. {range_sentence()}")
    text = name.strip()
    if text in ALIASES:
        return ALIASES[text]
    if text.lower() in (MAIN, "latest", "nightly"):
        return MAIN
    m = _VERSION.fullmatch(text)
    if not m:
        raise ValueError(f"unknown vLLM version {text[:60]!r}; {range_sentence()}")
    key = version_key(f"{m.group(1)}.{m.group(2)}.{m.group(3) or 0}")
    if key < version_key(RELEASES[0]):
        raise ValueError(f"vLLM {text[:60]} is older than {RELEASES[0]}; {range_sentence()}")
    return [v for v in RELEASES if version_key(v) <= key][-1]


def rules_for(name: str | Rules | None) -> Rules:
    """The rules of vLLM ``name`` (None: main)."""
    if name is None:
        return CURRENT
    if isinstance(name, Rules):
        return name
    return _TABLE[resolve_version(name)]


def get_profile(name: str | Rules | None) -> Rules:
    """``rules_for`` under its old name."""
    return rules_for(name)


def resolve_runner(rules: Rules, runner: str | None, *, state_groups: bool = False,
                   hybrid: bool = False) -> str:
    """The runner to simulate: ``runner`` when given (checked against the release), else the one
    the release picks for this model. Raises ValueError with one sentence."""
    if runner is None:
        return rules.runner_for(state_groups=state_groups, hybrid=hybrid)
    if runner not in RUNNERS:
        raise ValueError(f"unknown runner {str(runner)[:20]!r}; choose v1 or v2")
    if runner == "v2" and not rules.has_runner_v2:
        raise ValueError(f"Model Runner V2 first shipped in vLLM v0.12.0 (#25266); {rules.name} has only V1")
    return runner


def rule_table() -> list[dict]:
    """The rules as rows (for README and the app): field, value, PR, date, first release, summary."""
    return [{"field": r.field, "value": r.value, "pr": r.pr, "date": r.date,
             "first_release": r.first_release, "summary": r.summary} for r in RULES]
