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

# What the releases v0.28.0 .. v0.34.0 changed that kvviz does not model (docs/releases.md, "not modelled"): the
# prefix-cache retention interval default (v0.29.0, #52216: kvviz looks up no prefix hits for
# sliding-window or Mamba groups), the two waiting queues (v0.31.0, #58947: a kvviz waiting request
# never holds blocks and is never skipped, so no order changes), lookahead block hashes (v0.33.0:
# kvviz has no speculative decoding).

# every plain release tag from v0.11.0 on (release candidates are not releases), then main
RELEASES = ("v0.11.0", "v0.11.1", "v0.11.2", "v0.12.0", "v0.13.0", "v0.14.0", "v0.14.1", "v0.15.0",
            "v0.15.1", "v0.16.0", "v0.17.0", "v0.17.1", "v0.18.0", "v0.18.1", "v0.19.0", "v0.19.1",
            "v0.20.0", "v0.20.1", "v0.20.2", "v0.21.0", "v0.22.0", "v0.22.1", "v0.23.0", "v0.24.0",
            "v0.25.0", "v0.25.1", "v0.26.0", "v0.27.0", "v0.27.1",
            # read from each release's wheel on the package registry (no git history in the mirror)
            "v0.28.0", "v0.29.0", "v0.30.0", "v0.31.0", "v0.32.0", "v0.33.0", "v0.34.0")
NEWEST = RELEASES[-1]
# the wheels' upload dates (the releases after the mirror's history ends, and the last one in it)
RELEASE_DATES = {"v0.27.1": "2026-08-13", "v0.28.0": "2026-08-25", "v0.29.0": "2026-09-09",
                 "v0.30.0": "2026-09-22", "v0.31.0": "2026-10-03", "v0.32.0": "2026-10-17",
                 "v0.33.0": "2026-11-01", "v0.34.0": "2026-11-16"}
MAIN = "main"
MAIN_COMMIT = "ef47a897e (2026-08-18)"
# main is the mirror's newest commit: after v0.27.1, before v0.28.0 (it sorts there)
VERSIONS = (*RELEASES[:RELEASES.index("v0.27.1") + 1], MAIN, *RELEASES[RELEASES.index("v0.27.1") + 1:])
LAST_V1_RELEASE = "v0.33.0"     # v0.34.0 deleted gpu_model_runner.py, gpu_input_batch.py, block_table.py
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
    # --- cache layout: flash_attn/flex: kv_first (2,B,N,H,D) | blocks_first (B,2,N,H,D); packed:
    # every backend [B,N,H,2D] (B blocks, N tokens per block: kvviz.core.layout.NOTATION)
    cache_layout_era: str = "kv_first"
    # --- model runners ---
    has_runner_v2: bool = False               # Model Runner V2 exists (opt-in)
    default_runner: str = "v1"                # what a dense generate model gets
    v2_for_every_model: bool = False          # MRV2 the default for MoE, hybrid, state, pooling too
    has_runner_v1: bool = True                # the V1 model runner still ships
    # --- Model Runner V2 tables ---
    # DCP slot arithmetic: "kernel_block" (virtual block = kernel block x CP), "kv_block" (manager
    # block x CP, then kernel-block index/offset), "manager_ids" (state rows hold manager ids)
    mrv2_dcp_slots: str = "kernel_block"
    mrv2_row_overflow_error: bool = False     # a staged write past a row's width raises
    mrv2_slot_mapping_enabled: bool = False   # per-group flag: a disabled group's tokens all PAD
    mrv2_dcp_sharded: bool = False            # per-group DCP sharding; idx_mapping -1 rows emit PAD
    mrv2_swa_gather_zero: bool = False        # gather writes 0 for a sliding window's dropped columns
    mrv2_zero_dirty_rows: bool = False        # gather zeroes [num_reqs_padded, previous num_reqs) too
    mrv2_idx_mapping_bytes: int = 4           # one idx_mapping entry as prepare_inputs copies it (int32)
    # --- both runners' tables ---
    # the persistent tables hold KV-manager ids; each attention group builds the kernel-block table
    kernel_block_table_per_group: bool = False
    # --- FlashInfer CSR under DCP: page counts and last_page_len from rank-local lengths ---
    csr_dcp_local_lengths: bool = False
    # --- pool and manager ---
    none_hash_seed: str = "urandom"           # urandom | fixed ("vllm-none-hash" unless PYTHONHASHSEED)
    null_block_in_capacity: bool = False      # the capacity check keeps one block for the null block
    null_block_ref_counted: bool = True       # touch/free maintain the null block's ref count
    # --- scheduler ---
    has_max_num_active_seqs: bool = False     # scheduler knob max_num_active_seqs
    long_prefill_lone_request_exempt: bool = False   # threshold ignored with one request in all
    # --- KV cache bytes: "standardized" = one allocation, [L, B, H, N, C] in one of six orders ---
    extensible_kv_cache: bool = False         # layer regions padded to the VMM granule (CUDA default)

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

    def runner_for(self, *, state_groups: bool = False, hybrid: bool = False, moe: bool = False,
                   pooling: bool = False) -> str:
        """The model runner this release picks for a model kind: V1 before v0.25.0; V2 for dense
        generate models v0.25.0 .. v0.28.x (MoE, hybrid, state-group and pooling models stay on V1);
        V2 for every model from v0.29.0 (#53183); only V2 in v0.34.0."""
        if self.v2_for_every_model or not self.has_runner_v1:
            return "v2"
        if state_groups or hybrid or moe or pooling:
            return "v1"
        return self.default_runner


