"""The issue's speed goals, judged on a bench run's rows, and how each timing reads against its floor.

Slot mapping and the CSR repack should take at most ``GOAL_*_X_EMPTY`` times an empty launch
(timed the same way), slot mapping should beat torch indexing by ``GOAL_SLOT_VS_TORCH``, and the
KV write should reach ``GOAL_KV_WRITE_OF_COPY`` of the device copy bandwidth.
"""
from __future__ import annotations

from kvviz.gpu.bench.cases import SLOT_DESIGNS

GOAL_SLOT_X_EMPTY = 1.5
GOAL_SLOT_VS_TORCH = 5.0
GOAL_CSR_X_EMPTY = 1.5
GOAL_KV_WRITE_OF_COPY = 0.8

# (row µs key, row ratio key, floor key, how it reads in the goal's name), one goal line each
TIMING_GOALS = (("us", "x_empty", "empty_us", ""),
                ("graph_us", "graph_x_empty", "empty_graph_us", ", in a CUDA graph (device time per launch)"),
                ("dev_us", "dev_x_empty", "empty_dev_us", ", device-timed with the host hidden (cold L2)"),
                ("dev_warm_us", "dev_warm_x_empty", "empty_dev_warm_us",
                 ", device-timed with the host hidden (warm L2: inputs where the last call left them)"))
# how a row's µs was measured -> the floor measured the same way
TIMINGS = {us_key: floor_key for us_key, _, floor_key, _ in TIMING_GOALS}
# the kernels that have an x-empty-launch goal (the kernel lab draws it with the floor)
X_EMPTY_GOALS = {"slot_mapping": GOAL_SLOT_X_EMPTY, "csr": GOAL_CSR_X_EMPTY}


def available_timings(rows: list[dict]) -> list[str]:
    """The timing columns that hold a figure in at least one of ``rows`` (in TIMINGS order)."""
    return [t for t in TIMINGS if any(r.get(t) is not None for r in rows)]


def plot_guides(kernel: str, timing: str, floors: dict) -> tuple[float | None, float | None]:
    """(floor µs, goal as a multiple of it) to draw on ``kernel``'s plot of the ``timing`` column;
    (None, None) for a kernel without an x-empty goal."""
    goal_x = X_EMPTY_GOALS.get(kernel)
    return (floors.get(TIMINGS[timing]) if goal_x else None), goal_x


def _slot_design_goals(design: str, mine: list[dict], torch_rows: dict, floors: dict) -> list[dict]:
    """One design's x-empty goal per timing, then its speed-up over torch indexing."""
    goals = []
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
    return goals


def _slot_goals(rows: list[dict], floors: dict) -> list[dict]:
    """Every design's goals, then the fastest design per shape (what a launcher choosing per
    shape could get)."""
    slot = [r for r in rows if r["kernel"] == "slot_mapping"]
    torch_rows = {r["shape"]: r for r in slot if r["variant"] == "torch"}
    goals = []
    for design in SLOT_DESIGNS + ("auto",):
        mine = [r for r in slot if r["variant"] == design]
        if mine:
            goals += _slot_design_goals(design, mine, torch_rows, floors)
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
    return goals


def _csr_goals(rows: list[dict]) -> list[dict]:
    """The CSR repack at 256 x 1000 pages, event-timed, host-hidden and in a graph."""
    csr = [r for r in rows if r["kernel"] == "csr" and r["variant"] == "kernel" and r["shape"].startswith("256x1000")]
    if not csr:
        return []
    c = csr[0]
    name = f"CSR repack within {GOAL_CSR_X_EMPTY}x of an empty launch (256 x 1000 pages)"
    goals = [{"goal": name, "met": c["x_empty"] <= GOAL_CSR_X_EMPTY, "figure": f"{c['us']} us = {c['x_empty']}x"}]
    if c.get("dev_x_empty"):
        goals.append({"goal": name + ", device-timed with the host hidden (cold L2)",
                      "met": c["dev_x_empty"] <= GOAL_CSR_X_EMPTY,
                      "figure": f"{c['dev_us']} us = {c['dev_x_empty']}x"})
    if c.get("graph_x_empty"):
        goals.append({"goal": name + ", in a CUDA graph",
                      "met": c["graph_x_empty"] <= GOAL_CSR_X_EMPTY,
                      "figure": f"{c['graph_us']} us = {c['graph_x_empty']}x"})
    return goals


def _kv_goals(rows: list[dict], floors: dict) -> list[dict]:
    """The KV write's share of the device copy bandwidth, worst shape of >= 64K tokens."""
    kv = [r for r in rows if r["kernel"] == "kv_write" and int(r["shape"].split()[0]) >= 65536]
    if not kv:
        return []
    worst = min(kv, key=lambda r: r["of_copy_bw"] or 0)
    return [{"goal": f"KV write >= {GOAL_KV_WRITE_OF_COPY:.0%} of device copy bandwidth at >= 64K tokens",
             "met": (worst["of_copy_bw"] or 0) >= GOAL_KV_WRITE_OF_COPY,
             "figure": f"worst {worst['of_copy_bw']:.0%} ({worst['gbps']} GB/s, {worst['variant']}, "
                       f"{worst['shape']}) of {floors['copy_gbps']} GB/s"}]


