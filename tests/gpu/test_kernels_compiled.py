"""The kernels compiled on a CUDA GPU, at sizes the interpreter cannot reach.

Skipped without CUDA (tests/conftest.py). tests/test_kernels.py and
tests/gpu/test_harness.py also run compiled when a GPU is there; these add the fp8
cast in the kernel, large random batches, and a cache past 2^31 elements.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from kvviz_kernels.kv_write import kv_write
from kvviz_kernels.page_indices import flashinfer_csr
from kvviz_kernels.paged_decode import paged_decode_block_table, paged_decode_csr
from kvviz_kernels.slot_mapping import (slot_mapping_flat, slot_mapping_grid2d, slot_mapping_per_request,
                                  slot_mapping_torch)
from kvviz import reference
from kvviz.gpu.attention_ref import decode_attention_ref
from kvviz.gpu.harness import device_label, run_batch
from kvviz.constants import PAD_SLOT_ID

from test_kernels import (_fp8_quant_case, check_fp8_against_bit_model, decode_case, garbage, random_step,
                          run_slots)
from tests.support import fresh_seed

pytestmark = pytest.mark.gpu


def test_label_is_compiled_on_the_gpu():
    lab = device_label()
    assert lab["mode"] == "compiled" and lab["device"] == torch.cuda.get_device_name(0)


def test_kv_write_fp8_quantised_in_the_kernel_matches_torch():
    _fp8_quant_case("cuda", tokens=5000, heads=8, dim=128, block=16)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", [7101, 7102])
@pytest.mark.parametrize("layout", ["NHD", "HND"])
@pytest.mark.parametrize("src", [torch.float16, torch.bfloat16, torch.float32])
def test_kv_write_fp8_any_value_rounds_like_the_bit_model(layout, src, seed):
    """Compiled, the kernel's e4m3 cast of arbitrary values (odd scales, ties, saturation) against
    tests/e4m3.py's round-to-nearest-even model (seed pinned, in the test id)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 200, 4, 32)) * 40
    x[rng.random(x.shape) < 0.02] *= 100
    check_fp8_against_bit_model(x, float(rng.uniform(0.1, 3.0)), src, layout, rng, seed, "cuda",
                                block=16, nblocks=64)


@pytest.mark.parametrize("kw", [
    dict(num_reqs=16, max_seq=9000, pad_reqs=3, pad_tokens=500),
    dict(num_reqs=300, max_seq=300, block_size=32, kernel_block_size=16),
    dict(num_reqs=40, max_seq=4000, dcp_world_size=4, dcp_rank=1, interleave=8, block_size=64),
    dict(num_reqs=8, max_seq=20000, min_block_id=1 << 20, num_manager_blocks=50000),
])
def test_slot_mapping_large_random_batches(kw):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    step, _ = random_step(rng, **kw)
    for fn in (slot_mapping_per_request, slot_mapping_flat, slot_mapping_grid2d, slot_mapping_torch):
        got = run_slots(fn, step, gen)
        assert np.array_equal(got, step.slot_mapping), f"seed {seed} {fn.__name__}"
    # the core agrees with the plain loop on a sample of requests
    assert np.array_equal(step.slot_mapping[step.num_tokens:], np.full(step.num_tokens_padded - step.num_tokens,
                                                                       PAD_SLOT_ID))


def test_slot_mapping_one_long_prefill_vs_loop():
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    step, _ = random_step(rng, num_reqs=1, max_seq=131072, pad_reqs=0, pad_tokens=3, empties=False)
    want = reference.slot_mapping(step.query_start_loc, step.positions, step.block_table,
                                  block_size=step.block_size, num_reqs=1, num_tokens_padded=step.num_tokens_padded)
    for fn in (slot_mapping_per_request, slot_mapping_flat, slot_mapping_grid2d):
        assert np.array_equal(run_slots(fn, step, gen), want), f"seed {seed} {fn.__name__}"


def test_csr_256_requests_by_1000_pages():
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    bt = rng.integers(1, 1 << 31, (256, 1100)).astype(np.int32)
    seq = rng.integers(0, 16000, 256).astype(np.int32)
    seq[:3] = (0, 16, 16000)
    want = reference.flashinfer_csr(bt, seq, 16)
    gen = torch.Generator().manual_seed(seed)
    idx = garbage(int(want[0][-1]), torch.int32, gen)
    got = flashinfer_csr(torch.from_numpy(bt).cuda(), torch.from_numpy(seq).cuda(), seq, 16, indices_out=idx)
    for g, w in zip(got, want):
        assert np.array_equal(g.cpu().numpy(), w), f"seed {seed}"


@pytest.mark.parametrize("layout,dtype", [("NHD", "float16"), ("HND", "bfloat16"), ("NHD", "fp8"), ("HND", "fp8")])
def test_paged_decode_real_head_sizes(layout, dtype):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    scale = (0.25, 3.0) if dtype == "fp8" else (1.0, 1.0)
    got_bt, got_csr, want = decode_case(rng, gen, layout=layout, dtype=dtype, dev="cuda", num_reqs=12,
                                        max_seq=3000, page=16, kv_heads=8, group=4, dim=128, scale=scale)
    for got in (got_bt, got_csr):
        assert not np.isnan(got).any(), f"seed {seed}"
        np.testing.assert_allclose(got, want, atol=2e-3, rtol=2e-3, err_msg=f"seed {seed}")


