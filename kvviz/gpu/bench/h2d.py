"""Block-table commits: copying a host table to the device, several ways, timed on the host.

Pinned vs pageable source; the full table vs only the valid column prefix vs only the dirty
rows. µs are host wall clock from the first host step until the device holds the data.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from kvviz.gpu.device import torch_device
from kvviz.gpu.bench.cases import check, row
from kvviz.gpu.bench.timing import median_wall_us

H2D_SHAPES = [(256, 2048), (256, 65536)]
H2D_DIRTY_ROWS = 16
H2D_STEPS_PER_SHAPE = 2 * 5 + 2


def _commit_strategies(host, dirty, used_cols, dev_t, pin: bool):
    """(variant, commit function, bytes it must move, the host part it must land) per strategy,
    from a copy of ``host`` (pinned when ``pin``) into the device table ``dev_t``."""
    import torch

    dev = dev_t.device
    num_reqs, width = host.shape
    nd = len(dirty)
    dirty_list = [int(x) for x in dirty]
    stage_dirty_dev = torch.empty((nd, width), dtype=torch.int32, device=dev)
    dirty_dev = torch.from_numpy(dirty).to(dev)
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
    everything, cols = (slice(None), slice(None)), (slice(None), slice(None, used_cols))
    return (("full width", full, host.nbytes, everything),
            (f"valid prefix ({used_cols} cols)", prefix, num_reqs * used_cols * 4, cols),
            (f"{nd} dirty rows, np.take (old)", rows_take_old, dirty_bytes, dirty),
            (f"{nd} dirty rows, gather + 1 copy + index_copy_", rows_gather, dirty_bytes, dirty),
            (f"{nd} dirty rows, {nd} row copies", rows_each, dirty_bytes, dirty))


def _host_gather_rows(host, dirty, repeats, progress):
    """The host gather alone, both ways (no device work): where the old dirty-row time went."""
    num_reqs, width = host.shape
    nd = len(dirty)
    out = np.empty((nd, width), np.int32)
    rows = []
    for mode in ("raise", "clip"):
        times = []
        for _ in range(repeats + 3):
            t0 = time.perf_counter()
            np.take(host, dirty, axis=0, out=out, mode=mode)
            times.append((time.perf_counter() - t0) * 1e6)
        r = row("h2d_host_gather", f"np.take(out=, mode={mode!r}), {nd} rows", f"{num_reqs}x{width}",
                statistics.median(times[3:]), nd * width * 4 * 2, {"empty_us": None})
        r["x_bytes"] = None
        rows.append(r)
        progress(f"host gather {num_reqs}x{width} mode={mode}: {r['us']:.0f} us")
    return rows


def bench_h2d(shapes, floors, progress, repeats=20, *, pinned=(True, False)):
    """Committing a block table to the device, every strategy, pinned and pageable.

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
        dev_t = torch.zeros((num_reqs, width), dtype=torch.int32, device=dev)
        for pin in pinned:
            for variant, fn, nbytes, part in _commit_strategies(host, dirty, used_cols, dev_t, pin):
                dev_t.zero_()
                us = median_wall_us(fn, repeats)
                check(f"h2d {variant}", dev_t.cpu().numpy()[part], host[part])
                r = row("h2d_commit", f"{'pinned' if pin else 'pageable'}, {variant}", f"{num_reqs}x{width}",
                        us, nbytes, {"empty_us": floors.get("empty_us")})
                r["x_bytes"] = None
                rows.append(r)
                progress(f"h2d {num_reqs}x{width} {r['variant']}: {us:.0f} us")
        rows += _host_gather_rows(host, dirty, repeats, progress)
    return rows