@dataclass(frozen=True)
class Rule:
    field: str
    value: object
    pr: int | None            # None: no PR could be tied to the change (read from the wheels)
    date: str | None          # the PR's merge date (None where the PR is unknown)
    first_release: str        # a tag in RELEASES, or "main"
    summary: str
    where: str = ""           # the release's file and function (rules read from the wheels)


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
         "FlashAttention and Flex caches num-blocks-first (B, 2, N, H, D)"),
    Rule("prepend_unhashed_on_free", True, 42656, "2026-06-16", "v0.24.0",
         "freed blocks without a hash go to the front of the free queue"),
    Rule("prepend_when_caching_off", True, 42656, "2026-06-16", "v0.24.0",
         "with prefix caching off every freed block goes to the front"),
    Rule("default_runner", "v2", 44443, "2026-07-02", "v0.25.0",
         "Model Runner V2 is the default for dense generate models"),
    Rule("cache_layout_era", "packed", 44455, "2026-07-11", "v0.26.0",
         "K and V packed into the content dim for every backend: [B, N, H, 2D]"),
    Rule("prepend_when_caching_off", False, 48017, "2026-07-25", "v0.27.0",
         "with prefix caching off every freed block is appended again"),
    Rule("move_row_clears_source", True, 49757, "2026-07-29", "v0.27.0",
         "move_row clears its source row"),
    Rule("width_alignment", "lcm", 50302, "2026-07-31", "v0.27.0",
         "block-table width aligned to 128 tokens for every block size (lcm rule)"),
    Rule("prepend_when_caching_off", True, 51482, "2026-08-11", "main",
         "with prefix caching off freed blocks go to the front again", "core/block_pool.py BlockPool.free_blocks"),
    # --- from here on read from each release's wheel (vllm/…), diffed against the one before ---
    Rule("mrv2_idx_mapping_bytes", 8, None, None, "v0.28.0",
         "MRV2 idx_mapping int64 on the device (host np.intp): 8 bytes a request copied each step",
         "v1/worker/gpu/model_runner.py gather_batch_req_state"),
    Rule("v2_for_every_model", True, 53183, None, "v0.29.0",
         "Model Runner V2 is the default for every model kind (MoE, hybrid, state groups, pooling)",
         "config/vllm.py VllmConfig.use_v2_model_runner"),
    Rule("mrv2_dcp_slots", "kv_block", 51031, None, "v0.29.0",
         "MRV2 DCP slots: virtual block = KV-manager block x DCP, then kernel-block index and offset",
         "v1/worker/gpu/block_table.py _compute_slot_mappings_kernel"),
    Rule("mrv2_slot_mapping_enabled", True, 53896, None, "v0.29.0",
         "MRV2 per-group slot_mapping_enabled: a group without slots (circular buffer) gets PAD for every token",
         "v1/worker/gpu/block_table.py _compute_slot_mappings_kernel"),
    Rule("mrv2_row_overflow_error", True, 50493, None, "v0.29.0",
         "MRV2 staged write past a row's width raises (RuntimeError)",
         "v1/worker/gpu/block_table.py BlockTables.append_block_ids"),
    Rule("none_hash_seed", "fixed", 51875, None, "v0.29.0",
         "NONE_HASH = hash_fn(seed): PYTHONHASHSEED, else \"vllm-none-hash\" for sha256 (reproducible chains)",
         "v1/core/kv_cache_utils.py init_none_hash"),
    Rule("null_block_in_capacity", True, 47272, None, "v0.29.0",
         "the KV-cache capacity check keeps one block's bytes for the null block",
         "v1/core/kv_cache_utils.py check_enough_kv_cache_memory"),
    Rule("cache_layout_era", "standardized", 51718, None, "v0.29.0",
         "one allocation for the whole KV cache, each layer a view [L, B, H, N, C] in one of six orders (default LBNHC)",
         "v1/kv_cache_layout.py KVCacheLayout; kv_cache_interface.py compute_layout_strides"),
    Rule("csr_dcp_local_lengths", True, None, None, "v0.30.0",
         "FlashInfer CSR under DCP: page counts and last_page_len from rank-local lengths",
         "v1/attention/backends/flashinfer.py FlashInferMetadataBuilder.build"),
    Rule("mrv2_dcp_sharded", True, None, None, "v0.31.0",
         "MRV2 per-group dcp_sharded (unsharded groups use global positions on every rank); idx_mapping -1 rows emit PAD",
         "v1/worker/gpu/block_table.py _compute_slot_mappings_kernel"),
    Rule("mrv2_idx_mapping_bytes", 4, None, None, "v0.31.0",
         "MRV2 idx_mapping back to int32 on the device: 4 bytes a request",
         "v1/worker/gpu/model_runner.py prepare_inputs"),
    Rule("has_max_num_active_seqs", True, 56758, None, "v0.31.0",
         "scheduler knob max_num_active_seqs caps running requests at admission",
         "v1/core/sched/scheduler.py Scheduler.schedule"),
    Rule("long_prefill_lone_request_exempt", True, 57951, None, "v0.31.0",
         "long_prefill_token_threshold ignored when running + waiting <= 1",
         "v1/core/sched/scheduler.py Scheduler.schedule"),
    Rule("mrv2_idx_mapping_bytes", 8, None, None, "v0.32.0",
         "MRV2 idx_mapping int64 on the device again: 8 bytes a request (async_tensor_h2d(..., dtype=torch.int64))",
         "v1/worker/gpu/model_runner.py prepare_inputs"),
    Rule("kernel_block_table_per_group", True, None, None, "v0.32.0",
         "persistent block tables hold KV-manager ids; each attention group writes its kernel-block table (j + r*b)",
         "v1/worker/utils.py AttentionGroup.map_to_kernel_block_table"),
    Rule("mrv2_dcp_slots", "manager_ids", None, None, "v0.32.0",
         "MRV2 DCP slots from KV-manager ids: slot = manager block x KV block size + local offset",
         "v1/worker/gpu/block_table.py _compute_slot_mappings_kernel"),
    Rule("mrv2_swa_gather_zero", True, None, None, "v0.33.0",
         "MRV2 gather writes the null block for a sliding window's columns already out of reach",
         "v1/worker/gpu/block_table.py _gather_block_tables_kernel"),
    Rule("mrv2_zero_dirty_rows", True, None, None, "v0.33.0",
         "MRV2 gather also zeroes rows from num_reqs_padded up to the previous batch's num_reqs",
         "v1/worker/gpu/block_table.py BlockTables.gather_block_tables"),
    Rule("null_block_ref_counted", False, None, None, "v0.33.0",
         "the null block's ref count is no longer maintained (touch and free skip it)",
         "v1/core/block_pool.py BlockPool.touch, free_blocks"),
    Rule("has_runner_v1", False, None, None, "v0.34.0",
         "the V1 model runner is gone (gpu_model_runner.py, gpu_input_batch.py, block_table.py deleted)",
         "v1/worker/gpu_worker.py Worker.init_device"),
    Rule("extensible_kv_cache", True, None, None, "v0.34.0",
         "extensible KV cache (CUDA default): each layer region padded to the VMM granule of the reserved capacity",
         "v1/worker/extensible_kv_cache.py; v1/core/kv_cache_planning.py finalize_extensible_kv_cache"),
)

