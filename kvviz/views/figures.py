"""Plotly figure builders for the app (no streamlit here).

Every figure uses big fonts (it is projected in a classroom) and a hover text that
says exactly what a cell is. A selected token is drawn in every view with the same
highlight (a thick black outline), so one pick lights up the same thing everywhere.
"""
from __future__ import annotations

import re
import unicodedata

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID
from kvviz.core.geometry import Geometry
from kvviz.texts.i18n import t

FONT = 16
HILITE = dict(color="black", width=4)
NULL_GRAY = "#e6e6e6"
PALETTE = pc.qualitative.Plotly + pc.qualitative.D3


def _not_gray(c: str) -> bool:
    r, g, b = pc.unlabel_rgb(pc.convert_colors_to_same_type(c, "rgb")[0][0])
    return max(r, g, b) - min(r, g, b) > 24


# physical block ids: light qualitative colours, so the id written on the cell stays readable;
# no grays (gray is the null block's)
BLOCK_PALETTE = [c for c in pc.qualitative.Pastel1 + pc.qualitative.Set3 + pc.qualitative.Pastel2 if _not_gray(c)]
MAX_TEXT_CELLS = 1600       # write numbers into cells only up to this many
MAX_CUSTOM_CELLS = 60000    # per-cell hover data only up to this many (else a formula)
POOL_STATES = [("null", "#999"), ("in_use", "#1f77b4"), ("shared", "#d62728"),  # ref-count bar colours
               ("free_cached", "#ff7f0e"), ("free", "#c7c7c7")]


def _tr(lang):
    return lambda key, **fmt: t("figures", key, lang, **fmt)


# the app's own font stack: Streamlit's Source Sans, then the Noto Sans SC faces the app serves
# (.streamlit/config.toml), so Chinese labels draw on a browser without a CJK font
FONT_FAMILY = '"Source Sans", "Noto Sans SC", sans-serif'


# A horizontal legend goes in a band of its own at the bottom of the figure, under the x axis title.
# Above the plot it shared the top margin with the centred title and was drawn over a long or
# two-line one (issue 12). Placed in container coordinates, plotly grows the bottom margin by the
# legend's own height, however many rows it wraps to in any language; the x axis pushes the margin
# for its tick labels and title (automargin, set here whatever the template), so the legend starts
# under the axis title, never on it.
LEGEND_BELOW = dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0, xanchor="left")
LEGEND_ROW_PX = 34          # one row of legend entries at FONT
LEGEND_LINE_PX = 18          # each further line of a legend entry broken with <br>
LEGEND_PER_ROW = 5          # entries a row holds on a half-width chart (row names, Spanish labels)


