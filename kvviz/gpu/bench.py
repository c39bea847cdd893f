"""Benchmark harness for the kernels: one function, a progress callback, rows back.

Timing: on a GPU every figure is the median of CUDA-event-timed calls
(``triton.testing.do_bench``, which flushes the L2 before each call, so inputs are
read cold, as they are in a real step). In the Triton interpreter the figures are
wall-clock times of Python emulation: they say nothing about kernel speed and
are labelled so.

Each row: kernel, variant, shape, µs (median), bytes moved (the fewest any
version must move), GB/s, ``x_empty`` (µs over an empty launch's µs) and
``x_bytes`` (µs over the byte floor: bytes at the measured copy bandwidth).
Every kernel output in the bench is checked against the numpy core first;
a mismatch stops the bench with KernelMismatch.
"""
from __future__ import annotations

import datetime as _dt
import statistics
import time

import numpy as np

from kvviz.gpu import harness as backend
from kvviz.gpu.harness import KernelMismatch, device_label, time_us, torch_device
from kvviz.core.step import build_step

GOAL_SLOT_X_EMPTY = 1.5
GOAL_SLOT_VS_TORCH = 5.0
GOAL_CSR_X_EMPTY = 1.5
GOAL_KV_WRITE_OF_COPY = 0.8

# (requests, tokens per request): 1 .. 131072 tokens, decode-heavy to prefill-heavy
SLOT_SHAPES = [(1, 1), (256, 1), (1024, 1), (64, 128), (1, 8192), (8, 8192), (16, 8192),
               (1024, 128), (1, 131072)]
SLOT_SHAPES_QUICK = [(1, 1), (256, 1), (16, 8192), (1, 131072)]
CSR_SHAPES = [(256, 1000), (256, 64), (16, 8192)]
KV_SHAPES = [(4096, "NHD", "float16"), (65536, "NHD", "float16"), (131072, "NHD", "float16"),
             (65536, "HND", "float16"), (65536, "NHD", "bfloat16"), (65536, "NHD", "fp8")]
KV_SHAPES_QUICK = [(4096, "NHD", "float16"), (65536, "NHD", "float16")]
DECODE_SHAPES = [(64, 2048), (8, 32768)]
H2D_SHAPES = [(256, 2048), (256, 65536)]
CPU_SCALE = 64  # the interpreter gets shapes this many times smaller


def _row(kernel, variant, shape, us, nbytes, floors):
    gbps = nbytes / (us * 1e-6) / 1e9 if us and nbytes else None
    byte_floor_us = nbytes / (floors["copy_gbps"] * 1e9) * 1e6 if nbytes and floors.get("copy_gbps") else None
    return {"kernel": kernel, "variant": variant, "shape": shape, "us": round(us, 3),
            "bytes": int(nbytes), "gbps": None if gbps is None else round(gbps, 1),
            "x_empty": round(us / floors["empty_us"], 2) if floors.get("empty_us") else None,
            "x_bytes": round(us / byte_floor_us, 2) if byte_floor_us else None}


def _check(name, got, want):
    if not np.array_equal(np.asarray(got), np.asarray(want)):
        bad = np.flatnonzero(np.asarray(got).reshape(-1) != np.asarray(want).reshape(-1))
        raise KernelMismatch(f"KERNEL MISMATCH in bench: {name}: {len(bad)} entries differ, first {bad[:5]}")


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


def _slot_case(num_reqs, per_req, block_size=16, seed=0):
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


SLOT_DESIGNS = ("per-request", "flat", "grid2d")   # the Triton designs; "torch" is the baseline
# "auto": kernels.slot_mapping.slot_mapping, which picks flat or grid2d per shape (its row says which)
SLOT_VARIANTS = SLOT_DESIGNS + ("auto", "torch")
GRAPH_LAUNCHES = 32
ROTATE_BYTES = 96 << 20  # input sets rotate over more than the 60 MB L2


def time_us_graph(fns) -> float | None:
    """Device µs per launch with no host in the way: ``GRAPH_LAUNCHES`` launches cycling over
    ``fns`` (one per rotated input set) captured in one CUDA graph; median replay / launches."""
    import torch
    import triton.testing

    if torch_device() != "cuda":
        return None
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for f in fns:
                f()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for i in range(GRAPH_LAUNCHES):
                fns[i % len(fns)]()
        g.replay()
        torch.cuda.synchronize()
        ms = triton.testing.do_bench(g.replay, warmup=5, rep=40, return_mode="median")
        return ms * 1e3 / GRAPH_LAUNCHES
    except Exception as e:  # a variant that cannot be captured gets no graph figure
        print(f"(graph capture failed: {type(e).__name__}: {e})")
        return None


