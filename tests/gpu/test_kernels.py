"""Every kernel against its reference on random batches (Triton interpreter on a CPU).

Each test draws a fresh seed (printed, and shown in the failure message) and
fills outputs with garbage before the kernel runs, so an entry the kernel
forgot to write cannot pass. Shapes stay small: the interpreter is slow.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import kvviz_kernels as kernels  # noqa: F401  (TRITON_INTERPRET before any kernel module)
from kvviz_kernels.kv_write import kv_write
from kvviz_kernels.page_indices import flashinfer_csr
from kvviz_kernels.paged_decode import paged_decode_block_table, paged_decode_csr
from kvviz_kernels.slot_mapping import (slot_mapping_flat, slot_mapping_grid2d, slot_mapping_per_request,
                                  slot_mapping_torch)
from kvviz import reference
import e4m3
from kvviz.gpu.attention_ref import decode_attention_ref, kv_write_ref, quantize_fp8
from kvviz.core.block_table import cdiv, get_block_table_width, map_to_kernel_blocks
from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID
from kvviz.core.step import build_step, dcp_local_seq_lens
from tests.support import fresh_seed

DEV = "cuda" if torch.cuda.is_available() else "cpu"
TRITON_SLOT_KERNELS = [slot_mapping_per_request, slot_mapping_flat, slot_mapping_grid2d]
SLOT_KERNELS = TRITON_SLOT_KERNELS + [slot_mapping_torch]


def garbage(n, dtype, gen, device=DEV):
    """Random bit patterns: never zeros, never a pattern the kernel would write by accident."""
    if dtype.is_floating_point:
        raw = torch.randint(0, 256, (n * torch.empty(0, dtype=dtype).element_size(),), dtype=torch.uint8,
                            generator=gen)
        return raw.view(dtype).to(device)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, (n,), dtype=dtype, generator=gen).to(device)


def random_step(rng, *, num_reqs=5, max_seq=70, block_size=8, kernel_block_size=None, pad_reqs=2,
                pad_tokens=9, dcp_world_size=1, dcp_rank=0, interleave=1, min_block_id=1,
                num_manager_blocks=None, empties=True):
    """A batch of random requests (some empty, some decode, some prefill) over unique random blocks."""
    kbs = kernel_block_size or block_size
    bpk = block_size // kbs
    seq = rng.integers(1, max_seq + 1, num_reqs)
    q = np.array([rng.integers(1, s + 1) if rng.random() < 0.5 else 1 for s in seq])
    if empties and num_reqs >= 3:
        seq[1] = 0
        q[1] = 0                       # an empty request
        q[2] = 0                       # scheduled nothing this step, but has context
    nblk = [cdiv(int(s), block_size * dcp_world_size) for s in seq]
    total = sum(nblk)
    pool = num_manager_blocks or max(4 * total, 64)
    ids = rng.choice(np.arange(min_block_id, min_block_id + pool), size=total, replace=False)
    width = get_block_table_width(max(max(nblk), 1), block_size, kbs)
    r_pad = num_reqs + pad_reqs
    bt = np.full((r_pad, width), NULL_BLOCK_ID, dtype=np.int32)
    at = 0
    for r, n in enumerate(nblk):
        row = map_to_kernel_blocks(ids[at:at + n], bpk)
        bt[r, :len(row)] = row
        at += n
    step = build_step(bt, seq, q, block_size=block_size, kernel_block_size=kbs, num_reqs_padded=r_pad,
                      num_tokens_padded=int(q.sum()) + pad_tokens, dcp_world_size=dcp_world_size,
                      dcp_rank=dcp_rank, interleave=interleave)
    return step, (min_block_id + pool) * bpk


def loop_slots(step):
    return reference.slot_mapping(step.query_start_loc, step.positions, step.block_table,
                                  block_size=step.block_size, num_reqs=step.num_reqs,
                                  num_tokens_padded=step.num_tokens_padded,
                                  kernel_block_size=step.kernel_block_size,
                                  dcp_world_size=step.dcp_world_size, dcp_rank=step.dcp_rank,
                                  interleave=step.interleave)


def max_query_len(step) -> int:
    """What vLLM's attention metadata carries on the host: the longest query of the step."""
    q = np.diff(step.query_start_loc[: step.num_reqs + 1].astype(np.int64))
    return int(q.max()) if len(q) else 0


def slot_kw(fn, step) -> dict:
    """The host-side extras a design takes beyond the shared arguments."""
    return {"max_query_len": max_query_len(step)} if fn is slot_mapping_grid2d else {}


def run_slots(fn, step, gen, *, out_len=None, bt=None, **extra):
    n = step.num_tokens_padded if out_len is None else out_len
    out = garbage(n, torch.int64, gen)
    bt = torch.from_numpy(step.block_table) if bt is None else bt
    fn(torch.from_numpy(step.query_start_loc).to(DEV), torch.from_numpy(step.positions).to(DEV),
       bt.to(DEV), out=out, num_reqs=step.num_reqs, block_size=step.block_size,
       kernel_block_size=step.kernel_block_size, num_tokens_padded=step.num_tokens_padded,
       dcp_world_size=step.dcp_world_size, dcp_rank=step.dcp_rank, interleave=step.interleave,
       **{**slot_kw(fn, step), **extra})
    return out.cpu().numpy()


# --- slot mapping ------------------------------------------------------------------------------

SLOT_CASES = {
    "plain": dict(),
    "cuda-graph padding only": dict(num_reqs=3, pad_reqs=5, pad_tokens=33),
    "kernel block < manager block": dict(block_size=16, kernel_block_size=4),
    "dcp 2 rank 1": dict(dcp_world_size=2, dcp_rank=1),
    "dcp 4 rank 2 interleave 4": dict(block_size=16, dcp_world_size=4, dcp_rank=2, interleave=4),
    "dcp 2 + kernel blocks + interleave 2": dict(block_size=16, kernel_block_size=8, dcp_world_size=2,
                                                 dcp_rank=0, interleave=2),
    "ids past 32768 blocks": dict(min_block_id=40000, num_manager_blocks=3000),
    "many requests": dict(num_reqs=37, max_seq=20, pad_tokens=1),
}