_VERSION = re.compile(r"v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?([.+-]?[0-9A-Za-z.+-]{0,40})?")


def version_key(name: str) -> tuple[int, int, int]:
    """A sortable key for a release tag or "main" (the mirror's commit of 2026-08-18: after v0.27.1,
    before v0.28.0)."""
    if name == MAIN:
        return (0, 27, 1 << 20)
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
PROFILES = {**_TABLE, **{a: _TABLE[v] for a, v in ALIASES.items()}}
CURRENT = _TABLE[MAIN]
V2025_11 = _TABLE["v0.11.1"]


def range_sentence() -> str:
    return (f"kvviz knows vLLM {RELEASES[0]} to {RELEASES[-1]} and main (the 2026-08-18 snapshot; a "
            f"version between two releases follows the older one, one newer than {NEWEST} follows "
            f"{NEWEST} with a warning); the old names {', '.join(ALIASES)} still work")


def is_version_number(name) -> bool:
    """Whether ``name`` reads as a version number (v0.29.0, 0.29, 0.29.0rc1), not a name like main."""
    return isinstance(name, str) and _VERSION.fullmatch(name.strip()) is not None


def newer_than_known(name) -> bool:
    """Whether ``name`` is a well-formed version newer than the newest release kvviz knows."""
    if not isinstance(name, str):
        return False
    m = _VERSION.fullmatch(name.strip())
    return bool(m) and version_key(f"{m.group(1)}.{m.group(2)}.{m.group(3) or 0}") > version_key(NEWEST)


