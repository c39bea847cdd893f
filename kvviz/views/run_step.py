"""One captured step as the Captured runs page draws it (no streamlit here): the block table with
its rows labelled by request id and the checker's wrong rows outlined, the slot mapping, and one
token followed from its request and position to its logical block, physical block and slot.

The figures are the Batch / Step through pages' builders (``kvviz.views.figures``), fed from a
``Dump`` instead of a simulator record; block arithmetic is ``Geometry``'s."""
from __future__ import annotations

import numpy as np
import pandas as pd

from kvviz.constants import PAD_SLOT_ID
from kvviz.core.geometry import Geometry
from kvviz.views import figures
from kvviz.views.figures.style import LEGEND_BELOW, LEGEND_ROW_PX

MAX_ROWS_SHOWN = 64         # block-table rows drawn at once (a window around the row in focus)
MAX_COLS_SHOWN = 48         # columns drawn at once (a window around the column in focus)
WRONG = "crimson"           # the outline of a row the checker flags (figures.block_table_heatmap's)


def table_geometry(d) -> Geometry:
    """The geometry the shown table's entries count in: with a kernel-block table (v0.32.0+, r > 1)
    the CPU table holds KV-manager ids, so its slots are manager block × block size + offset."""
    return Geometry(d.block_size) if d.kernel_block_table is not None else d.geometry


def table_blocks(d) -> int:
    """How many ids the shown table's entries range over (its colour scale)."""
    return d.num_blocks if d.kernel_block_table is not None else int(d.num_blocks * d.blocks_per_kv_block)


def tokens_frame(d) -> pd.DataFrame | None:
    """One line per token of the step (padding included): token, slot (the captured slot mapping),
    row, position, and where the table puts it (logical block, column, physical block, offset).
    None when the dump lacks ``query_start_loc``, ``positions`` or ``slot_mapping``."""
    if d.query_start_loc is None or d.positions is None or d.slot_mapping is None:
        return None
    slots = np.asarray(d.slot_mapping, dtype=np.int64)
    n_tok = len(slots)
    qsl = np.asarray(d.query_start_loc[: d.num_reqs + 1], dtype=np.int64)
    tok = np.arange(n_tok)
    row = np.searchsorted(qsl[1:], tok, side="right")
    row = np.where(tok < qsl[-1], row, -1)
    pos = np.zeros(n_tok, dtype=np.int64)
    k = min(n_tok, len(d.positions))
    pos[:k] = d.positions[:k]
    geo = d.geometry
    local, col, off = geo.locate(pos)
    table = d.kernel_block_table if d.kernel_block_table is not None else d.block_table
    ok = (row >= 0) & local & (col < table.shape[1]) & (row < table.shape[0])
    phys = np.full(n_tok, PAD_SLOT_ID, dtype=np.int64)
    phys[ok] = table[row[ok], col[ok]]
    return pd.DataFrame({"token": tok, "slot": slots, "row": row, "position": np.where(row >= 0, pos, PAD_SLOT_ID),
                         "logical_block": np.where(row >= 0, geo.logical_block(pos), PAD_SLOT_ID),
                         "column": np.where(ok, col, PAD_SLOT_ID), "physical_block": phys,
                         "offset": np.where(ok, off, PAD_SLOT_ID)})


def row_length(d, row: int) -> int:
    """Tokens row ``row`` holds after the step: its seq_len, else what its counted blocks hold."""
    if d.seq_lens is not None and row < len(d.seq_lens) and int(d.seq_lens[row]) > 0:
        return int(d.seq_lens[row])
    return d.geometry.tokens_held(int(d.num_blocks_per_row[row])) if row < len(d.num_blocks_per_row) else 0


def follow(d, row: int, position: int) -> dict:
    """Token ``position`` of the request at ``row``: its logical block, table column, physical
    (kernel) block, offset and slot as the table says; whether the row counts that block; and, when
    this step wrote it, the token index and the slot the captured slot mapping gave it."""
    geo = d.geometry
    local, col, off = (int(x) if not isinstance(x, (bool, np.bool_)) else bool(x) for x in geo.locate(position))
    table = d.kernel_block_table if d.kernel_block_table is not None else d.block_table
    out = {"row": row, "position": position, "logical_block": int(geo.logical_block(position)), "column": col,
           "offset": off, "local": local, "physical_block": None, "slot": None, "counted": False,
           "row_blocks": int(d.num_blocks_per_row[row]) if row < len(d.num_blocks_per_row) else 0,
           "token": None, "captured_slot": None}
    if local and row < table.shape[0] and col < table.shape[1]:
        out["physical_block"] = int(table[row, col])
        out["slot"] = int(geo.slot_at(out["physical_block"], off))
        # the counted prefix is in the CPU table's entries: manager blocks beside a kernel-block table
        out["counted"] = (out["logical_block"] if d.kernel_block_table is not None else col) < out["row_blocks"]
    tokens = tokens_frame(d)
    if tokens is not None:
        hit = tokens[(tokens["row"] == row) & (tokens["position"] == position)]
        if len(hit):
            out["token"] = int(hit["token"].iloc[0])
            out["captured_slot"] = int(hit["slot"].iloc[0])
    return out