def legend_px(entries: int, shown: bool | None = None, lines: int = 0) -> int:
    """The pixels a legend band of ``entries`` entries under the x axis takes (the entries wrap
    ~LEGEND_PER_ROW to a row); ``shown``: the layout's showlegend (None: plotly's rule, a legend for
    two entries or more); ``lines``: the further lines of the tallest entry (a name broken with <br>,
    a long one: such entries are counted one to a row)."""
    shown = entries > 1 if shown is None else shown
    rows = entries if lines else -(-entries // LEGEND_PER_ROW)
    return rows * (LEGEND_ROW_PX + LEGEND_LINE_PX * lines) if shown else 0


def legend_below(fig: go.Figure) -> int:
    """Put ``fig``'s legend under its x axis; returns the pixels to add to the figure's height so
    that the plot keeps its room."""
    fig.update_layout(legend=LEGEND_BELOW)
    fig.update_xaxes(automargin=True)
    entries = sum(1 for tr in fig.data if tr.name and tr.showlegend is not False)
    return legend_px(entries, fig.layout.showlegend)


def wrap_title(title: str, width: int) -> str:
    """``title`` broken into lines of at most ``width`` characters at spaces (plotly does not wrap a
    title: in a narrow chart a long one ran off both edges)."""
    lines, line = [], ""
    for word in title.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "<br>".join([*lines, line])


def _cells(text: str) -> int:
    """Display width in Latin-letter cells: a CJK or full-width character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_label(text: str, width: int) -> str:
    """``text`` broken with <br> into lines of at most ``width`` cells (:func:`_cells`): at spaces, before
    an opening bracket, and between CJK characters (Chinese has no spaces); a legend entry in a narrow
    chart, which plotly neither wraps nor shrinks."""
    pieces = re.findall(r"[（(]?[^\s（(]*\s*", text)
    words = []
    for w in filter(None, pieces):   # a run of CJK is broken anywhere: one piece a character
        words += list(w) if _cells(w) > width else [w]
    lines, line = [], ""
    for w in words:
        if line and _cells(line + w.rstrip()) > width:
            lines.append(line.rstrip())
            line = w
        else:
            line += w
    return "<br>".join([*lines, line.rstrip()])


def _finish(title: str, height: int | None, wrap: int | None) -> dict:
    """The layout every figure ends with (:func:`base_layout`, :func:`figure_of`): title, fonts,
    margins, height; ``wrap``: the title broken into lines of this many characters, the top margin
    growing with its lines."""
    if wrap and title and "<br>" not in title:
        title = wrap_title(title, wrap)
    extra = 26 * title.count("<br>") if title else 0
    out = dict(title=dict(text=title, font=dict(size=FONT + 4)), font=dict(size=FONT, family=FONT_FAMILY),
               margin=dict(l=70, r=20, t=(60 if title else 24) + extra, b=60), hoverlabel=dict(font=dict(size=FONT)),
               plot_bgcolor="white")
    if height:
        out["height"] = height + extra
    return out


def base_layout(fig: go.Figure, title: str, height: int | None = None, *, wrap: int | None = None) -> go.Figure:
    """The figures' common look; ``wrap``: break the title into lines of this many characters (a chart
    in a narrow column), the top margin growing with its lines."""
    fig.update_layout(_finish(title, height, wrap))
    return fig


def _merge(dst: dict, src: dict) -> dict:
    """``src`` written into ``dst`` key by key, nested dicts merged (plotly's update_layout)."""
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _merge(dst[k], v)
        else:
            dst[k] = v
    return dst


def figure_of(data: list, layout: dict, title: str, height: int | None = None, *, wrap: int | None = None,
              legend_band: bool = False, overlay: list = ()) -> go.Figure:
    """A figure from plain dicts, finished as :func:`base_layout` (and :func:`legend_below` with
    ``legend_band``: the band's pixels are added to ``height``) would finish it, wrapped without
    plotly's validators: building through graph objects (``add_trace``, ``update_layout``) cost
    15-35 ms a figure, this ~1 ms. ``overlay``: traces drawn last, left out of the legend band's
    size (a selection must not change the height). Tests rebuild such figures through the
    validators and compare."""
    layout = dict(layout)
    if legend_band:
        _merge(layout, {"legend": dict(LEGEND_BELOW), "xaxis": {"automargin": True}})
        names = [tr["name"] for tr in data if tr.get("name") and tr.get("showlegend") is not False]
        height = (height or 0) + legend_px(len(names), layout.get("showlegend"),
                                           max((n.count("<br>") for n in names), default=0))
    _merge(layout, _finish(title, height, wrap))
    return go.Figure(dict(data=[*data, *(dict(tr) for tr in overlay)], layout=layout), _validate=False)


def row_colorscale(num_rows: int):
    """Discrete colours per request row (the same in every figure)."""
    n = max(num_rows, 1)
    if n > len(PALETTE):   # Turbo's stops written out (plotly.js itself does not know the name)
        return [[i / (len(pc.sequential.Turbo) - 1), c] for i, c in enumerate(pc.sequential.Turbo)]
    scale = []
    for i in range(n):
        scale += [[i / n, PALETTE[i]], [(i + 1) / n, PALETTE[i]]]
    scale[-1][0] = 1.0
    return scale


MAX_CATEGORICAL_BLOCKS = 512   # a pool up to this size gets one flat colour per block id


def block_colorscale(num_blocks: int):
    """Null block (0) gray, every real block id its own flat colour from the qualitative palette
    (categorical: neighbouring ids differ as much as distant ones; the id is also written in the
    cell). For use with ``zmin=-0.5, zmax=num_blocks-0.5``. A pool too big for per-id stops gets a
    sampled Turbo ramp (its cells carry no text: a colour per id would not be readable anyway)."""
    n = max(num_blocks, 2)
    if n > MAX_CATEGORICAL_BLOCKS:
        cut = 0.5 / n
        turbo = pc.sample_colorscale("Turbo", [0.08 + 0.84 * i / 10 for i in range(11)])
        stops = [[0, NULL_GRAY], [cut, NULL_GRAY]] + [[cut + (1 - cut) * i / 10, c] for i, c in enumerate(turbo)]
        stops[-1][0] = 1.0  # plotly insists on an exact 1
        return stops
    stops = []
    for i in range(n):
        c = NULL_GRAY if i == 0 else block_color(i)
        stops += [[i / n, c], [(i + 1) / n, c]]
    stops[-1][0] = 1.0
    return stops


def block_color(block_id: int) -> str:
    """The flat colour of a physical block id (0, the null block: gray)."""
    return NULL_GRAY if block_id == 0 else BLOCK_PALETTE[(block_id - 1) % len(BLOCK_PALETTE)]


def request_color(row: int) -> str:
    """The colour of request row ``row``: the same in every figure (slots, buffer, CSR, legends)."""
    return PALETTE[row % len(PALETTE)]


def _inert(name) -> str:
    """A name from outside (a request id) as plotly text: no pseudo-HTML tag (plotly renders <a>,
    <b>, <br> in labels), at most 32 characters."""
    return str(name)[:32].replace("<", "‹").replace(">", "›")


def cell_box(x, y) -> dict:
    """The selection box around cell (x, y) of a heatmap, as a layout shape."""
    return dict(type="rect", x0=x - 0.5, x1=x + 0.5, y0=y - 0.5, y1=y + 0.5, line=dict(HILITE))


def _cell_box(fig, x, y, row=None, col=None):
    if row is None and col is None:
        fig.add_shape(**cell_box(x, y))
    else:
        fig.add_shape(type="rect", x0=x - 0.5, x1=x + 0.5, y0=y - 0.5, y1=y + 0.5, line=HILITE,
                      row=row, col=col)


# --- selections as overlays: what a figure adds for its selected cell, token or slot. The batch page
# builds each figure once per batch without a selection and adds only these per token change (the
# figure functions add the very same shapes and traces when given a selection).

def table_selection(selected, *, rows: tuple[int, int], cols: tuple[int, int]) -> dict:
    """``block_table_heatmap``'s selection: a box on (row, column) if it is inside the drawn window."""
    if selected is None or not (cols[0] <= selected[1] < cols[1] and rows[0] <= selected[0] < rows[1]):
        return {"traces": [], "shapes": []}
    return {"traces": [], "shapes": [cell_box(selected[1], selected[0])]}


def slot_selection(tokens, selected: int | None, lang: str = "en") -> dict:
    """``slot_mapping_figure``'s selection: a ring on the token's marker and a dotted line at it."""
    if selected is None or not 0 <= selected < len(tokens):
        return {"traces": [], "shapes": []}
    x = tokens["token"].to_numpy()[selected]
    y = tokens["slot"].to_numpy()[selected]
    ring = dict(type="scatter", x=[x], y=[y], mode="markers", name=_tr(lang)("selected"),
                marker=dict(size=26, symbol="circle-open", color="black", line=dict(width=4)), hoverinfo="skip")
    line = dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain",
                line=dict(color="black", width=1, dash="dot"))
    return {"traces": [ring], "shapes": [line]}


