"""The KV write at every dtype x layout and the fused step metadata on the GPU: bench, sweeps, profile
(first written for issue 13; scripts/gpu_kv_write_fused.sh runs it in one device call).

    python3 scripts/kv_write_fused_gpu.py bench --json OUT.json   # KV write (every dtype x layout, 64K
                                                                  # and 128K tokens) + the fused step bench,
                                                                  # with the goals; the kernel lab reads it
    python3 scripts/kv_write_fused_gpu.py sweep --json OUT.json   # KV write tokens/program x warps; fused
                                                                  # step search fan-out, prefix load, CSR
    python3 scripts/kv_write_fused_gpu.py profile                 # one launch of each kernel (for ncu)
    python3 scripts/kv_write_fused_gpu.py bench --smoke           # tiny shapes, works in the interpreter

Every output is checked against the numpy core (or the input rows) before it is timed; a mismatch
exits 1. Timings are those of kvviz.gpu.bench (CUDA events cold L2, CUDA graph, host hidden).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kvviz  # noqa: E402,F401  (names the checkout's kernels/ kvviz_kernels)
import kvviz_kernels as kernels  # noqa: E402,F401  (TRITON_INTERPRET before triton is imported, without CUDA)
from kvviz.gpu.bench.cases import KV_DTYPES, KV_SHAPES, _kv_inputs, _spot_check_kv, bench_kv_write, row  # noqa: E402
from kvviz.gpu.bench.fused import (FUSED_GROUPS, FUSED_GROUPS_CPU, FUSED_SHAPES, FUSED_SHAPES_CPU,  # noqa: E402
                                   _check_variant, _launchers, _outputs, bench_fused_step, fused_bytes,
                                   fused_inputs)
from kvviz.gpu.bench.goals import evaluate_goals  # noqa: E402
from kvviz.gpu.bench.timing import graph_cols, measure_floors  # noqa: E402
from kvviz.gpu.device import device_label, label_string, time_us, torch_device  # noqa: E402
from kvviz.gpu.harness import KernelMismatch  # noqa: E402

SWEEP_KV_TOKENS = (1, 2, 4, 8, 16, 32)
SWEEP_KV_WARPS = (4, 8)
# (fan-out of the fused step's request search, prefix load cap, CSR requests per program); the first is
# the default since 2026-12-02 (the second session's sweep ran these with 16 first: BENCHMARKS.md)
SWEEP_FUSED = ((2, 1024, 16), (16, 1024, 16), (2, 4096, 16), (2, 1024, 32), (2, 1024, 64))
SWEEP_FUSED_SHAPES = ((1, 1), (1024, 1), (4096, 1), (1024, 128), (16, 8192))


def _write(path, d):
    Path(path).write_text(json.dumps(d, indent=1))


def cmd_bench(args, floors, label, on_gpu) -> dict:
    if on_gpu and not args.smoke:
        kv_shapes, fshapes, fgroups, kw = KV_SHAPES, FUSED_SHAPES, FUSED_GROUPS, {}
    else:
        kv_shapes = [(64, layout, d) for d in KV_DTYPES for layout in ("NHD", "HND")]
        fshapes, fgroups, kw = FUSED_SHAPES_CPU, FUSED_GROUPS_CPU, dict(heads=2, dim=32)
    rows = bench_kv_write(kv_shapes, floors, lambda m: print(m, flush=True), **kw)
    rows += bench_fused_step(fshapes, fgroups, floors, lambda m: print(m, flush=True))
    note = ("compiled on the GPU; issue 13: the KV write at every dtype x layout and the fused step metadata "
            "(scripts/kv_write_fused_gpu.py bench)" if on_gpu else
            "Triton interpreter on the CPU: µs are Python emulation wall times, not kernel speeds; tiny shapes")
    return {"label": label, "date": _dt.date.today().isoformat(), "quick": False, "floors": floors, "rows": rows,
            "goals": evaluate_goals(rows, floors) if on_gpu else [], "note": note}


def sweep_kv(floors, tokens: int, heads=8, dim=128, block=16) -> list[dict]:
    from kvviz_kernels.kv_write import kv_write

    dev = torch_device()
    rows = []
    for dtype in KV_DTYPES:
        for layout in ("NHD", "HND"):
            cache, k, v, slots = _kv_inputs(tokens, layout, dtype, heads, dim, block, dev)
            nbytes = tokens * heads * dim * 2 * (k.element_size() + cache.element_size()) + tokens * 8
            for tpp in SWEEP_KV_TOKENS:
                for warps in SWEEP_KV_WARPS:
                    call = lambda: kv_write(k, v, cache, slots, layout=layout, tokens_per_program=tpp,  # noqa: E731
                                            num_warps=warps)
                    call()
                    _spot_check_kv(cache, k, v, slots, layout, dtype, f"sweep kv_write {layout} {dtype} {tpp}/{warps}")
                    r = row("kv_write sweep", f"{layout} {dtype} tok{tpp} w{warps}", f"{tokens} tok", time_us(call),
                            nbytes, floors)
                    r["of_copy_bw"] = round(r["gbps"] / floors["copy_gbps"], 3) if floors.get("copy_gbps") else None
                    rows.append(r)
                    print(f"kv sweep {layout:3} {dtype:9} tok/prog {tpp:2} warps {warps}: {r['us']:8.2f} us "
                          f"{r['gbps']:7.0f} GB/s {r['of_copy_bw']}", flush=True)
            del cache, k, v
    return rows


def sweep_fused(floors, shapes) -> list[dict]:
    import kvviz_kernels.fused_step as fs

    dev = torch_device()
    saved = fs.SEARCH_FANOUT, fs.PREFIX_CHUNK, fs.CSR_MAX_REQ_TILE
    rows = []
    try:
        for num_reqs, per_req in shapes:
            s = fused_inputs(num_reqs, per_req, 1, dev)
            sets = [s] + [dict(s, **{k: s[k].clone() for k in ("qsl", "pos", "seq", "tables")}) for _ in range(7)]
            outs = [_outputs(x, dev) for x in sets]
            calls = [_launchers(x, o)["v1 fused"] for x, o in zip(sets, outs)]
            for fan, prefix, req_tile in SWEEP_FUSED:
                fs.SEARCH_FANOUT, fs.PREFIX_CHUNK, fs.CSR_MAX_REQ_TILE = fan, prefix, req_tile
                name = f"v1 fused fan{fan} prefix{prefix} reqtile{req_tile}"
                _check_variant(f"sweep {name} {num_reqs}x{per_req}", s, outs[0], calls[0])
                r = row("fused_step sweep", name, f"{num_reqs}x{per_req} G1", time_us(calls[0]), fused_bytes(s), floors)
                r.update(graph_cols(calls, calls[0], floors))
                rows.append(r)
                print(f"fused sweep {num_reqs}x{per_req} {name}: events {r['us']:.2f} graph {r.get('graph_us')} "
                      f"dev {r.get('dev_us')} us", flush=True)
            del sets, outs, calls
    finally:
        fs.SEARCH_FANOUT, fs.PREFIX_CHUNK, fs.CSR_MAX_REQ_TILE = saved
    return rows


def cmd_profile():
    """Each kernel of interest launched 3 times at a few shapes (run under ncu -k regex:...)."""
    import torch
    from kvviz_kernels.kv_write import kv_write

    dev = torch_device()
    for num_reqs, per_req in ((1, 1), (4096, 1), (16, 8192)):
        s = fused_inputs(num_reqs, per_req, 1, dev)
        o = _outputs(s, dev)
        call = _launchers(s, o)["v1 fused"]
        _check_variant(f"profile {num_reqs}x{per_req}", s, o, call)
        for _ in range(2):
            call()
        print(f"profiled fused v1 {num_reqs}x{per_req} G1 (launches 1-3 of this shape)", flush=True)
    for dtype, layout in (("fp8-copy", "NHD"), ("fp8", "NHD"), ("float16", "NHD"), ("float32", "HND")):
        cache, k, v, slots = _kv_inputs(65536, layout, dtype, 8, 128, 16, dev)
        for _ in range(3):
            kv_write(k, v, cache, slots, layout=layout)
        torch.cuda.synchronize()
        print(f"profiled kv_write {layout} {dtype} 65536 (3 launches)", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("bench", "sweep", "profile"))
    ap.add_argument("--json", help="write the result here")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes (what the interpreter gets anyway)")
    ap.add_argument("--only", choices=("kv", "fused"), help="sweep: only this kernel")
    args = ap.parse_args(argv)
    on_gpu = torch_device() == "cuda"
    label = device_label()
    print(label_string(label), flush=True)
    try:
        if args.what == "profile":
            cmd_profile()
            return 0
        floors = measure_floors()
        print(f"floors: {floors}", flush=True)
        if args.what == "bench":
            res = cmd_bench(args, floors, label, on_gpu)
            for g in res["goals"]:
                print(f"GOAL {'MET    ' if g['met'] else 'NOT MET'} {g['goal']}: {g['figure']}")
            kv = [r for r in res["rows"] if r["kernel"] == "kv_write"]
            print("kv_write: " + "; ".join(f"{r['variant']} {r['shape'].split()[0]} {r['of_copy_bw']}" for r in kv))
        else:
            small = not on_gpu or args.smoke
            rows = [] if args.only == "fused" else sweep_kv(floors, 64 if small else 65536,
                                                             **(dict(heads=2, dim=32) if small else {}))
            rows += [] if args.only == "kv" else sweep_fused(floors, [(3, 2)] if small else SWEEP_FUSED_SHAPES)
            res = {"label": label, "date": _dt.date.today().isoformat(), "quick": False, "floors": floors,
                   "rows": rows, "goals": [], "note": "KV write and fused step sweeps (scripts/kv_write_fused_gpu.py sweep)"}
    except KernelMismatch as e:
        print(e)
        print(f"kv_write_fused {args.what}: MISMATCH")
        return 1
    print(f"kv_write_fused {args.what}: {len(res['rows'])} rows, all outputs match")
    if args.json:
        _write(args.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
