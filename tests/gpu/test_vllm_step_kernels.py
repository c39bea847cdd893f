"""kvviz.vllm_wheel.step_kernels and the step bench's vLLM rows, on synthetic wheels (kvviz's own
kernels under vLLM's names and parameter names; no real wheel, no network), in the interpreter
without CUDA: the kernels are found in the newest releases' wheels, launched as the model runners
launch them, and their outputs checked against the numpy core before any timing; a wrong kernel is
caught, a missing wheel leaves the rows out with a note. One run on the real cached wheels when
they are present."""
from __future__ import annotations

import zipfile

import pytest

import kvviz_kernels as kernels  # noqa: F401  (TRITON_INTERPRET before any kernel module)
from kvviz.core.versions import LAST_V1_RELEASE, NEWEST
from kvviz.gpu.bench.fused import bench_fused_step
from kvviz.gpu.harness import KernelMismatch
from kvviz.vllm_wheel import step_kernels as sk
from kvviz.vllm_wheel.locate import BadInput

V1_BLOCK_TABLE = '''
from vllm.triton_utils import tl, triton


class ComputeSlotMappingKernel:
    triton_block_size = 64

    @staticmethod
    @triton.jit
    def kernel(num_tokens, max_num_tokens, query_start_loc_ptr, positions_ptr, block_table_ptr,
               block_table_stride, slot_mapping_ptr, KV_CACHE_BLOCK_SIZE: tl.constexpr,
               TOTAL_CP_WORLD_SIZE: tl.constexpr, TOTAL_CP_RANK: tl.constexpr,
               CP_KV_CACHE_INTERLEAVE_SIZE: tl.constexpr, PAD_ID: tl.constexpr, BLOCK_SIZE: tl.constexpr):
        r = tl.program_id(0)
        lanes = tl.arange(0, BLOCK_SIZE)
        if r == tl.num_programs(0) - 1:
            for i in range(num_tokens, max_num_tokens, BLOCK_SIZE):
                tl.store(slot_mapping_ptr + i + lanes, PAD_ID, mask=i + lanes < max_num_tokens)
        else:
            a = tl.load(query_start_loc_ptr + r)
            b = tl.load(query_start_loc_ptr + r + 1)
            for i in range(a, b, BLOCK_SIZE):
                t = i + lanes
                p = tl.load(positions_ptr + t, mask=t < b, other=0)
                blk = tl.load(block_table_ptr + r * block_table_stride + p // KV_CACHE_BLOCK_SIZE, mask=t < b,
                              other=0).to(tl.int64)
                tl.store(slot_mapping_ptr + t, blk * KV_CACHE_BLOCK_SIZE + p % KV_CACHE_BLOCK_SIZE + 0,
                         mask=t < b)

'''

FLASHINFER = '''
from vllm.triton_utils import tl, triton


@triton.jit
def _copy_page_indices_kernel(page_indices, block_table, block_table_stride, cu_num_blocks, BLOCK_SIZE: tl.constexpr):
    r = tl.program_id(0)
    a = tl.load(cu_num_blocks + r)
    n = tl.load(cu_num_blocks + r + 1) - a
    lanes = tl.arange(0, BLOCK_SIZE)
    for i in range(0, n, BLOCK_SIZE):
        v = tl.load(block_table + r * block_table_stride + i + lanes, mask=i + lanes < n)
        tl.store(page_indices + a + i + lanes, v, mask=i + lanes < n)
'''

BUFFER_UTILS = '''
from vllm.triton_utils import tl, triton


@triton.jit
def _load_ptr(ptr_to_ptr, elem_dtype):
    return tl.load(ptr_to_ptr).to(tl.pointer_type(elem_dtype))
'''