def buffer_selection(selected_slot, *, geometry: Geometry, first_block: int, num_blocks: int) -> dict:
    """``slot_buffer_figure``'s selection: a box on the slot's cell if its block is drawn."""
    if selected_slot is None or selected_slot < 0:
        return {"traces": [], "shapes": []}
    b, o = geometry.split_slot(selected_slot)
    if not first_block <= b < first_block + num_blocks:
        return {"traces": [], "shapes": []}
    return {"traces": [], "shapes": [cell_box(o, b)]}


# --- batch page ------------------------------------------------------------------------------------

def block_table_heatmap(bt: np.ndarray, *, num_reqs: int, num_blocks: int, geometry: Geometry,
                        counts=None, selected: tuple[int, int] | None = None, title: str = "",
                        stale_rows=(), lang: str = "en", max_cols: int | None = None,
                        showscale: bool = True, row_window: tuple[int, int] | None = None,
                        row_title: str | None = None, row_names=None, stale_tails: dict | None = None,
                        pad_until: int | None = None, col_window: tuple[int, int] | None = None,
                        validate: bool = False) -> go.Figure:
    """block_table[row, column] as a heatmap: value = physical (kernel) block id. ``row_window``
    (r0, r1) draws only rows r0..r1-1 (a huge table), labelled with their real row numbers.
    ``row_title`` names the y axis (default "request row"; V2's tables are by state index or batch
    position), ``row_names[r]`` (a request id, "" for none) is added to row r's tick label, and
    ``stale_tails`` {row: num_blocks} marks each such row's entries from num_blocks on as a stale
    tail (ids an earlier step left, never read: harmless). ``pad_until``: only rows [num_reqs,
    pad_until) are CUDA-graph padding; rows from ``pad_until`` on are outside this step's batch (V2's
    input table leaves them as they were). ``col_window`` (c0, c1): likewise only columns c0..c1-1
    of the shown ones (a huge table; the row outlines are then left out).

    Built from plain dicts without plotly's validators (:func:`figure_of`): its per-id colour
    scale (two stops per block id) went through a regular expression per colour, most of a new
    batch's server time; ``validate=True`` rebuilds it through the validators (tests compare)."""
    tr = _tr(lang)
    rows, width = bt.shape
    r0, r1 = (0, rows) if row_window is None else (max(0, row_window[0]), min(rows, row_window[1]))
    shown = width if max_cols is None else max(1, min(width, max_cols))
    c0, c1 = (0, shown) if col_window is None else (max(0, col_window[0]), min(shown, col_window[1]))
    z = bt[r0:r1, c0:c1]
    cells = z.size
    kbs = geometry.kernel_block_size
    logical = np.broadcast_to(geometry.logical_block_of_column(np.arange(c0, c1)), z.shape)
    hover_head = tr("hover_table")
    if cells <= MAX_CUSTOM_CELLS and col_window is None:   # a window of a huge table: the formula
        first = geometry.slot_at(z.astype(np.int64), 0)
        custom = np.stack([logical, first, first + kbs - 1], axis=-1)
        hover = hover_head + tr("hover_table_slots")
    else:
        custom = logical[..., None]
        hover = hover_head + tr("hover_table_formula", k=kbs, km=kbs - 1)
    heat = dict(
        type="heatmap", z=z, y=np.arange(r0, r1), customdata=custom, colorscale=block_colorscale(num_blocks),
        zmin=-0.5 if num_blocks <= MAX_CATEGORICAL_BLOCKS else 0,
        zmax=max(num_blocks, 2) - 0.5 if num_blocks <= MAX_CATEGORICAL_BLOCKS else max(num_blocks - 1, 1),
        # gaps only where cells are wide enough to show them (with gaps plotly fills cell by cell)
        xgap=1 if cells <= 20000 and col_window is None else 0, ygap=1 if cells <= 20000 and col_window is None else 0,
        textfont=dict(size=FONT - 2), hovertemplate=hover + "<extra></extra>",
        showscale=showscale and num_blocks > MAX_CATEGORICAL_BLOCKS,   # categorical: the ids are the labels
        colorbar=dict(title=dict(text=tr("physical_block"), side="right"), thickness=14))
    if col_window is not None:
        heat["x"] = np.arange(c0, c1)
    if cells <= MAX_TEXT_CELLS:
        heat["texttemplate"] = "%{z}"
    data, shapes, keys = [heat], [], []
    if counts is not None and col_window is None:  # entries past a row's count: outline the valid prefix
        for r in range(r0, min(num_reqs, r1)):
            n = int(counts[r])
            if 0 < n <= shown and cells <= 20000:
                shapes.append(dict(type="rect", x0=-0.5, x1=n - 0.5, y0=r - 0.5, y1=r + 0.5,
                                   line=dict(color="#333", width=1, dash="dot")))
    for r in stale_rows:
        if r0 <= r < r1:
            shapes.append(dict(type="rect", x0=c0 - 0.5, x1=c1 - 0.5, y0=r - 0.5, y1=r + 0.5,
                               line=dict(color="crimson", width=3)))
    def band(**kw):   # a band across the plot's width (plotly's add_hrect)
        return dict(type="rect", x0=0, x1=1, xref="x domain", yref="y", line=dict(width=0), **kw)

    # a band of rows is named by a legend entry under the plot, not by a label over its rows (a label
    # hid the last row's ids, and plotly widened the axis to hold it: a phantom row under the table)
    def key(text, color):
        keys.append(dict(type="scatter", x=[None], y=[None], mode="markers", showlegend=True, hoverinfo="skip",
                         name=wrap_label(text, 22),    # a half-width chart: plotly does not wrap it
                         marker=dict(symbol="square", size=14, color=color, line=dict(width=1, color="#999"))))

    p1 = r1 if pad_until is None else max(min(int(pad_until), r1), num_reqs)
    if num_reqs < p1:  # CUDA-graph padded rows
        shapes.append(band(y0=max(num_reqs, r0) - 0.5, y1=p1 - 0.5, fillcolor="gray", opacity=0.15))
        key(tr("padded_rows"), "#d9d9d9")
    if max(p1, num_reqs, r0) < r1:  # rows outside this step's batch (V2: left as they were), washed out
        shapes.append(band(y0=max(p1, num_reqs, r0) - 0.5, y1=r1 - 0.5, fillcolor="white", opacity=0.55))
        key(tr("unused_rows"), "#f3f3f3")
    data += keys
    if stale_tails and cells <= 20000:
        xs, ys = [], []
        for r, n in stale_tails.items():
            if r0 <= r < r1:
                for c in range(max(c0, int(n)), c1):
                    if bt[r, c] != 0:
                        xs.append(c)
                        ys.append(r)
        if xs:
            data.append(dict(type="scatter", x=xs, y=ys, mode="markers", name=tr("stale_tail"), showlegend=False,
                             marker=dict(symbol="x-thin", size=22, line=dict(width=2, color="#555")),
                             hovertemplate=tr("hover_stale_tail") + "<extra></extra>"))
    shapes += [dict(sh) for sh in table_selection(selected, rows=(r0, r1), cols=(c0, c1))["shapes"]]
    n_rows = r1 - r0
    yaxis = dict(autorange="reversed", title=dict(text=row_title or tr("row")))
    if n_rows <= 32:
        yaxis["dtick"] = 1
    if row_names is not None and n_rows <= 64:
        ticks = list(range(r0, r1))
        yaxis.update(tickmode="array", tickvals=ticks,
                     ticktext=[f"{r}: {_inert(row_names[r])}" if r < len(row_names) and row_names[r]
                               else str(r) for r in ticks])
    xaxis = dict(title=dict(text=tr("column")))
    if c1 - c0 <= 40:
        xaxis["dtick"] = 1
    layout = dict(xaxis=xaxis, yaxis=yaxis)
    if keys:
        layout["showlegend"] = True
    if shapes:
        layout["shapes"] = shapes
    h = int(min(900, max(320, 90 + 40 * n_rows)))
    fig = figure_of(data, layout, title, h, legend_band=bool(keys))
    return go.Figure(fig.to_plotly_json()) if validate else fig


