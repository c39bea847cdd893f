"""Tables as the pages show them (no streamlit): nothing on screen reads "None" or "nan"."""
from __future__ import annotations

import numbers

import pandas as pd

MISSING = "—"


def no_none(df: pd.DataFrame, missing: str = MISSING) -> pd.DataFrame:
    """``df`` with every missing cell (None, NaN) shown as ``missing``; columns without any keep their
    dtype (numbers stay numbers, sortable). A column with a missing cell becomes text, all of it (a
    column mixing text and numbers cannot travel to the browser as it is: Arrow refuses it and
    Streamlit logs a traceback before converting it itself); a column of whole numbers that a
    missing cell made floats (pandas: ints + NaN = float64) shows them as integers ("20", not "20.0")."""
    out = df.copy()
    for col in out.columns:
        if out[col].isna().any():
            vals = out[col].tolist()
            whole = pd.api.types.is_float_dtype(out[col]) and all(float(v).is_integer() for v in vals if not _missing(v))
            out[col] = pd.Series([missing if _missing(v) else str(int(v)) if whole else str(v) for v in vals],
                                 index=out.index, dtype=object)
    return out


def _missing(v) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v)


def static_columns(data, labels: dict | None = None, missing: str = MISSING) -> dict:
    """``data`` (a frame or a list of row dicts) as a page's small table shows it: {shown header:
    list of cells}, headers through ``labels`` (keys not in it keep their name), every text cell and
    header escaped (the table is markdown: a request id from a pasted scenario stays text), missing
    cells as ``missing`` (a column with text or a missing cell is all text). Numbers stay numbers.
    Plain lists, not pandas per cell: this runs for every table on every rerun."""
    from kvviz.views.safe_text import plain

    if isinstance(data, pd.DataFrame):
        keys = list(data.columns)
        columns = {c: data[c].tolist() for c in keys}
    else:
        rows = list(data)
        keys = list(dict.fromkeys(k for r in rows for k in r))
        columns = {c: [r.get(c) for r in rows] for c in keys}
    labels = labels or {}
    out = {}
    for c in keys:
        vals = columns[c]
        if any(isinstance(v, str) or _missing(v) for v in vals):
            # whole numbers stay whole: a missing cell turns a pandas int column into floats (2.0)
            whole = all(float(v).is_integer() for v in vals if isinstance(v, float) and not _missing(v))
            vals = [missing if _missing(v) else plain(v) if isinstance(v, str)
                    else str(int(v)) if whole and isinstance(v, float) else str(v) for v in vals]
        out[plain(labels.get(c, c))] = vals
    if len(out) != len(keys):
        raise ValueError("two columns would show the same header")
    return out


STATIC_MAX_ROWS = 32        # a bigger table scrolls in a grid (st.dataframe) instead of lengthening the page
STATIC_MAX_CHARS = 4000     # all its text cells together (a request's block ids can run to thousands)


def fits_static(data, max_rows: int = STATIC_MAX_ROWS, max_chars: int = STATIC_MAX_CHARS) -> bool:
    """Whether ``data`` (a frame) is small enough to be drawn as one markdown table: a changed glide
    grid costs the browser ~70 ms of canvas work and a late redraw of its accessibility copy, a small
    markdown table a few ms. Long tables stay grids (they scroll, and draw only the rows seen)."""
    if len(data) > max_rows:
        return False
    text = [c for c in data.columns if data[c].dtype == object or pd.api.types.is_string_dtype(data[c])]
    return sum(len(str(v)) for c in text for v in data[c].tolist()) <= max_chars


def markdown_grid(header: list, rows, right: list) -> str:
    """A GitHub-flavoured markdown table of cells already as the page shows them (escaped by the
    caller), ``right[i]``: column i right-aligned. An empty header cell is written "| |"."""
    def line(cells):
        return "|" + "|".join(f" {c} " if c != "" else " " for c in cells) + "|"

    return "\n".join([line(header), "|" + "".join("---:|" if r else "---|" for r in right),
                      *(line(row) for row in rows)])


def markdown_table(data, labels: dict | None = None, missing: str = MISSING) -> str:
    """:func:`static_columns` as one GitHub-flavoured markdown table (numbers right-aligned): what
    the pages draw for a small table that changes on every step or input. One markdown element is
    about half the browser's time of ``st.table``, which renders every cell as its own markdown.
    Text is escaped by ``static_columns`` (a ``|`` cannot open a cell)."""
    cols = static_columns(data, labels, missing)
    heads = list(cols)
    numeric = [all(isinstance(v, numbers.Number) and not isinstance(v, bool) for v in cols[h]) and bool(cols[h])
               for h in heads]
    n = len(next(iter(cols.values()))) if cols else 0
    return markdown_grid(heads, ([str(cols[h][i]) for h in heads] for i in range(n)), numeric)


GBPS_MIN_BYTES = 4096       # a bench row moving fewer bytes than a page: its GB/s says nothing


def bench_rows(df: pd.DataFrame, min_bytes: int = GBPS_MIN_BYTES) -> tuple[pd.DataFrame, int]:
    """A bench table as the kernel lab shows it: the GB/s of a row that moves fewer than
    ``min_bytes`` (a 1-token step: 20 bytes; its time is the launch, the bandwidth rounds to 0.0)
    left missing (shown "—", explained under the table). Returns (rows, how many were blanked)."""
    if "gbps" not in df.columns or "bytes" not in df.columns:
        return df, 0
    small = df["bytes"].notna() & (df["bytes"] < min_bytes) & df["gbps"].notna()
    out = df.copy()
    out["gbps"] = out["gbps"].astype(float).where(~small)
    return out, int(small.sum())
