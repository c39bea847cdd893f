"""How the bench times a call, and the floors a row is measured against.

Four figures per call where the machine allows: CUDA events (``kvviz.gpu.device.time_us``), a
CUDA graph (device time per launch, no host in the way), device time with the host hidden
(cold or warm L2) and host time (launcher + Triton dispatch). Off a GPU only the first exists.
Under compute-sanitizer (``KVVIZ_UNDER_SANITIZER`` set, as ``scripts/gpu_run.sh --part kernels``
does) the graph and host-hidden figures are left out: their spin waits scale with the sanitized
host time and their figures would mean nothing; every kernel still runs, checked, through the
event timing.
"""
from __future__ import annotations

import os
import statistics
import time

from kvviz.gpu.device import sync, time_us, torch_device

GRAPH_LAUNCHES = 32
DEVICE_REPS = 60
SPIN_CYCLES_PER_US = 2000       # the H200's top SM clock (1980 MHz); a slower clock only spins longer
L2_FLUSH_BYTES = 256 << 20      # what triton's do_bench zeroes to flush the L2


def sanitized() -> bool:
    """True under compute-sanitizer (``KVVIZ_UNDER_SANITIZER``): no graph or host-hidden figures."""
    return os.environ.get("KVVIZ_UNDER_SANITIZER", "") not in ("", "0")


def time_us_graph(fns) -> float | None:
    """Device µs per launch with no host in the way: ``GRAPH_LAUNCHES`` launches cycling over
    ``fns`` (one per rotated input set) captured in one CUDA graph; median replay / launches."""
    import torch
    import triton.testing

    if torch_device() != "cuda" or sanitized():
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


def _spin_cycles(fn) -> int:
    """GPU cycles to spin before a timed call: 4x the host time of a call + 50 µs, at the SM clock."""
    import torch

    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        fn()
    host = (time.perf_counter() - t0) / 20
    torch.cuda.synchronize()
    return int((4 * host * 1e6 + 50) * SPIN_CYCLES_PER_US)


def time_us_device(fn, reps: int = DEVICE_REPS, *, cold: bool = True) -> float | None:
    """Device µs of one launch with the host out of the way: before each timed call the L2 is
    flushed (``cold``; otherwise the inputs stay where the previous call left them, as a step's
    freshly written tables do) and the GPU is kept spinning (``torch.cuda._sleep``) for several
    times the launcher's host time, so the kernel is already queued when the start event
    fires. Event-timed single calls otherwise count any host time between the two events
    whenever the Python launcher is slower than the flush (the bursts in BENCHMARKS.md).
    Median over ``reps``; None off a GPU and under the sanitizer."""
    import torch

    if torch_device() != "cuda" or sanitized():
        return None
    cycles = _spin_cycles(fn)
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
    """Host-side µs per call (launcher + Triton dispatch), the GPU left to run behind (5 calls
    under the sanitizer)."""
    n = 5 if sanitized() else n
    fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t = (time.perf_counter() - t0) / n * 1e6
    sync()
    return round(t, 2)


def median_wall_us(fn, repeats):
    """Median host wall-clock µs from the call until the device is done (3 warm-up calls)."""
    times = []
    for _ in range(repeats + 3):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times[3:])


def _rounded(x, digits=3):
    return None if x is None else round(x, digits)


def measure_floors(rep_ms=50) -> dict:
    """Empty-launch µs (every way of timing) and device copy GB/s (bytes read + written), measured now."""
    import torch
    from kvviz_kernels.empty import empty_launch

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
    return {"empty_us": round(empty_us, 3), "empty_graph_us": _rounded(empty_graph),
            "empty_host_us": empty_host, "empty_dev_us": _rounded(empty_dev),
            "empty_dev_warm_us": _rounded(empty_warm),
            "copy_gbps": round(2 * n / (copy_us * 1e-6) / 1e9, 1),
            "copy_bytes": 2 * n}


def graph_cols(fns, one, floors) -> dict:
    """A row's graph / host-hidden cold / warm / host columns for the call ``one`` (``fns``: the
    same call over rotated input sets, for the graph), each with its ratio to its own floor."""
    g = time_us_graph(fns)
    eg = floors.get("empty_graph_us")
    d = time_us_device(one)
    ed = floors.get("empty_dev_us")
    w = time_us_device(one, cold=False)
    ew = floors.get("empty_dev_warm_us")
    return {"graph_us": _rounded(g),
            "graph_x_empty": round(g / eg, 2) if g and eg else None,
            "dev_us": _rounded(d),
            "dev_x_empty": round(d / ed, 2) if d and ed else None,
            "dev_warm_us": _rounded(w),
            "dev_warm_x_empty": round(w / ew, 2) if w and ew else None,
            "host_us": host_us(one) if torch_device() == "cuda" else None}
