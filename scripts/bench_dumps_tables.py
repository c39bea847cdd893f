"""Time the Debug dumps page's two table windows (issue 11): the window frames, their cell marks, the
styling and Streamlit's serialisation of each ``st.dataframe`` (what the server's script thread does
per rerun), on two ~2 MiB dumps that differ in one cell.

    .venv/bin/python scripts/bench_dumps_tables.py [--repeat N] [--page]

``--page`` also times whole reruns of the page (AppTest, the server's script thread without the
browser) with those two dumps pasted, before (the old windows patched in) and now.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from kvviz.dumps.format import Dump
from kvviz.views import dumps as view

ROWS, WIDTH = 256, 2048      # one int32 table = 2 MiB


def big_dump(seed: int) -> Dump:
    bt = np.arange(1, ROWS * WIDTH + 1, dtype=np.int32).reshape(ROWS, WIDTH)
    cnt = np.full(ROWS, WIDTH, dtype=np.int32)
    cnt[seed % ROWS] -= 1
    bt[seed % ROWS, WIDTH - 1] = 0
    dev = bt.copy()
    dev[5, 3] += 1                   # one stale cell
    return Dump(block_size=16, num_blocks=ROWS * WIDTH + 1, num_reqs=ROWS, block_table=bt, num_blocks_per_row=cnt,
                block_table_device=dev, num_reqs_padded=ROWS)


def serialise(data) -> int:
    """What ``st.dataframe(data)`` does to its argument in the server: the Styler (if any) marshalled,
    the frame converted to Arrow bytes. Returns the bytes sent."""
    from streamlit import dataframe_util
    from streamlit.elements.lib.pandas_styler_utils import marshall_styler
    from streamlit.proto.ArrowData_pb2 import ArrowData

    proto = ArrowData()
    if dataframe_util.is_pandas_styler(data):
        marshall_styler(proto, data, "bench")
    df = dataframe_util.convert_anything_to_pandas_df(data, ensure_copy=False)
    proto.data = dataframe_util.convert_pandas_df_to_arrow_bytes(df)
    return proto.ByteSize()


def old_window(frame, marks):
    """The page before issue 11's change: the whole shown part, every cell with an id (pandas' default)."""
    import pandas as pd

    def style(_):
        return pd.DataFrame([[""] + [view.MARK_STYLE.get(int(m), "") for m in row] for row in marks],
                            index=frame.index, columns=frame.columns)
    return frame.style.apply(style, axis=None)


def tables_only(dumps, found, all_rows: bool = False, old: bool = False) -> int:
    """The page's table windows section for two dumps (default: the focus window of WINDOW_ROWS rows;
    ``all_rows``: every shown row, as the toggle draws them)."""
    table = "block_table"
    size = view.shown_size([d for _, _, d in dumps], table)
    rows, cols = (None, None) if all_rows or not hasattr(view, "focus_window") else \
        view.focus_window(dumps, found, table, size)
    sent = 0
    for side, _, d in dumps:
        frame = view.table_frame(d, table, view.first_wrong_row(found[side]), size)
        marks = view.cell_marks(d, table, view.other_dump(dumps, side), size)
        sent += serialise(old_window(frame, marks) if old else view.window(frame, marks, rows, cols))
    return sent


def page_reruns(repeat: int) -> None:
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "pages"))
    from page_support import app_test, open_page

    texts = [json.dumps(big_dump(i).to_json()) for i in (0, 1)]
    real = view.window, view.focus_window

    def old_focus(dumps, found, table, size, *a, **k):
        return (0, size[0]), (0, size[1])
    for what, patch in (("before", True), ("now", False)):
        if patch:
            view.window = lambda frame, marks, rows=None, cols=None: old_window(frame, marks)
            view.focus_window = old_focus
        else:
            view.window, view.focus_window = real
        at = open_page(app_test(), "dumps")
        at.radio(key="dumps.source").set_value("upload").run()
        at.text_area(key="dumps.paste_a").input(texts[0]).run()
        at.text_area(key="dumps.paste_b").input(texts[1]).run()
        assert not at.exception and len(findings_tables := [t for t in at.table]) == 2, findings_tables
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - t0)
        print(f"page rerun with two {len(texts[0]) / 1e6:.1f} MB pasted dumps, {what}: median "
              f"{statistics.median(times) * 1e3:.0f} ms, min {min(times) * 1e3:.0f} ms over {repeat}")
    view.window, view.focus_window = real


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--page", action="store_true", help="also time whole page reruns (AppTest)")
    args = ap.parse_args()
    dumps = [("A", "a", big_dump(0)), ("B", "b", big_dump(1))]
    found = {s: view.check_dump(d) for s, _, d in dumps}
    size = view.shown_size([d for _, _, d in dumps], "block_table")
    for what, all_rows, old in (("before (whole part, Styler with every cell id)", True, True),
                                ("now, default window", False, False), ("now, whole part (toggle)", True, False)):
        tables_only(dumps, found, all_rows, old)             # warm up imports
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            sent = tables_only(dumps, found, all_rows, old)
            times.append(time.perf_counter() - t0)
        n, w = size if all_rows else (view.WINDOW_ROWS, view.WINDOW_COLS)
        print(f"{what}: two windows of {n}x{w + 1} cells: median "
              f"{statistics.median(times) * 1e3:.1f} ms, min {min(times) * 1e3:.1f} ms over {args.repeat}; "
              f"{sent / 1024:.0f} KiB serialised")
    if args.page:
        page_reruns(max(5, args.repeat // 2))


if __name__ == "__main__":
    main()
