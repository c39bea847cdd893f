"""The kernel lab's step timeline (issues 13, 24): for one batch of a bench run (shape, KV-cache
groups, runner), the fused launch against the separate kvviz launches it replaces, vLLM's own step
kernels (where the run timed them) and an empty launch, by each timing method the run has (CUDA
events, CUDA graph, host hidden with a cold L2).

The rows are ``fused_step`` bench rows (kvviz.gpu.bench.fused): variants ``"v1 fused"``,
``"v1 separate"``, ``"v1 vllm"`` and the same for ``v2``, shapes ``"RxT Gg"``. Nothing here imports
streamlit; texts come in through ``tr`` (kvviz/texts/kernel_lab.py keys).
"""
from __future__ import annotations

import re

import pandas as pd
import plotly.graph_objects as go

from kvviz.views.figures import FONT, base_layout

KERNEL = "fused_step"
RUNNERS = ("v1", "v2")
# (row column, floor key): the three timing methods, in the order drawn (top to bottom)
TIMINGS = (("us", "empty_us"), ("graph_us", "empty_graph_us"), ("dev_us", "empty_dev_us"))
WHAT = ("fused", "separate", "vllm", "empty")
VARIANTS = tuple(f"{r} {w}" for r in RUNNERS for w in WHAT[:3])
COLOURS = {"fused": "#2ca02c", "separate": "#d62728", "vllm": "#1f77b4", "empty": "#7f7f7f"}
_SHAPE = re.compile(r"^(\d+)x(\d+) G(\d+)$")


def fused_rows(result: dict | None) -> list[dict]:
    """The fused_step rows of a bench result whose shape reads ``RxT Gg`` (others are skipped)."""
    if not result:
        return []
    return [r for r in result.get("rows", []) if r.get("kernel") == KERNEL and r.get("variant") in VARIANTS
            and _SHAPE.match(str(r.get("shape", "")))]


def split_shape(shape: str) -> tuple[str, int]:
    """``"4096x1 G2"`` -> (``"4096x1"``, 2)."""
    m = _SHAPE.match(shape)
    if not m:
        raise ValueError(f"not a fused_step shape: {shape!r}")
    return f"{m.group(1)}x{m.group(2)}", int(m.group(3))


def choices(rows: list[dict]) -> dict:
    """What the rows let one pick: batch shapes (the bench's order), group counts, runners."""
    shapes, groups, runners = {}, {}, {}
    for r in rows:
        s, g = split_shape(r["shape"])
        shapes[s] = groups[g] = runners[r["variant"].split()[0]] = True
    return {"shapes": list(shapes), "groups": sorted(groups), "runners": [x for x in RUNNERS if x in runners]}


def separate_launches(runner: str, groups: int) -> int:
    """Kernel launches the separate path makes (besides its pinned H2D copy of indptr): V1 one slot
    mapping per group + the CSR repack; V2 the gather + one slot mapping for all groups + the CSR."""
    return groups + 1 if runner == "v1" else 3


def timeline_frame(rows: list[dict], floors: dict, shape: str, groups: int, runner: str) -> pd.DataFrame:
    """One row per (timing, what) that was measured: columns timing, what, us, x_empty (µs over the
    empty launch timed the same way), vs_separate (fused over separate) and vs_vllm (fused over
    vLLM's step kernels), on the fused rows."""
    key = f"{shape} G{groups}"
    mine = {r["variant"].split()[1]: r for r in rows if r["shape"] == key and r["variant"].split()[0] == runner}
    out = []
    for col, floor_key in TIMINGS:
        floor = floors.get(floor_key)
        f, s, v = (mine.get(w, {}).get(col) for w in ("fused", "separate", "vllm"))
        for what, us in (("fused", f), ("separate", s), ("vllm", v), ("empty", floor)):
            if us is None or (what != "empty" and not mine.get(what)):
                continue
            fused = what == "fused"
            out.append({"timing": col, "what": what, "us": float(us),
                        "x_empty": round(us / floor, 2) if floor else None,
                        "vs_separate": round(f / s, 2) if fused and f and s else None,
                        "vs_vllm": round(f / v, 2) if fused and f and v else None})
    return pd.DataFrame(out, columns=["timing", "what", "us", "x_empty", "vs_separate", "vs_vllm"])


def timeline_figure(frame: pd.DataFrame, tr, *, runner: str, groups: int, title: str) -> go.Figure:
    """Horizontal bars from 0 µs, one band per timing method: the fused launch, the separate launches
    (one bar for all of them: the bench times them together), an empty launch. ``tr(key, **kw)``
    gives the labels (kvviz/texts/kernel_lab.py: timing_*, tl_fused, tl_separate, tl_empty,
    tl_bar, tl_bar_fused, tl_axis)."""
    fig = go.Figure()
    n_sep = separate_launches(runner, groups)
    names = {"fused": tr("tl_fused"), "separate": tr("tl_separate", n=n_sep),
             "vllm": tr("tl_vllm", n=n_sep), "empty": tr("tl_empty")}
    bands = [tr(f"timing_{c}") for c, _ in TIMINGS if (frame["timing"] == c).any()]
    for what in WHAT:
        part = frame[frame["what"] == what]
        if part.empty:
            continue
        text = [_bar_text(tr, what, r) for r in part.itertuples()]
        fig.add_trace(go.Bar(
            y=[tr(f"timing_{c}") for c in part["timing"]], x=part["us"], base=0, orientation="h", name=names[what],
            marker_color=COLOURS[what], text=text, textposition="outside", cliponaxis=False,
            textfont=dict(size=FONT - 2),
            hovertemplate=f"{names[what]}<br>%{{y}}: %{{x:.2f}} µs<extra></extra>"))
    top = float(frame["us"].max()) if not frame.empty else 1.0
    fig.update_layout(barmode="group", bargap=0.25, bargroupgap=0.05,
                      legend=dict(orientation="h", y=-0.22, traceorder="normal"))
    fig.update_xaxes(title=tr("tl_axis"), range=[0, top * 1.45], gridcolor="#eee", zeroline=True)
    fig.update_yaxes(categoryorder="array", categoryarray=bands[::-1], automargin=True)
    return base_layout(fig, title, 150 + 95 * max(len(bands), 1))


def _bar_text(tr, what: str, r) -> str:
    """A bar's label: µs and × empty; the fused bar also its ratio to vLLM's kernels (else to the
    separate launches) where the run has them."""
    if what == "fused" and r.vs_vllm is not None and r.vs_vllm == r.vs_vllm:
        return tr("tl_bar_vllm", us=r.us, x=r.x_empty, r=r.vs_vllm)
    if what == "fused" and r.vs_separate is not None and r.vs_separate == r.vs_separate:
        return tr("tl_bar_fused", us=r.us, x=r.x_empty, r=r.vs_separate)
    return tr("tl_bar", us=r.us, x=r.x_empty)


def latest_run_with_fused(names: list[str], load) -> tuple[str | None, dict | None]:
    """The newest (by its date, then name) of the recorded runs ``names`` with fused_step rows:
    (name, result), or (None, None). ``load(name)`` reads one (kvviz.gpu.bench.results)."""
    best = None
    for name in names:
        res = load(name)
        if fused_rows(res):
            k = (str(res.get("date", "")), name)
            if best is None or k > best[0]:
                best = (k, name, res)
    return (best[1], best[2]) if best else (None, None)
