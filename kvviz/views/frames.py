"""Tables as the pages show them (no streamlit): nothing on screen reads "None" or "nan"."""
from __future__ import annotations

import pandas as pd

MISSING = "—"


def no_none(df: pd.DataFrame, missing: str = MISSING) -> pd.DataFrame:
    """``df`` with every missing cell (None, NaN) shown as ``missing``; columns without any keep their
    dtype (numbers stay numbers, sortable)."""
    out = df.copy()
    for col in out.columns:
        if out[col].isna().any():
            out[col] = out[col].astype(object).where(out[col].notna(), missing)
    return out


def static_table(data, labels: dict | None = None, missing: str = MISSING) -> pd.DataFrame:
    """``data`` (a frame or a list of row dicts) as ``st.table`` shows it: headers through ``labels``
    (keys not in it keep their name), every text cell and header escaped (``st.table`` renders
    markdown in cells: a request id from a pasted scenario stays text), missing cells as
    ``missing``. Numbers stay numbers.

    The pages draw their small per-step tables this way rather than with ``st.dataframe``: the
    canvas grid costs the browser ~70 ms per changed table and fills its accessibility mirror
    ~200 ms later (BENCHMARKS "Browser-felt latency"); a static table never truncates a cell."""
    from kvviz.views.safe_text import plain

    df = no_none(pd.DataFrame(data) if not isinstance(data, pd.DataFrame) else data, missing)
    labels = labels or {}
    def cells(col: pd.Series) -> pd.Series:
        if not (col.dtype == object or pd.api.types.is_string_dtype(col)):
            return col
        if col.map(lambda v: isinstance(v, str)).any():   # text, or numbers beside "—": all text
            return col.map(lambda v: plain(v) if isinstance(v, str) else str(v))
        return col

    out = pd.DataFrame({plain(labels.get(c, c)): cells(df[c]) for c in df.columns}, index=df.index)
    if len(set(out.columns)) != len(df.columns):
        raise ValueError("two columns would show the same header")
    return out.reset_index(drop=True)
