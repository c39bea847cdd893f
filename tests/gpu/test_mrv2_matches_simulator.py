"""The MRV2 Triton kernels replay the simulator's Model Runner V2 steps exactly: on every step of
V2 scenarios (several groups, kernel-block splits, forks, preemption, CUDA-graph padding), the
gather kernel turns the previous step's input tables into this step's (stale tails included) and
the slot-mapping kernel, reading the state rows through idx_mapping, gives the simulator's slots."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import kvviz_kernels as kernels  # noqa: F401  (TRITON_INTERPRET before any kernel module)
from kvviz_kernels.mrv2_tables import compute_slot_mappings, gather_block_tables, stack_tables
from kvviz.core.engine import Engine
from kvviz.core.scenario import parse_scenario

DEV = "cuda" if torch.cuda.is_available() else "cpu"
EXAMPLES = Path(__file__).parents[2] / "examples" / "scenarios"


def _scenarios():
    for name in ("shared_prefix_fork", "preemption", "hybrid"):
        spec = json.loads((EXAMPLES / f"{name}.json").read_text())
        spec["config"]["runner"] = "v2"
        yield name, spec
    yield "split-kernel-blocks", {
        "config": {"runner": "v2", "num_blocks": 40, "block_size": 8, "kernel_block_size": 4, "max_num_reqs": 4,
                   "max_num_batched_tokens": 24, "cudagraph_capture_sizes": [1, 2, 4, 8]},
        "requests": [{"id": f"R{i}", "arrival": i, "prompt_len": 5 + 7 * i, "max_tokens": 4} for i in range(6)],
        "actions": [{"step": 3, "kind": "preempt", "req": "R1"}]}


def _t(a, dtype=torch.int32):
    return torch.as_tensor(np.ascontiguousarray(a)).to(dtype).to(DEV)


def _step_tensors(rec):
    """One recorded V2 step as the kernels take it: (num_reqs, num_reqs_padded, idx_mapping, the
    stacked state tables and their widths, the per-group counts, the input tables before the gather)."""
    n, r_pad = rec.num_reqs, rec.num_reqs_padded
    idx = _t(rec.idx_mapping) if n else torch.zeros(0, dtype=torch.int32, device=DEV)
    state, widths = stack_tables([_t(t) for t in rec.cpu_tables])
    counts = _t(np.stack(rec.num_blocks_per_row))
    before, _ = stack_tables([_t(t) for t in rec.device_before_commit])
    return n, r_pad, idx, state, widths, counts, before


@pytest.mark.parametrize("name,spec", list(_scenarios()), ids=[n for n, _ in _scenarios()])
def test_kernels_replay_every_v2_step(name, spec):
    engine = Engine(parse_scenario(spec))
    groups = engine.config.groups
    steps = 0
    while not engine.done() and steps < 40:
        rec = engine.step()
        steps += 1
        n, r_pad, idx, state, widths, counts, before = _step_tensors(rec)
        gather_block_tables(state, counts, idx, r_pad, before, widths=widths)
        for gid, want in enumerate(rec.device_tables):
            got = before[gid, :, :want.shape[1]].cpu().numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{name} step {rec.index} group {gid} gather")
        inp = [x for x in rec.inputs]
        has_slots = [x.slot_mapping is not None for x in inp]
        if not any(has_slots) or n == 0:
            continue
        first = next(x for x in inp if x.slot_mapping is not None)
        t_pad = first.num_tokens_padded
        out = torch.full((len(groups), t_pad), -7777, dtype=torch.int64, device=DEV)
        bs = [t.geometry.kernel_block_size for t in engine.states.groups]
        compute_slot_mappings(state, idx, _t(first.query_start_loc[:n + 1]), _t(first.positions, torch.int64), bs,
                              out, widths=widths, has_slot_mapping=has_slots,
                              cp_size=engine.geometry.dcp_world_size, cp_rank=engine.geometry.dcp_rank,
                              cp_interleave=engine.geometry.interleave)
        for gid, x in enumerate(inp):
            if x.slot_mapping is not None:
                np.testing.assert_array_equal(out[gid].cpu().numpy(), x.slot_mapping,
                                              err_msg=f"{name} step {rec.index} group {gid} slots")
    assert steps > 3


RELEASE_SPEC = {
    "config": {"runner": "v2", "num_blocks": 64, "block_size": 8, "kernel_block_size": 4, "max_num_reqs": 4,
               "max_num_batched_tokens": 24, "dcp_world_size": 2, "cp_kv_cache_interleave_size": 8,
               "cudagraph_capture_sizes": [],
               "groups": [{"kind": "full"}, {"kind": "sliding_window", "sliding_window": 5}]},
    "requests": [{"id": f"R{i}", "arrival": i, "prompt_len": 5 + 9 * i, "max_tokens": 3 + 2 * (i % 2)}
                 for i in range(5)]}


@pytest.mark.parametrize("version,dcp", [(v, d) for v in ("v0.28.0", "v0.29.0", "v0.31.0", "v0.32.0", "v0.33.0")
                                         for d in (1, 2)])
def test_kernels_replay_each_release(version, dcp):
    """The simulator's V2 steps under each release (vllm/v1/worker/gpu/block_table.py of that wheel:
    slot era, manager-id rows from 0.32.0, 0.33.0's sliding-window nulling and dirty rows), replayed
    by the kernels with the release's arguments."""
    spec = json.loads(json.dumps(RELEASE_SPEC))
    spec["config"].update(vllm=version, dcp_world_size=dcp)
    engine = Engine(parse_scenario(spec))
    rules, st = engine.profile, engine.states
    era = rules.mrv2_dcp_slots
    prev = 0
    steps = 0
    while not engine.done() and steps < 40:
        rec = engine.step()
        steps += 1
        n, r_pad, idx, state, widths, counts, before = _step_tensors(rec)
        nc = np.zeros(engine.config.max_num_reqs, np.int32)
        for s in rec.scheduled:
            nc[s.state_index] = s.num_computed
        entry = [g.geometry.block_size if g.manager_ids else g.geometry.kernel_block_size for g in st.groups]
        gather_block_tables(state, counts, idx, r_pad, before, widths=widths,
                            num_computed=_t(nc) if rules.mrv2_swa_gather_zero else None,
                            sliding_window_reach=[g.reach for g in st.groups], block_sizes=entry,
                            dirty_rows=prev if rules.mrv2_zero_dirty_rows else 0)
        prev = n
        for gid, want in enumerate(rec.device_tables):
            got = before[gid, :, :want.shape[1]].cpu().numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{version} step {rec.index} group {gid} gather")
        if n == 0:
            continue
        first = rec.inputs[0]
        out = torch.full((len(st.groups), first.num_tokens_padded), -7777, dtype=torch.int64, device=DEV)
        compute_slot_mappings(state, idx, _t(first.query_start_loc[:n + 1]), _t(first.positions, torch.int64),
                              [g.geometry.kernel_block_size for g in st.groups], out, widths=widths,
                              cp_size=dcp, cp_rank=0, cp_interleave=engine.geometry.interleave, dcp_era=era,
                              kv_block_sizes=[g.geometry.block_size for g in st.groups],
                              pad_unmapped_rows=rules.mrv2_dcp_sharded)
        for gid, x in enumerate(rec.inputs):
            np.testing.assert_array_equal(out[gid].cpu().numpy(), x.slot_mapping,
                                          err_msg=f"{version} step {rec.index} group {gid} slots")
    assert steps > 3