def beyond_newest_note(name: str) -> str:
    """The one line said when a version newer than the newest known one runs the newest rules."""
    return (f"vLLM {str(name).strip()[:40]} is newer than the newest release kvviz knows ({NEWEST}, "
            f"{RELEASE_DATES[NEWEST]}): following {NEWEST}'s rules")


def resolve_version(name: str) -> str:
    """The known version whose rules ``name`` follows: itself, an alias's target, or the newest
    release at or before it (a version newer than every known release follows the newest: callers
    say so, see ``newer_than_known``). Raises ValueError with one sentence naming the range."""
    if not isinstance(name, str):
        raise ValueError(f"a vLLM version is text like v0.25.1; got {type(name).__name__}. {range_sentence()}")
    text = name.strip()
    if text in ALIASES:
        return ALIASES[text]
    if text.lower() == "latest":
        return NEWEST
    if text.lower() in (MAIN, "nightly"):
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
    if runner == "v1" and not rules.has_runner_v1:
        raise ValueError(no_v1_sentence(rules.name))
    return runner


def no_v1_sentence(release: str) -> str:
    return (f"vLLM {release} has no V1 model runner (v0.34.0 deleted it; {LAST_V1_RELEASE} is the last "
            f"release with V1): use --runner v2 or an older --vllm")
