"""Batch page figures: the block table, the slot mapping and the slot buffer, and their
selection overlays."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from kvviz.constants import PAD_SLOT_ID
from kvviz.core.geometry import Geometry
from kvviz.views.figures.style import (FONT, MAX_CATEGORICAL_BLOCKS, MAX_CUSTOM_CELLS, MAX_TEXT_CELLS, NULL_GRAY,
                                      PALETTE, _inert, _tr, block_colorscale, cell_box, figure_of,
                                      request_color, row_colorscale, wrap_label)

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

def _table_heat(z, *, r0: int, r1: int, c0: int, c1: int, num_blocks: int, geometry: Geometry, tr,
                showscale: bool, windowed: bool) -> dict:
    """``block_table_heatmap``'s heatmap trace: ids coloured per block, hover with the logical block
    and (unless ``windowed`` or too many cells) the kernel block's first and last slot."""
    cells = z.size
    kbs = geometry.kernel_block_size
    logical = np.broadcast_to(geometry.logical_block_of_column(np.arange(c0, c1)), z.shape)
    hover_head = tr("hover_table")
    if cells <= MAX_CUSTOM_CELLS and not windowed:   # a window of a huge table: the formula
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
        xgap=1 if cells <= 20000 and not windowed else 0, ygap=1 if cells <= 20000 and not windowed else 0,
        textfont=dict(size=FONT - 2), hovertemplate=hover + "<extra></extra>",
        showscale=showscale and num_blocks > MAX_CATEGORICAL_BLOCKS,   # categorical: the ids are the labels
        colorbar=dict(title=dict(text=tr("physical_block"), side="right"), thickness=14))
    if windowed:
        heat["x"] = np.arange(c0, c1)
    if cells <= MAX_TEXT_CELLS:
        heat["texttemplate"] = "%{z}"
    return heat


def _row_key(text: str, color: str) -> dict:
    """A legend entry naming a band of rows (under the plot, not a label over its rows: a label hid
    the last row's ids, and plotly widened the axis to hold it: a phantom row under the table)."""
    return dict(type="scatter", x=[None], y=[None], mode="markers", showlegend=True, hoverinfo="skip",
                name=wrap_label(text, 22),    # a half-width chart: plotly does not wrap it
                marker=dict(symbol="square", size=14, color=color, line=dict(width=1, color="#999")))


def _row_band(**kw) -> dict:
    """A band across the plot's width (plotly's add_hrect)."""
    return dict(type="rect", x0=0, x1=1, xref="x domain", yref="y", line=dict(width=0), **kw)


def _row_marks(*, r0: int, r1: int, c0: int, c1: int, num_reqs: int, counts, shown: int, cells: int,
               stale_rows, pad_until: int | None, windowed: bool, tr) -> tuple[list, list]:
    """The shapes and legend keys that mark ``block_table_heatmap``'s rows: each valid prefix
    outlined, stale rows in crimson, CUDA-graph padding and rows outside the batch as bands."""
    shapes, keys = [], []
    if counts is not None and not windowed:  # entries past a row's count: outline the valid prefix
        for r in range(r0, min(num_reqs, r1)):
            n = int(counts[r])
            if 0 < n <= shown and cells <= 20000:
                shapes.append(dict(type="rect", x0=-0.5, x1=n - 0.5, y0=r - 0.5, y1=r + 0.5,
                                   line=dict(color="#333", width=1, dash="dot")))
    for r in stale_rows:
        if r0 <= r < r1:
            shapes.append(dict(type="rect", x0=c0 - 0.5, x1=c1 - 0.5, y0=r - 0.5, y1=r + 0.5,
                               line=dict(color="crimson", width=3)))
    p1 = r1 if pad_until is None else max(min(int(pad_until), r1), num_reqs)
    if num_reqs < p1:  # CUDA-graph padded rows
        shapes.append(_row_band(y0=max(num_reqs, r0) - 0.5, y1=p1 - 0.5, fillcolor="gray", opacity=0.15))
        keys.append(_row_key(tr("padded_rows"), "#d9d9d9"))
    if max(p1, num_reqs, r0) < r1:  # rows outside this step's batch (V2: left as they were), washed out
        shapes.append(_row_band(y0=max(p1, num_reqs, r0) - 0.5, y1=r1 - 0.5, fillcolor="white", opacity=0.55))
        keys.append(_row_key(tr("unused_rows"), "#f3f3f3"))
    return shapes, keys


STALE_MARK_DX, STALE_MARK_DY = 0.3, 0.3   # the stale cross's place from the cell's centre (rows run down)


def _stale_tail_marks(bt: np.ndarray, stale_tails: dict, *, r0: int, r1: int, c0: int, c1: int, tr) -> list:
    """A small cross in the top right corner of every non-null entry of a stale tail ({row:
    num_blocks}: from num_blocks on): a cross on the cell's centre hid the block id written there."""
    xs, ys = [], []
    for r, n in stale_tails.items():
        if r0 <= r < r1:
            for c in range(max(c0, int(n)), c1):
                if bt[r, c] != 0:
                    xs.append(c)
                    ys.append(r)
    if not xs:
        return []
    return [dict(type="scatter", x=[x + STALE_MARK_DX for x in xs], y=[y - STALE_MARK_DY for y in ys], mode="markers",
                 name=tr("stale_tail"), showlegend=False,
                 marker=dict(symbol="x-thin", size=9, line=dict(width=2, color="#333")),
                 hovertemplate=tr("hover_stale_tail") + "<extra></extra>")]


