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