MRV2_BLOCK_TABLE = '''
from vllm.triton_utils import tl, triton
from vllm.v1.worker.gpu.buffer_utils import _load_ptr


@triton.jit
def _gather_block_tables_kernel(batch_idx_to_req_idx, src_block_table_ptrs, dst_block_table_ptrs,
                                block_table_strides, num_blocks_ptr, num_blocks_stride, num_reqs,
                                num_computed_tokens_ptr, sliding_window_reach_ptr, block_sizes_ptr,
                                MASK_SLIDING_WINDOW: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    g = tl.program_id(0)
    b = tl.program_id(1)
    w = tl.load(block_table_strides + g)
    dst = _load_ptr(dst_block_table_ptrs + g, tl.int32) + b * w
    lanes = tl.arange(0, BLOCK_SIZE)
    if b >= num_reqs:
        for i in range(0, w, BLOCK_SIZE):
            tl.store(dst + i + lanes, 0, mask=i + lanes < w)
    else:
        s = tl.load(batch_idx_to_req_idx + b)
        n = tl.load(num_blocks_ptr + g * num_blocks_stride + s).to(tl.int64)
        src = _load_ptr(src_block_table_ptrs + g, tl.int32) + s * w
        for j in range(0, n, BLOCK_SIZE):
            tl.store(dst + j + lanes, tl.load(src + j + lanes, mask=j + lanes < n), mask=j + lanes < n)


@triton.jit
def _compute_slot_mappings_kernel(max_num_tokens, idx_mapping, query_start_loc, pos, block_table_ptrs,
                                  block_table_strides, block_sizes, slot_mapping_enabled, dcp_sharded,
                                  slot_mappings_ptr, slot_mappings_stride, cp_rank, CP_SIZE: tl.constexpr,
                                  CP_INTERLEAVE: tl.constexpr, PAD_ID: tl.constexpr,
                                  TRITON_BLOCK_SIZE: tl.constexpr):
    g = tl.program_id(0)
    b = tl.program_id(1)
    out = slot_mappings_ptr + g * slot_mappings_stride
    lanes = tl.arange(0, TRITON_BLOCK_SIZE)
    if b == tl.num_programs(1) - 1:
        for i in range(tl.load(query_start_loc + b), max_num_tokens, TRITON_BLOCK_SIZE):
            tl.store(out + i + lanes, PAD_ID, mask=i + lanes < max_num_tokens)
    else:
        table = _load_ptr(block_table_ptrs + g, tl.int32)
        w = tl.load(block_table_strides + g)
        bs = tl.load(block_sizes + g)
        s = tl.load(idx_mapping + b)
        lo = tl.load(query_start_loc + b)
        hi = tl.load(query_start_loc + b + 1)
        for i in range(lo, hi, TRITON_BLOCK_SIZE):
            t = i + lanes
            p = tl.load(pos + t, mask=t < hi, other=0)
            blk = tl.load(table + s * w + p // bs, mask=t < hi, other=0).to(tl.int64)
            tl.store(out + t, blk * bs + p % bs, mask=t < hi)
'''


def _wheel(folder, version: str, files: dict):
    path = folder / f"vllm-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr("vllm/triton_utils/__init__.py", "import triton\nimport triton.language as tl\n")
        z.writestr(f"vllm-{version}.dist-info/METADATA", f"Name: vllm\nVersion: {version}\n")
    return path


@pytest.fixture
def wheels(tmp_path, monkeypatch):
    def make(v1_text=V1_BLOCK_TABLE):
        _wheel(tmp_path, LAST_V1_RELEASE.lstrip("v"), {"vllm/v1/worker/block_table.py": v1_text,
                                                        "vllm/v1/attention/backends/flashinfer.py": FLASHINFER})
        _wheel(tmp_path, NEWEST.lstrip("v"), {"vllm/v1/worker/gpu/block_table.py": MRV2_BLOCK_TABLE,
                                              "vllm/v1/worker/gpu/buffer_utils.py": BUFFER_UTILS,
                                              "vllm/v1/attention/backends/flashinfer.py": FLASHINFER})
    monkeypatch.setenv("KVVIZ_WHEEL_CACHE", str(tmp_path))
    return make


FLOORS = {"empty_us": 1.0, "copy_gbps": 1.0}


