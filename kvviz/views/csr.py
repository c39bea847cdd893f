"""The FlashInfer CSR page's view-model (no streamlit): a batch's block table with padded empty
rows, the CSR over it, the part of the table worth drawing, and one line per request."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from kvviz.constants import NULL_BLOCK_ID
from kvviz.core.step import compute_csr
from kvviz.views.batch import ExploredBatch, table_row_window

TABLE_CELLS = 131072   # a table bigger than this shows a window of rows round the request


def csr_view(eb: ExploredBatch, extra_empty_rows: int = 0, empty_last_page_len_is_zero: bool = True):
    """The step's block table with ``extra_empty_rows`` padded (seq_len 0) rows added, this rank's
    seq_lens, and the FlashInfer CSR (vectorised core) over them: (step, seq_lens, (indptr, indices, lpl))."""
    s = eb.step
    k = max(0, int(extra_empty_rows))
    bt = np.vstack([s.block_table, np.full((k, s.block_table.shape[1]), NULL_BLOCK_ID, np.int32)])
    seq = np.concatenate([s.seq_lens, np.zeros(k, np.int32)]).astype(np.int32)
    local = s.geometry.local_seq_lens(seq)
    csr = compute_csr(bt, local, s.kernel_block_size, empty_last_page_len_is_zero=empty_last_page_len_is_zero)
    return replace(s, block_table=bt, num_reqs_padded=len(seq), seq_lens=seq), local, csr


def table_shape(block_table: np.ndarray, indptr) -> tuple[int, int]:
    """(rows, columns) of the table worth drawing: every row, and the most pages any request
    holds plus two columns (at most the width)."""
    pages = np.diff(indptr)
    used = max(int(np.max(pages)) if len(pages) else 1, 1)
    return block_table.shape[0], min(block_table.shape[1], used + 2)


def table_window(block_table: np.ndarray, indptr, request: int) -> tuple[int, int, tuple[int, int] | None]:
    """(columns, rows window) of the table figure: ``table_row_window`` round ``request`` once
    the drawn table exceeds TABLE_CELLS cells (the browser chokes on millions), else None."""
    n_rows, n_cols = table_shape(block_table, indptr)
    return n_cols, table_row_window(n_rows, n_cols, request, max_cells=TABLE_CELLS)


def requests_frame(local_seq, indptr, last_page_len, page_size: int) -> pd.DataFrame:
    """One line per request: its (this rank's) seq_len, pages, indptr bounds, last_page_len, and
    which last_page_len rule it falls under (empty, full page, partial)."""
    return pd.DataFrame({"request": np.arange(len(local_seq)), "seq_len (this rank)": local_seq,
                         "pages": np.diff(indptr), "indptr[r]": indptr[:-1], "indptr[r+1]": indptr[1:],
                         "last_page_len": last_page_len,
                         "rule": ["empty" if s == 0 else ("full page" if s % page_size == 0 else "partial")
                                  for s in local_seq]})


def table_title(tr, v2: bool, window: tuple[int, int] | None, n_rows: int) -> str:
    """The 2D table figure's title (``tr``: the page's texts): V1's block table or V2's gathered
    input block table, the whole of it or a window of rows."""
    if window is None or tuple(window) == (0, n_rows):
        return tr("table_v2" if v2 else "table")
    return tr("table_window_v2" if v2 else "table_window", lo=window[0], hi=window[1] - 1, n=n_rows)


RULE_CHOICES = ("release", "now", "old")


def release_empty_is_zero(version: str) -> bool:
    """Whether vLLM ``version`` gives an empty request last_page_len 0 (#25438, v0.11.1 on)."""
    from kvviz.core.versions import rules_for

    return rules_for(version).empty_last_page_len_is_zero


def empty_is_zero(rule: str, version: str) -> bool:
    """The empty-request rule in effect: the release's (``"release"``), or an override: 0
    (``"now"``) or a full page (``"old"``)."""
    if rule == "release":
        return release_empty_is_zero(version)
    return rule != "old"
