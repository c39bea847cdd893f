"""The checker: every invariant a dump can be tested against, vectorised.

``run_checks(dump)`` returns findings ordered by row (the first wrong row comes
first; findings about blocks or the free list, which belong to no row, come
last). Each check reports at most one finding per row: the first wrong entry
in it, with how many more there are. Expected values are recomputed from the
CPU table, which is the truth; the device mirror is only compared with it.

The catalogue (IDs, prose, messages) is kvviz/dumps/catalogue.py; the checks, one function each,
are in kvviz/dumps/checks_rows.py (row prefixes), checks_blocks.py (the pool) and checks_step.py
(slots, padding, FlashInfer CSR); what they share is kvviz/dumps/context.py.
"""
from __future__ import annotations

from kvviz.core.versions import CURRENT, Rules, get_profile
from kvviz.dumps import checks_blocks, checks_rows, checks_step, checks_v2, kernel_table
from kvviz.dumps.catalogue import (  # noqa: F401
    CHECK_LIST,
    CHECKS,
    CONCEPTS,
    CheckInfo,
    Finding,
    Msg,
    render,
)
from kvviz.dumps.context import CheckRun, clears_vacated_rows
from kvviz.dumps.format import Dump

MAX_ROWS_PER_CHECK = 50

# check id -> the function that runs it, in catalogue order (findings are sorted afterwards)
CHECK_FUNCTIONS = {
    "mirror-stale": checks_rows.mirror_stale,
    "block-out-of-range": checks_rows.block_out_of_range,
    "null-in-live-row": checks_rows.null_in_live_row,
    "duplicate-block-in-row": checks_rows.duplicate_block_in_row,
    "too-few-blocks": checks_rows.too_few_blocks,
    "freed-block-in-use": checks_blocks.freed_block_in_use,
    "shared-partial-block": checks_blocks.shared_partial_block,
    "slot-mismatch": checks_step.slot_mismatch,
    "pad-slot": checks_step.pad_slot,
    "pad-row": checks_step.pad_row,
    "stale-tail": checks_rows.stale_tail,
    "csr-indptr": checks_step.csr_indptr,
    "csr-indices": checks_step.csr_indices,
    "csr-last-page-len": checks_step.csr_last_page_len,
    "kernel-table": kernel_table.kernel_table,
    "refcount-mismatch": checks_blocks.refcount_mismatch,
    "v2-idx-mapping": checks_v2.idx_mapping,
    "v2-gather": checks_v2.gather,
    "v2-pad-row": checks_v2.pad_row,
    "free-list-duplicate": checks_blocks.free_list_duplicate,
}


def first_wrong_row(findings: list[Finding]) -> int | None:
    """The smallest row any finding names, None when none names a row."""
    rows = [f.row for f in findings if f.row is not None]
    return min(rows) if rows else None


def resolve_profile(dump: Dump, profile: str | Rules | None = None) -> tuple[Rules, str]:
    """(the profile to check ``dump`` under, where it came from): ``profile`` when given (a
    ``--profile`` option; "option"), else the dump's own ``profile`` key ("dump"), else the current
    rules ("default"). ValueError for an unknown name."""
    if profile is not None:
        return get_profile(profile), "option"
    if dump.vllm is not None:
        return get_profile(dump.vllm), "dump"
    if dump.profile is not None:
        return get_profile(dump.profile), "dump"
    return CURRENT, "default"


def applicable_checks(dump: Dump, profile: str | Rules | None = None) -> list[str]:
    """The checks this dump carries enough tables for (under ``profile``, default as resolve_profile)."""
    prof, _ = resolve_profile(dump, profile)
    have = set(dump.present())
    state = dump.is_state_group
    window_unknown = dump.sliding_window is not None and dump.seq_lens is None
    out = []
    for c in CHECK_LIST:
        if c.id == "freed-block-in-use":
            ok = bool(have & {"ref_cnt", "free_block_ids"})
        elif c.id == "null-in-live-row":
            ok = dump.sliding_window is None
        elif c.id == "duplicate-block-in-row":
            ok = not window_unknown
        elif c.id == "pad-row":
            ok = not dump.is_v2 and (clears_vacated_rows(prof)
                                     or ("num_reqs_padded" in have and "block_table_device" in have))
        elif c.id.startswith("v2-"):
            ok = dump.is_v2
        elif c.id.startswith("csr-"):
            ok = set(c.needs) <= have and dump.dcp_world_size == 1 and not state
        elif c.id in ("slot-mismatch", "pad-slot", "shared-partial-block"):
            ok = set(c.needs) <= have and not state
        else:
            ok = set(c.needs) <= have
        if ok:
            out.append(c.id)
    return out


def run_checks(dump: Dump, *, limit: int = MAX_ROWS_PER_CHECK,
               profile: str | Rules | None = None) -> list[Finding]:
    """Every applicable check; findings ordered by row, then check, then index. The rules are those
    of ``profile`` (a name in kvviz.core.versions.PROFILES), else of the dump's ``profile`` key, else
    current vLLM's; ValueError for an unknown name."""
    prof, _ = resolve_profile(dump, profile)
    if dump.kernel_block_table is None:
        runs = [(CheckRun(dump, limit, prof), CHECK_FUNCTIONS)]
    else:   # manager ids in block_table, kernel blocks for the CSR (kvviz.dumps.kernel_table)
        manager, kernel = kernel_table.views(dump)
        csr = {k: f for k, f in CHECK_FUNCTIONS.items() if k in kernel_table.CSR_CHECKS}
        runs = [(CheckRun(manager, limit, prof), {k: f for k, f in CHECK_FUNCTIONS.items() if k not in csr}),
                (CheckRun(kernel, limit, prof), csr)]
    out = []
    for run, checks in runs:
        for check in checks.values():
            check(run)
        out += run.out
    return sorted(out, key=Finding.sort_key)


def findings_to_json(findings: list[Finding], profile: str | Rules | None = None) -> dict:
    """``{"findings": [...]}``, plus ``"profile"`` (the name the dump was checked under) when given."""
    out = {"findings": [f.to_json() for f in findings]}
    if profile is not None:
        out["profile"] = profile.label if isinstance(profile, Rules) else str(profile)
        if isinstance(profile, Rules):
            out["vllm"] = profile.name
    return out

