"""The backend: labels, the compute cross-check, and run_batch's end-to-end proof."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import kvviz_kernels as kernels
from kvviz.gpu import harness as backend
from kvviz.gpu.harness import KernelMismatch, device_label, kernel_backend_for_compute, run_batch
from kvviz.cli import main
from kvviz.core.step import build_step_from_batch

from test_kernels import random_step
from tests.support import fresh_seed


def test_label_says_what_runs():
    import triton

    lab = device_label()
    assert lab["triton"] == triton.__version__ and lab["torch"] == torch.__version__
    assert lab["mode"] == ("interpreter" if kernels.interpreted() else "compiled")
    if lab["mode"] == "interpreter":
        assert lab["device"] == "CPU"
    else:
        assert lab["device"] == torch.cuda.get_device_name(0)
    s = backend.label_string(lab)
    assert lab["triton"] in s and lab["mode"] in s and lab["device"] in s


@pytest.mark.parametrize("kw", [dict(), dict(dcp_world_size=2, dcp_rank=1, interleave=2, block_size=16),
                                dict(block_size=16, kernel_block_size=4, pad_tokens=40)])
def test_compute_cross_check_passes_on_real_steps(kw):
    rng = np.random.default_rng(fresh_seed())
    step, _ = random_step(rng, **kw)
    label = kernel_backend_for_compute(step)
    assert label == backend.label_string()


def test_compute_cross_check_is_loud_on_a_mismatch():
    rng = np.random.default_rng(fresh_seed())
    step, _ = random_step(rng)
    step.slot_mapping = step.slot_mapping.copy()
    step.slot_mapping[0] += 1                    # the "reference" is now wrong: must be reported
    with pytest.raises(KernelMismatch, match=r"(?s)KERNEL MISMATCH.*slot_mapping\[per-request\].*\[0\]"):
        kernel_backend_for_compute(step)
    step, _ = random_step(rng)
    step.paged_kv_indices = step.paged_kv_indices.copy()
    step.paged_kv_indices[-1] ^= 1
    with pytest.raises(KernelMismatch, match="paged_kv_indices"):
        kernel_backend_for_compute(step)


def test_compute_cross_check_takes_the_empty_rule_from_the_profile_not_the_arrays():
    """An empty (padded) request's last_page_len of page_size is the pre-2025-11 rule: under the
    current profile the cross-check must call it a mismatch (it used to infer the rule from the very
    array it checks, and passed)."""
    batch = {"block_size": 16, "num_reqs_padded": 3,
             "requests": [{"block_ids": [7, 3], "seq_len": 20, "query_len": 4},
                          {"block_ids": [9], "seq_len": 5, "query_len": 1}]}
    step = build_step_from_batch(batch)
    assert step.paged_kv_last_page_len.tolist() == [4, 5, 0]
    step.paged_kv_last_page_len = step.paged_kv_last_page_len.copy()
    step.paged_kv_last_page_len[2] = 16
    with pytest.raises(KernelMismatch, match="paged_kv_last_page_len"):
        kernel_backend_for_compute(step)
    assert kernel_backend_for_compute(step, empty_last_page_len_is_zero=False)   # the old rule: consistent
    old = build_step_from_batch(batch, empty_last_page_len_is_zero=False)
    assert old.paged_kv_last_page_len.tolist() == [4, 5, 16]


def test_compute_command_with_triton_backend(tmp_path, capsys):
    batch = {"block_size": 16, "num_reqs_padded": 4, "num_tokens_padded": 40,
             "requests": [{"block_ids": [7, 3], "seq_len": 20, "query_len": 20},
                          {"block_ids": [40000], "seq_len": 5, "query_len": 1},
                          {"block_ids": [], "seq_len": 0, "query_len": 0}]}
    f = tmp_path / "b.json"
    f.write_text(json.dumps(batch))
    assert main(["compute", str(f), "--backend", "triton"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["backend"] == backend.label_string()
    ref = build_step_from_batch(batch)
    assert out["slot_mapping"] == ref.slot_mapping.tolist()
    assert out["slot_mapping"][20] == 40000 * 16 + 4 and out["slot_mapping"][-1] == -1


@pytest.mark.parametrize("layout,dtype,kw", [
    ("NHD", "float16", dict()),
    ("HND", "bfloat16", dict(block_size=16, kernel_block_size=4)),
    ("NHD", "fp8", dict(dcp_world_size=2, dcp_rank=0, block_size=8)),
    ("HND", "fp8", dict(dcp_world_size=4, dcp_rank=3, interleave=2, block_size=8, pad_reqs=0)),
    ("HND", "float16", dict(min_block_id=33000, num_manager_blocks=400, max_seq=40)),
])
def test_run_batch_proves_the_chain(layout, dtype, kw):
    seed = fresh_seed()
    step, _ = random_step(np.random.default_rng(seed), **kw)
    res = run_batch(step, layout=layout, dtype=dtype, num_kv_heads=2, head_dim=16, num_q_heads=4, seed=seed,
                    k_scale=0.5 if dtype == "fp8" else 1.0, v_scale=1.5 if dtype == "fp8" else 1.0)
    assert res.passed, f"seed {seed}: {res.failures()}"
    names = {r["kernel"] for r in res.rows()}
    assert names == {"slot_mapping[per-request]", "slot_mapping[flat]", "slot_mapping[grid2d]", "csr", "kv_write",
                     "paged_decode[block_table]", "paged_decode[csr]"}
    assert all(r["us"] is not None and r["us"] > 0 for r in res.rows())
    assert res.label == device_label()
    att = res.kernels["paged_decode[csr]"].output
    assert att.shape == (step.num_reqs_padded, 4, 16) and np.abs(att).max() > 0
    json.dumps(res.to_json())


def test_run_batch_reports_a_broken_kernel(monkeypatch):
    """A kernel that drops every other write must show up as a failed kv_write and a wrong decode."""
    import kvviz_kernels.kv_write as kvw

    real = kvw.kv_write

    def broken(key, value, cache, slots, **kw):
        slots = slots.clone()
        slots[::2] = -1
        return real(key, value, cache, slots, **kw)

    monkeypatch.setattr(kvw, "kv_write", broken)
    seed = fresh_seed()
    step, _ = random_step(np.random.default_rng(seed), num_reqs=4, max_seq=40)
    res = run_batch(step, seed=seed, timing=False)
    assert not res.passed
    assert not res.kernels["kv_write"].passed and "MISMATCH" in res.kernels["kv_write"].detail
    assert not res.kernels["paged_decode[block_table]"].passed
    assert res.kernels["slot_mapping[flat]"].passed
    assert res.kernels["slot_mapping[grid2d]"].passed


@pytest.mark.parametrize("design", ["flat", "grid2d"])
def test_run_batch_writes_through_the_chosen_design(monkeypatch, design):
    """A broken launch of the design auto picks (one real slot off) fails its own check, and the
    KV write that used its output fails too, saying which mapping it used; the other designs pass."""
    import kvviz_kernels.slot_mapping as sm

    name = {"flat": "slot_mapping_flat", "grid2d": "slot_mapping_grid2d"}[design]
    real = getattr(sm, name)

    def off_by_one(*a, out=None, **kw):
        real(*a, out=out, **kw)
        out[0] = out[0] + 1 if int(out[0]) >= 0 else out[0]
        return out

    monkeypatch.setattr(sm, name, off_by_one)
    seed = fresh_seed()
    # grid2d: 4 short requests; flat: one request (auto's picks for these sizes)
    kw = dict(num_reqs=4, max_seq=40) if design == "grid2d" else dict(num_reqs=1, max_seq=40, pad_reqs=0)
    step, _ = random_step(np.random.default_rng(seed), empties=False, **kw)
    assert backend.STEP_SLOTS_DESIGN == "auto" and backend.step_slots_design(step) == design
    res = run_batch(step, seed=seed, timing=False)
    assert res.params["step_slots_design"] == f"{design} (auto)"
    assert not res.kernels[f"slot_mapping[{design}]"].passed
    others = {"flat", "grid2d", "per-request"} - {design}
    assert all(res.kernels[f"slot_mapping[{o}]"].passed for o in others)
    assert not res.kernels["kv_write"].passed
    assert f"slot_mapping[{design}]" in res.kernels["kv_write"].detail


@pytest.mark.parametrize("bad_slot", [1 << 40, -7])
def test_run_batch_survives_a_slot_mapping_that_points_outside_the_cache(monkeypatch, bad_slot):
    """A broken slot-mapping kernel that sends a token far outside the cache (or to a negative slot
    other than PAD) must fail its checks, not write out of bounds: in the interpreter that write
    would land in the app's own memory."""
    import kvviz_kernels.slot_mapping as sm

    real = sm.slot_mapping_grid2d

    def wild(*a, out=None, **kw):
        real(*a, out=out, **kw)
        out[0] = bad_slot
        return out

    monkeypatch.setattr(sm, "slot_mapping_grid2d", wild)
    seed = fresh_seed()
    step, _ = random_step(np.random.default_rng(seed), empties=False, num_reqs=4, max_seq=40)
    assert backend.step_slots_design(step) == "grid2d"
    res = run_batch(step, seed=seed, timing=False)
    assert not res.kernels["slot_mapping[grid2d]"].passed
    assert res.kernels["slot_mapping[flat]"].passed
    assert not res.kernels["kv_write"].passed, f"seed {seed}"
    assert "1 of its slots lie outside the cache" in res.kernels["kv_write"].detail