def _window(focus: int | None, total: int, size: int) -> tuple[int, int]:
    if total <= size:
        return 0, total
    start = 0 if focus is None else max(0, min(focus - size // 2, total - size))
    return start, start + size


def _shown_width(d) -> int:
    """Columns worth drawing: one past the widest counted row, at least one."""
    counts = np.asarray(d.num_blocks_per_row[: max(d.num_reqs, 1)], dtype=np.int64)
    per = d.blocks_per_kv_block if d.kernel_block_table is None else 1
    need = (int(counts.max()) if len(counts) else 0) * per + 1
    return max(1, min(d.width, need))


def block_table_figure(d, row_names, wrong: list[int], picked: dict | None, lang: str, flagged_label: str):
    """The step's CPU block table (V2: the gathered input table): cells coloured and labelled by
    physical block id, rows named ``row: request id``, the checker's ``wrong`` rows outlined in
    crimson (named in the legend), the followed token's cell boxed. Returns (figure, (r0, r1), (c0, c1))."""
    focus_row = wrong[0] if wrong else (picked["row"] if picked else None)
    col = None
    if picked and picked.get("column") is not None and d.kernel_block_table is None:
        col = picked["column"]
    elif picked and picked.get("logical_block") is not None:
        col = picked["logical_block"]
    rows = _window(focus_row, d.rows, MAX_ROWS_SHOWN)
    width = _shown_width(d) if col is None else max(_shown_width(d), min(d.width, col + 1))
    cols = _window(col, width, MAX_COLS_SHOWN)
    selected = (picked["row"], col) if picked and col is not None else None
    fig = figures.block_table_heatmap(
        d.block_table, num_reqs=d.num_reqs, num_blocks=table_blocks(d), geometry=table_geometry(d),
        counts=d.num_blocks_per_row, selected=selected, lang=lang, max_cols=width, showscale=False,
        row_window=rows, row_names=list(row_names), stale_rows=wrong, pad_until=d.num_reqs_padded,
        col_window=cols if cols != (0, width) else None)
    fig.update_yaxes(ticklabelstandoff=6)     # a request id's last character clear of the first cell
    if any(rows[0] <= r < rows[1] for r in wrong):
        fig.add_scatter(x=[None], y=[None], mode="markers", name=flagged_label, hoverinfo="skip", showlegend=True,
                        marker=dict(symbol="square-open", size=14, color=WRONG, line=dict(width=3, color=WRONG)))
        had = any(getattr(tr, "showlegend", None) and tr.name for tr in fig.data[:-1])
        fig.update_layout(showlegend=True, legend=LEGEND_BELOW,
                          height=(fig.layout.height or 320) + (0 if had else LEGEND_ROW_PX))
        fig.update_xaxes(automargin=True)
    return fig, rows, cols


def integer_ticks(fig, axis: str, values) -> None:
    """An axis of whole numbers: every number marked when the span is short (else plotly's own
    ticks, which fall on whole numbers past ten), and never a fraction written."""
    vals = [int(v) for v in values if v is not None and v == v]
    span = (max(vals) - min(vals)) if vals else 0
    opts = dict(tickformat="d")
    if span <= 12:
        opts.update(tickmode="linear", tick0=0, dtick=1)
    (fig.update_xaxes if axis == "x" else fig.update_yaxes)(**opts)


def slot_mapping_figure(d, row_names, picked: dict | None, lang: str):
    """The step's slot mapping: one marker per token, coloured by its request row (the legend names
    each row with its request id), padding as crosses, the followed token ringed (if written now)."""
    tokens = tokens_frame(d)
    if tokens is None:
        return None
    selected = picked.get("token") if picked else None
    fig = figures.slot_mapping_figure(tokens, num_reqs=d.num_reqs, selected=selected, lang=lang,
                                      row_names=list(row_names))
    integer_ticks(fig, "x", tokens["token"])
    integer_ticks(fig, "y", tokens["slot"][tokens["slot"] >= 0])
    return fig
