"""The ``fused_step`` bench case alone: one launch for a step's attention metadata
(kernels/fused_step.py) against the separate kvviz launches and against vLLM's own step kernels,
then tables and the goals.

vLLM's kernels come from the wheels of the newest releases (V1: ``LAST_V1_RELEASE``, Model Runner
V2: ``NEWEST``), extracted at run time (``kvviz.vllm_wheel``; ``KVVIZ_WHEEL_CACHE`` names the folder,
e.g. the slim zips of ``scripts/wheel_oracle_all.sh --make-slim artifacts/wheels``; ``--download``
fetches missing wheels with pip). Without them those rows are left out and the run says so.

Shapes (requests x tokens per request) 1x1, 256x1, 1024x1, 4096x1, 1024x128, 16x8192, 1x131072, at
1, 2 and 4 KV-cache groups; for each, V1 (slot mapping per group + CSR with a host indptr) and
V2 (gather + slot mappings + CSR), fused and separate (kvviz/gpu/bench/fused.py says exactly what).
Every output is checked against the numpy core before timing (a mismatch exits 1). Timings, each
also as a multiple of an empty launch timed the same way:

* ``us``     CUDA events, cold L2 (triton.testing.do_bench), host launch cost included;
* ``graph``  device µs per launch replayed from a CUDA graph (no host in the way);
* ``dev``    device µs with the host hidden behind a spin kernel, cold L2 (``warm``: warm L2).

    python3 scripts/bench_fused_step.py --json /tmp/fused.json   # the H200 run (scripts/gpu_run.sh --part bench)
    python3 scripts/bench_fused_step.py --roles --only-vllm        # + one role at a time, no separate rows
    python scripts/bench_fused_step.py --smoke                     # tiny, the CPU interpreter works

``--json`` writes a file in the ``kvviz bench --json`` format (the kernel lab can load it).
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
from kvviz.gpu.bench.fused import (FUSED_GROUPS, FUSED_GROUPS_CPU, FUSED_SHAPES,  # noqa: E402
                                   FUSED_SHAPES_CPU, FUSED_VARIANTS, ROLE_VARIANTS, bench_fused_step)
from kvviz.gpu.bench.goals import evaluate_goals, vllm_ratios  # noqa: E402
from kvviz.gpu.bench.timing import measure_floors  # noqa: E402
from kvviz.gpu.device import device_label, label_string, torch_device  # noqa: E402
from kvviz.gpu.harness import KernelMismatch  # noqa: E402


def fmt(v, spec=".2f") -> str:
    return "-" if v is None else format(v, spec)


def table(rows: list[dict], floors: dict) -> str:
    """One line per (shape, groups): fused vs separate for V1 and V2, each timing."""
    by = {}
    for r in rows:
        by.setdefault(r["shape"], {})[r["variant"]] = r
    timings = (("us", "events"), ("graph_us", "graph"), ("dev_us", "dev cold"), ("dev_warm_us", "dev warm"))
    floor_of = {"us": "empty_us", "graph_us": "empty_graph_us", "dev_us": "empty_dev_us",
                "dev_warm_us": "empty_dev_warm_us"}
    out = ["empty launch: " + ", ".join(f"{name} {fmt(floors.get(floor_of[k]))} us" for k, name in timings),
           "per cell: fused / separate us (separate/fused speed-up; fused as x empty)"]
    head = f"{'shape':<18} {'timing':<9} {'V1 fused / separate':<34} {'V2 fused / separate':<34}"
    out += [head, "-" * len(head)]
    for shape, v in by.items():
        for k, name in timings:
            cells = []
            for ver in ("v1", "v2"):
                f, s = v.get(f"{ver} fused", {}).get(k), v.get(f"{ver} separate", {}).get(k)
                fl = floors.get(floor_of[k])
                cells.append(f"{fmt(f)} / {fmt(s)}" + (f" ({s / f:.2f}x; {f / fl:.2f}x e)" if f and s and fl else ""))
            if any(c.split(" / ")[0] != "-" for c in cells):
                out.append(f"{shape:<18} {name:<9} {cells[0]:<34} {cells[1]:<34}")
    return "\n".join(out)


def vllm_table(rows: list[dict], releases: dict) -> str:
    """Per shape: vLLM's step kernels vs kvviz's fused launch, graph µs and the ratio, V1 and V2."""
    by = {}
    for r in rows:
        by.setdefault(r["shape"], {})[r["variant"]] = r
    ratio = {(v, s): x for x, v, s in vllm_ratios(rows)}
    head = (f"{'shape':<14} {'vLLM V1 ' + releases.get('v1', '?'):>16} {'kvviz V1':>9} {'ratio':>6} "
            f"{'vLLM V2 ' + releases.get('v2', '?'):>16} {'kvviz V2':>9} {'ratio':>6}   (graph us per step)")
    out = [head, "-" * len(head)]
    for shape, v in by.items():
        cells = []
        for run in ("v1", "v2"):
            a, b = v.get(f"{run} vllm", {}).get("graph_us"), v.get(f"{run} fused", {}).get("graph_us")
            x = ratio.get((run, shape))
            cells.append(f"{fmt(a):>16} {fmt(b):>9} {fmt(x):>6}")
        out.append(f"{shape:<14} " + " ".join(cells))
    return "\n".join(out)


def roles_table(rows: list[dict]) -> str:
    """Graph µs of the fused launch with one program role, beside the whole launch."""
    by = {}
    for r in rows:
        by.setdefault(r["shape"], {})[r["variant"]] = r.get("graph_us")
    cols = ("v1 fused", "v1 fused:csr", "v1 fused:slot", "v2 fused", "v2 fused:csr", "v2 fused:slot",
            "v2 fused:gather")
    out = [f"{'shape':<14} " + " ".join(f"{c:>15}" for c in cols)]
    for shape, v in by.items():
        if any(v.get(c) for c in cols[1:3] + cols[4:]):
            out.append(f"{shape:<14} " + " ".join(f"{fmt(v.get(c)):>15}" for c in cols))
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="tiny shapes (what the interpreter gets anyway)")
    ap.add_argument("--json", help="write the rows here, in the kvviz bench --json format")
    ap.add_argument("--roles", action="store_true", help="also time the fused launch one program role at a time")
    ap.add_argument("--only-vllm", action="store_true", help="leave out kvviz's separate launches")
    ap.add_argument("--download", action="store_true", help="pip-download missing vLLM wheels into the cache")
    ap.add_argument("--shapes", help="comma-separated RxT shapes (default: the full set)")
    ap.add_argument("--groups", help="comma-separated group counts (default 1,2,4)")
    args = ap.parse_args(argv)
    on_gpu = torch_device() == "cuda"
    shapes, groups = (FUSED_SHAPES, FUSED_GROUPS) if on_gpu and not args.smoke else (FUSED_SHAPES_CPU, FUSED_GROUPS_CPU)
    label = device_label()
    print(label_string(label), flush=True)
    if args.shapes:
        shapes = [tuple(int(x) for x in sh.split("x")) for sh in args.shapes.split(",")]
    if args.groups:
        groups = tuple(int(g) for g in args.groups.split(","))
    variants = [v for v in FUSED_VARIANTS if not (args.only_vllm and v.endswith("separate"))]
    variants += list(ROLE_VARIANTS) if args.roles else []
    from kvviz.vllm_wheel.step_kernels import load_step_kernels

    vllm = load_step_kernels(download=args.download)
    for note in vllm.notes:
        print(f"fused_step: {note}", flush=True)
    releases = {"v1": vllm.v1_release or "-", "v2": vllm.v2_release or "-"}
    floors = measure_floors()
    try:
        rows = bench_fused_step(shapes, groups, floors, lambda m: print(m, flush=True), variants=variants,
                                vllm=vllm)
    except KernelMismatch as e:
        print(e)
        print("fused_step bench: MISMATCH")
        return 1
    print(table(rows, floors))
    print()
    print(vllm_table(rows, releases))
    if args.roles:
        print()
        print(roles_table(rows))
    goals = evaluate_goals(rows, floors)
    for g in goals:
        print(f"goal {'MET ' if g['met'] else 'MISS'} {g['goal']}: {g['figure']}")
    fused = [r for r in rows if r["variant"].endswith("fused") and r.get("graph_us")]
    wins = sum(1 for r in fused
               if (sep := next((x for x in rows if x["shape"] == r["shape"]
                                and x["variant"] == r["variant"].replace("fused", "separate")), None))
               and sep.get("graph_us") and r["graph_us"] < sep["graph_us"])
    print(f"fused_step bench: {len(rows)} rows, all outputs match"
          + (f"; fused faster in a CUDA graph in {wins} of {len(fused)}" if fused else ""))
    if args.json:
        note = ("compiled on the GPU; fused_step case only (scripts/bench_fused_step.py)" if on_gpu else
                "Triton interpreter on the CPU: µs are Python emulation wall times, not kernel speeds; tiny shapes")
        note += f"; vLLM step kernels: V1 {releases['v1']}, MRV2 {releases['v2']}" + (
            f" ({'; '.join(vllm.notes)})" if vllm.notes else "")
        from kvviz.files import atomic_writer

        with atomic_writer(args.json) as f:
            f.write(json.dumps({"label": label, "date": _dt.date.today().isoformat(), "quick": False,
                                "floors": floors, "rows": rows, "goals": goals, "note": note}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