DEVICE_REPS = 60
SPIN_CYCLES_PER_US = 2000       # the H200's top SM clock (1980 MHz); a slower clock only spins longer
L2_FLUSH_BYTES = 256 << 20      # what triton's do_bench zeroes to flush the L2


def time_us_device(fn, reps: int = DEVICE_REPS, *, cold: bool = True) -> float | None:
    """Device µs of one launch with the host out of the way: before each timed call the L2 is
    flushed (``cold``; otherwise the inputs stay where the previous call left them, as a step's
    freshly written tables do) and the GPU is kept spinning (``torch.cuda._sleep``) for several
    times the launcher's host time, so the kernel is already queued when the start event
    fires. Event-timed single calls otherwise count any host time between the two events
    whenever the Python launcher is slower than the flush (the bursts in BENCHMARKS.md).
    Median over ``reps``; None off a GPU."""
    import torch

    if torch_device() != "cuda":
        return None
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        fn()
    host = (time.perf_counter() - t0) / 20
    torch.cuda.synchronize()
    # cycles to spin: 4x the host time of a call + 50 µs, at the SM clock (cycles per µs)
    cycles = int((4 * host * 1e6 + 50) * SPIN_CYCLES_PER_US)
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        if cold:
            flush.zero_()
        torch.cuda._sleep(cycles)
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in zip(starts, ends)) * 1e3


def host_us(fn, n=200) -> float:
    """Host-side µs per call (launcher + Triton dispatch), the GPU left to run behind."""
    fn()
    _sync()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t = (time.perf_counter() - t0) / n * 1e6
    _sync()
    return round(t, 2)


def _sync():
    import torch

    if torch_device() == "cuda":
        torch.cuda.synchronize()


def measure_floors(rep_ms=50) -> dict:
    """Empty-launch µs and device copy GB/s (bytes read + written), measured now."""
    import torch
    from kernels.empty import empty_launch

    dev = torch_device()
    buf = torch.zeros(16, device=dev)
    empty_us = time_us(lambda: empty_launch(buf), rep_ms=rep_ms)
    empty_graph = time_us_graph([lambda: empty_launch(buf)])
    empty_host = host_us(lambda: empty_launch(buf))
    empty_dev = time_us_device(lambda: empty_launch(buf))
    empty_warm = time_us_device(lambda: empty_launch(buf), cold=False)
    n = (1 << 30) if dev == "cuda" else (1 << 24)
    src = torch.empty(n, dtype=torch.uint8, device=dev).random_()
    dst = torch.empty_like(src)
    copy_us = time_us(lambda: dst.copy_(src), rep_ms=rep_ms)
    del src, dst
    return {"empty_us": round(empty_us, 3), "empty_graph_us": None if empty_graph is None else round(empty_graph, 3),
            "empty_host_us": empty_host, "empty_dev_us": None if empty_dev is None else round(empty_dev, 3),
            "empty_dev_warm_us": None if empty_warm is None else round(empty_warm, 3),
            "copy_gbps": round(2 * n / (copy_us * 1e-6) / 1e9, 1),
            "copy_bytes": 2 * n}