@pytest.mark.parametrize("fn", SLOT_KERNELS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("case", list(SLOT_CASES))
def test_slot_mapping_matches_loop_reference(fn, case):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    step, _ = random_step(rng, **SLOT_CASES[case])
    want = loop_slots(step)
    got = run_slots(fn, step, gen)
    assert np.array_equal(got, want), f"seed {seed}: first diff at {np.flatnonzero(got != want)[:5]}"
    assert (got[step.num_tokens:] == PAD_SLOT_ID).all()
    if step.dcp_world_size > 1:  # other ranks' tokens are PAD, this rank's are not
        # (not "some token is PAD": a few decode tokens can all fall on this rank)
        pos = step.positions[: step.num_tokens]
        w, il = step.dcp_world_size, step.interleave
        mine = ((pos % (step.block_size * w)) // il) % w == step.dcp_rank
        assert np.array_equal(got[: step.num_tokens] == PAD_SLOT_ID, ~mine), f"seed {seed}"


@pytest.mark.parametrize("fn", TRITON_SLOT_KERNELS, ids=lambda f: f.__name__)
def test_slot_mapping_writes_the_tail_every_call_and_nothing_past_it(fn):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    step, _ = random_step(rng, pad_tokens=1500)   # the tail spans more than one tile
    extra = 5
    out = garbage(step.num_tokens_padded + extra, torch.int64, gen)
    beyond = out[step.num_tokens_padded:].clone()
    args = (torch.from_numpy(step.query_start_loc), torch.from_numpy(step.positions),
            torch.from_numpy(step.block_table))
    kw = dict(num_reqs=step.num_reqs, block_size=step.block_size, num_tokens_padded=step.num_tokens_padded,
              **slot_kw(fn, step))
    for _ in range(2):  # a second call over a dirtied buffer still rewrites the tail
        fn(*[a.to(DEV) for a in args], out=out, **kw)
        assert np.array_equal(out[: step.num_tokens_padded].cpu().numpy(), loop_slots(step)), f"seed {seed}"
        assert torch.equal(out[step.num_tokens_padded:].cpu(), beyond.cpu())
        out[step.num_tokens:step.num_tokens_padded] = 777


@pytest.mark.parametrize("fn", TRITON_SLOT_KERNELS, ids=lambda f: f.__name__)
def test_slot_mapping_reads_a_strided_table_view(fn):
    """Width and strides come from the tensor: a column slice of a wider table works."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    step, _ = random_step(rng)
    wide = torch.from_numpy(rng.integers(1 << 20, 1 << 21, (step.num_reqs_padded, step.block_table.shape[1] * 3))
                            .astype(np.int32))
    wide[:, 5:5 + step.block_table.shape[1]] = torch.from_numpy(step.block_table)
    view = wide[:, 5:5 + step.block_table.shape[1]]
    assert not view.is_contiguous() or view.stride(0) != view.shape[1]
    got = run_slots(fn, step, gen, bt=view)
    assert np.array_equal(got, loop_slots(step)), f"seed {seed}"


def test_slot_mapping_with_no_requests_is_all_pad():
    seed = fresh_seed()
    gen = torch.Generator().manual_seed(seed)
    step = build_step(np.zeros((3, 16), np.int32), [], [], block_size=8, num_reqs_padded=3,
                      num_tokens_padded=20)
    for fn in TRITON_SLOT_KERNELS:
        got = run_slots(fn, step, gen)
        assert (got == PAD_SLOT_ID).all() and len(got) == 20


@pytest.mark.parametrize("case", ["plain", "cuda-graph padding only", "dcp 2 + kernel blocks + interleave 2",
                                  "ids past 32768 blocks"])
def test_grid2d_many_tiles_per_request_and_a_spread_tail(case):
    """Small tiles (16 tokens) so requests span several programs j and the PAD tail is
    shared by the row's programs, with a max_query_len above the longest query (programs
    past a request's end write nothing)."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    kw = {**SLOT_CASES[case], "max_seq": 120}
    kw["pad_tokens"] = int(rng.integers(0, 200))
    step, _ = random_step(rng, **kw)
    want = loop_slots(step)
    for mql in (max_query_len(step), max_query_len(step) + 37):
        got = run_slots(slot_mapping_grid2d, step, gen, tile=16, max_query_len=mql)
        assert np.array_equal(got, want), f"seed {seed} max_query_len {mql}: {np.flatnonzero(got != want)[:5]}"


def test_default_tiles_and_warps():
    from kvviz_kernels.slot_mapping import flat_config, grid2d_config

    assert [grid2d_config(q, 0)[0] for q in (0, 1, 64, 65, 128, 600, 8192, 131072)] == [64, 64, 64, 128, 128, 128, 128, 128]
    assert grid2d_config(1, 1024) == (64, 2) and grid2d_config(8192, 16) == (128, 4)
    assert {flat_config(n, r) for n, r in ((1, 1), (1032, 1024), (131072, 1))} == {(128, 4)}


def test_grid2d_refuses_a_grid_too_tall_and_a_short_max_query_len():
    step = build_step(np.arange(1, 1 + 3 * 8, dtype=np.int32).reshape(3, 8), [20, 5, 9], [20, 1, 3],
                      block_size=4, num_tokens_padded=30)
    args = (torch.from_numpy(step.query_start_loc), torch.from_numpy(step.positions),
            torch.from_numpy(step.block_table))
    kw = dict(num_reqs=3, block_size=4, num_tokens_padded=30)
    with pytest.raises(ValueError, match="65535"):
        slot_mapping_grid2d(*args, max_query_len=65536 * 1024, **kw)
    with pytest.raises(ValueError, match="65535"):
        slot_mapping_grid2d(*args, max_query_len=65536 * 16, tile=16, **kw)
    with pytest.raises(ValueError, match="below a request's query length 20"):
        slot_mapping_grid2d(*args, max_query_len=19, **kw)   # checked on CPU tensors (no sync there)
    with pytest.raises(ValueError, match="power of two"):
        slot_mapping_grid2d(*args, max_query_len=20, tile=100, **kw)


# --- CSR repack --------------------------------------------------------------------------------

@pytest.mark.parametrize("empty_zero", [True, False])
@pytest.mark.parametrize("case", ["plain", "kernel block < manager block", "ids past 32768 blocks",
                                  "many requests"])
def test_csr_matches_loop_reference(case, empty_zero):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    step, _ = random_step(rng, **SLOT_CASES[case])
    seq = step.seq_lens
    want = reference.flashinfer_csr(step.block_table, seq, step.kernel_block_size,
                                    empty_last_page_len_is_zero=empty_zero)
    total = int(want[0][-1])
    idx = garbage(total + 11, torch.int32, gen)
    tail = idx[total:].clone()
    lpl = garbage(len(seq), torch.int32, gen)
    ip, ix, lp = flashinfer_csr(torch.from_numpy(step.block_table).to(DEV), torch.from_numpy(seq).to(DEV),
                                seq, step.kernel_block_size, empty_last_page_len_is_zero=empty_zero,
                                indices_out=idx, last_page_len_out=lpl)
    assert np.array_equal(ip.cpu().numpy(), want[0]), f"seed {seed}"
    assert np.array_equal(ix[:total].cpu().numpy(), want[1]), f"seed {seed}"
    assert np.array_equal(lp.cpu().numpy(), want[2]), f"seed {seed}"
    assert torch.equal(idx[total:].cpu(), tail.cpu()), "wrote past indptr[-1]"
    assert (lp.cpu().numpy()[seq == 0] == (0 if empty_zero else step.kernel_block_size)).all()


def test_csr_full_last_page_and_dcp_local_lengths():
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    bt = rng.integers(1, 1 << 30, (4, 2048)).astype(np.int32)   # a long row: several tiles
    seq = dcp_local_seq_lens(np.array([32, 0, 16 * 1500 + 3, 17], np.int32), block_size=16,
                             dcp_world_size=2, dcp_rank=1, interleave=1)
    want = reference.flashinfer_csr(bt, seq, 16)
    got = [t.cpu().numpy() for t in flashinfer_csr(torch.from_numpy(bt).to(DEV), torch.from_numpy(seq).to(DEV),
                                                   seq, 16)]
    for g, w in zip(got, want):
        assert np.array_equal(g, w), f"seed {seed}"
    assert got[2][0] == 16 and got[2][1] == 0


# --- KV write ----------------------------------------------------------------------------------

def _cache(shape, dtype, gen):
    n = int(np.prod(shape))
    return garbage(n, dtype, gen).reshape(shape)


def _bits(t):
    return t.view(torch.uint8 if t.element_size() == 1 else torch.int16).cpu()


@pytest.mark.parametrize("layout", ["NHD", "HND"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "fp8-copy"])
@pytest.mark.parametrize("launch", [{}, dict(tokens_per_program=1, num_warps=1),
                                    dict(tokens_per_program=32, num_warps=8)],
                         ids=["default", "1 token 1 warp", "32 tokens 8 warps"])
def test_kv_write_matches_reference(layout, dtype, launch):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    step, nblocks = random_step(rng, dcp_world_size=2, dcp_rank=int(rng.integers(0, 2)), block_size=8,
                                kernel_block_size=4)
    heads, dim = 2, 24  # 48 elements: not a power of two
    cdt = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
           "fp8-copy": torch.float8_e4m3fn}[dtype]
    shape = (2, nblocks, 4, heads, dim) if layout == "NHD" else (2, nblocks, heads, 4, dim)
    cache = _cache(shape, cdt, gen)
    before = cache.clone()
    t_pad = step.num_tokens_padded
    k = (torch.randn((t_pad + 3, heads, dim), generator=gen) * 4).to(cdt)   # padded past the slots
    v = (torch.randn((t_pad + 3, heads, dim), generator=gen) * 4).to(cdt)
    slots = torch.from_numpy(step.slot_mapping)
    assert (step.slot_mapping == PAD_SLOT_ID).any()
    kv_write(k.to(DEV), v.to(DEV), cache, slots.to(DEV), layout=layout, **launch)
    want = kv_write_ref(before, k, v, slots, layout=layout)
    assert torch.equal(_bits(cache), _bits(want)), f"seed {seed}"
    written = (_bits(cache) != _bits(before)).sum().item()
    assert (written > 0) == bool((step.slot_mapping >= 0).any())


INTERPRETED = kernels.interpreted()
# Triton's interpreter casts fp32 -> e4m3 with its own rounding (triton 3.9: ties away from zero,
# 1.959 -> 1.0): values that need rounding are checked compiled only; exact ones everywhere.
needs_rne = pytest.mark.skipif(INTERPRETED, reason="the interpreter's e4m3 cast does not round to nearest even")


@pytest.mark.parametrize("x,scale,want", [
    (1000.0, 1.0, 448.0),               # saturates to e4m3's largest finite value, not NaN
    (-1000.0, 0.5, -448.0),
    (0.001953125, 1.0, 0.001953125),    # smallest subnormal, 2^-9
    (3.5, 0.25, 14.0),                  # x / scale, exact
    pytest.param(0.0830078125, 1.7, 0.046875, marks=needs_rne),  # a tie: x * (1/scale) gives 0.05078125
    pytest.param(1.959, 1.0, 2.0, marks=needs_rne),               # round to nearest
])
def test_kv_write_fp8_hand_vectors(x, scale, want):
    """Known values, independent of torch's cast: vLLM divides by the scale and saturates."""
    cache = torch.zeros((2, 2, 4, 1, 16), dtype=torch.float8_e4m3fn, device=DEV)
    k = torch.full((1, 1, 16), x, dtype=torch.float32).half()
    kv_write(k.to(DEV), k.to(DEV), cache, torch.tensor([5], dtype=torch.int64).to(DEV), k_scale=scale,
             v_scale=scale)
    got = cache.float().cpu()
    assert got[0, 1, 1, 0].tolist() == [want] * 16 and got[1, 1, 1, 0].tolist() == [want] * 16
    assert float(got.abs().sum()) == 2 * 16 * abs(want)     # nothing else written


def test_e4m3_bit_model_landmarks():
    """The bit model the fp8 tests trust, checked on values fixed by the format itself."""
    assert e4m3.TABLE[0x00] == 0.0 and np.signbit(e4m3.TABLE[0x80])
    assert e4m3.TABLE[0x01] == 2.0 ** -9 and e4m3.TABLE[0x07] == 7 * 2.0 ** -9      # subnormals
    assert e4m3.TABLE[0x08] == 2.0 ** -6 and e4m3.TABLE[0x38] == 1.0 and e4m3.TABLE[0x39] == 1.125
    assert e4m3.TABLE[0x7E] == 448.0 and e4m3.TABLE[0xFE] == -448.0
    assert np.isnan(e4m3.TABLE[[0x7F, 0xFF]]).all() and len(e4m3.FINITE) == 254
    assert e4m3.quantise(np.array([1.0625, 1.1875, 1000.0, -1000.0, 2.0 ** -10]), 1.0).tolist() == \
        [0x38, 0x3A, 0x7E, 0xFE, 0x00]     # ties to even, saturation, a tie at the bottom to +0


def test_kernels_pad_slot_matches_the_simulator():
    """kernels/ stands alone, so it keeps its own PAD slot: it must equal the simulator's."""
    from kvviz_kernels import slot_mapping as sm

    assert sm.PAD_SLOT_ID == PAD_SLOT_ID


@pytest.mark.parametrize("seed", [7001, 7002])
@pytest.mark.parametrize("layout", ["NHD", "HND"])
@pytest.mark.parametrize("src", [torch.float16, torch.bfloat16, torch.float32])
def test_kv_write_fp8_kernel_quantises_like_the_bit_model(layout, src, seed):
    """The kernel's own quantising branch (wide K/V into an e4m3 cache) against tests/e4m3.py, a
    model of the format built from its bit layout (not torch's cast). In the interpreter the
    quotients are exactly representable or saturate, so the division, the clamp and the byte
    placement are what is tested; compiled, the GPU test draws arbitrary values. The seed is
    pinned (it is in the test id)."""
    rng = np.random.default_rng(seed)
    scale = float(2.0 ** rng.integers(-3, 4))            # a power of two: x / scale is exact
    codes = rng.choice(e4m3.FINITE, size=(2, 40, 2, 16))
    x = e4m3.TABLE[codes] * scale
    sat = rng.random(x.shape) < 0.05
    x[sat] = np.where(rng.random(int(sat.sum())) < 0.5, -600.0, 600.0) * scale   # past +-448: saturate
    check_fp8_against_bit_model(x, scale, src, layout, rng, seed, DEV)


def check_fp8_against_bit_model(x, scale, src, layout, rng, seed, dev, block=4, nblocks=24):
    """Write K = V = x through the kernel and compare every cache byte with tests/e4m3.py."""
    _, tokens, heads, dim = x.shape
    kv = torch.from_numpy(x).to(src)                     # what the kernel reads
    slots = rng.permutation(nblocks * block)[:tokens].astype(np.int64)
    slots[rng.random(tokens) < 0.1] = PAD_SLOT_ID
    shape = (2, nblocks, block, heads, dim) if layout == "NHD" else (2, nblocks, heads, block, dim)
    cache = torch.full(shape, 0x5A, dtype=torch.uint8).view(torch.float8_e4m3fn).to(dev)
    kv_write(kv[0].to(dev), kv[1].to(dev), cache, torch.from_numpy(slots).to(dev), layout=layout,
             k_scale=scale, v_scale=scale)
    got = cache.view(torch.uint8).cpu().numpy()
    # the kernel divides in fp32 (IEEE, round to nearest): numpy's float32 division is the same
    want = e4m3.quantise(kv.float().numpy() / np.float32(scale), 1.0)
    written = np.zeros(got.shape, bool)
    for t in np.flatnonzero(slots >= 0):
        b, o = divmod(int(slots[t]), block)
        index = (slice(None), b, o) if layout == "NHD" else (slice(None), b, slice(None), o)
        assert np.array_equal(got[index], want[:, t]), f"seed {seed} token {t} slot {slots[t]} ({src}, {layout})"
        written[index] = True
    assert (got[~written] == 0x5A).all(), f"seed {seed}: bytes outside the written slots changed"


def _fp8_quant_case(dev, tokens=300, heads=4, dim=64, block=16):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    nblocks = cdiv(tokens, block) * 3
    for layout in ("NHD", "HND"):
        shape = (2, nblocks, block, heads, dim) if layout == "NHD" else (2, nblocks, heads, block, dim)
        cache = garbage(int(np.prod(shape)), torch.float8_e4m3fn, gen, dev).reshape(shape)
        before = cache.clone()
        slots = torch.from_numpy(rng.permutation(nblocks * block)[:tokens].astype(np.int64))
        slots[rng.random(tokens) < 0.1] = PAD_SLOT_ID
        k = torch.randn((tokens, heads, dim), generator=gen).half() * 3
        v = torch.randn((tokens, heads, dim), generator=gen).half() * 3
        k[rng.random(tokens) < 0.05] *= 2000          # some past e4m3's range: they must saturate
        ks, vs = float(rng.uniform(0.1, 3.0)), float(rng.uniform(0.1, 3.0))   # odd scales
        kv_write(k.to(dev), v.to(dev), cache, slots.to(dev), layout=layout, k_scale=ks, v_scale=vs)
        want = kv_write_ref(before, k, v, slots, layout=layout, k_scale=ks, v_scale=vs)
        assert not torch.isnan(quantize_fp8(k, ks).float()).any()     # saturated, never NaN
        assert torch.equal(_bits(cache), _bits(want)), f"seed {seed} {layout}"


def test_kv_write_past_32768_blocks():
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    nblocks, block, heads, dim = 40000, 16, 1, 16
    cache = _cache((2, nblocks, block, heads, dim), torch.float16, gen)
    before = cache.clone()
    slots = torch.from_numpy(rng.choice(np.arange(35000 * block, nblocks * block), 64, replace=False)
                             .astype(np.int64))
    k = torch.randn((64, heads, dim), generator=gen).half()
    v = torch.randn((64, heads, dim), generator=gen).half()
    kv_write(k.to(DEV), v.to(DEV), cache, slots.to(DEV))
    assert torch.equal(_bits(cache), _bits(kv_write_ref(before, k, v, slots))), f"seed {seed}"


def test_kv_write_all_pad_writes_nothing():
    seed = fresh_seed()
    gen = torch.Generator().manual_seed(seed)
    cache = _cache((2, 8, 4, 2, 8), torch.float16, gen)
    before = cache.clone()
    k = torch.randn((10, 2, 8), generator=gen).half()
    kv_write(k.to(DEV), k.to(DEV), cache, torch.full((10,), PAD_SLOT_ID, dtype=torch.int64).to(DEV))
    assert torch.equal(_bits(cache), _bits(before))


@pytest.mark.parametrize("layout", ["NHD", "HND"])
def test_kv_write_slots_outside_the_cache_write_nothing(layout):
    """A wrong slot mapping (slots past the last block, or negative but not PAD) must not scatter
    out of bounds: the cache sits inside a larger poisoned buffer whose guard bands stay intact,
    and the in-range tokens are written as the reference writes them."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    nblocks, block, heads, dim = 6, 4, 2, 8
    shape = (nblocks, block, heads, dim) if layout == "NHD" else (nblocks, heads, block, dim)
    per_plane = int(np.prod(shape))
    guard = 4 * per_plane
    buf = (torch.randn((2 * per_plane + 2 * guard,), generator=gen) * 50).half().to(DEV)
    buf_before = buf.clone()
    cache = buf[guard: guard + 2 * per_plane].view(2, *shape)
    before = cache.clone()
    num_slots = nblocks * block
    slots = rng.choice(num_slots, 24, replace=False)   # distinct: two writes to one slot race on a GPU
    bad = rng.choice(24, 10, replace=False)
    slots[bad[:5]] = rng.integers(num_slots, 3 * num_slots, 5)    # past the cache
    slots[bad[5:]] = rng.integers(-3 * num_slots, -1, 5)          # negative, not PAD
    slots = torch.from_numpy(slots.astype(np.int64))
    k = torch.randn((24, heads, dim), generator=gen).half()
    v = torch.randn((24, heads, dim), generator=gen).half()
    kv_write(k.to(DEV), v.to(DEV), cache, slots.to(DEV), layout=layout)
    assert torch.equal(_bits(buf[:guard]), _bits(buf_before[:guard])), f"seed {seed}"
    assert torch.equal(_bits(buf[guard + 2 * per_plane:]), _bits(buf_before[guard + 2 * per_plane:]))
    assert torch.equal(_bits(cache), _bits(kv_write_ref(before, k, v, slots, layout=layout)))
    assert not torch.equal(_bits(cache), _bits(before))


# --- paged decode ------------------------------------------------------------------------------

def decode_case(rng, gen, *, layout, dtype, dev=DEV, num_reqs=4, max_seq=90, page=8, kv_heads=2,
                group=2, dim=32, min_block_id=1, scale=(1.0, 1.0), row_tile=None):
    """Write a whole random batch into a poisoned cache (reference writer), then return the
    kernel outputs through both page tables and the dense reference."""
    seq = rng.integers(0, max_seq + 1, num_reqs).astype(np.int32)
    seq[0] = 0
    seq[-1] = page * 3          # a full last page
    npages = (seq + page - 1) // page
    pool = int(npages.sum()) * 3 + 8
    ids = rng.choice(np.arange(min_block_id, min_block_id + pool), int(npages.sum()), replace=False)
    width = int(npages.max()) + 3
    bt = np.zeros((num_reqs, width), np.int32)
    at = 0
    for r, n in enumerate(npages):
        bt[r, :n] = ids[at:at + n]
        at += n
    nblocks = min_block_id + pool
    cdt = {"float16": torch.float16, "bfloat16": torch.bfloat16, "fp8": torch.float8_e4m3fn}[dtype]
    shape = (2, nblocks, page, kv_heads, dim) if layout == "NHD" else (2, nblocks, kv_heads, page, dim)
    cache = garbage(int(np.prod(shape)), cdt, gen, "cpu").reshape(shape)
    keys, values, all_k, all_v, all_slots = [], [], [], [], []
    for r in range(num_reqs):
        pos = np.arange(seq[r])
        slots = bt[r, pos // page].astype(np.int64) * page + pos % page
        k = torch.randn((seq[r], kv_heads, dim), generator=gen)
        v = torch.randn((seq[r], kv_heads, dim), generator=gen)
        if dtype == "fp8":
            k, v = quantize_fp8(k, scale[0]), quantize_fp8(v, scale[1])
            keys.append(k.float().numpy() * scale[0])
            values.append(v.float().numpy() * scale[1])
        else:
            k, v = k.to(cdt), v.to(cdt)
            keys.append(k.float().numpy())
            values.append(v.float().numpy())
        all_k.append(k)
        all_v.append(v)
        all_slots.append(torch.from_numpy(slots))
    cache = kv_write_ref(cache, torch.cat(all_k), torch.cat(all_v), torch.cat(all_slots), layout=layout)
    cache = cache.to(dev)
    q = torch.randn((num_reqs, kv_heads * group, dim), generator=gen)
    want = decode_attention_ref(q.numpy(), keys, values)
    ip, ix, lp = reference.flashinfer_csr(bt, seq, page)
    ks = dict(layout=layout, k_scale=scale[0], v_scale=scale[1], row_tile=row_tile)
    out_bt = garbage(q.numel(), torch.float32, gen, dev).reshape(q.shape)
    out_csr = garbage(q.numel(), torch.float32, gen, dev).reshape(q.shape)
    paged_decode_block_table(q.to(dev), cache, torch.from_numpy(bt).to(dev), torch.from_numpy(seq).to(dev),
                             out=out_bt, **ks)
    paged_decode_csr(q.to(dev), cache, torch.from_numpy(ip).to(dev), torch.from_numpy(ix).to(dev),
                     torch.from_numpy(lp).to(dev), out=out_csr, **ks)
    return out_bt.cpu().numpy(), out_csr.cpu().numpy(), want


@pytest.mark.parametrize("layout,dtype", [("NHD", "float16"), ("HND", "float16"), ("NHD", "bfloat16"),
                                          ("HND", "fp8")])
def test_paged_decode_matches_dense_attention(layout, dtype):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    scale = (0.5, 2.0) if dtype == "fp8" else (1.0, 1.0)
    got_bt, got_csr, want = decode_case(rng, gen, layout=layout, dtype=dtype, scale=scale)
    for got in (got_bt, got_csr):
        assert not np.isnan(got).any(), f"seed {seed}: read an unwritten (poisoned) entry"
        np.testing.assert_allclose(got, want, atol=2e-3, rtol=2e-3, err_msg=f"seed {seed}")
    assert (got_bt[0] == 0).all()   # the empty request


@pytest.mark.parametrize("layout,dtype,group", [("NHD", "float16", 16), ("HND", "bfloat16", 7)])
def test_paged_decode_default_tile_at_head_dim_128(layout, dtype, group):
    """The default tile where it is not 1 compiled (head dim 128, >= 512 rows: 4 rows a program on a
    GPU), with groups that do and do not line up with it: dense attention, the empty request zero."""
    from kvviz_kernels.paged_decode import GPU_TILE_ROWS, row_tile

    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    num_reqs = -(-GPU_TILE_ROWS // (2 * group))
    assert row_tile(num_reqs * 2 * group, "cuda", 128) > 1
    got_bt, got_csr, want = decode_case(rng, gen, layout=layout, dtype=dtype, num_reqs=num_reqs, max_seq=24,
                                        kv_heads=2, group=group, dim=128)
    for got in (got_bt, got_csr):
        np.testing.assert_allclose(got, want, atol=2e-3, rtol=2e-3, err_msg=f"seed {seed}")
    assert (got_bt[0] == 0).all()


@pytest.mark.parametrize("kv_heads,group,dim", [(1, 1, 8), (2, 3, 12), (1, 8, 40), (2, 20, 16)])
# 64 rows only in the interpreter: compiled, a [64, 32, head dim] tile takes minutes to build (the
# H200 run of these tests went from 36 s to 538 s with it) for a shape the GPU never launches
@pytest.mark.parametrize("tile", [1, 2, 64 if DEV == "cpu" else 4, None])
def test_paged_decode_row_tiles(kv_heads, group, dim, tile):
    """A program takes ``row_tile`` (request, query head) rows (1 compiled on a GPU, all of them in
    the interpreter; 2 splits odd head counts across requests, 64 leaves most rows masked): every
    tile gives dense attention for requests of different lengths (an empty one among them), and the
    rows past the batch and the columns past the head dim write nothing (the outputs are windows
    of a poisoned buffer whose other entries must stay)."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    got_bt, got_csr, want = decode_case(rng, gen, layout="NHD", dtype="float16", num_reqs=3, max_seq=70,
                                        kv_heads=kv_heads, group=group, dim=dim, row_tile=tile)
    for got in (got_bt, got_csr):
        np.testing.assert_allclose(got, want, atol=2e-3, rtol=2e-3, err_msg=f"seed {seed}")
    # the same launch into a window of a bigger poisoned buffer: only the window changes
    hq = kv_heads * group
    q = torch.randn((3, hq, dim), generator=gen).to(DEV)
    cache = torch.randn((2, 40, 8, kv_heads, dim), generator=gen).to(torch.float16).to(DEV)
    bt = torch.from_numpy(rng.choice(np.arange(1, 40), (3, 4), replace=False).astype(np.int32)).to(DEV)
    seq = torch.tensor([0, 17, 32], dtype=torch.int32, device=DEV)
    big = garbage(5 * (hq + 2) * (dim + 3), torch.float32, gen, DEV).reshape(5, hq + 2, dim + 3)
    lse_big = garbage(5 * (hq + 2), torch.float32, gen, DEV).reshape(5, hq + 2)
    before, lse_before = big.clone(), lse_big.clone()
    out, lse = big[1:4, 1:1 + hq, 1:1 + dim], lse_big[1:4, 1:1 + hq]
    paged_decode_block_table(q, cache, bt, seq, out=out, lse_out=lse, row_tile=tile)
    inside = torch.zeros_like(big, dtype=torch.bool)
    inside[1:4, 1:1 + hq, 1:1 + dim] = True
    assert torch.equal(big[~inside].view(torch.int32), before[~inside].view(torch.int32)), f"seed {seed}"
    lse_inside = torch.zeros_like(lse_big, dtype=torch.bool)
    lse_inside[1:4, 1:1 + hq] = True
    assert torch.equal(lse_big[~lse_inside].view(torch.int32), lse_before[~lse_inside].view(torch.int32))
    assert (out[0] == 0).all() and torch.isinf(lse[0]).all() and (lse[0] < 0).all()   # the empty request
    assert torch.isfinite(lse[1:]).all() and torch.isfinite(out[1:]).all()


