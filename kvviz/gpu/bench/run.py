"""``run_bench``: every benchmark case in one run (``kvviz bench`` and the kernel lab), and the
plain-text table ``kvviz bench`` prints."""
from __future__ import annotations

import datetime as _dt

from kvviz.gpu.device import device_label, label_string, torch_device
from kvviz.gpu.bench.cases import (CPU_SCALE, CSR_SHAPES, DECODE_SHAPES, KV_SHAPES, KV_SHAPES_QUICK,
                                   SLOT_SHAPES, SLOT_SHAPES_QUICK, SLOT_VARIANTS, bench_csr, bench_decode,
                                   bench_kv_write, bench_slot_mapping)
from kvviz.gpu.bench.fused import (FUSED_GROUPS, FUSED_GROUPS_CPU, FUSED_GROUPS_QUICK, FUSED_SHAPES,
                                   FUSED_SHAPES_CPU, FUSED_SHAPES_QUICK, FUSED_VARIANTS, bench_fused_step)
from kvviz.gpu.bench.goals import evaluate_goals, vllm_ratios
from kvviz.gpu.bench.h2d import H2D_SHAPES, H2D_STEPS_PER_SHAPE, bench_h2d
from kvviz.gpu.bench.timing import measure_floors


def _shapes(quick: bool, on_gpu: bool) -> dict:
    """The shapes of each case; the interpreter gets much smaller ones."""
    if not on_gpu:
        return {"slot": [(r, max(1, t // CPU_SCALE)) for r, t in SLOT_SHAPES_QUICK], "csr": [(16, 64)],
                "kv": [(256, "NHD", "float16")], "decode": [(2, 64)],
                "fused": (FUSED_SHAPES_CPU, FUSED_GROUPS_CPU)}
    return {"slot": SLOT_SHAPES_QUICK if quick else SLOT_SHAPES,
            "csr": CSR_SHAPES[:1] if quick else CSR_SHAPES,
            "kv": KV_SHAPES_QUICK if quick else KV_SHAPES,
            "decode": DECODE_SHAPES[:1] if quick else DECODE_SHAPES,
            "fused": _fused_shapes(quick)}


def _fused_shapes(quick: bool) -> tuple[list, tuple]:
    """(shapes, group counts) of the fused_step case on a GPU. ``KVVIZ_BENCH_FUSED=quick`` gives a
    full run the quick set (scripts/gpu_run.sh --part bench: scripts/bench_fused_step.py times the full set
    right after), ``=off`` none, ``=full`` the full set even with --quick."""
    import os

    how = os.environ.get("KVVIZ_BENCH_FUSED", "quick" if quick else "full")
    if how == "off":
        return [], ()
    return (FUSED_SHAPES_QUICK, FUSED_GROUPS_QUICK) if how == "quick" else (FUSED_SHAPES, FUSED_GROUPS)


def _progress_counter(total: int, progress):
    """A one-argument step callback that counts steps and reports (done, total, message)."""
    done = [0]

    def step(msg):
        done[0] += 1
        if progress:
            progress(done[0], total, msg)

    return step


def run_bench(*, quick: bool = False, progress=None) -> dict:
    """Run every benchmark; ``progress(done, total, message)`` is called after each step.

    Returns {"label", "date", "quick", "floors", "rows", "goals", "note"}."""
    from kvviz.vllm_wheel.step_kernels import available_variants, load_step_kernels

    label = device_label()
    on_gpu = torch_device() == "cuda"
    shapes = _shapes(quick, on_gpu)
    # vLLM's own step kernels beside the fused launch, where the cached wheels have them
    vllm = load_step_kernels() if shapes["fused"][0] else None
    fused_variants = available_variants(FUSED_VARIANTS, vllm)
    total = (1 + len(SLOT_VARIANTS) * len(shapes["slot"]) + 2 * len(shapes["csr"]) + len(shapes["kv"])
             + 2 * len(shapes["decode"]) + (len(H2D_SHAPES) * H2D_STEPS_PER_SHAPE if on_gpu else 0)
             + len(fused_variants) * len(shapes["fused"][0]) * len(shapes["fused"][1]))
    step = _progress_counter(total, progress)
    floors = measure_floors()
    step(f"floors: empty launch {floors['empty_us']} us, copy {floors['copy_gbps']} GB/s")
    rows = bench_slot_mapping(shapes["slot"], floors, step)
    rows += bench_csr(shapes["csr"], floors, step)
    if not on_gpu:
        rows += bench_kv_write(shapes["kv"], floors, step, heads=2, dim=32)
        rows += bench_decode(shapes["decode"], floors, step, kv_heads=2, q_heads=4, dim=32)
    else:
        rows += bench_kv_write(shapes["kv"], floors, step)
        rows += bench_decode(shapes["decode"], floors, step)
        rows += bench_h2d(H2D_SHAPES, floors, step)
    # one launch for all of a step's attention metadata vs the separate launches (tiny in the interpreter)
    rows += bench_fused_step(*shapes["fused"], floors, step, variants=fused_variants, vllm=vllm)
    note = ("compiled on the GPU; µs are medians of CUDA-event-timed calls with a cold L2" if on_gpu else
            "Triton interpreter on the CPU: µs are Python emulation wall times, not kernel speeds; "
            "shapes are scaled down")
    if vllm is not None:
        note += (f"; vLLM's step kernels: V1 {vllm.v1_release or '-'}, MRV2 {vllm.v2_release or '-'}"
                 + (f" ({'; '.join(vllm.notes)})" if vllm.notes else ""))
    return {"label": label, "date": _dt.date.today().isoformat(), "quick": quick, "floors": floors,
            "rows": rows, "goals": evaluate_goals(rows, floors) if on_gpu else [], "note": note}


TABLE_HEAD = ["kernel", "variant", "shape", "us", "GB/s", "x_empty", "x_bytes", "graph_us", "g_x_empty", "dev_us",
              "d_x_empty", "warm_us", "w_x_empty", "host_us"]


def _table_cells(r: dict) -> list[str]:
    """One row of the table, as text (an empty cell for a figure that was not measured)."""
    def f(v, spec):
        return "" if v is None else format(v, spec)

    return [r["kernel"], r["variant"] + (f" ({r['picked']})" if r.get("picked") else ""), r["shape"],
            f(r["us"], ".2f"), f(r["gbps"], ".0f"), f(r["x_empty"], ".2f"),
            f(r["x_bytes"], ".1f"), f(r.get("graph_us"), ".2f"), f(r.get("graph_x_empty"), ".2f"),
            f(r.get("dev_us"), ".2f"), f(r.get("dev_x_empty"), ".2f"), f(r.get("dev_warm_us"), ".2f"),
            f(r.get("dev_warm_x_empty"), ".2f"), f(r.get("host_us"), ".1f")]


def format_table(result: dict) -> str:
    """A plain-text table of the rows, then the goals."""
    lines = [_table_cells(r) for r in result["rows"]]
    widths = [max(len(h), *(len(x[i]) for x in lines)) if lines else len(h) for i, h in enumerate(TABLE_HEAD)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    fl = result["floors"]
    out = [f"{label_string(result['label'])}; {result['note']}",
           f"floors: empty launch {fl['empty_us']} us (in a graph "
           f"{fl.get('empty_graph_us')} us/launch, host hidden {fl.get('empty_dev_us')} us cold / "
           f"{fl.get('empty_dev_warm_us')} us warm, "
           f"host {fl.get('empty_host_us')} us), "
           f"device copy {fl['copy_gbps']} GB/s",
           fmt.format(*TABLE_HEAD), fmt.format(*["-" * w for w in widths])]
    out += [fmt.format(*x) for x in lines]
    ratios = vllm_ratios(result["rows"])
    if ratios:
        out.append("fused step / vLLM's step kernels, in a CUDA graph: " + ", ".join(
            f"{v} {shape} {x:.2f}" for x, v, shape in ratios))
    for g in result["goals"]:
        out.append(f"GOAL {'MET    ' if g['met'] else 'NOT MET'} {g['goal']}: {g['figure']}")
    return "\n".join(out)
