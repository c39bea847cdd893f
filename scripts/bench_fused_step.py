"""The ``fused_step`` bench case alone: one launch for a step's attention metadata
(kernels/fused_step.py) against the separate kvviz launches, then a table.

Shapes (requests x tokens per request) 1x1, 256x1, 1024x1, 4096x1, 1024x128, 16x8192, 1x131072, at
1, 2 and 4 KV-cache groups; for each, V1 (slot mapping per group + CSR with a host indptr) and
V2 (gather + slot mappings + CSR), fused and separate (kvviz/gpu/bench/fused.py says exactly what).
Every output is checked against the numpy core before timing (a mismatch exits 1). Timings, each
also as a multiple of an empty launch timed the same way:

* ``us``     CUDA events, cold L2 (triton.testing.do_bench), host launch cost included;
* ``graph``  device µs per launch replayed from a CUDA graph (no host in the way);
* ``dev``    device µs with the host hidden behind a spin kernel, cold L2 (``warm``: warm L2).

    python3 scripts/bench_fused_step.py --json /tmp/fused.json   # the H200 run (scripts/gpu_run.sh --part bench)
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
import kernels  # noqa: E402,F401  (TRITON_INTERPRET before triton is imported, without CUDA)
from kvviz.gpu.bench.fused import (FUSED_GROUPS, FUSED_GROUPS_CPU, FUSED_SHAPES,  # noqa: E402
                                   FUSED_SHAPES_CPU, bench_fused_step)
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="tiny shapes (what the interpreter gets anyway)")
    ap.add_argument("--json", help="write the rows here, in the kvviz bench --json format")
    args = ap.parse_args(argv)
    on_gpu = torch_device() == "cuda"
    shapes, groups = (FUSED_SHAPES, FUSED_GROUPS) if on_gpu and not args.smoke else (FUSED_SHAPES_CPU, FUSED_GROUPS_CPU)
    label = device_label()
    print(label_string(label), flush=True)
    floors = measure_floors()
    try:
        rows = bench_fused_step(shapes, groups, floors, lambda m: print(m, flush=True))
    except KernelMismatch as e:
        print(e)
        print("fused_step bench: MISMATCH")
        return 1
    print(table(rows, floors))
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
        Path(args.json).write_text(json.dumps({"label": label, "date": _dt.date.today().isoformat(), "quick": False,
                                               "floors": floors, "rows": rows, "goals": [], "note": note}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