def test_paged_decode_row_tile_per_backend():
    from kvviz_kernels.paged_decode import MAX_ROW_TILE, row_tile

    # compiled: 4 rows a program at head dim 128 from 512 rows on, else 1 (the H200 sweep)
    assert [row_tile(n, "cuda", 128) for n in (4, 511, 512, 4096)] == [1, 1, 4, 4]
    assert row_tile(4096, "cuda", 64) == 1 and row_tile(4096, "cuda", 256) == 1 and row_tile(4096, "cuda") == 1
    assert [row_tile(n, "cpu") for n in (1, 2, 3, 20, 64)] == [1, 2, 4, 32, 64]
    assert row_tile(1000, "cpu") == MAX_ROW_TILE
    q = torch.zeros((1, 2, 8), device=DEV)
    cache = torch.zeros((2, 4, 4, 1, 8), dtype=torch.float16, device=DEV)
    with pytest.raises(ValueError, match="power of two"):
        paged_decode_block_table(q, cache, torch.ones((1, 1), dtype=torch.int32, device=DEV),
                                 torch.ones(1, dtype=torch.int32, device=DEV), row_tile=3)


def test_paged_decode_past_32768_blocks():
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    got_bt, got_csr, want = decode_case(rng, gen, layout="HND", dtype="float16", num_reqs=2, max_seq=40,
                                        kv_heads=1, group=1, dim=16, min_block_id=33000)
    np.testing.assert_allclose(got_bt, want, atol=2e-3, rtol=2e-3, err_msg=f"seed {seed}")
    np.testing.assert_allclose(got_csr, want, atol=2e-3, rtol=2e-3, err_msg=f"seed {seed}")