GOAL_FUSED_DEV_X_EMPTY = 1.5      # 1 group, host hidden, cold L2
GOAL_FUSED_GRAPH_US = 2.0         # 1 group, device µs per step in a CUDA graph
GOAL_FUSED_G4_OVER_G1 = 1.3       # 4 groups against 1, in a CUDA graph
GOAL_FUSED_VS_SEPARATE = 0.5      # fused against the separate launches it replaces, in a CUDA graph
GOAL_FUSED_VS_VLLM = 0.5          # fused against vLLM's own step kernels (issue 24), in a CUDA graph


def vllm_ratios(rows: list[dict]) -> list[tuple[float, str, str]]:
    """(kvviz fused / vLLM graph µs, runner "v1"/"v2", shape) for every shape that has both rows."""
    fused = {(r["variant"], r["shape"]): r for r in rows if r["kernel"] == "fused_step"}
    out = []
    for (v, shape), r in fused.items():
        if v in ("v1 vllm", "v2 vllm"):
            mine = fused.get((v.replace("vllm", "fused"), shape))
            if mine and mine.get("graph_us") and r.get("graph_us"):
                out.append((mine["graph_us"] / r["graph_us"], v.split()[0], shape))
    return out


def _fused_vs_vllm_goals(rows: list[dict]) -> list[dict]:
    ratios = vllm_ratios(rows)
    if not ratios:
        return []
    worst = max(ratios)
    n = sum(x <= GOAL_FUSED_VS_VLLM for x, _, _ in ratios)
    missed = ", ".join(f"{v} {s} {x:.2f}" for x, v, s in sorted(ratios, reverse=True) if x > GOAL_FUSED_VS_VLLM)
    return [{"goal": f"fused step <= {GOAL_FUSED_VS_VLLM}x vLLM's own step kernels, every shape, both runners, "
                     "in a CUDA graph", "met": n == len(ratios),
             "figure": f"{n} of {len(ratios)}; worst {worst[1]} {worst[2]} {worst[0]:.2f}x"
                       + (f"; missed: {missed}" if missed else "")}]


def _fused_goals(rows: list[dict]) -> list[dict]:
    """Issue 13's goals for the one-launch step metadata (kernel "fused_step", shape "RxT Gg"),
    each over every shape of the run; the figure names the worst case."""
    fused = {(r["variant"], r["shape"]): r for r in rows if r["kernel"] == "fused_step"}
    mine = [r for (v, _), r in fused.items() if v.endswith("fused")]
    if not mine:
        return []
    goals = []
    one = [r for r in mine if r["shape"].endswith(" G1")]
    dev = [r for r in one if r.get("dev_x_empty") is not None]
    if dev:
        worst = max(dev, key=lambda r: r["dev_x_empty"])
        n = sum(r["dev_x_empty"] <= GOAL_FUSED_DEV_X_EMPTY for r in dev)
        goals.append({"goal": f"fused step, 1 group: <= {GOAL_FUSED_DEV_X_EMPTY}x an empty launch, host hidden, "
                              "cold L2", "met": n == len(dev),
                      "figure": f"{n} of {len(dev)}; worst {worst['variant']} {worst['shape']} {worst['dev_us']} us "
                                f"= {worst['dev_x_empty']}x"})
    graph = [r for r in one if r.get("graph_us") is not None]
    if graph:
        worst = max(graph, key=lambda r: r["graph_us"])
        n = sum(r["graph_us"] <= GOAL_FUSED_GRAPH_US for r in graph)
        goals.append({"goal": f"fused step, 1 group: <= {GOAL_FUSED_GRAPH_US} us per step in a CUDA graph",
                      "met": n == len(graph),
                      "figure": f"{n} of {len(graph)}; worst {worst['variant']} {worst['shape']} "
                                f"{worst['graph_us']} us"})
    ratios = []
    for (v, shape), r in fused.items():
        g1 = fused.get((v, shape.rsplit(" ", 1)[0] + " G1"))
        if v.endswith("fused") and shape.endswith(" G4") and g1 and r.get("graph_us") and g1.get("graph_us"):
            ratios.append((r["graph_us"] / g1["graph_us"], f"{v} {shape}"))
    if ratios:
        worst = max(ratios)
        n = sum(x <= GOAL_FUSED_G4_OVER_G1 for x, _ in ratios)
        goals.append({"goal": f"fused step: 4 groups <= {GOAL_FUSED_G4_OVER_G1}x 1 group, in a CUDA graph",
                      "met": n == len(ratios), "figure": f"{n} of {len(ratios)}; worst {worst[1]} {worst[0]:.2f}x"})
    ratios = []
    for (v, shape), r in fused.items():
        sep = fused.get((v.replace("fused", "separate"), shape))
        if v.endswith("fused") and sep and r.get("graph_us") and sep.get("graph_us"):
            ratios.append((r["graph_us"] / sep["graph_us"], f"{v} {shape}"))
    if ratios:
        worst = max(ratios)
        n = sum(x <= GOAL_FUSED_VS_SEPARATE for x, _ in ratios)
        goals.append({"goal": f"fused step <= {GOAL_FUSED_VS_SEPARATE}x the separate launches, in a CUDA graph",
                      "met": n == len(ratios), "figure": f"{n} of {len(ratios)}; worst {worst[1]} {worst[0]:.2f}x"})
    return goals


def evaluate_goals(rows: list[dict], floors: dict) -> list[dict]:
    """The issue's speed goals, met or not, with the figures that decide."""
    return (_slot_goals(rows, floors) + _csr_goals(rows) + _kv_goals(rows, floors) + _fused_goals(rows)
            + _fused_vs_vllm_goals(rows))
