"""Paged decode: microseconds per tile of (request, query head) rows (``row_tile``), on the GPU or in the interpreter.

    python3 scripts/bench_decode_tiles.py [--json OUT] [--tiles 1,2] [--sweep]   # on the GPU machine (compiled)
    TRITON_INTERPRET=1 .venv/bin/python scripts/bench_decode_tiles.py --interp   # here, small shapes

For each shape it checks every tile size against dense float64 attention (max |err| printed; exits 1
above 2e-3), then times both page tables with each tile through the project's one timer, ``kvviz.gpu.device.time_us``
(median µs of ``triton.testing.do_bench`` on a GPU: CUDA events, the L2 flushed between calls; wall
time of one interpreted call in the interpreter). ``--sweep``: 40 shapes, block table only, then per
shape the fastest tile and how far tile 1, tile 4 and the tile ``kernels.paged_decode.row_tile`` picks
are from it; the rule it picks by came from that table (BENCHMARKS.md, "Rows per program").
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GPU_SHAPES = [(64, 2048, 8, 32, 128), (8, 32768, 8, 32, 128), (256, 512, 8, 64, 128), (64, 2048, 2, 16, 64)]
INTERP_SHAPES = [(5, 20, 2, 4, 8), (8, 64, 2, 8, 32)]
# --sweep: (requests, tokens) x (KV heads, query heads, head dim), the models' usual head layouts
SWEEP_BATCHES = [(1, 32768), (4, 4096), (8, 8192), (16, 16384), (32, 2048), (64, 2048), (128, 1024), (256, 512)]
SWEEP_HEADS = [(8, 32, 128), (8, 64, 128), (4, 28, 128), (2, 16, 64), (8, 8, 128)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write the rows as JSON here")
    ap.add_argument("--interp", action="store_true", help="the interpreter's small shapes")
    ap.add_argument("--tiles", help="only these row tiles, comma-separated (e.g. 1)")
    ap.add_argument("--sweep", action="store_true", help="the GPU's wider set of shapes (SWEEP_*), block table only")
    args = ap.parse_args()

    import numpy as np
    import torch

    import kvviz  # noqa: E402,F401  (names the checkout's kernels/ kvviz_kernels)
    import kvviz_kernels as kernels  # noqa: F401
    from kvviz_kernels.page_indices import flashinfer_csr
    from kvviz_kernels.paged_decode import row_tile, paged_decode_block_table, paged_decode_csr
    from kvviz.gpu.attention_ref import decode_attention_ref
    from kvviz.gpu.device import time_us

    dev = "cuda" if torch.cuda.is_available() and not args.interp else "cpu"
    rows, worst = [], 0.0
    shapes = INTERP_SHAPES if dev == "cpu" else GPU_SHAPES
    if args.sweep:
        shapes = [(r, n, kvh, qh, dim) for kvh, qh, dim in SWEEP_HEADS for r, n in SWEEP_BATCHES]
    for reqs, seq_len, kvh, qh, dim in shapes:
        page = 16
        gen = torch.Generator().manual_seed(seq_len + reqs)
        pages = -(-seq_len // page)
        nblocks = reqs * pages + 1
        # drawn where it runs (16 x 16384 tokens at 8 KV heads x 128 is half a billion values)
        gen_dev = gen if dev == "cpu" else torch.Generator(device=dev).manual_seed(seq_len + reqs)
        cache = torch.randn((2, nblocks, page, kvh, dim), generator=gen_dev, device=dev).half()
        bt = ((torch.randperm(nblocks - 1, generator=gen) + 1)[: reqs * pages].reshape(reqs, pages)).to(torch.int32)
        q = torch.randn((reqs, qh, dim), generator=gen)
        # dense reference on a few requests (the whole batch at the big shapes would take minutes)
        check = min(reqs, 4)
        slots = [(bt[r, np.arange(seq_len) // page].long() * page + torch.arange(seq_len) % page) for r in range(check)]
        flat = cache.reshape(2, nblocks * page, kvh, dim)
        keys = [flat[0, s.to(dev)].float().cpu().numpy() for s in slots]
        values = [flat[1, s.to(dev)].float().cpu().numpy() for s in slots]
        want = decode_attention_ref(q[:check].numpy(), keys, values)
        bt, q = bt.to(dev), q.to(dev)
        seq = np.full(reqs, seq_len, np.int32)
        seq_dev = torch.from_numpy(seq).to(dev)
        ip, ix, lp = flashinfer_csr(bt, seq_dev, seq, page)
        tiles = sorted({1, 2, 4, 8, row_tile(reqs * qh, "cpu")})
        if args.tiles:
            tiles = sorted({int(t) for t in args.tiles.split(",")})
        for tile in tiles:
            variants = (("block_table", lambda t=tile: paged_decode_block_table(q, cache, bt, seq_dev, row_tile=t)),
                        ("csr", lambda t=tile: paged_decode_csr(q, cache, ip, ix, lp, row_tile=t)))
            for variant, fn in variants[:1] if args.sweep else variants:
                err = float(np.abs(fn()[:check].cpu().numpy() - want).max())
                worst = max(worst, err)
                us = time_us(fn)
                shape = f"{reqs}x{seq_len} tok, {qh}/{kvh}h x {dim}"
                rows.append({"shape": shape, "variant": variant, "row_tile": tile, "us": round(us, 1),
                             "max_abs_err": err, "picked": tile == row_tile(reqs * qh, dev, dim)})
                print(f"{shape:28s} {variant:12s} tile {tile:3d}  {us:10.1f} us  err {err:.2e}"
                      f"{'  <- picked' if rows[-1]['picked'] else ''}", flush=True)
    if args.sweep:   # per shape: the fastest tile, and how far tile 1 and tile 4 are from it
        print(f"{'shape':30s} {'best':>4s} {'best us':>9s} {'t1/best':>8s} {'t4/best':>8s} {'picked':>6s} {'pick/best':>9s}")
        for shape in dict.fromkeys(r["shape"] for r in rows):
            us = {r["row_tile"]: r["us"] for r in rows if r["shape"] == shape}
            pick = next((r["row_tile"] for r in rows if r["shape"] == shape and r["picked"]), None)
            best = min(us, key=us.get)
            print(f"{shape:30s} {best:4d} {us[best]:9.1f} {us.get(1, 0) / us[best]:8.2f} {us.get(4, 0) / us[best]:8.2f}"
                  f" {pick or '-':>6} {us[pick] / us[best] if pick in us else 0:9.2f}")
    print(f"paged decode tiles: {len(rows)} rows, worst |err| {worst:.2e} ({'ok' if worst <= 2e-3 else 'MISMATCH'})")
    if args.json:
        from kvviz.files import atomic_writer
        with atomic_writer(args.json) as f:
            f.write(json.dumps({"device": dev, "rows": rows}, indent=1))
    return 0 if worst <= 2e-3 else 1


if __name__ == "__main__":
    if "--interp" in sys.argv:
        os.environ.setdefault("TRITON_INTERPRET", "1")
    sys.exit(main())