def test_empty_launch_runs(monkeypatch):
    """The empty launch is the bench's floor (kvviz.gpu.bench.timing.measure_floors): exactly one
    program of the do-nothing kernel is launched on ``buf``'s device, ``buf`` is left as it was,
    and timing it gives a positive, finite number of µs."""
    import math

    import kvviz_kernels.empty as empty
    from kvviz.gpu.device import time_us

    launches = []

    class Counted:                       # the jitted kernel, each launch's grid and arguments noted
        def __init__(self, fn):
            self.fn = fn

        def __getitem__(self, grid):
            def launch(*args, **kw):
                launches.append((grid, args, kw))
                return self.fn[grid](*args, **kw)
            return launch

    monkeypatch.setattr(empty, "_empty_kernel", Counted(empty._empty_kernel))
    buf = torch.arange(16, dtype=torch.float32, device=DEV) + 0.5   # no zero, no repeated value
    before = buf.clone()
    empty.empty_launch(buf)
    if DEV == "cuda":
        torch.cuda.synchronize()
    assert len(launches) == 1
    grid, args, _ = launches[0]
    assert tuple(grid) == (1,) and args[0] is buf and args[1] == 0
    assert torch.equal(buf, before)                  # an empty kernel writes nothing
    us = time_us(lambda: empty.empty_launch(buf), rep_ms=5)
    assert math.isfinite(us) and us > 0
    assert len(launches) >= 3                        # the timing launched the kernel, not nothing
    assert torch.equal(buf, before)