def slot_mapping_figure(tokens, *, num_reqs: int, selected: int | None = None, title: str = "",
                        lang: str = "en", row_names=None) -> go.Figure:
    """slot_mapping[token]: one marker per token of the step, coloured by its request row (one
    trace, one legend entry per request row; ``row_names[r]``, a request id, names it)."""
    tr = _tr(lang)
    tok = tokens["token"].to_numpy()
    slot = tokens["slot"].to_numpy()
    row = tokens["row"].to_numpy()
    real = row >= 0
    custom = np.stack([row, tokens["position"].to_numpy(), tokens["logical_block"].to_numpy(),
                       tokens["column"].to_numpy(), tokens["physical_block"].to_numpy(),
                       tokens["offset"].to_numpy()], axis=-1)
    data = []
    local = real & (slot != PAD_SLOT_ID)
    size = 12 if len(tok) <= 256 else 6
    n_rows = max(num_reqs, int(row.max()) + 1 if real.any() else 0)
    if n_rows > len(PALETTE):   # a big batch: one trace (a legend of hundreds of rows helps no one)
        data.append(dict(
            type="scatter", x=tok[local], y=slot[local], mode="markers", customdata=custom[local], name=tr("written"),
            marker=dict(size=size, color=row[local], colorscale=row_colorscale(num_reqs),
                        cmin=-0.5, cmax=max(num_reqs, 1) - 0.5, line=dict(width=1, color="#222")),
            hovertemplate=tr("hover_token") + "<extra></extra>"))
    # one trace per request row: its colour is the request's everywhere, the legend lists them all
    for r in range(n_rows if n_rows <= len(PALETTE) else 0):
        mine = local & (row == r)
        name = tr("legend_row", r=r) if row_names is None or r >= len(row_names) or not row_names[r] \
            else f"{r}: {_inert(row_names[r])}"
        data.append(dict(
            type="scatter", x=tok[mine], y=slot[mine], mode="markers", customdata=custom[mine], name=name,
            legendgroup=f"row{r}", marker=dict(size=size, color=request_color(r), line=dict(width=1, color="#222")),
            hovertemplate=tr("hover_token") + "<extra></extra>"))
    pad = ~local
    if pad.any():
        data.append(dict(
            type="scatter", x=tok[pad], y=slot[pad], mode="markers", name=tr("pad_slot"), customdata=custom[pad],
            marker=dict(size=11 if len(tok) <= 256 else 6, symbol="x", color="gray"),
            hovertemplate=tr("hover_pad") + "<extra></extra>"))
    sel = slot_selection(tokens, selected, lang)
    layout = dict(
        xaxis=dict(title=dict(text=tr("token_index"))),
        yaxis=dict(title=dict(text=tr("slot")), zeroline=True, zerolinecolor="#bbb", gridcolor="#eee"),
        # a click on a marker selects its token (the batch page's on_select, through the live chart's
        # click event); drag pans, so a click is never taken for the start of a box selection
        clickmode="event+select", dragmode="pan")
    if sel["shapes"]:
        layout["shapes"] = [dict(sh) for sh in sel["shapes"]]
    return figure_of(data, layout, title, 340, legend_band=True, overlay=sel["traces"])