def test_the_newest_releases_kernels_are_found_launched_and_checked(wheels):
    wheels()
    k = sk.load_step_kernels()
    assert (k.v1_release, k.v2_release) == (LAST_V1_RELEASE, NEWEST) and k.has_v1 and k.has_v2 and not k.notes
    assert k.v1_block == 64                     # the wheel's own triton block size is launched
    notes = []
    rows = bench_fused_step([(3, 2), (5, 1)], (1, 2), FLOORS, notes.append, variants=("v1 vllm", "v2 vllm"),
                            vllm=k)
    assert sorted((r["variant"], r["shape"]) for r in rows) == sorted(
        (v, f"{s} G{g}") for v in ("v1 vllm", "v2 vllm") for s in ("3x2", "5x1") for g in (1, 2))
    assert all(r["us"] > 0 for r in rows)


def test_a_wrong_vllm_kernel_is_caught_before_it_is_timed(wheels):
    wheels(V1_BLOCK_TABLE.replace("p % KV_CACHE_BLOCK_SIZE + 0,", "p % KV_CACHE_BLOCK_SIZE + 1,"))
    with pytest.raises(KernelMismatch, match="v1 vllm"):
        bench_fused_step([(3, 2)], (1,), FLOORS, lambda m: None, variants=("v1 vllm",), vllm=sk.load_step_kernels())


def test_without_the_wheels_the_rows_are_left_out_and_said_so(monkeypatch):
    def nowhere(version, **kw):
        raise BadInput(f"no wheel of vLLM {version}")

    monkeypatch.setattr(sk, "find_wheel", nowhere)
    k = sk.load_step_kernels()
    assert not k.has_v1 and not k.has_v2 and len(k.notes) == 2
    assert any(LAST_V1_RELEASE.lstrip("v") in m for m in k.notes) and any(NEWEST.lstrip("v") in m for m in k.notes)
    rows = bench_fused_step([(3, 2)], (1,), FLOORS, lambda m: None, variants=("v1 fused", "v1 vllm", "v2 vllm"), vllm=k)
    assert [r["variant"] for r in rows] == ["v1 fused"]
    said = []                              # loading them itself, the bench says what is missing
    rows = bench_fused_step([(3, 2)], (1,), FLOORS, said.append, variants=("v1 fused", "v2 vllm"))
    assert [r["variant"] for r in rows] == ["v1 fused"] and any(NEWEST.lstrip("v") in m for m in said)


def test_kvviz_bench_counts_only_the_rows_it_can_run(monkeypatch):
    """``kvviz bench``'s progress total leaves out vLLM's rows when the wheels are missing (a fresh
    machine), so the bar still ends at its total."""
    from kvviz.gpu.bench import run

    def nowhere(version, **kw):
        raise BadInput(f"no wheel of vLLM {version}")

    monkeypatch.setattr(sk, "find_wheel", nowhere)
    seen = []
    res = run.run_bench(quick=True, progress=lambda done, total, msg: seen.append((done, total)))
    assert seen[-1][0] == seen[-1][1] == len(res["rows"]) + 1
    assert not any(r["variant"].endswith("vllm") for r in res["rows"]) and "no wheel" in res["note"]


def test_a_kernel_parameter_kvviz_does_not_know_is_an_error(wheels):
    wheels(V1_BLOCK_TABLE.replace("slot_mapping_ptr, KV_CACHE", "slot_mapping_ptr, new_arg, KV_CACHE"))
    with pytest.raises(RuntimeError, match="new_arg"):
        bench_fused_step([(3, 2)], (1,), FLOORS, lambda m: None, variants=("v1 vllm",), vllm=sk.load_step_kernels())


def test_the_real_wheels_when_cached():
    k = sk.load_step_kernels()
    if not (k.has_v1 and k.has_v2):
        pytest.skip("no cached wheels of " + " / ".join(k.notes))
    rows = bench_fused_step([(4, 1)], (2,), FLOORS, lambda m: None, variants=("v1 vllm", "v2 vllm"), vllm=k)
    assert {r["variant"] for r in rows} == {"v1 vllm", "v2 vllm"}