def test_flat_slot_mapping_search_path(monkeypatch):
    """Force the search path (request_of, 16-ary) of the flat kernel (its default for most batches)."""
    import kvviz_kernels.slot_mapping as sm

    monkeypatch.setattr(sm, "COUNT_MAX_REQS", 0)
    for case in ("many requests", "dcp 2 + kernel blocks + interleave 2", "cuda-graph padding only"):
        seed = fresh_seed()
        rng = np.random.default_rng(seed)
        step, _ = random_step(rng, **SLOT_CASES[case])
        got = run_slots(sm.slot_mapping_flat, step, torch.Generator().manual_seed(seed))
        assert np.array_equal(got, loop_slots(step)), f"seed {seed} {case}"


def test_flat_slot_mapping_counts_over_several_chunks(monkeypatch):
    """The counting path, over more requests than one wide read of query_start_loc covers
    (REQ_CHUNK), some of them empty, and with several tokens per request."""
    import kvviz_kernels.slot_mapping as sm

    monkeypatch.setattr(sm, "COUNT_MIN_REQS", 1)
    monkeypatch.setattr(sm, "COUNT_MAX_REQS", 1 << 20)

    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    step, _ = random_step(rng, num_reqs=1100, max_seq=3, pad_tokens=5, block_size=4)
    assert step.num_reqs > sm.REQ_CHUNK
    got = run_slots(sm.slot_mapping_flat, step, torch.Generator().manual_seed(seed))
    assert np.array_equal(got, loop_slots(step)), f"seed {seed}"
    for case in ("plain", "dcp 4 rank 2 interleave 4", "cuda-graph padding only"):
        step, _ = random_step(rng, **SLOT_CASES[case])
        got = run_slots(sm.slot_mapping_flat, step, torch.Generator().manual_seed(seed))
        assert np.array_equal(got, loop_slots(step)), f"seed {seed} {case}"


