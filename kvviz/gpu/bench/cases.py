"""The benchmark cases: slot mapping, CSR repack, KV write and paged decode at a list of shapes.

Each case builds its inputs, checks the kernel's output against the numpy core (KernelMismatch
on a difference, before anything is timed), times it and returns rows (``row``).
"""
from __future__ import annotations

import numpy as np

import kvviz_kernels as kernels
from kvviz.core.step import build_step
from kvviz.gpu.device import time_us, torch_device
from kvviz.gpu.harness import KernelMismatch, cache_torch_dtype
from kvviz.gpu.bench.timing import graph_cols

# (requests, tokens per request): 1 .. 131072 tokens, decode-heavy to prefill-heavy
SLOT_SHAPES = [(1, 1), (256, 1), (1024, 1), (64, 128), (1, 8192), (8, 8192), (16, 8192),
               (1024, 128), (1, 131072)]
SLOT_SHAPES_QUICK = [(1, 1), (256, 1), (16, 8192), (1, 131072)]
CSR_SHAPES = [(256, 1000), (256, 64), (16, 8192)]
# every cache dtype the kernel takes, both layouts, 64K and 128K tokens (the goal's sizes); "fp8" is
# fp16 K/V scaled and cast in the kernel, "fp8-copy" K/V that are already fp8 (a byte copy)
KV_DTYPES = ("float16", "bfloat16", "float32", "fp8", "fp8-copy")
KV_SHAPES = [(4096, "NHD", "float16")] + [(n, layout, d) for d in KV_DTYPES for layout in ("NHD", "HND")
                                          for n in (65536, 131072)]
KV_SHAPES_QUICK = [(4096, "NHD", "float16"), (65536, "NHD", "float16")]
DECODE_SHAPES = [(64, 2048), (8, 32768)]
CPU_SCALE = 64  # the interpreter gets shapes this many times smaller

SLOT_DESIGNS = ("per-request", "flat", "grid2d")   # the Triton designs; "torch" is the baseline
# "auto": kernels.slot_mapping.slot_mapping, which picks flat or grid2d per shape (its row says which)
SLOT_VARIANTS = SLOT_DESIGNS + ("auto", "torch")
ROTATE_BYTES = 96 << 20  # input sets rotate over more than the 60 MB L2


def row(kernel, variant, shape, us, nbytes, floors):
    """One measurement as a bench row, with its ratios to the empty launch and the byte floor."""
    gbps = nbytes / (us * 1e-6) / 1e9 if us and nbytes else None
    byte_floor_us = nbytes / (floors["copy_gbps"] * 1e9) * 1e6 if nbytes and floors.get("copy_gbps") else None
    return {"kernel": kernel, "variant": variant, "shape": shape, "us": round(us, 3),
            "bytes": int(nbytes), "gbps": None if gbps is None else round(gbps, 1),
            "x_empty": round(us / floors["empty_us"], 2) if floors.get("empty_us") else None,
            "x_bytes": round(us / byte_floor_us, 2) if byte_floor_us else None}


def check(name, got, want):
    """KernelMismatch unless ``got`` equals ``want`` entry for entry."""
    if not np.array_equal(np.asarray(got), np.asarray(want)):
        bad = np.flatnonzero(np.asarray(got).reshape(-1) != np.asarray(want).reshape(-1))
        raise KernelMismatch(f"KERNEL MISMATCH in bench: {name}: {len(bad)} entries differ, first {bad[:5]}")


# --- slot mapping -------------------------------------------------------------------------------

def slot_inputs(step, dev):
    """A step's slot-mapping inputs on ``dev``, an output buffer, and the launchers' keywords:
    (query_start_loc, positions, block_table, out, kw)."""
    import torch

    qsl = torch.from_numpy(step.query_start_loc).to(dev)
    pos = torch.from_numpy(step.positions).to(dev)
    bt = torch.from_numpy(step.block_table).to(dev)
    out = torch.empty(step.num_tokens_padded, dtype=torch.int64, device=dev)
    kw = dict(num_reqs=step.num_reqs, block_size=step.block_size, out=out,
              num_tokens_padded=step.num_tokens_padded)
    return qsl, pos, bt, out, kw


