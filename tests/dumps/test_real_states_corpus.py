"""States real vLLM releases produce, each with the release and the vLLM source line that produces it
(read in the gabewillen/vllm mirror at that tag): clean under its own release, and a finding under a
release that never produces it (or without the declaration that makes it legitimate).

The dumps are built on tests/dumps/dump_fixtures.py's step (2 live rows padded to 3, block size 4);
each entry changes only what the vLLM line changes.
"""
from dataclasses import dataclass

import numpy as np
import pytest

from dump_fixtures import base_mapping, v2_mapping
from kvviz.dumps.check import run_checks
from kvviz.dumps.format import dump_from_mapping


@dataclass(frozen=True)
class RealState:
    name: str
    release: str              # the release that produces it (clean under it)
    source: str               # vLLM file:line at that tag
    build: object             # () -> dump mapping
    forbidden_by: str | None  # a release under which the same state is a finding
    flagged_as: str | None    # the check that flags it there (or without its declaration)
    undeclared: object = None  # () -> the same mapping without its declaration, flagged as flagged_as


def _padded_device_rows(fill):
    def build():
        m = base_mapping()
        m["block_table_device"][2] = fill
        return m
    return build


def _last_page_len_one():
    m = base_mapping()
    m["paged_kv_last_page_len"] = np.array([2, 1, 1], np.int32)
    return m


def _move_row_leaves_source():
    # condense moved D from row 3 to row 1: row 3 keeps D's blocks and count in the CPU table (not
    # padded: the kernel does not read it); the device's padded row 2 is 0 (v0.20+)
    m = base_mapping()
    m["block_table"][3, :2] = [4, 5]
    m["num_blocks_per_row"][3] = 2
    return m


def _v2_stale_state_and_tail():
    return v2_mapping()        # state 5 left by a finished request, a stale tail in gathered row 0


def _v2_stale_inside_count():
    m = v2_mapping()
    m["block_table"][1, 1] = 9
    return m


def _mamba_align(declared=True):
    def build():
        bt = np.zeros((4, 4), np.int32)
        bt[0, :3] = [0, 0, 7]          # the state blocks before the last one were freed: null
        bt[1, :1] = [8]
        m = {"kvviz_dump_version": 1, "block_size": 4, "num_blocks": 16, "num_reqs": 2, "block_table": bt,
             "num_blocks_per_row": np.array([3, 1, 0, 0], np.int32), "seq_lens": np.array([10, 3], np.int32),
             "group_kind": "state"}
        if declared:
            m["mamba_cache_mode"] = "align"
        return m
    return build


def _chunked_local(declared=True):
    def build():
        m = base_mapping()
        # chunk of 8 tokens: row 0 (10 tokens) is in its second chunk; its block 0 (tokens 0..3) and
        # block 1 (4..7) lie before it and were freed, replaced by the null block
        m["block_table"][0, :2] = [0, 0]
        m["block_table_device"][0, :2] = [0, 0]
        m["block_table_device"][2] = -1        # v0.15.0 fills padded device rows with -1
        m["paged_kv_indices"][:2] = [0, 0]
        m["ref_cnt"][1:3] = 0
        m["free_block_ids"] = np.concatenate([[1, 2], m["free_block_ids"]]).astype(np.int32)
        if declared:
            m["attention_chunk_size"] = 8
        return m
    return build


def _cascade(declared=True):
    def build():
        m = base_mapping()
        # rows 0 and 1 share one prefix page (block 1); cascade attention serves it once, and each
        # row's CSR slice starts after it
        m["block_table"][1, :2] = [1, 5]
        m["block_table_device"] = m["block_table"].copy()
        m["block_table_device"][2] = -1        # v0.15.0 fills padded device rows with -1
        m["ref_cnt"][1], m["ref_cnt"][4] = 2, 0
        m["free_block_ids"] = np.concatenate([[4], m["free_block_ids"]]).astype(np.int32)
        m["slot_mapping"] = np.array([12, 13, 20, -1])
        m["paged_kv_indptr"] = np.array([0, 2, 3, 3], np.int32)
        m["paged_kv_indices"] = np.array([2, 3, 5], np.int32)
        if declared:
            m["cascade_prefix_blocks"] = 1
        return m
    return build


def _kernel_block_table_per_group():
    """base_mapping as v0.32.0 holds it with 2-token kernel blocks: block_table keeps the manager ids,
    the attention group's table maps every column of rows 0..2 (num_reqs_padded) to 2b, 2b+1, so the
    unused columns and padded row 2 read 0, 1; the CSR counts 2-token pages of that table."""
    m = base_mapping()
    rows = m["block_table_device"][:3]
    m["kernel_block_size"] = 2
    m["kernel_block_table"] = np.array([[2 * b + j for b in row for j in range(2)] for row in rows], np.int32)
    m["paged_kv_indptr"] = np.array([0, 5, 8, 8], np.int32)            # ceil(10/2), ceil(5/2), 0
    m["paged_kv_indices"] = np.array([2, 3, 4, 5, 6, 8, 9, 10], np.int32)
    m["paged_kv_last_page_len"] = np.array([2, 1, 0], np.int32)
    return m