def test_csr_rows_longer_than_the_programs_per_row(monkeypatch):
    """One program per row walking several tiles (the loop after the first, early-read tile)."""
    import kvviz_kernels.page_indices as pi

    monkeypatch.setattr(pi, "MAX_TILES_PER_ROW", 1)
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    bt = rng.integers(1, 1 << 30, (3, 2600)).astype(np.int32)
    seq = np.array([16 * 2600, 16 * 1100 - 5, 0], np.int32)
    want = reference.flashinfer_csr(bt, seq, 16)
    got = pi.flashinfer_csr(torch.from_numpy(bt).to(DEV), torch.from_numpy(seq).to(DEV), seq, 16)
    for g, w in zip(got, want):
        assert np.array_equal(g.cpu().numpy(), w), f"seed {seed}"


# --- launcher options and the auto dispatcher ----------------------------------------------------

@pytest.mark.parametrize("fn", [slot_mapping_flat, slot_mapping_grid2d], ids=lambda f: f.__name__)
@pytest.mark.parametrize("tile,num_warps", [(16, 1), (64, 2), (32, 8)])
def test_slot_mapping_tile_and_warps_overrides(fn, tile, num_warps):
    """Any power-of-two tile and warp count gives the same slots (tiles far smaller than the
    requests and the PAD tail, and more threads than tokens)."""
    for case in ("plain", "many requests", "dcp 2 + kernel blocks + interleave 2"):
        seed = fresh_seed()
        step, _ = random_step(np.random.default_rng(seed), **SLOT_CASES[case])
        got = run_slots(fn, step, torch.Generator().manual_seed(seed), tile=tile, num_warps=num_warps)
        assert np.array_equal(got, loop_slots(step)), f"seed {seed} {case} tile {tile} warps {num_warps}"


