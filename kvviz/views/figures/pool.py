"""Step-through and prefixes figures: ref counts by block state, the free queue, shared blocks."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from kvviz.constants import NULL_BLOCK_ID
from kvviz.views.figures.style import FONT, HILITE, POOL_STATES, _tr, base_layout, figure_of, wrap_label

def ref_count_figure(ref_counts, free_queue, cached: dict, *, title: str = "", lang: str = "en",
                     highlight=()) -> go.Figure:
    """Ref count of every block, coloured by state (with a legend), and every block that holds a
    prefix-cache hash marked so it shows without hovering (a projector has no mouse): a black
    outline round its bar and a star above it."""
    tr = _tr(lang)
    n = len(ref_counts)
    ids = np.arange(n)
    ref = np.asarray(ref_counts)
    qpos = {b: i for i, b in enumerate(free_queue)}

    def state(b):
        if b == NULL_BLOCK_ID:
            return "null"
        if ref[b] > 1:
            return "shared"
        if ref[b] == 1:
            return "in_use"
        return "free_cached" if b in cached else "free"

    states = [state(b) for b in ids]
    custom = np.array([[tr(states[b]), qpos.get(b, -1), cached.get(b, "-")] for b in ids], dtype=object)
    height = np.maximum(ref, 0.08)
    height[ref < 0] = ref[ref < 0]   # the null block's count up to vLLM v0.32 (it only falls): drawn below 0
    hashed = np.array([b != NULL_BLOCK_ID and b in cached for b in ids], dtype=bool)
    data = []
    for st, colour in POOL_STATES:
        m = np.array([s == st for s in states], dtype=bool)
        if not m.any():
            continue
        data.append(dict(type="bar", x=ids[m], y=height[m], marker=dict(color=colour), name=tr(st),
                         customdata=custom[m], hovertemplate=tr("hover_ref") + "<extra></extra>"))
    if hashed.any():  # a black outline round every hashed block's bar (drawn over it, no fill)
        data.append(dict(type="bar", x=ids[hashed], y=height[hashed], marker=dict(color="rgba(0,0,0,0)",
                         line=dict(color="black", width=2.5)), showlegend=False, hoverinfo="skip"))
    data.append(dict(  # the hash mark, with its legend entry
        type="scatter", x=ids[hashed], y=height[hashed] + 0.22, mode="markers", name=tr("hashed"),
        marker=dict(symbol="star", size=15, color="black"), customdata=custom[hashed],
        hovertemplate=tr("hover_ref") + "<extra></extra>", showlegend=True))
    shapes = [dict(type="rect", x0=b - 0.5, x1=b + 0.5, xref="x", y0=0, y1=1, yref="y domain", line=dict(HILITE),
                   fillcolor="rgba(0,0,0,0)") for b in highlight if 0 <= b < n]
    xaxis = dict(title=dict(text=tr("physical_block")), range=[-0.6, n - 0.4])
    if n <= 48:
        xaxis["dtick"] = 1
    # a fixed floor for the axis: with every count 0 the stubs must stay stubs, not fill the plot;
    # room on top for the stars
    top = max(1, int(ref.max()) if n else 1) + 0.5
    low = int(ref.min()) - 0.5 if n and ref.min() < 0 else 0
    # the y title in lines of 14 cells: a short plot's one-line "contador de referencias" ran up
    # over the chart's title (Guided demos, es)
    layout = dict(xaxis=xaxis, yaxis=dict(title=dict(text=wrap_label(tr("ref_count"), 14)), dtick=1, range=[low, top],
                                          automargin=True),
                  barmode="overlay", bargap=0.15, legend=dict(font=dict(size=FONT - 2)))
    if shapes:
        layout["shapes"] = shapes
    # the legend under the axis title (a legend at y=-0.3 of the plot was drawn over it)
    return figure_of(data, layout, title, 320, legend_band=True)


def free_queue_figure(free_queue, cached: dict, *, title: str = "", lang: str = "en") -> go.Figure:
    """The free queue front (left, allocated next) to back (right, evicted last)."""
    tr = _tr(lang)
    q = list(free_queue)
    z = [[1 if b in cached else 0 for b in q]] if q else [[]]
    heat = dict(
        type="heatmap", z=z, x=list(range(len(q))), text=[[str(b) for b in q]], texttemplate="%{text}",
        textfont=dict(size=FONT - 1), colorscale=[[0, "#c7c7c7"], [0.5, "#c7c7c7"], [0.5, "#ff7f0e"],
                                                  [1, "#ff7f0e"]],
        zmin=0, zmax=1, showscale=False, xgap=2,
        customdata=[[cached.get(b, "-") for b in q]],
        hovertemplate=tr("hover_queue") + "<extra></extra>")
    xaxis = dict(title=dict(text=tr("queue_axis")))
    if len(q) <= 48:
        xaxis["dtick"] = 1
    return figure_of([heat], dict(yaxis=dict(visible=False), xaxis=xaxis), title, 190)


def sharing_figure(blocks: np.ndarray, ref: np.ndarray, rows: list, *, title: str = "", lang: str = "en",
                   row_title: str | None = None) -> go.Figure:
    """Rows × logical blocks, coloured by the physical block's ref count, labelled with its id."""
    tr = _tr(lang)
    z = np.where(blocks >= 0, ref, np.nan).astype(float)
    text = np.where(blocks >= 0, blocks.astype(str), "")
    labels = [f"{i}: {rows[i]}" if i < len(rows) and rows[i] else f"{i}: —" for i in range(blocks.shape[0])]
    top = max(3, int(np.nanmax(z)) if np.isfinite(z).any() else 3)
    scale = [[0, "#9ecae1"], [1 / top, "#9ecae1"], [1 / top + 1e-6, "#fdae6b"], [2 / top, "#e6550d"],
             [1, "#a63603"]]
    fig = go.Figure(go.Heatmap(
        z=z, text=text, texttemplate="%{text}", textfont=dict(size=FONT), y=labels, colorscale=scale,
        zmin=0, zmax=top, xgap=2, ygap=2, hoverongaps=False,
        colorbar=dict(title=dict(text=tr("ref_count"), side="right"), dtick=1, thickness=14),
        hovertemplate=tr("hover_share") + "<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title=row_title or tr("row"))
    fig.update_xaxes(title=tr("logical_block"), dtick=1)
    return base_layout(fig, title, int(max(240, 80 + 46 * blocks.shape[0])))
