"""Memory figures: FlashInfer's CSR strips and a small cache's elements in memory order."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from kvviz.views.figures.style import (FONT, HILITE, NULL_GRAY, _cell_box, _tr, base_layout, bracket_below,
                                      row_colorscale)

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
    # one rule with the 2D table: an empty request (no pages: a padding row) is grey, the others their colour
    empty = np.diff(indptr)[r0:r1] == 0
    for part, scale in ((~empty, cs), (empty, [[0, NULL_GRAY], [1, NULL_GRAY]])):
        if not part.any():
            continue
        z = np.where(part, np.arange(r0, r1), np.nan)
        text = cell_text(lpl[r0:r1])
        text["text"] = [np.where(part, lpl[r0:r1].astype(str), "")]
        fig.add_trace(go.Heatmap(z=[z], x=np.arange(r0, r1), **text, colorscale=scale, zmin=-0.5,
                                 zmax=max(n, 1) - 0.5, showscale=False, xgap=2, hoverongaps=False,
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

def _boundaries(block) -> tuple[list, list]:
    """The segments between neighbouring cells of two different blocks (``block``: lines × per_line
    block ids, -1 past the end), as one polyline with gaps (x, y lists, None between segments)."""
    xs, ys = [], []
    lines, per_line = block.shape
    for r in range(lines):
        for c in range(per_line):
            b = block[r, c]
            if b < 0:
                continue
            if c + 1 < per_line and block[r, c + 1] >= 0 and block[r, c + 1] != b:   # right edge
                xs += [c + 0.5, c + 0.5, None]
                ys += [r - 0.5, r + 0.5, None]
            if r + 1 < lines and block[r + 1, c] >= 0 and block[r + 1, c] != b:      # bottom edge
                xs += [c - 0.5, c + 0.5, None]
                ys += [r + 0.5, r + 0.5, None]
    return xs, ys


def memory_order_figure(geom, *, picked_byte: int | None = None, title: str = "", lang: str = "en",
                        per_line: int | None = None) -> go.Figure:
    """Every element of a small cache in memory order (left to right, top to bottom), coloured by
    slot (a token: its K and V share the colour, the label says K or V and the head; a colour bar
    of the slots is the legend), black lines between blocks: the cache layout
    family and NHD/HND decide what is contiguous. ``title`` names the family and layout."""
    tr = _tr(lang)
    total = geom.total_elements
    per_line = per_line or geom.head_dim * geom.num_kv_heads
    lines = -(-total // per_line)
    e = np.arange(lines * per_line)
    valid = e < total
    # the geometry decodes (its cache layout family and NHD/HND decide the order)
    plane, block, off, head, dim = geom.decode_elements(np.where(valid, e, 0))
    slot = block * geom.block_size + off
    n_slots = geom.num_slots
    z = np.where(valid, slot, np.nan).reshape(lines, per_line)
    kv = np.where(plane == 0, "K", "V")
    label = np.where(valid, np.char.add(kv, head.astype(str)), "").reshape(lines, per_line)
    custom = np.stack([e * geom.itemsize, kv, block, off, slot, head, dim], axis=-1).reshape(lines, per_line, 7)
    heat = go.Heatmap(
        z=z, text=label, texttemplate="%{text}" if total <= 1200 else None, textfont=dict(size=FONT - 5),
        customdata=custom, colorscale=row_colorscale(n_slots), zmin=-0.5, zmax=max(n_slots, 1) - 0.5,
        showscale=True, xgap=1, ygap=1, hoverongaps=False, hovertemplate=tr("hover_memory") + "<extra></extra>",
        # the colour legend: a bar of the slots, each slot's colour at its number
        colorbar=dict(title=dict(text=tr("slot"), side="top"), thickness=14, len=1, lenmode="fraction",
                      **(dict(tickmode="linear", tick0=0, dtick=1) if n_slots <= 16 else dict(tickformat="d"))))
    data = [heat]
    bx, by = _boundaries(np.where(valid, block, -1).reshape(lines, per_line))
    if bx:
        data.append(go.Scatter(x=bx, y=by, mode="lines", name=tr("block_boundary"), hoverinfo="skip",
                               line=dict(color="black", width=4), showlegend=False))
    fig = go.Figure(data)
    if picked_byte is not None:
        el = picked_byte // geom.itemsize
        r, c = divmod(el, per_line)
        _cell_box(fig, c, r)
    fig.update_yaxes(autorange="reversed", title=bracket_below(tr("memory_line", n=per_line * geom.itemsize)),
                     automargin=True, dtick=1 if lines <= 24 else None, showgrid=False, zeroline=False)
    fig.update_xaxes(title=tr("element_in_line"), showgrid=False, zeroline=False,
                     dtick=1 if per_line <= 8 else 2 if per_line <= 16 else None)
    fig.update_layout(showlegend=False)
    return base_layout(fig, title, int(min(1100, max(300, 90 + 28 * lines))), wrap=28)