def test_slot_mapping_refuses_bad_tile_or_warps():
    step, _ = random_step(np.random.default_rng(0))
    gen = torch.Generator().manual_seed(0)
    for fn in (slot_mapping_flat, slot_mapping_grid2d):
        with pytest.raises(ValueError, match="tile"):
            run_slots(fn, step, gen, tile=100)
        with pytest.raises(ValueError, match="num_warps"):
            run_slots(fn, step, gen, num_warps=3)
    with pytest.raises(ValueError, match="num_warps"):
        run_slots(slot_mapping_per_request, step, gen, num_warps=0)


def test_choose_slot_mapping_design():
    from kvviz_kernels.slot_mapping import choose_slot_mapping_design as choose

    # (num_reqs, num_tokens_padded, max_query_len) -> design: the bench's shapes, then edges
    assert choose(1, 1, 1) == "flat"                 # one request: no search at all
    assert choose(1, 131072, 131072) == "flat"
    assert choose(8, 65544, 8192) == "flat"          # a long prefill over a few requests
    assert choose(16, 131080, 8192) == "grid2d"      # from 16 requests the search costs more
    assert choose(256, 264, 1) == "grid2d"           # decode-shaped batches
    assert choose(1024, 1032, 1) == "grid2d"
    assert choose(64, 8200, 128) == "grid2d"
    assert choose(1024, 131080, 128) == "grid2d"
    assert choose(4, 4000, 1023) == "grid2d" and choose(4, 4000, 1024) == "flat"
    assert choose(0, 8, 0) == "flat"                 # no requests: the PAD tail alone