def _v2_swa_gather_nulls(declared=True):
    def build():
        # window 4 (reach 3): row 0 (10 tokens, 2 scheduled: num_computed 8) has max(8 - 3, 0) // 4 = 1
        # entry below the window; the gather writes it as block 0 while state 7 still holds block 1,
        # which the sliding-window manager has freed (row 1: num_computed 4, nothing nulled)
        m = v2_mapping()
        m["vllm"] = "v0.33.0"
        m["block_table"][0, 0] = 0
        m["paged_kv_indices"][0] = 0
        m["ref_cnt"][1] = 0
        m["free_block_ids"] = np.concatenate([m["free_block_ids"], [1]]).astype(np.int32)
        if declared:
            m["sliding_window"] = 4
        return m
    return build


def _v2_kernel_table(manager_ids: bool):
    """The V2 step at kernel block size 2 (r = 2): the state rows hold manager ids (v0.32.0 on,
    4 wide) or kernel ids (v0.29.0 .. v0.31.0, 8 wide); the attention's table is kernel blocks."""
    def build():
        m = v2_mapping()
        del m["vllm"]
        mgr = m["state_block_table"]
        expand = (mgr[:, :, None].astype(np.int64) * 2 + np.arange(2)).reshape(8, 8).astype(np.int32)
        gathered = expand[[7, 6, 0, 5]].copy()
        if manager_ids:
            gathered[2] = [0, 1] * 4           # the padded row: b * r + j of the zeroed row
        else:
            gathered[2] = 0                    # the padded row: zeroed kernel ids
            gathered[1, 4:] = 0                # past the count: whatever the row held (here 0)
            expand[:, :] = np.where(np.arange(8) < 2 * m["state_num_blocks"][:, None], expand, 0)
            m["state_num_blocks"] = m["state_num_blocks"] * 2
        m.update(kernel_block_size=2, block_table=gathered, state_block_table=mgr if manager_ids else expand,
                 paged_kv_indptr=np.array([0, 5, 8, 8], np.int32),
                 paged_kv_indices=np.array([2, 3, 4, 5, 6, 8, 9, 10], np.int32),
                 paged_kv_last_page_len=np.array([2, 1, 0], np.int32))
        return m
    return build


def _v2_dirty_rows(zeroed: bool, release: str):
    def build():
        # the previous batch had 4 requests; this one 2, padded to 3: row 3 is a dirty row
        m = v2_mapping()
        m["vllm"] = release
        m["previous_num_reqs"] = 4
        if zeroed:
            m["block_table"][3] = 0
        return m
    return build