@pytest.mark.parametrize("layout", ["NHD", "HND"])
def test_write_then_read_past_2_31_cache_elements(layout):
    """70000 blocks x 16 x 8 heads x 128: the V plane starts past 2^31 elements, so any int32
    offset arithmetic would land in the wrong place."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    nblocks, page, heads, dim = 70000, 16, 8, 128
    shape = (2, nblocks, page, heads, dim) if layout == "NHD" else (2, nblocks, heads, page, dim)
    assert (nblocks * page * heads * dim) + (nblocks - 6000) * page * heads * dim > 2**31  # V offsets
    cache = torch.empty(shape, dtype=torch.int16, device="cuda").random_(generator=gen).view(torch.float16)
    before = cache.clone()
    num_reqs, seq_len = 4, 700
    pages = (seq_len + page - 1) // page
    ids = rng.choice(np.arange(nblocks - 6000, nblocks), num_reqs * pages, replace=False).astype(np.int32)
    bt = ids.reshape(num_reqs, pages)
    pos = np.arange(seq_len)
    slots = np.concatenate([bt[r, pos // page].astype(np.int64) * page + pos % page for r in range(num_reqs)])
    slots_t = torch.from_numpy(slots).cuda()
    k = torch.randn((len(slots), heads, dim), device="cuda", generator=gen).half()
    v = torch.randn((len(slots), heads, dim), device="cuda", generator=gen).half()
    pad = torch.full((5,), PAD_SLOT_ID, dtype=torch.int64, device="cuda")
    kv_write(torch.cat([k, k[:5]]), torch.cat([v, v[:5]]), cache, torch.cat([slots_t, pad]), layout=layout)
    # every written entry holds its input, nothing else changed
    blk, off = slots_t // page, slots_t % page
    if layout == "NHD":
        got_k, got_v = cache[0, blk, off], cache[1, blk, off]
    else:
        got_k, got_v = cache[0, blk, :, off], cache[1, blk, :, off]
    assert torch.equal(got_k.view(torch.int16), k.view(torch.int16)), f"seed {seed}"
    assert torch.equal(got_v.view(torch.int16), v.view(torch.int16)), f"seed {seed}"
    changed = (cache.view(torch.int16) != before.view(torch.int16)).sum().item()
    assert changed <= 2 * k.numel() and changed > 0.99 * 2 * k.numel()
    del before
    seq = np.full(num_reqs, seq_len, np.int32)
    q = torch.randn((num_reqs, 16, dim), device="cuda", generator=gen)
    keys = [k[r * seq_len:(r + 1) * seq_len].float().cpu().numpy() for r in range(num_reqs)]
    vals = [v[r * seq_len:(r + 1) * seq_len].float().cpu().numpy() for r in range(num_reqs)]
    want = decode_attention_ref(q.cpu().numpy(), keys, vals)
    seq_t = torch.from_numpy(seq).cuda()
    bt_t = torch.from_numpy(bt).cuda()
    a = paged_decode_block_table(q, cache, bt_t, seq_t, layout=layout)
    ip, ix, lp = flashinfer_csr(bt_t, seq_t, seq, page)
    b = paged_decode_csr(q, cache, ip, ix, lp, layout=layout)
    np.testing.assert_allclose(a.cpu().numpy(), want, atol=2e-3, rtol=2e-3, err_msg=f"seed {seed}")
    np.testing.assert_allclose(b.cpu().numpy(), want, atol=2e-3, rtol=2e-3, err_msg=f"seed {seed}")


@pytest.mark.parametrize("layout,dtype,kw", [
    ("NHD", "float16", dict(num_reqs=64, max_seq=2000, pad_reqs=8, pad_tokens=100)),
    ("HND", "bfloat16", dict(num_reqs=32, max_seq=3000, block_size=32, kernel_block_size=16)),
    ("NHD", "fp8", dict(num_reqs=32, max_seq=3000, dcp_world_size=2, dcp_rank=1, interleave=4, block_size=16)),
    ("HND", "fp8", dict(num_reqs=16, max_seq=1000, min_block_id=40000, num_manager_blocks=4000)),
])
def test_run_batch_on_the_gpu(layout, dtype, kw):
    seed = fresh_seed()
    step, _ = random_step(np.random.default_rng(seed), **kw)
    res = run_batch(step, layout=layout, dtype=dtype, num_kv_heads=8, head_dim=128, num_q_heads=32, seed=seed,
                    k_scale=0.5 if dtype == "fp8" else 1.0, v_scale=2.0 if dtype == "fp8" else 1.0)
    assert res.passed, f"seed {seed}: {res.failures()}"
    assert res.label["mode"] == "compiled"
    if dtype == "fp8":
        assert "quantised in the kernel" in res.kernels["kv_write"].detail


def test_device_timing_hides_the_host_and_sees_the_work():
    """time_us_device must not count host time before the launch (a launcher that sleeps 300 µs
    on the host still times as a few µs), and must see device work (a 1 GiB copy ~ its do_bench
    time, not a launch's)."""
    import time

    import triton.testing

    from kvviz_kernels.empty import empty_launch
    from kvviz.gpu.bench.timing import sanitized, time_us_device

    if sanitized():
        pytest.skip("timings under compute-sanitizer mean nothing (the bench leaves them out there)")

    buf = torch.zeros(16, device="cuda")

    def slow_host_launch():
        time.sleep(300e-6)
        empty_launch(buf)

    fast = time_us_device(lambda: empty_launch(buf))
    slow = time_us_device(slow_host_launch, reps=20)
    naive = triton.testing.do_bench(slow_host_launch, warmup=2, rep=20, return_mode="median") * 1e3
    assert 0 < fast < 20 and 0 < slow < 20, (fast, slow)
    assert naive > 100, naive   # what event timing without the spin counts: the host sleep
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    copy = time_us_device(lambda: dst.copy_(src), reps=10)
    ref = triton.testing.do_bench(lambda: dst.copy_(src), warmup=2, rep=50, return_mode="median") * 1e3
    assert 0.8 * ref < copy < 1.25 * ref, (copy, ref)
    assert time_us_device(lambda: empty_launch(buf), cold=False) < 20