@pytest.mark.parametrize("case", ["plain", "cuda-graph padding only", "dcp 4 rank 2 interleave 4",
                                  "many requests", "one long request"])
def test_slot_mapping_auto_runs_the_chosen_design(monkeypatch, case):
    import kvviz_kernels.slot_mapping as sm

    calls = []
    for name in ("slot_mapping_flat", "slot_mapping_grid2d"):
        real = getattr(sm, name)
        monkeypatch.setattr(sm, name, lambda *a, _r=real, _n=name, **kw: (calls.append(_n), _r(*a, **kw))[1])
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    kw = dict(num_reqs=1, max_seq=300, pad_reqs=0, empties=False) if case == "one long request" else SLOT_CASES[case]
    step, _ = random_step(rng, **kw)
    mql = max_query_len(step)
    got = run_slots(sm.slot_mapping, step, torch.Generator().manual_seed(seed), max_query_len=mql)
    assert np.array_equal(got, loop_slots(step)), f"seed {seed} {case}"
    want = sm.choose_slot_mapping_design(step.num_reqs, step.num_tokens_padded, mql)
    assert calls == [f"slot_mapping_{want}"]


@pytest.mark.parametrize("fn,extra", [(slot_mapping_per_request, {}), (slot_mapping_flat, {}),
                                      (slot_mapping_grid2d, {"max_query_len": 10})])
def test_slot_mapping_never_writes_past_its_output(fn, extra):
    """A query_start_loc that claims more tokens than num_tokens_padded (a corrupt input) must not
    scatter past the output buffer: the poisoned guard band after it stays intact."""
    qsl = torch.tensor([0, 10], dtype=torch.int32)
    pos = torch.arange(10, dtype=torch.int64)
    bt = torch.tensor([[7, 8]], dtype=torch.int32)
    big = torch.full((20,), 999, dtype=torch.int64, device=DEV)
    fn(qsl.to(DEV), pos.to(DEV), bt.to(DEV), num_reqs=1, block_size=8, num_tokens_padded=4, out=big[:4], **extra)
    assert big[4:].tolist() == [999] * 16


def test_csr_refuses_a_sequence_longer_than_the_table_row():
    """indptr would promise 3 pages but the row has 2: refuse, instead of leaving a hole in indices."""
    bt = torch.tensor([[5, 6], [7, 8]], dtype=torch.int32).to(DEV)
    seq = np.array([10, 3], dtype=np.int32)
    with pytest.raises(ValueError, match="request 0 needs 3 pages of 4 tokens but a block-table row holds only 2"):
        flashinfer_csr(bt, torch.from_numpy(seq).to(DEV), seq, 4)


def test_csr_row_overrun_reads_the_next_rows():
    """vLLM 0.29.0 v1/attention/backends/flashinfer.py _copy_page_indices_kernel: no width mask, so a
    global page count under DCP (FlashInferMetadataBuilder.build before 0.30.0) past a row's width
    reads the rows after it, row-major; last_page_len comes from its own lengths (prefill context)."""
    bt = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    pages_of = np.array([21, 3, 5], np.int32)          # row 0: 6 pages of 4 (> width 4)
    last_of = np.array([18, 0, 5], np.int32)
    flat = bt.reshape(-1).tolist()
    want_ip, want_ix = [0], []
    for r, s in enumerate(pages_of.tolist()):
        n = -(-s // 4)
        want_ix += flat[r * 4: r * 4 + n]
        want_ip.append(want_ip[-1] + n)
    want_lp = [2, 0, 1]
    ip, ix, lp = flashinfer_csr(torch.from_numpy(bt).to(DEV), torch.from_numpy(last_of).to(DEV), pages_of, 4,
                                row_overrun=True)
    assert ip.cpu().tolist() == want_ip and ix.cpu().tolist() == want_ix and lp.cpu().tolist() == want_lp
    with pytest.raises(ValueError, match="past the end of the block table"):
        flashinfer_csr(torch.from_numpy(bt).to(DEV), torch.from_numpy(last_of).to(DEV),
                       np.array([4, 4, 20], np.int32), 4, row_overrun=True)
    with pytest.raises(ValueError, match="holds only 4"):
        flashinfer_csr(torch.from_numpy(bt).to(DEV), torch.from_numpy(last_of).to(DEV), pages_of, 4)