def bench_slot_mapping(shapes, floors, progress):
    import torch
    from kernels.slot_mapping import (choose_slot_mapping_design, slot_mapping, slot_mapping_flat,
                                      slot_mapping_grid2d, slot_mapping_per_request, slot_mapping_torch)

    dev = torch_device()
    rows = []
    for num_reqs, per_req in shapes:
        step = _slot_case(num_reqs, per_req)
        qsl, pos, bt, out, kw = slot_inputs(step, dev)
        nbytes = step.num_tokens * (8 + 4 + 8) + (step.num_tokens_padded - step.num_tokens) * 8
        shape = f"{num_reqs}x{per_req}"
        nsets = max(1, min(16, ROTATE_BYTES // max(nbytes, 1))) if dev == "cuda" else 1
        sets = [(qsl.clone(), pos.clone(), bt.clone(), torch.empty_like(out)) for _ in range(nsets)]
        for variant, fn, extra in (("per-request", slot_mapping_per_request, {}),
                                   ("flat", slot_mapping_flat, {}),
                                   ("grid2d", slot_mapping_grid2d, {"max_query_len": per_req}),
                                   ("auto", slot_mapping, {"max_query_len": per_req}),
                                   ("torch", slot_mapping_torch, {"num_tokens": step.num_tokens})):
            out.fill_(12345)
            fn(qsl, pos, bt, **kw, **extra)
            _check(f"slot_mapping[{variant}] {shape}", out.cpu().numpy(), step.slot_mapping)
            us = time_us(lambda: fn(qsl, pos, bt, **kw, **extra))
            r = _row("slot_mapping", variant, shape, us, nbytes, floors)
            kw2 = {k: v for k, v in kw.items() if k != "out"}
            r.update(_graph_cols(
                [lambda s=s_: fn(s[0], s[1], s[2], out=s[3], **kw2, **extra) for s_ in sets],
                lambda: fn(qsl, pos, bt, **kw, **extra), floors))
            if variant == "auto":
                r["picked"] = choose_slot_mapping_design(step.num_reqs, step.num_tokens_padded, per_req)
            rows.append(r)
            progress(f"slot_mapping {variant} {shape}: {us:.1f} us (graph {r.get('graph_us')})")
    return rows


def _graph_cols(fns, one, floors) -> dict:
    g = time_us_graph(fns)
    eg = floors.get("empty_graph_us")
    d = time_us_device(one)
    ed = floors.get("empty_dev_us")
    w = time_us_device(one, cold=False)
    ew = floors.get("empty_dev_warm_us")
    return {"graph_us": None if g is None else round(g, 3),
            "graph_x_empty": round(g / eg, 2) if g and eg else None,
            "dev_us": None if d is None else round(d, 3),
            "dev_x_empty": round(d / ed, 2) if d and ed else None,
            "dev_warm_us": None if w is None else round(w, 3),
            "dev_warm_x_empty": round(w / ew, 2) if w and ew else None,
            "host_us": host_us(one) if torch_device() == "cuda" else None}


def bench_csr(shapes, floors, progress):
    import torch
    from kernels.page_indices import _csr_kernel, PAGE_TILE, flashinfer_csr, indptr_from_seq_lens
    from kvviz import reference

    dev = torch_device()
    rows = []
    page = 16
    for num_reqs, pages in shapes:
        rng = np.random.default_rng(num_reqs * pages)
        seq = np.full(num_reqs, pages * page - 3, dtype=np.int32)
        bt_np = rng.integers(1, 1 << 24, (num_reqs, pages + 16)).astype(np.int32)
        bt = torch.from_numpy(bt_np).to(dev)
        seq_dev = torch.from_numpy(seq).to(dev)
        pinned = torch.empty(num_reqs + 1, dtype=torch.int32)
        if dev == "cuda":
            pinned = pinned.pin_memory()
        call = lambda: flashinfer_csr(bt, seq_dev, seq, page, indptr_buf=pinned)  # noqa: E731
        ip, ix, lp = call()
        want = reference.flashinfer_csr(bt_np, seq, page)
        for name, g, w in zip(("indptr", "indices", "last_page_len"), (ip, ix, lp), want):
            _check(f"csr {name} {num_reqs}x{pages}", g.cpu().numpy(), w)
        indptr = torch.from_numpy(indptr_from_seq_lens(seq, page)).to(dev)
        lpl = torch.empty(num_reqs, dtype=torch.int32, device=dev)
        ny = max(1, min((pages + PAGE_TILE - 1) // PAGE_TILE, 16))

        def kernel_only():
            _csr_kernel[(num_reqs, ny)](bt, bt.stride(0), bt.stride(1), bt.shape[1], indptr, seq_dev, ix, lpl,
                                        PAGE_SIZE=page, EMPTY_IS_ZERO=True, TILE=PAGE_TILE)

        nbytes = num_reqs * pages * 8 + num_reqs * 4 * 4
        shape = f"{num_reqs}x{pages} pages"
        us = time_us(kernel_only)
        r = _row("csr", "kernel", shape, us, nbytes, floors)
        r.update(_graph_cols([kernel_only], kernel_only, floors))
        rows.append(r)
        progress(f"csr kernel {shape}: {us:.1f} us")
        us = time_us(call)
        rows.append(_row("csr", "host indptr + H2D + kernel", shape, us, nbytes, floors))
        progress(f"csr total {shape}: {us:.1f} us")
    return rows


def bench_kv_write(shapes, floors, progress, heads=8, dim=128, block=16):
    import torch
    from kernels.kv_write import kv_write
    from kvviz.gpu.attention_ref import quantize_fp8

    dev = torch_device()
    rows = []
    for tokens, layout, dtype in shapes:
        gen = torch.Generator().manual_seed(tokens)
        cdt = backend._cache_dtype(dtype)
        nblocks = 2 * tokens // block + 1
        shape = (2, nblocks, block, heads, dim) if layout == "NHD" else (2, nblocks, heads, block, dim)
        cache = torch.empty(shape, dtype=torch.uint8 if dtype == "fp8" else torch.int16, device=dev).random_()
        cache = cache.view(cdt)
        wide = torch.float16 if dtype == "fp8" else cdt
        k = torch.randn((tokens, heads, dim), generator=gen).to(wide).to(dev)
        v = torch.randn((tokens, heads, dim), generator=gen).to(wide).to(dev)
        # whole blocks in a random order, a few PAD tokens
        blocks = torch.randperm(nblocks - 1, generator=gen)[: (tokens + block - 1) // block] + 1
        slots = (blocks[:, None] * block + torch.arange(block)[None, :]).reshape(-1)[:tokens].clone()
        slots[torch.rand(tokens, generator=gen) < 0.01] = -1
        slots = slots.to(dev)
        kv_write(k, v, cache, slots, layout=layout)
        sel = slots.cpu() >= 0
        got = cache[0].view(-1, heads * dim) if layout == "NHD" else None
        if layout == "NHD":  # spot-check: every written K row equals the input
            want_k = quantize_fp8(k.cpu(), 1.0) if dtype == "fp8" else k.cpu()
            rows_idx = slots.cpu()[sel]
            g = got[rows_idx.to(dev)].cpu().view(torch.uint8 if dtype == "fp8" else torch.int16)
            w = want_k[sel].reshape(-1, heads * dim).view(torch.uint8 if dtype == "fp8" else torch.int16)
            if not (kernels_interpreted() and dtype == "fp8"):
                _check(f"kv_write {tokens} {layout} {dtype}", g.numpy(), w.numpy())
        itemsize = cache.element_size()
        nbytes = tokens * heads * dim * 2 * (k.element_size() + itemsize) + tokens * 8
        us = time_us(lambda: kv_write(k, v, cache, slots, layout=layout))
        r = _row("kv_write", f"{layout} {dtype}", f"{tokens} tok x {heads}h x {dim}", us, nbytes, floors)
        r["of_copy_bw"] = round(r["gbps"] / floors["copy_gbps"], 3) if r["gbps"] and floors.get("copy_gbps") else None
        rows.append(r)
        progress(f"kv_write {layout} {dtype} {tokens}: {us:.1f} us, {r['gbps']} GB/s")
        del cache, k, v
    return rows


def kernels_interpreted() -> bool:
    import kernels

    return kernels.interpreted()


def bench_decode(shapes, floors, progress, kv_heads=8, q_heads=32, dim=128, page=16):
    import torch
    from kernels.paged_decode import paged_decode_block_table, paged_decode_csr
    from kernels.page_indices import flashinfer_csr

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
            rows.append(_row("paged_decode", variant, shape, us, nbytes, floors))
            progress(f"paged_decode {variant} {shape}: {us:.1f} us")
        del cache
    return rows


H2D_DIRTY_ROWS = 16


def _median_wall_us(fn, repeats):
    times = []
    for _ in range(repeats + 3):
        _sync()
        t0 = time.perf_counter()
        fn()
        _sync()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times[3:])


def bench_h2d(shapes, floors, progress, repeats=20, *, pinned=(True, False)):
    """Committing a block table to the device: pinned vs pageable source; the full
    table vs only the valid column prefix vs only the dirty rows. µs are host
    wall clock from the first host step until the device holds the data.

    Dirty rows three ways: the first version (``np.take`` into a staging buffer,
    then a fresh device tensor and ``index_copy_``: ``np.take`` with ``out=`` and
    the default ``mode='raise'`` gathers into a hidden temporary and copies it
    again, so the host gather alone costs about as much as the whole 64 MiB
    copy); a gather with ``mode='clip'`` (no temporary) into a preallocated
    staging buffer, one copy into a preallocated device buffer, and
    ``index_copy_`` on the device; and one ``non_blocking`` copy per dirty row
    straight from the (pinned) table, with no host gather at all. Off a GPU
    (tests) everything stays on the CPU, unpinned."""
    import torch

    dev = torch_device()
    if dev != "cuda":
        pinned = (False,)
    rows = []
    for num_reqs, width in shapes:
        rng = np.random.default_rng(width)
        host = rng.integers(1, 1 << 30, (num_reqs, width)).astype(np.int32)
        used_cols = width // 8                      # the longest request uses an eighth of the row
        dirty = np.sort(rng.choice(num_reqs, H2D_DIRTY_ROWS, replace=False))
        dirty_list = [int(x) for x in dirty]
        nd = len(dirty)
        dev_t = torch.zeros((num_reqs, width), dtype=torch.int32, device=dev)
        stage_dirty_dev = torch.empty((nd, width), dtype=torch.int32, device=dev)
        dirty_dev = torch.from_numpy(dirty).to(dev)
        for pin in pinned:
            src = torch.from_numpy(host.copy())
            stage_prefix = torch.empty((num_reqs, used_cols), dtype=torch.int32)
            stage_dirty = torch.empty((nd, width), dtype=torch.int32)
            if pin:
                src, stage_prefix, stage_dirty = src.pin_memory(), stage_prefix.pin_memory(), stage_dirty.pin_memory()
            src_np, stage_np = src.numpy(), stage_dirty.numpy()
            src_rows = [src[r] for r in dirty_list]
            dev_rows = [dev_t[r] for r in dirty_list]

            def full():
                dev_t.copy_(src, non_blocking=pin)

            def prefix():
                stage_prefix.numpy()[:] = src_np[:, :used_cols]
                dev_t[:, :used_cols].copy_(stage_prefix.to(dev, non_blocking=pin))

            def rows_take_old():
                np.take(src_np, dirty, axis=0, out=stage_np)
                dev_t.index_copy_(0, dirty_dev, stage_dirty.to(dev, non_blocking=pin))

            def rows_gather():
                np.take(src_np, dirty, axis=0, out=stage_np, mode="clip")
                stage_dirty_dev.copy_(stage_dirty, non_blocking=pin)
                dev_t.index_copy_(0, dirty_dev, stage_dirty_dev)

            def rows_each():
                for d, s in zip(dev_rows, src_rows):
                    d.copy_(s, non_blocking=pin)

            dirty_bytes = nd * width * 4
            for variant, fn, nbytes in (
                    ("full width", full, host.nbytes),
                    (f"valid prefix ({used_cols} cols)", prefix, num_reqs * used_cols * 4),
                    (f"{nd} dirty rows, np.take (old)", rows_take_old, dirty_bytes),
                    (f"{nd} dirty rows, gather + 1 copy + index_copy_", rows_gather, dirty_bytes),
                    (f"{nd} dirty rows, {nd} row copies", rows_each, dirty_bytes)):
                dev_t.zero_()
                us = _median_wall_us(fn, repeats)
                got = dev_t.cpu().numpy()
                if variant == "full width":
                    _check(f"h2d {variant}", got, host)
                elif variant.startswith("valid prefix"):
                    _check(f"h2d {variant}", got[:, :used_cols], host[:, :used_cols])
                else:
                    _check(f"h2d {variant}", got[dirty], host[dirty])
                r = _row("h2d_commit", f"{'pinned' if pin else 'pageable'}, {variant}", f"{num_reqs}x{width}",
                         us, nbytes, {"empty_us": floors.get("empty_us")})
                r["x_bytes"] = None
                rows.append(r)
                progress(f"h2d {num_reqs}x{width} {r['variant']}: {us:.0f} us")
        # the host gather alone, both ways (no device work): where the old dirty-row time went
        out = np.empty((nd, width), np.int32)
        for mode in ("raise", "clip"):
            times = []
            for _ in range(repeats + 3):
                t0 = time.perf_counter()
                np.take(host, dirty, axis=0, out=out, mode=mode)
                times.append((time.perf_counter() - t0) * 1e6)
            r = _row("h2d_host_gather", f"np.take(out=, mode={mode!r}), {nd} rows", f"{num_reqs}x{width}",
                     statistics.median(times[3:]), nd * width * 4 * 2, {"empty_us": None})
            r["x_bytes"] = None
            rows.append(r)
            progress(f"host gather {num_reqs}x{width} mode={mode}: {r['us']:.0f} us")
    return rows


H2D_STEPS_PER_SHAPE = 2 * 5 + 2


# (row µs key, row ratio key, floor key, how it reads in the goal's name), one goal line each
TIMING_GOALS = (("us", "x_empty", "empty_us", ""),
                ("graph_us", "graph_x_empty", "empty_graph_us", ", in a CUDA graph (device time per launch)"),
                ("dev_us", "dev_x_empty", "empty_dev_us", ", device-timed with the host hidden (cold L2)"),
                ("dev_warm_us", "dev_warm_x_empty", "empty_dev_warm_us",
                 ", device-timed with the host hidden (warm L2: inputs where the last call left them)"))


def evaluate_goals(rows: list[dict], floors: dict) -> list[dict]:
    """The issue's speed goals, met or not, with the figures that decide."""
    goals = []
    slot = [r for r in rows if r["kernel"] == "slot_mapping"]
    torch_rows = {r["shape"]: r for r in slot if r["variant"] == "torch"}
    for design in SLOT_DESIGNS + ("auto",):
        mine = [r for r in slot if r["variant"] == design]
        if not mine:
            continue
        for us_key, x_key, floor_key, how in TIMING_GOALS:
            timed = [r for r in mine if r.get(x_key)]
            if not timed:
                continue
            worst = max(timed, key=lambda r: r[x_key])
            goals.append({"goal": f"slot mapping ({design}) within {GOAL_SLOT_X_EMPTY}x of an empty launch, every "
                                  f"shape{how}",
                          "met": worst[x_key] <= GOAL_SLOT_X_EMPTY,
                          "figure": f"worst {worst[x_key]}x at {worst['shape']} ({worst[us_key]} us vs "
                                    f"{floors.get(floor_key)} us); "
                                    f"{sum(r[x_key] <= GOAL_SLOT_X_EMPTY for r in timed)} of {len(timed)} shapes "
                                    "within"})
        speedups = [(torch_rows[r["shape"]]["us"] / r["us"], r["shape"]) for r in mine if r["shape"] in torch_rows]
        if speedups:
            lo = min(speedups)
            goals.append({"goal": f"slot mapping ({design}) >= {GOAL_SLOT_VS_TORCH}x faster than torch indexing",
                          "met": lo[0] >= GOAL_SLOT_VS_TORCH,
                          "figure": f"worst {lo[0]:.2f}x at {lo[1]}; best {max(speedups)[0]:.2f}x"})
    # the fastest design of each shape (what a launcher choosing per shape could get)
    best = {}
    for r in slot:
        if r["variant"] in SLOT_DESIGNS and (r["shape"] not in best or r["us"] < best[r["shape"]]["us"]):
            best[r["shape"]] = r
    if best:
        worst = max(best.values(), key=lambda r: r["x_empty"])
        goals.append({"goal": f"slot mapping, fastest design per shape, within {GOAL_SLOT_X_EMPTY}x of an empty "
                              "launch, every shape",
                      "met": worst["x_empty"] <= GOAL_SLOT_X_EMPTY,
                      "figure": f"worst {worst['x_empty']}x at {worst['shape']} ({worst['variant']}, {worst['us']} us); "
                                + ", ".join(f"{k}: {v['variant']}" for k, v in best.items())})
    csr = [r for r in rows if r["kernel"] == "csr" and r["variant"] == "kernel" and r["shape"].startswith("256x1000")]
    if csr:
        goals.append({"goal": f"CSR repack within {GOAL_CSR_X_EMPTY}x of an empty launch (256 x 1000 pages)",
                      "met": csr[0]["x_empty"] <= GOAL_CSR_X_EMPTY,
                      "figure": f"{csr[0]['us']} us = {csr[0]['x_empty']}x"})
        if csr[0].get("dev_x_empty"):
            goals.append({"goal": f"CSR repack within {GOAL_CSR_X_EMPTY}x of an empty launch (256 x 1000 pages), "
                                  "device-timed with the host hidden (cold L2)",
                          "met": csr[0]["dev_x_empty"] <= GOAL_CSR_X_EMPTY,
                          "figure": f"{csr[0]['dev_us']} us = {csr[0]['dev_x_empty']}x"})
        if csr[0].get("graph_x_empty"):
            goals.append({"goal": f"CSR repack within {GOAL_CSR_X_EMPTY}x of an empty launch (256 x 1000 pages), "
                                  "in a CUDA graph",
                          "met": csr[0]["graph_x_empty"] <= GOAL_CSR_X_EMPTY,
                          "figure": f"{csr[0]['graph_us']} us = {csr[0]['graph_x_empty']}x"})
    kv = [r for r in rows if r["kernel"] == "kv_write" and int(r["shape"].split()[0]) >= 65536]
    if kv:
        worst = min(kv, key=lambda r: r["of_copy_bw"] or 0)
        goals.append({"goal": f"KV write >= {GOAL_KV_WRITE_OF_COPY:.0%} of device copy bandwidth at >= 64K tokens",
                      "met": (worst["of_copy_bw"] or 0) >= GOAL_KV_WRITE_OF_COPY,
                      "figure": f"worst {worst['of_copy_bw']:.0%} ({worst['gbps']} GB/s, {worst['variant']}, "
                                f"{worst['shape']}) of {floors['copy_gbps']} GB/s"})
    return goals


def run_bench(*, quick: bool = False, progress=None) -> dict:
    """Run every benchmark; ``progress(done, total, message)`` is called after each step.

    Returns {"label", "date", "floors", "rows", "goals", "note"}."""
    label = device_label()
    on_gpu = torch_device() == "cuda"
    slot_shapes = SLOT_SHAPES_QUICK if quick else SLOT_SHAPES
    csr_shapes = CSR_SHAPES[:1] if quick else CSR_SHAPES
    kv_shapes = KV_SHAPES_QUICK if quick else KV_SHAPES
    dec_shapes = DECODE_SHAPES[:1] if quick else DECODE_SHAPES
    if not on_gpu:  # the interpreter: much smaller shapes, and no H2D to speak of
        slot_shapes = [(r, max(1, t // CPU_SCALE)) for r, t in SLOT_SHAPES_QUICK]
        csr_shapes = [(16, 64)]
        kv_shapes = [(256, "NHD", "float16")]
        dec_shapes = [(2, 64)]
    total = (1 + len(SLOT_VARIANTS) * len(slot_shapes) + 2 * len(csr_shapes) + len(kv_shapes) + 2 * len(dec_shapes)
             + (len(H2D_SHAPES) * H2D_STEPS_PER_SHAPE if on_gpu else 0))
    done = [0]

    def step(msg):
        done[0] += 1
        if progress:
            progress(done[0], total, msg)

    floors = measure_floors()
    step(f"floors: empty launch {floors['empty_us']} us, copy {floors['copy_gbps']} GB/s")
    rows = []
    rows += bench_slot_mapping(slot_shapes, floors, step)
    rows += bench_csr(csr_shapes, floors, step)
    if not on_gpu:
        kv_rows = bench_kv_write(kv_shapes, floors, step, heads=2, dim=32)
        rows += kv_rows
        rows += bench_decode(dec_shapes, floors, step, kv_heads=2, q_heads=4, dim=32)
    else:
        rows += bench_kv_write(kv_shapes, floors, step)
        rows += bench_decode(dec_shapes, floors, step)
        rows += bench_h2d(H2D_SHAPES, floors, step)
    note = ("compiled on the GPU; µs are medians of CUDA-event-timed calls with a cold L2" if on_gpu else
            "Triton interpreter on the CPU: µs are Python emulation wall times, not kernel speeds; "
            "shapes are scaled down")
    return {"label": label, "date": _dt.date.today().isoformat(), "quick": quick, "floors": floors,
            "rows": rows, "goals": evaluate_goals(rows, floors) if on_gpu else [], "note": note}


# how a row's µs was measured -> the floor measured the same way
TIMINGS = {us_key: floor_key for us_key, _, floor_key, _ in TIMING_GOALS}


def available_timings(rows: list[dict]) -> list[str]:
    """The timing columns that hold a figure in at least one of ``rows`` (in TIMINGS order)."""
    return [t for t in TIMINGS if any(r.get(t) is not None for r in rows)]


def format_table(result: dict) -> str:
    """A plain-text table of the rows, then the goals."""
    head = ["kernel", "variant", "shape", "us", "GB/s", "x_empty", "x_bytes", "graph_us", "g_x_empty", "dev_us",
            "d_x_empty", "warm_us", "w_x_empty", "host_us"]

    def f(v, spec):
        return "" if v is None else format(v, spec)

    lines = [[r["kernel"], r["variant"] + (f" ({r['picked']})" if r.get("picked") else ""), r["shape"], f(r["us"], ".2f"), f(r["gbps"], ".0f"), f(r["x_empty"], ".2f"),
              f(r["x_bytes"], ".1f"), f(r.get("graph_us"), ".2f"), f(r.get("graph_x_empty"), ".2f"),
              f(r.get("dev_us"), ".2f"), f(r.get("dev_x_empty"), ".2f"), f(r.get("dev_warm_us"), ".2f"),
              f(r.get("dev_warm_x_empty"), ".2f"), f(r.get("host_us"), ".1f")] for r in result["rows"]]
    widths = [max(len(h), *(len(x[i]) for x in lines)) if lines else len(h) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [f"{backend.label_string(result['label'])}; {result['note']}",
           f"floors: empty launch {result['floors']['empty_us']} us (in a graph "
           f"{result['floors'].get('empty_graph_us')} us/launch, host hidden {result['floors'].get('empty_dev_us')} us cold / "
           f"{result['floors'].get('empty_dev_warm_us')} us warm, "
           f"host {result['floors'].get('empty_host_us')} us), "
           f"device copy {result['floors']['copy_gbps']} GB/s",
           fmt.format(*head), fmt.format(*["-" * w for w in widths])]
    out += [fmt.format(*x) for x in lines]
    for g in result["goals"]:
        out.append(f"GOAL {'MET    ' if g['met'] else 'NOT MET'} {g['goal']}: {g['figure']}")
    return "\n".join(out)


# --- recorded runs: bench JSON files read back (untrusted) --------------------------------------

MAX_BENCH_JSON_BYTES = 8 << 20
MAX_BENCH_ROWS = 20000
ROW_TEXT_KEYS = ("kernel", "variant", "shape", "picked")
ROW_NUMBER_KEYS = ("us", "bytes", "gbps", "x_empty", "x_bytes", "graph_us", "graph_x_empty", "dev_us", "dev_x_empty",
                   "dev_warm_us", "dev_warm_x_empty", "host_us", "of_copy_bw")
FLOOR_KEYS = ("empty_us", "empty_graph_us", "empty_host_us", "empty_dev_us", "empty_dev_warm_us", "copy_gbps",
              "copy_bytes")
EXAMPLE_RUNS_DIR = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples" / "bench"


def _number(v, where: str):
    from kvviz.errors import BadInput

    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise BadInput(f"{where} must be a finite number >= 0 or null, not {str(v)[:40]!r}")
    try:
        f = float(v)
    except OverflowError:   # a 400-digit integer
        raise BadInput(f"{where} is too large a number") from None
    if not np.isfinite(f) or f < 0:
        raise BadInput(f"{where} must be a finite number >= 0 or null, not {str(v)[:40]!r}")
    return v


def _text(v, where: str, limit: int = 300) -> str:
    from kvviz.errors import BadInput

    if not isinstance(v, str) or len(v) > limit:
        raise BadInput(f"{where} must be text of at most {limit} characters")
    return v


def load_bench_json(raw: bytes, name: str = "the bench file") -> dict:
    """A ``kvviz bench --json`` file, validated and rebuilt from the keys kvviz knows (unknown keys
    are dropped); BadInput with one sentence otherwise."""
    from kvviz.errors import BadInput, parse_json

    if len(raw) > MAX_BENCH_JSON_BYTES:
        raise BadInput(f"{name} is {len(raw) >> 20} MiB; a bench file is at most {MAX_BENCH_JSON_BYTES >> 20} MiB")
    d = parse_json(raw, name)
    if not isinstance(d, dict) or not {"label", "floors", "rows"} <= set(d):
        raise BadInput(f"{name} is not a kvviz bench result (it needs 'label', 'floors' and 'rows')")
    label, floors, rows, goals = d["label"], d["floors"], d["rows"], d.get("goals", [])
    if not isinstance(label, dict) or not isinstance(floors, dict):
        raise BadInput(f"{name}: 'label' and 'floors' must be objects")
    if not isinstance(rows, list) or not rows or len(rows) > MAX_BENCH_ROWS:
        raise BadInput(f"{name}: 'rows' must be a list of 1 to {MAX_BENCH_ROWS} measurements")
    if not isinstance(goals, list) or len(goals) > 1000:
        raise BadInput(f"{name}: 'goals' must be a list of at most 1000 goals")
    out = {"label": {k: _text(label[k], f"{name}: label.{k}") for k in ("device", "mode", "triton", "torch")
                     if k in label},
           "date": _text(d.get("date", "?"), f"{name}: date", 40),
           "quick": bool(d.get("quick", False)),
           "note": _text(d.get("note", ""), f"{name}: note", 1000),
           "floors": {k: _number(floors.get(k), f"{name}: floors.{k}") for k in FLOOR_KEYS},
           "rows": [], "goals": []}
    if out["label"].get("mode") not in ("compiled", "interpreter"):
        raise BadInput(f"{name}: label.mode must be 'compiled' or 'interpreter'")
    out["label"].setdefault("device", "unknown device")
    if not out["floors"]["empty_us"]:
        raise BadInput(f"{name}: floors.empty_us (the empty-launch floor) is missing")
    for i, r in enumerate(rows):
        where = f"{name}: row {i}"
        if not isinstance(r, dict) or not all(k in r for k in ("kernel", "variant", "shape", "us")):
            raise BadInput(f"{where} needs 'kernel', 'variant', 'shape' and 'us'")
        row = {k: _text(r[k], f"{where}.{k}") for k in ROW_TEXT_KEYS if k in r}
        row.update({k: _number(r.get(k), f"{where}.{k}") for k in ROW_NUMBER_KEYS})
        if row["us"] is None:
            raise BadInput(f"{where}.us must be a number")
        out["rows"].append(row)
    for i, g in enumerate(goals):
        if not isinstance(g, dict) or not isinstance(g.get("met"), bool):
            raise BadInput(f"{name}: goal {i} needs 'goal', 'met' (true/false) and 'figure'")
        out["goals"].append({"goal": _text(g.get("goal"), f"{name}: goal {i}", 500), "met": g["met"],
                             "figure": _text(g.get("figure"), f"{name}: goal {i} figure", 1000)})
    return out


def example_runs() -> list[str]:
    """Names of the recorded runs shipped in examples/bench (newest first)."""
    return sorted((p.stem for p in EXAMPLE_RUNS_DIR.glob("*.json")), reverse=True)


def load_example_run(name: str) -> dict:
    from kvviz.errors import BadInput

    if name not in example_runs():
        raise BadInput(f"no recorded run named {name!r}")
    return load_bench_json((EXAMPLE_RUNS_DIR / f"{name}.json").read_bytes(), name)