CORPUS = [
    RealState("padded device rows filled with -1", "v0.15.0",
              "vllm/v1/worker/gpu_model_runner.py:1695 blk_table_tensor[num_reqs:num_reqs_padded].fill_(-1)",
              _padded_device_rows(-1), "v0.20.0", "pad-row"),
    RealState("padded device rows filled with -1 (last release of the era)", "v0.19.0",
              "vllm/v1/worker/gpu_model_runner.py:2150 blk_table_tensor[num_reqs:num_reqs_padded].fill_(-1)",
              _padded_device_rows(-1), "main", "pad-row"),
    RealState("padded device rows filled with the null block", "v0.20.0",
              "vllm/v1/worker/gpu_model_runner.py:2142 blk_table_tensor[num_reqs:num_reqs_padded].fill_(NULL_BLOCK_ID)",
              _padded_device_rows(0), "v0.15.0", "pad-row"),
    RealState("FlashInfer padded decode rows with last_page_len 1", "v0.11.0",
              "vllm/v1/attention/backends/flashinfer.py:643 paged_kv_last_page_len_cpu[num_decodes:num_input_tokens].fill_(1)",
              _last_page_len_one, "v0.12.0", "csr-last-page-len"),
    RealState("move_row leaves its source row", "v0.26.0",
              "vllm/v1/worker/block_table.py:142 move_row copies num_blocks entries and clears nothing",
              _move_row_leaves_source, "v0.27.0", "pad-row"),
    RealState("MRV2: a freed request's state row and a gathered row's tail stay stale", "v0.25.0",
              "vllm/v1/worker/gpu/block_table.py:141 _gather_block_tables_kernel copies num_blocks entries; "
              "vllm/v1/worker/gpu/states.py:122 remove_request clears nothing",
              _v2_stale_state_and_tail, None, None),
    RealState("Mamba align mode: null blocks before the last state block", "v0.15.0",
              "vllm/v1/core/single_type_kv_cache_manager.py:504 [block_pool.null_block] * max_num_blocks",
              _mamba_align(), "v0.14.0", "null-in-live-row", _mamba_align(False)),
    RealState("chunked-local attention: null blocks before the current chunk", "v0.15.0",
              "vllm/v1/core/single_type_kv_cache_manager.py:594 ChunkedLocalAttentionManager (remove_skipped_blocks "
              "puts the null block at line 383)",
              _chunked_local(), None, "null-in-live-row", _chunked_local(False)),
    RealState("cascade attention: shared prefix pages left out of each row's CSR slice", "v0.15.0",
              "vllm/v1/attention/backends/flashinfer.py:917 num_blocks_np -= num_common_kv_blocks",
              _cascade(), None, "csr-indptr", _cascade(False)),
    RealState("kernel-block table: every column mapped, padded and unused entries read 0..r-1", "v0.32.0",
              "vllm/v1/worker/utils.py:389 AttentionGroup.map_to_kernel_block_table torch.add(offsets, table, "
              "alpha=r) over [:rows, :cols*r] (rows: gpu_model_runner.py:2305 fills [num_reqs:num_reqs_padded] "
              "with NULL_BLOCK_ID first)",
              _kernel_block_table_per_group, "v0.31.0", "kernel-table"),
    RealState("MRV2: a sliding window's entries below the window gathered as the null block", "v0.33.0",
              "vllm/v1/worker/gpu/block_table.py:315 if MASK_SLIDING_WINDOW: num_null = ... (line 327 "
              "mask=(offset >= num_null) & (offset < num_blocks), other=0)",
              _v2_swa_gather_nulls(), "v0.32.0", "v2-gather", _v2_swa_gather_nulls(False)),
    RealState("MRV2: the same state under v0.34.0", "v0.34.0",
              "vllm/v1/worker/gpu/block_table.py:315 (0.34.0: the 0.33.0 gather)",
              _v2_swa_gather_nulls(), "v0.31.0", "v2-gather"),
    RealState("MRV2: manager-id state rows, the attention's b*r+j table, padded rows 0..r-1", "v0.32.0",
              "vllm/v1/worker/utils.py:389 map_to_kernel_block_table: torch.add(kernel_block_offsets, "
              "block_table.unsqueeze(-1), alpha=...) over every column of the rows passed in",
              _v2_kernel_table(True), "v0.31.0", "v2-pad-row"),
    RealState("MRV2: kernel-id state rows, padded rows 0", "v0.31.0",
              "vllm/v1/worker/gpu/block_table.py:128 block_ids = [b * bpk + k ...]; line 262 zero out padded rows",
              _v2_kernel_table(False), "v0.32.0", "v2-pad-row"),
    RealState("MRV2: a row past the padding left as the previous, larger batch wrote it", "v0.32.0",
              "vllm/v1/worker/gpu/block_table.py:162 _gather_block_tables_kernel[(self.num_kv_cache_groups, "
              "num_reqs_padded)] (rows past num_reqs_padded are not touched)",
              _v2_dirty_rows(False, "v0.32.0"), "v0.33.0", "v2-pad-row"),
    RealState("MRV2: the previous batch's rows past the padding zeroed", "v0.33.0",
              "vllm/v1/worker/gpu/block_table.py:191 num_rows = max(num_rows, self._num_dirty_rows)",
              _v2_dirty_rows(True, "v0.33.0"), None, None),
]


@pytest.mark.parametrize("state", CORPUS, ids=[s.name for s in CORPUS])
def test_real_state_is_clean_under_its_release(state):
    m = state.build()
    m["vllm"] = state.release
    d = dump_from_mapping(m)
    assert run_checks(d) == [], [f.message for f in run_checks(d)]
    assert state.source.startswith("vllm/") and ":" in state.source


@pytest.mark.parametrize("state", [s for s in CORPUS if s.forbidden_by], ids=lambda s: s.name)
def test_real_state_is_a_finding_under_a_release_that_never_produces_it(state):
    d = dump_from_mapping(state.build())
    assert state.flagged_as in {f.check for f in run_checks(d, profile=state.forbidden_by)}
    assert run_checks(d, profile=state.release) == []       # --vllm names the release: clean again


@pytest.mark.parametrize("state", [s for s in CORPUS if s.undeclared], ids=lambda s: s.name)
def test_undeclared_state_is_a_finding(state):
    m = state.undeclared()
    m["vllm"] = state.release
    assert state.flagged_as in {f.check for f in run_checks(dump_from_mapping(m))}


def test_v2_stale_row_inside_the_count_is_caught_by_its_id():
    m = _v2_stale_inside_count()
    found = run_checks(dump_from_mapping(m))
    assert ("v2-gather", 1, 1) in [(f.check, f.row, f.index) for f in found]
    # the stale id (9, a finished request's block) also breaks what follows from the gathered row
    assert {"slot-mismatch", "freed-block-in-use"} <= {f.check for f in found}