def test_run_batch_can_pin_a_design(monkeypatch):
    monkeypatch.setattr(backend, "STEP_SLOTS_DESIGN", "per-request")
    seed = fresh_seed()
    step, _ = random_step(np.random.default_rng(seed), num_reqs=3, max_seq=30)
    res = run_batch(step, seed=seed, timing=False)
    assert res.passed and res.params["step_slots_design"] == "per-request"
    assert "slots from slot_mapping[per-request]" in res.kernels["kv_write"].detail


def test_run_batch_refuses_a_cache_too_big():
    step, _ = random_step(np.random.default_rng(0), min_block_id=1 << 28, num_manager_blocks=100)
    with pytest.raises(ValueError, match="limit"):
        run_batch(step, num_kv_heads=8, head_dim=128, timing=False)


@pytest.mark.parametrize("runner", ["v1", "v2"])
def test_compute_command_exits_1_and_prints_nothing_on_a_mismatch(tmp_path, capsys, monkeypatch, runner):
    """A reference slot mapping the kernels disagree with: V1's (from the step) or, under
    --runner v2, MRV2's (from the state rows; checked against MRV2's slot kernel)."""
    import kvviz.cli.compute as compute_cmd
    from kvviz.core.runner_v2 import batch_v2_slot_mapping
    from kvviz.core.step import build_step_from_batch

    def corrupt(slots):
        slots = slots.copy()
        slots[1] = 12345
        return slots

    def corrupted(spec, **kw):
        step = build_step_from_batch(spec, **kw)
        step.slot_mapping = corrupt(step.slot_mapping)
        return step

    if runner == "v1":
        monkeypatch.setattr(compute_cmd, "build_step_from_batch", corrupted)
    else:
        monkeypatch.setattr(compute_cmd, "batch_v2_slot_mapping", lambda *a: corrupt(batch_v2_slot_mapping(*a)))
    f = tmp_path / "b.json"
    f.write_text('{"block_size": 4, "requests": [{"block_ids": [2, 3], "seq_len": 6, "query_len": 6}]}')
    assert main(["compute", str(f), "--backend", "triton", "--runner", runner]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "KERNEL MISMATCH" in err and "slot_mapping" in err


def test_bench_h2d_strategies_copy_what_they_claim():
    """Each block-table commit strategy (full, valid prefix, three dirty-row ways) is checked
    inside the bench against the host table; off a GPU it runs on the CPU, unpinned."""
    from kvviz.gpu.bench.h2d import bench_h2d

    rows = bench_h2d([(32, 64)], {"empty_us": 1.0}, lambda m: None, repeats=1)
    variants = [r["variant"] for r in rows if r["kernel"] == "h2d_commit"]
    assert any("row copies" in v for v in variants) and any("gather + 1 copy" in v for v in variants)
    assert len([r for r in rows if r["kernel"] == "h2d_host_gather"]) == 2


def test_rows_sharing_blocks_pass_the_whole_chain():
    # A and B share two full prefix blocks (3, 4): a prefix hit
    hit = build_step_from_batch({"block_size": 4, "num_reqs_padded": 3, "num_tokens_padded": 4, "requests": [
        {"block_ids": [3, 4, 5], "seq_len": 10, "query_len": 1},
        {"block_ids": [3, 4, 6], "seq_len": 11, "query_len": 2}]})
    res = run_batch(hit, timing=False, seed=fresh_seed())
    assert res.passed, res.failures()
    # B hits blocks A computes in this same step: A writes them, B reads them, one forward pass
    same_step = build_step_from_batch({"block_size": 4, "requests": [
        {"block_ids": [3, 4, 5], "seq_len": 10, "query_len": 10},
        {"block_ids": [3, 4, 6, 7], "seq_len": 13, "query_len": 5}]})
    res = run_batch(same_step, timing=False, seed=fresh_seed())
    assert res.passed, res.failures()


def test_bench_slot_rows_include_auto_and_its_pick(monkeypatch):
    from kvviz.gpu.bench import timing
    from kvviz.gpu.bench.cases import bench_slot_mapping
    from kvviz.gpu.bench.timing import measure_floors

    # no graph capture here: under compute-sanitizer (caching allocator off) the torch variant's
    # allocations inside a capture are reported as CUDA API errors (seen on the H200, 2026-11-30)
    monkeypatch.setattr(timing, "time_us_graph", lambda fns: None)
    floors = measure_floors(rep_ms=1)
    rows = bench_slot_mapping([(1, 3), (6, 1)], floors, lambda msg: None)
    auto = {r["shape"]: r for r in rows if r["variant"] == "auto"}
    assert {r["variant"] for r in rows} == {"per-request", "flat", "grid2d", "auto", "torch"}
    assert auto["1x3"]["picked"] == "flat" and auto["6x1"]["picked"] == "grid2d"