def slot_buffer_figure(owners: dict, *, geometry: Geometry, num_reqs: int, selected_slot: int | None = None,
                       title: str = "", lang: str = "en") -> go.Figure:
    """The flat KV slot buffer, one line per physical (kernel) block: who holds each slot."""
    tr = _tr(lang)
    row, pos, new, share = owners["row"], owners["pos"], owners["new"], owners["share"]
    b0 = owners["first_block"]
    nb = row.shape[0]
    blocks = np.arange(b0, b0 + nb)
    z = np.where(row >= 0, row, np.nan).astype(float)
    kbs = geometry.kernel_block_size
    slots = geometry.slot_at(blocks[:, None], np.arange(kbs)[None, :])
    names = np.array([tr("free"), tr("context"), tr("written_now")], dtype=object)
    state = names[np.where(row < 0, 0, np.where(new, 2, 1))]
    custom = np.stack([slots, np.broadcast_to(blocks[:, None], row.shape), row, pos, state, share],
                      axis=-1).astype(object)
    cells = z.size
    text = np.where(row >= 0, pos.astype(str), "") if cells <= MAX_TEXT_CELLS else None
    data = [dict(  # free slots: a gray floor under the owned ones
        type="heatmap", z=np.zeros(row.shape), x=np.arange(kbs), y=blocks, colorscale=[[0, NULL_GRAY], [1, NULL_GRAY]],
        showscale=False, xgap=1, ygap=1, customdata=custom, hovertemplate=tr("hover_buffer") + "<extra></extra>")]
    owned = dict(type="heatmap", z=z, x=np.arange(kbs), y=blocks, customdata=custom, textfont=dict(size=FONT - 3),
                 colorscale=row_colorscale(num_reqs), zmin=-0.5, zmax=max(num_reqs, 1) - 0.5, showscale=False,
                 xgap=1, ygap=1, hoverongaps=False, hovertemplate=tr("hover_buffer") + "<extra></extra>")
    if text is not None:
        owned.update(text=text, texttemplate="%{text}")
    data.append(owned)
    # slots written this step: centred on the cell, round its number (an open square the size of
    # the cell's middle)
    wy, wx = np.nonzero(new)
    if len(wy):
        data.append(dict(type="scatter", x=wx, y=blocks[wy], mode="markers", name=tr("written_now"),
                         marker=dict(size=18, color="black", symbol="square-open", line=dict(width=2)),
                         hoverinfo="skip"))
    legend_rows = range(num_reqs) if 0 < num_reqs <= len(PALETTE) else range(0)
    for r in legend_rows:   # the legend lists every request row in its colour (no data: a key only)
        data.append(dict(type="scatter", x=[None], y=[None], mode="markers", name=tr("legend_row", r=r),
                         marker=dict(size=12, symbol="square", color=request_color(r)), hoverinfo="skip"))
    layout = dict(yaxis=dict(autorange="reversed", title=dict(text=tr("physical_block"))),
                  xaxis=dict(title=dict(text=tr("offset_in_block"))),
                  showlegend=bool(len(wy)) or bool(len(legend_rows)))
    if nb <= 40:
        layout["yaxis"]["dtick"] = 1
    if kbs <= 32:
        layout["xaxis"]["dtick"] = 1
    shapes = buffer_selection(selected_slot, geometry=geometry, first_block=b0, num_blocks=nb)["shapes"]
    if shapes:
        layout["shapes"] = [dict(sh) for sh in shapes]
    return figure_of(data, layout, title, int(min(1000, max(300, 80 + 26 * nb))), legend_band=True)