def slot_case(num_reqs, per_req, block_size=16, seed=0):
    """A step of ``num_reqs`` requests of ``per_req`` new tokens each (decodes get a random
    context), blocks drawn at random, 8 padding tokens."""
    rng = np.random.default_rng(seed)
    ctx = rng.integers(0, 4096, num_reqs) if per_req == 1 else np.zeros(num_reqs, np.int64)
    seq = ctx + per_req
    blocks = (seq + block_size - 1) // block_size
    width = int(blocks.max())
    ids = rng.permutation(max(int(blocks.sum()) * 2, 64))[: num_reqs * width].astype(np.int32) + 1
    bt = np.zeros((num_reqs, width), np.int32)
    bt.reshape(-1)[: ids.size] = ids
    pad = 8 if num_reqs * per_req > 1 else 0
    return build_step(bt, seq, np.full(num_reqs, per_req), block_size=block_size,
                      num_tokens_padded=num_reqs * per_req + pad)


def _slot_variants(step, per_req):
    """(variant, launcher, extra keywords) of every slot-mapping variant the bench times."""
    from kvviz_kernels.slot_mapping import (slot_mapping, slot_mapping_flat, slot_mapping_grid2d,
                                      slot_mapping_per_request, slot_mapping_torch)

    return (("per-request", slot_mapping_per_request, {}),
            ("flat", slot_mapping_flat, {}),
            ("grid2d", slot_mapping_grid2d, {"max_query_len": per_req}),
            ("auto", slot_mapping, {"max_query_len": per_req}),
            ("torch", slot_mapping_torch, {"num_tokens": step.num_tokens}))


