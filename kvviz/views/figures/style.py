"""The figures' common look: fonts, colours, legends, titles, layouts, cell boxes (no streamlit here).

Every figure uses big fonts (it is projected in a classroom) and a hover text that
says exactly what a cell is. A selected token is drawn in every view with the same
highlight (a thick black outline), so one pick lights up the same thing everywhere.
"""
from __future__ import annotations

import re
import unicodedata

import plotly.colors as pc
import plotly.graph_objects as go

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


def bracket_below(text: str) -> str:
    """``text`` with its first bracket ("(", "（") and what follows on a second line: a y axis title
    longer than a short plot's height ran past the figure's edge or over the chart's title."""
    return re.sub(r"\s*([（(])", r"<br>\1", text, count=1)


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
