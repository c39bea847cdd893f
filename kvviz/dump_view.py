"""What the dumps page shows, as plain data (no streamlit here): sources of dumps,
tables as DataFrames with the cells to highlight, findings with their concepts."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .bugs import BUGS, bug_pair
from .check import CHECKS, CONCEPTS, Finding
from .diff import DiffResult
from .dump import Dump, load_dump

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples" / "dumps"
MAX_SHOWN_ROWS, MAX_SHOWN_COLS = 64, 64


def example_names() -> list[str]:
    return sorted(p.name for p in EXAMPLES_DIR.glob("*.json"))


def load_example(name: str) -> Dump:
    return load_dump(str(EXAMPLES_DIR / name))


def bug_choices() -> dict[str, str]:
    return {k: b.title for k, b in BUGS.items()}


def bug_dumps(bug_id: str) -> tuple[Dump, Dump]:
    return bug_pair(bug_id)


def table_frame(d: Dump, table: str) -> pd.DataFrame | None:
    a = getattr(d, table)
    if a is None:
        return None
    a = a[:MAX_SHOWN_ROWS, :MAX_SHOWN_COLS]
    return pd.DataFrame(a, columns=[str(c) for c in range(a.shape[1])])


def cell_marks(d: Dump, table: str, diff: DiffResult | None, side: str) -> np.ndarray | None:
    """0 plain, 1 differs from the other dump, 2 stale (device vs CPU), 3 padded row."""
    a = getattr(d, table)
    if a is None:
        return None
    a = a[:MAX_SHOWN_ROWS, :MAX_SHOWN_COLS]
    marks = np.zeros(a.shape, dtype=np.int8)
    marks[d.num_reqs:d.padded_reqs] = 3
    if table == "block_table_device":
        cpu = d.block_table[: a.shape[0], : a.shape[1]]
        marks[(cpu != a)] = 2
    if diff is not None:
        for r, c in diff.rows_of(table).items():
            if r < a.shape[0] and c < a.shape[1]:
                marks[r, c] = 1
    return marks


MARK_STYLE = {1: "background-color: #ffd54f", 2: "background-color: #ef9a9a", 3: "color: #9e9e9e"}


def styled(frame: pd.DataFrame, marks: np.ndarray):
    def style(_):
        return pd.DataFrame([[MARK_STYLE.get(int(m), "") for m in row] for row in marks],
                            index=frame.index, columns=frame.columns)
    return frame.style.apply(style, axis=None)


def findings_frame(findings: list[Finding]) -> pd.DataFrame:
    return pd.DataFrame([{"check": f.check, "row": f.row, "index": f.index,
                          "concept": CHECKS[f.check].concept, "message": f.message} for f in findings],
                        columns=["check", "row", "index", "concept", "message"])


def concepts_of(findings: list[Finding]) -> dict[str, str]:
    keys = []
    for f in findings:
        c = CHECKS[f.check].concept
        if c not in keys:
            keys.append(c)
    return {k: CONCEPTS[k] for k in keys}