# --- step-through and prefixes ---------------------------------------------------------------------

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
    layout = dict(xaxis=xaxis, yaxis=dict(title=dict(text=tr("ref_count")), dtick=1, range=[low, top]),
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


# --- CSR -------------------------------------------------------------------------------------------

def csr_figure(indptr, indices, last_page_len, *, page_size: int, title: str = "",
               lang: str = "en", selected_req: int | None = None, max_cells: int = 4096,
               text_cells: int = 64, window_title: str | None = None) -> go.Figure:
    """indptr / indices / last_page_len as three strips; each request's pages in its colour.

    Big batches stay light: a strip longer than ``max_cells`` shows a window of it around the
    selected request (``window_title``, formatted with lo, hi and n, names the window of
    ``indices``; the subplot titles always say which slice is drawn), and numbers are written into
    the cells only when a strip has at most ``text_cells`` of them (hover always gives them)."""
    tr = _tr(lang)
    from plotly.subplots import make_subplots

    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    lpl = np.asarray(last_page_len)
    n = len(lpl)
    sel = selected_req if selected_req is not None and 0 <= selected_req < n else None
    a, b = (int(indptr[sel]), int(indptr[sel + 1])) if sel is not None else (0, 0)

    def window(total, lo, hi):
        """[start, stop) of at most max_cells entries holding [lo, hi) (its start if too long), centred."""
        if total <= max_cells:
            return 0, total
        if hi - lo >= max_cells:
            return lo, lo + max_cells
        start = min(max(0, lo - (max_cells - (hi - lo)) // 2), total - max_cells)
        return start, start + max_cells

    def label(name, lo, hi, total):
        return name if (lo, hi) == (0, total) else f"{name}[{lo}:{hi}] / {total}"

    p0, p1 = window(n + 1, sel if sel is not None else 0, (sel + 2) if sel is not None else 1)
    r0, r1 = window(n, sel if sel is not None else 0, (sel + 1) if sel is not None else 1)
    i0, i1 = window(len(indices), a, b)
    owner = np.searchsorted(indptr, np.arange(i0, i1), side="right") - 1 if i1 > i0 else np.zeros(0, int)
    fig = make_subplots(rows=3, cols=1, vertical_spacing=0.24,
                        subplot_titles=(label("paged_kv_indptr", p0, p1, n + 1),
                                        label("paged_kv_indices", i0, i1, len(indices)),
                                        label("paged_kv_last_page_len", r0, r1, n)))
    cs = row_colorscale(n)

    def cell_text(values):
        return dict(text=[values.astype(str)], texttemplate="%{text}" if len(values) <= text_cells else None)

    fig.add_trace(go.Heatmap(z=[np.arange(p0, p1)], x=np.arange(p0, p1), **cell_text(indptr[p0:p1]),
                             colorscale=[[0, "#f2f2f2"], [1, "#f2f2f2"]], showscale=False, xgap=2,
                             hovertemplate=tr("hover_indptr") + "<extra></extra>"), row=1, col=1)
    if i1 > i0:
        fig.add_trace(go.Heatmap(z=[owner], x=np.arange(i0, i1), **cell_text(indices[i0:i1]),
                                 customdata=[owner], colorscale=cs, zmin=-0.5, zmax=max(n, 1) - 0.5,
                                 showscale=False, xgap=2 if i1 - i0 <= 512 else 0,
                                 hovertemplate=tr("hover_indices") + "<extra></extra>"), row=2, col=1)
    fig.add_trace(go.Heatmap(z=[np.arange(r0, r1)], x=np.arange(r0, r1), **cell_text(lpl[r0:r1]),
                             colorscale=cs, zmin=-0.5, zmax=max(n, 1) - 0.5, showscale=False, xgap=2,
                             customdata=[np.where(lpl[r0:r1] == page_size, 1, np.where(lpl[r0:r1] == 0, 2, 0))],
                             hovertemplate=tr("hover_lpl", p=page_size) + "<extra></extra>"), row=3, col=1)
    if sel is not None:  # one outline per strip, however many pages the request holds
        fig.add_shape(type="rect", x0=sel - 0.5, x1=sel + 1.5, y0=-0.5, y1=0.5, line=HILITE, row=1, col=1)
        if b > a:
            fig.add_shape(type="rect", x0=max(a, i0) - 0.5, x1=min(b, i1) - 0.5, y0=-0.5, y1=0.5, line=HILITE,
                          row=2, col=1)
        fig.add_shape(type="rect", x0=sel - 0.5, x1=sel + 0.5, y0=-0.5, y1=0.5, line=HILITE, row=3, col=1)
    fig.update_yaxes(visible=False)
    fig.update_xaxes(dtick=1 if max(i1 - i0, p1 - p0) <= 48 else None)
    fig.update_annotations(font_size=FONT, yshift=6)
    if window_title and (i0, i1) != (0, len(indices)):
        title = window_title.format(lo=i0, hi=i1, n=len(indices))
    return base_layout(fig, title, 470)


# --- memory layout ---------------------------------------------------------------------------------

def memory_order_figure(geom, *, picked_byte: int | None = None, title: str = "", lang: str = "en",
                        per_line: int | None = None) -> go.Figure:
    """Every element of a small cache in memory order (left to right, top to bottom),
    coloured by slot (V slots in other colours than K), labelled K/V and head: the cache layout
    family and NHD/HND decide what is contiguous."""
    tr = _tr(lang)
    total = geom.total_elements
    per_line = per_line or geom.head_dim * geom.num_kv_heads
    lines = -(-total // per_line)
    e = np.arange(lines * per_line)
    valid = e < total
    # the geometry decodes (its cache layout family and NHD/HND decide the order)
    plane, block, off, head, dim = geom.decode_elements(np.where(valid, e, 0))
    slot = block * geom.block_size + off
    z = np.where(valid, slot + plane * geom.num_slots, np.nan).reshape(lines, per_line)
    kv = np.where(plane == 0, "K", "V")
    label = np.where(valid, np.char.add(kv, head.astype(str)), "").reshape(lines, per_line)
    custom = np.stack([e * geom.itemsize, kv, block, off, slot, head, dim], axis=-1).reshape(lines, per_line, 7)
    fig = go.Figure(go.Heatmap(
        z=z, text=label, texttemplate="%{text}" if total <= 1200 else None, textfont=dict(size=FONT - 5),
        customdata=custom, colorscale="Turbo", showscale=False, xgap=1, ygap=1, hoverongaps=False,
        hovertemplate=tr("hover_memory") + "<extra></extra>"))
    if picked_byte is not None:
        el = picked_byte // geom.itemsize
        r, c = divmod(el, per_line)
        _cell_box(fig, c, r)
    fig.update_yaxes(autorange="reversed", title=tr("memory_line", n=per_line * geom.itemsize))
    fig.update_xaxes(title=tr("element_in_line"))
    return base_layout(fig, title, int(min(1100, max(260, 60 + 22 * lines))))


# --- PCIe and benchmarks ---------------------------------------------------------------------------

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
    yaxis.update(title=dict(text=tr("bytes_per_step")), gridcolor="#eee", **(dict(type="log") if log_y else {}))
    layout = dict(xaxis=xaxis, yaxis=yaxis, legend=dict(LEGEND_BELOW))   # the legend under the axis title
    if marker_x is not None:   # what add_vline draws: the chosen value, across the plot's height
        layout["shapes"] = [dict(type="line", x0=marker_x, x1=marker_x, xref="x", y0=0, y1=1, yref="y domain",
                                 line=dict(color="black", width=2, dash="dot"))]
    return base_layout(go.Figure(dict(data=data, layout=layout)), title, 400 + legend_px(len(cols)), wrap=wrap)


def stacked_bytes(parts: dict, *, title: str, lang: str = "en") -> go.Figure:
    """One horizontal bar per strategy, stacked by table (one dict, validated once)."""
    tr = _tr(lang)
    strategies = list(parts)
    comps = list(next(iter(parts.values())))
    data = [dict(type="bar", y=strategies, x=[parts[s][comp] for s in strategies], name=comp, orientation="h",
                 marker=dict(color=PALETTE[i % len(PALETTE)]),
                 hovertemplate=f"{comp}<br>%{{y}}: %{{x:,}} B<extra></extra>") for i, comp in enumerate(comps)]
    totals = [sum(parts[s].values()) for s in strategies]
    layout = dict(barmode="stack", legend=dict(LEGEND_BELOW),
                  xaxis=dict(title=dict(text=tr("bytes_per_step")), automargin=True,
                             **byte_ticks(1, max(totals + [1]), log=False)),
                  yaxis=dict(autorange="reversed"))
    return base_layout(go.Figure(dict(data=data, layout=layout)), title,
                       100 + 60 * len(strategies) + legend_px(len(comps)))


def bench_figure(df, *, x: str, y: str, color: str, title: str, x_title: str, y_title: str,
                 log_x: bool = True, floor: float | None = None, floor_label: str = "",
                 goal_x: float | None = None, goal_label: str = "") -> go.Figure:
    """One line per ``color`` group; with ``floor``, a dashed line at the empty-launch floor and,
    with ``goal_x``, a dotted one at goal_x × floor."""
    fig = go.Figure()
    order = list(dict.fromkeys(df[x]))   # the bench's own order (small to large), not alphabetical
    for i, (name, g) in enumerate(df.groupby(color, sort=False)):
        fig.add_trace(go.Scatter(x=g[x], y=g[y], mode="lines+markers", name=str(name),
                                 line=dict(width=3, color=PALETTE[i % len(PALETTE)]),
                                 hovertemplate=f"{name}<br>{x_title} %{{x}}<br>{y_title} %{{y:.4g}}<extra></extra>"))
    if floor:
        # lines and their labels placed by hand: on a log axis an hline's own annotation lands at 10**y
        lines = [(floor, floor_label, "#555", "dash", "top")]
        if goal_x:
            lines.append((floor * goal_x, goal_label, "#2ca02c", "dot", "bottom"))
        for y_val, text, col, dash, anchor in lines:
            fig.add_hline(y=y_val, line=dict(color=col, dash=dash, width=2))
            fig.add_annotation(x=1, xref="paper", y=float(np.log10(y_val)), yref="y", text=text, showarrow=False,
                               xanchor="right", yanchor=anchor, font=dict(color=col, size=FONT - 2),
                               bgcolor="rgba(255,255,255,0.8)")
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