def bench_slot_mapping(shapes, floors, progress):
    import torch
    from kvviz_kernels.slot_mapping import choose_slot_mapping_design

    dev = torch_device()
    rows = []
    for num_reqs, per_req in shapes:
        step = slot_case(num_reqs, per_req)
        qsl, pos, bt, out, kw = slot_inputs(step, dev)
        nbytes = step.num_tokens * (8 + 4 + 8) + (step.num_tokens_padded - step.num_tokens) * 8
        shape = f"{num_reqs}x{per_req}"
        nsets = max(1, min(16, ROTATE_BYTES // max(nbytes, 1))) if dev == "cuda" else 1
        sets = [(qsl.clone(), pos.clone(), bt.clone(), torch.empty_like(out)) for _ in range(nsets)]
        kw2 = {k: v for k, v in kw.items() if k != "out"}
        for variant, fn, extra in _slot_variants(step, per_req):
            out.fill_(12345)
            fn(qsl, pos, bt, **kw, **extra)
            check(f"slot_mapping[{variant}] {shape}", out.cpu().numpy(), step.slot_mapping)
            us = time_us(lambda: fn(qsl, pos, bt, **kw, **extra))
            r = row("slot_mapping", variant, shape, us, nbytes, floors)
            r.update(graph_cols(
                [lambda s=s_: fn(s[0], s[1], s[2], out=s[3], **kw2, **extra) for s_ in sets],
                lambda: fn(qsl, pos, bt, **kw, **extra), floors))
            if variant == "auto":
                r["picked"] = choose_slot_mapping_design(step.num_reqs, step.num_tokens_padded, per_req)
            rows.append(r)
            progress(f"slot_mapping {variant} {shape}: {us:.1f} us (graph {r.get('graph_us')})")
    return rows


# --- CSR repack ---------------------------------------------------------------------------------

def _csr_inputs(num_reqs, pages, page, dev):
    """A random table of ``num_reqs`` rows, each request ``pages`` pages long (the last page
    3 short): (host table, device table, host seq_lens, device seq_lens)."""
    import torch

    rng = np.random.default_rng(num_reqs * pages)
    seq = np.full(num_reqs, pages * page - 3, dtype=np.int32)
    bt_np = rng.integers(1, 1 << 24, (num_reqs, pages + 16)).astype(np.int32)
    return bt_np, torch.from_numpy(bt_np).to(dev), seq, torch.from_numpy(seq).to(dev)


def bench_csr(shapes, floors, progress):
    import torch
    from kvviz_kernels.page_indices import _csr_kernel, PAGE_TILE, flashinfer_csr, indptr_from_seq_lens
    from kvviz import reference

    dev = torch_device()
    rows = []
    page = 16
    for num_reqs, pages in shapes:
        bt_np, bt, seq, seq_dev = _csr_inputs(num_reqs, pages, page, dev)
        pinned = torch.empty(num_reqs + 1, dtype=torch.int32)
        if dev == "cuda":
            pinned = pinned.pin_memory()
        call = lambda: flashinfer_csr(bt, seq_dev, seq, page, indptr_buf=pinned)  # noqa: E731
        ip, ix, lp = call()
        want = reference.flashinfer_csr(bt_np, seq, page)
        for name, g, w in zip(("indptr", "indices", "last_page_len"), (ip, ix, lp), want):
            check(f"csr {name} {num_reqs}x{pages}", g.cpu().numpy(), w)
        indptr = torch.from_numpy(indptr_from_seq_lens(seq, page)).to(dev)
        lpl = torch.empty(num_reqs, dtype=torch.int32, device=dev)
        ny = max(1, min((pages + PAGE_TILE - 1) // PAGE_TILE, 16))

        def kernel_only():
            _csr_kernel[(num_reqs, ny)](bt, bt.stride(0), bt.stride(1), bt.shape[1], indptr, seq_dev, ix, lpl,
                                        PAGE_SIZE=page, EMPTY_IS_ZERO=True, TILE=PAGE_TILE)

        nbytes = num_reqs * pages * 8 + num_reqs * 4 * 4
        shape = f"{num_reqs}x{pages} pages"
        us = time_us(kernel_only)
        r = row("csr", "kernel", shape, us, nbytes, floors)
        r.update(graph_cols([kernel_only], kernel_only, floors))
        rows.append(r)
        progress(f"csr kernel {shape}: {us:.1f} us")
        us = time_us(call)
        rows.append(row("csr", "host indptr + H2D + kernel", shape, us, nbytes, floors))
        progress(f"csr total {shape}: {us:.1f} us")
    return rows


# --- KV write -----------------------------------------------------------------------------------

def _kv_inputs(tokens, layout, dtype, heads, dim, block, dev):
    """A poisoned cache twice the tokens' size, random K/V and slots covering whole blocks in a
    random order with a few PAD tokens: (cache, k, v, slots)."""
    import torch

    gen = torch.Generator().manual_seed(tokens)
    cdt = torch.float32 if dtype == "float32" else cache_torch_dtype(dtype.removesuffix("-copy"))
    nblocks = 2 * tokens // block + 1
    shape = (2, nblocks, block, heads, dim) if layout == "NHD" else (2, nblocks, heads, block, dim)
    bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[cdt.itemsize]
    cache = torch.empty(shape, dtype=bits, device=dev).random_()
    cache = cache.view(cdt)
    wide = torch.float16 if dtype == "fp8" else cdt
    k = torch.randn((tokens, heads, dim), generator=gen).to(wide).to(dev)
    v = torch.randn((tokens, heads, dim), generator=gen).to(wide).to(dev)
    blocks = torch.randperm(nblocks - 1, generator=gen)[: (tokens + block - 1) // block] + 1
    slots = (blocks[:, None] * block + torch.arange(block)[None, :]).reshape(-1)[:tokens].clone()
    slots[torch.rand(tokens, generator=gen) < 0.01] = -1
    return cache, k, v, slots.to(dev)


def _spot_check_kv(cache, k, v, slots, layout, dtype, name):
    """Every written K and V row equals the input, NHD or HND (an fp8 cache fed fp16: the input
    quantised as vLLM does; skipped in the interpreter, whose e4m3 cast rounds differently)."""
    import torch
    from kvviz.gpu.attention_ref import quantize_fp8

    if kernels.interpreted() and dtype == "fp8":
        return
    bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[cache.element_size()]
    sel = slots >= 0
    s = slots[sel]
    block_size = cache.shape[2] if layout == "NHD" else cache.shape[3]
    blk, off = s // block_size, s % block_size
    for plane, x in ((0, k), (1, v)):
        want = quantize_fp8(x.cpu(), 1.0) if dtype == "fp8" else x.cpu()
        got = cache[plane][blk, off] if layout == "NHD" else cache[plane][blk, :, off]   # [n, H, D]
        check(f"{name} {'KV'[plane]}", got.cpu().view(bits).numpy(),
              want[:slots.numel()][sel.cpu()].contiguous().view(bits).numpy())


def bench_kv_write(shapes, floors, progress, heads=8, dim=128, block=16):
    from kvviz_kernels.kv_write import kv_write

    dev = torch_device()
    rows = []
    for tokens, layout, dtype in shapes:
        cache, k, v, slots = _kv_inputs(tokens, layout, dtype, heads, dim, block, dev)
        kv_write(k, v, cache, slots, layout=layout)
        _spot_check_kv(cache, k, v, slots, layout, dtype, f"kv_write {tokens} {layout} {dtype}")
        nbytes = tokens * heads * dim * 2 * (k.element_size() + cache.element_size()) + tokens * 8
        us = time_us(lambda: kv_write(k, v, cache, slots, layout=layout))
        r = row("kv_write", f"{layout} {dtype}", f"{tokens} tok x {heads}h x {dim}", us, nbytes, floors)
        r["of_copy_bw"] = round(r["gbps"] / floors["copy_gbps"], 3) if r["gbps"] and floors.get("copy_gbps") else None
        rows.append(r)
        progress(f"kv_write {layout} {dtype} {tokens}: {us:.1f} us, {r['gbps']} GB/s")
        del cache, k, v
    return rows


# --- paged decode -------------------------------------------------------------------------------

def bench_decode(shapes, floors, progress, kv_heads=8, q_heads=32, dim=128, page=16):
    import torch
    from kvviz_kernels.paged_decode import paged_decode_block_table, paged_decode_csr
    from kvviz_kernels.page_indices import flashinfer_csr

    dev = torch_device()
    rows = []
    for num_reqs, seq_len in shapes:
        gen = torch.Generator().manual_seed(seq_len)
        pages = (seq_len + page - 1) // page
        nblocks = num_reqs * pages + 1
        cache = torch.randn((2, nblocks, page, kv_heads, dim), generator=gen).half().to(dev)
        bt = (torch.randperm(nblocks - 1, generator=gen) + 1)[: num_reqs * pages].reshape(num_reqs, pages)
        bt = bt.to(torch.int32).to(dev)
        seq = np.full(num_reqs, seq_len, np.int32)
        seq_dev = torch.from_numpy(seq).to(dev)
        ip, ix, lp = flashinfer_csr(bt, seq_dev, seq, page)
        q = torch.randn((num_reqs, q_heads, dim), generator=gen).to(dev)
        a = paged_decode_block_table(q, cache, bt, seq_dev)
        b = paged_decode_csr(q, cache, ip, ix, lp)
        if not torch.allclose(a, b, atol=1e-5, rtol=1e-5):
            raise KernelMismatch("KERNEL MISMATCH in bench: paged decode block table vs CSR differ")
        nbytes = num_reqs * seq_len * kv_heads * dim * 2 * 2
        shape = f"{num_reqs}x{seq_len} tok, {q_heads}/{kv_heads}h x {dim}"
        for variant, fn in (("block_table", lambda: paged_decode_block_table(q, cache, bt, seq_dev)),
                            ("csr", lambda: paged_decode_csr(q, cache, ip, ix, lp))):
            us = time_us(fn)
            rows.append(row("paged_decode", variant, shape, us, nbytes, floors))
            progress(f"paged_decode {variant} {shape}: {us:.1f} us")
        del cache
    return rows