def _table_axes(*, r0: int, r1: int, c0: int, c1: int, row_title: str | None, row_names, tr,
                title_cells: int | None = None) -> dict:
    """``block_table_heatmap``'s axes: rows down (named with ``row_names`` when few), columns across;
    ``title_cells``: the axis titles broken into lines of this many cells (a chart in a narrow
    column: a long title was shrunk to fit, under 12 px)."""
    n_rows = r1 - r0
    def wrap(text):
        return wrap_label(text, title_cells) if title_cells else text

    yaxis = dict(autorange="reversed", title=dict(text=wrap(row_title or tr("row"))), automargin=True)
    if n_rows <= 32:
        yaxis["dtick"] = 1
    if row_names is not None and n_rows <= 64:
        ticks = list(range(r0, r1))
        yaxis.update(tickmode="array", tickvals=ticks,
                     ticktext=[f"{r}: {_inert(row_names[r])}" if r < len(row_names) and row_names[r]
                               else str(r) for r in ticks])
    xaxis = dict(title=dict(text=wrap(tr("column"))), automargin=True)
    if c1 - c0 <= 40:
        xaxis["dtick"] = 1
    return dict(xaxis=xaxis, yaxis=yaxis)


def block_table_heatmap(bt: np.ndarray, *, num_reqs: int, num_blocks: int, geometry: Geometry,
                        counts=None, selected: tuple[int, int] | None = None, title: str = "",
                        stale_rows=(), lang: str = "en", max_cols: int | None = None,
                        showscale: bool = True, row_window: tuple[int, int] | None = None,
                        row_title: str | None = None, row_names=None, stale_tails: dict | None = None,
                        pad_until: int | None = None, col_window: tuple[int, int] | None = None,
                        validate: bool = False, title_cells: int | None = None) -> go.Figure:
    """block_table[row, column] as a heatmap: value = physical (kernel) block id. ``row_window``
    (r0, r1) draws only rows r0..r1-1 (a huge table), labelled with their real row numbers.
    ``row_title`` names the y axis (default "request row"; V2's tables are by state index or batch
    position), ``row_names[r]`` (a request id, "" for none) is added to row r's tick label, and
    ``stale_tails`` {row: num_blocks} marks each such row's entries from num_blocks on as a stale
    tail (ids an earlier step left, never read: harmless). ``pad_until``: only rows [num_reqs,
    pad_until) are CUDA-graph padding; rows from ``pad_until`` on are outside this step's batch (V2's
    input table leaves them as they were). ``col_window`` (c0, c1): likewise only columns c0..c1-1
    of the shown ones (a huge table; the row outlines are then left out). ``title_cells``: the axis
    titles wrapped to lines of that many cells (a chart a quarter of the page wide).

    Built from plain dicts without plotly's validators (:func:`figure_of`): its per-id colour
    scale (two stops per block id) went through a regular expression per colour, most of a new
    batch's server time; ``validate=True`` rebuilds it through the validators (tests compare)."""
    tr = _tr(lang)
    rows, width = bt.shape
    r0, r1 = (0, rows) if row_window is None else (max(0, row_window[0]), min(rows, row_window[1]))
    shown = width if max_cols is None else max(1, min(width, max_cols))
    c0, c1 = (0, shown) if col_window is None else (max(0, col_window[0]), min(shown, col_window[1]))
    z = bt[r0:r1, c0:c1]
    win = dict(r0=r0, r1=r1, c0=c0, c1=c1)
    windowed = col_window is not None
    heat = _table_heat(z, **win, num_blocks=num_blocks, geometry=geometry, tr=tr, showscale=showscale,
                       windowed=windowed)
    shapes, keys = _row_marks(**win, num_reqs=num_reqs, counts=counts, shown=shown, cells=z.size,
                              stale_rows=stale_rows, pad_until=pad_until, windowed=windowed, tr=tr)
    data = [heat, *keys]
    if stale_tails and z.size <= 20000:
        data += _stale_tail_marks(bt, stale_tails, **win, tr=tr)
    shapes += [dict(sh) for sh in table_selection(selected, rows=(r0, r1), cols=(c0, c1))["shapes"]]
    layout = _table_axes(**win, row_title=row_title, row_names=row_names, tr=tr, title_cells=title_cells)
    if keys:
        layout["showlegend"] = True
    if shapes:
        layout["shapes"] = shapes
    h = int(min(900, max(320, 90 + 40 * (r1 - r0))))
    fig = figure_of(data, layout, title, h, legend_band=bool(keys))
    return go.Figure(fig.to_plotly_json()) if validate else fig


def int_axis(values) -> dict:
    """An axis of whole numbers: ``values``' range with a tick at each integer when it spans at
    most 10 (one value: that value ± 1; plotly alone drew 19.5 and a token axis from −1 to 1),
    else plotly's own ticks written as integers."""
    v = np.asarray(values)
    if v.size == 0:
        return {}
    lo, hi = int(v.min()), int(v.max())
    if hi - lo > 10:
        return dict(tickformat="d")
    pad = 1 if hi == lo else 0.5
    return dict(tickmode="linear", tick0=0, dtick=1, range=[lo - pad, hi + pad])


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
        xaxis=dict(title=dict(text=tr("token_index")), **int_axis(tok)),
        yaxis=dict(title=dict(text=tr("slot")), zeroline=True, zerolinecolor="#bbb", gridcolor="#eee", **int_axis(slot)),
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
