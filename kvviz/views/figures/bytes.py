"""PCIe and benchmark figures: byte counts in binary units, strategies' lines and stacks, bench timings."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from kvviz.views.figures.style import (LEGEND_BELOW, LEGEND_LINE_PX, PALETTE, _tr, base_layout, bracket_below, legend_below,
                                      legend_px)

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def byte_label(n: float) -> str:
    """A byte count in binary units, as an axis tick reads it: 512 B, 4 KiB, 1.5 MiB, 1 GiB."""
    n = float(n)
    i = 0
    while abs(n) >= 1024 and i < len(_BYTE_UNITS) - 1:
        n /= 1024
        i += 1
    text = f"{n:.1f}".rstrip("0").rstrip(".") if n < 10 and i else f"{n:.0f}"
    return f"{text} {_BYTE_UNITS[i]}"


def byte_ticks(lo: float, hi: float, *, log: bool) -> dict:
    """tickvals/ticktext in binary units covering [lo, hi]: powers of 1024 and their 4x, 16x, 64x...
    steps on a log axis (about 4-8 ticks), round binary steps on a linear one."""
    lo, hi = max(float(lo), 1.0), max(float(hi), 1.0)
    if log:
        import math
        step = 2 if math.log2(hi / lo) <= 12 else 4 if math.log2(hi / lo) <= 24 else 10
        first = 2 ** math.floor(math.log2(lo))
        vals, v = [first], first
        while v < hi:
            v *= 2 ** step
            vals.append(v)
    else:
        span = hi
        unit = 1
        while unit * 1024 <= span:
            unit *= 1024
        raw = span / 5 / unit
        nice = next(c for c in (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024) if c >= raw)
        vals = [k * nice * unit for k in range(0, int(span // (nice * unit)) + 2)]
    return dict(tickvals=vals, ticktext=[byte_label(v) for v in vals])


def bytes_lines(df, *, x: str, title: str, x_title: str, lang: str = "en", log_y: bool = True,
                marker_x=None, wrap: int | None = None) -> go.Figure:
    """One line per strategy/component column of ``df`` against ``x``; ``wrap``: the title's line
    length (a chart in a third of the page). Built as one dict and validated once (the PCIe page
    builds three for every new input: plotly's update_* calls were most of its server time)."""
    tr = _tr(lang)
    cols = [c for c in df.columns if c != x]
    data = [dict(type="scatter", x=df[x].to_numpy(), y=df[col].to_numpy(), mode="lines+markers", name=col,
                 line=dict(width=3, color=PALETTE[i % len(PALETTE)]),
                 hovertemplate=f"{col}<br>{x_title} %{{x}}<br>%{{y:,.0f}} B<extra></extra>")
            for i, col in enumerate(cols)]
    xs = list(df[x])
    xaxis = dict(title=dict(text=x_title), automargin=True)
    if max(xs) / max(min(xs), 1) > 64:   # a log axis ticked at the swept values (every other one if many)
        ticks = xs[::2] if len(xs) > 6 else xs
        xaxis.update(type="log", tickvals=ticks, ticktext=[f"{int(v):,}" for v in ticks])
    # bytes in binary units (plotly's SI ticks read 1e9 as "1B")
    ys = df[cols].to_numpy(dtype=float)
    ys = ys[ys > 0] if log_y else ys
    yaxis = dict(byte_ticks(ys.min(), ys.max(), log=log_y)) if ys.size else {}
    # a chart in a third of the page: its y title on two lines (on one it ran past the plot's height,
    # over the chart's title)
    ytitle = bracket_below(tr("bytes_per_step")) if wrap else tr("bytes_per_step")
    yaxis.update(title=dict(text=ytitle), gridcolor="#eee", automargin=True, **(dict(type="log") if log_y else {}))
    layout = dict(xaxis=xaxis, yaxis=yaxis, legend=dict(LEGEND_BELOW))   # the legend under the axis title
    if marker_x is not None:   # what add_vline draws: the chosen value, across the plot's height
        layout["shapes"] = [dict(type="line", x0=marker_x, x1=marker_x, xref="x", y0=0, y1=1, yref="y domain",
                                 line=dict(color="black", width=2, dash="dot"))]
    return base_layout(go.Figure(dict(data=data, layout=layout)), title, 400 + legend_px(len(cols)), wrap=wrap)


def stacked_bytes(parts: dict, *, title: str, lang: str = "en") -> go.Figure:
    """One horizontal bar per strategy, stacked by table (one dict, validated once)."""
    tr = _tr(lang)
    strategies = list(parts)
    comps = list(dict.fromkeys(c for s in strategies for c in parts[s]))   # V2's parts beside V1's tables
    data = [dict(type="bar", y=strategies, x=[parts[s].get(comp, 0) for s in strategies], name=comp, orientation="h",
                 marker=dict(color=PALETTE[i % len(PALETTE)]),
                 hovertemplate=f"{comp}<br>%{{y}}: %{{x:,}} B<extra></extra>") for i, comp in enumerate(comps)]
    totals = [sum(parts[s].values()) for s in strategies]
    # the legend one entry a line under the plot: long part names ("escrituras preparadas
    # (apply_staged_writes)") beside the strategies' long labels left a plot too narrow for two a row,
    # and plotly's own wrapping ran past the figure's height (the last entries scrolled out of sight)
    layout = dict(barmode="stack", legend=dict(LEGEND_BELOW, orientation="v"),
                  xaxis=dict(title=dict(text=tr("bytes_per_step")), automargin=True,
                             **byte_ticks(1, max(totals + [1]), log=False)),
                  yaxis=dict(autorange="reversed"))
    return base_layout(go.Figure(dict(data=data, layout=layout)), title,
                       100 + 60 * len(strategies) + int(LEGEND_LINE_PX * 1.4 * len(comps)))


def bench_figure(df, *, x: str, y: str, color: str, title: str, x_title: str, y_title: str,
                 log_x: bool = True, floor: float | None = None, floor_label: str = "",
                 goal_x: float | None = None, goal_label: str = "") -> go.Figure:
    """One line per ``color`` group; with ``floor``, a dashed line at the empty-launch floor and,
    with ``goal_x``, a dotted one at goal_x × floor, each named in the legend (never written over
    the data)."""
    fig = go.Figure()
    order = list(dict.fromkeys(df[x]))   # the bench's own order (small to large), not alphabetical
    for i, (name, g) in enumerate(df.groupby(color, sort=False)):
        fig.add_trace(go.Scatter(x=g[x], y=g[y], mode="lines+markers", name=str(name),
                                 line=dict(width=3, color=PALETTE[i % len(PALETTE)]),
                                 hovertemplate=f"{name}<br>{x_title} %{{x}}<br>{y_title} %{{y:.4g}}<extra></extra>"))
    if floor:
        # the guide lines across the plot, named in the legend: a label written on the plot sat on the
        # lines' last points (a 1x131072 point at 5 µs hid behind "goal: 1.5x the empty launch")
        lines = [(floor, floor_label, "#555", "dash")]
        if goal_x:
            lines.append((floor * goal_x, goal_label, "#2ca02c", "dot"))
        for y_val, text, col, dash in lines:
            fig.add_hline(y=y_val, line=dict(color=col, dash=dash, width=2))
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=text, hoverinfo="skip",
                                     line=dict(color=col, dash=dash, width=2)))
    if log_x:
        fig.update_xaxes(title=x_title, type="log")
    else:
        fig.update_xaxes(title=x_title, type="category", categoryorder="array", categoryarray=order)
    fig.update_yaxes(title=y_title, type="log", gridcolor="#eee", **log_ticks(
        [v for v in df[y] if v is not None] + [v for v in (floor, floor and goal_x and floor * goal_x) if v]))
    return base_layout(fig, title, 420 + legend_below(fig))


def log_ticks(values) -> dict:
    """Tick values 1, 2, 5 x 10^k over ``values``' range (every digit would overlap on a log axis
    that spans several decades), written in full ("0.5", "20", "5000")."""
    vals = [float(v) for v in values if v is not None and np.isfinite(v) and v > 0]
    if not vals:
        return {}
    lo, hi = int(np.floor(np.log10(min(vals)))), int(np.ceil(np.log10(max(vals))))
    ticks = [m * 10.0 ** k for k in range(lo, hi + 1) for m in (1, 2, 5)]
    return {"tickvals": ticks, "ticktext": [f"{v:g}" for v in ticks]}
