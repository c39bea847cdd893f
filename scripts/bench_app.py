"""Server-side rerun time of every issue-4 page, measured with AppTest.

    .venv/bin/python scripts/bench_app.py [--repeats 7]

For each page: the first run after switching to it (cold for that page), then the
median of reruns at the default batch and after a widget change. The batch page is
also measured on the 256 requests x 2048-block preset (first build, then reruns and
a token change), and so is the FlashInfer CSR page on that batch (first run, reruns, a change of
the highlighted request). Prints a Markdown table for BENCHMARKS.md.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(ROOT / "app.py")
# page -> (widget kind, key, value) changed between measured reruns
PAGES = {
    "home": None,
    "batch": ("number_input", "batch.tok", 12),
    "step_through": ("slider", "step.idx", 3),
    "prefixes": ("slider", "pre.idx", 1),
    "csr": ("number_input", "csr.req", 2),
    "layout": ("text_input", "lay.byte", "104"),
    "pcie": ("number_input", "pcie.reqs", 256),
    "kernel_lab": None,
}


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def measure(at, page, change, repeats):
    first = timed(lambda: at.switch_page(f"pages/{page}.py").run())
    assert not at.exception, at.exception
    reruns = [timed(at.run) for _ in range(repeats)]
    widget = []
    if change:
        kind, key, value = change
        for i in range(repeats):
            w = getattr(at, kind)(key=key)
            w.set_value(value if i % 2 == 0 else {"slider": 1, "text_input": "0"}.get(kind, 0))
            widget.append(timed(at.run))
        assert not at.exception, at.exception
    return first, statistics.median(reruns), statistics.median(widget) if widget else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    at = AppTest.from_file(APP, default_timeout=300).run()
    rows = []
    for page, change in PAGES.items():
        first, rerun, widget = measure(at, page, change, args.repeats)
        rows.append((page, "default", first, rerun, widget))
    # the large batch: 256 requests x 2048-block tables
    at.switch_page("pages/batch.py").run()
    at.selectbox(key="batch.preset").set_value("big")
    build = timed(at.run)
    assert not at.exception, at.exception
    reruns = [timed(at.run) for _ in range(args.repeats)]
    tok = []
    for i in range(args.repeats):
        at.number_input(key="batch.tok").set_value(17 * (i + 1))
        tok.append(timed(at.run))
    rows.append(("batch", "256 req x 2048 blocks", build, statistics.median(reruns), statistics.median(tok)))
    # the FlashInfer CSR page on that batch (its repack check waits for a button on the CPU interpreter)
    first, rerun, widget = measure(at, "csr", ("number_input", "csr.req", 200), args.repeats)
    rows.append(("csr", "256 req x 2048 blocks", first, rerun, widget))

    print("| page | batch | first run (ms) | rerun, median (ms) | widget change, median (ms) |")
    print("|---|---|---:|---:|---:|")
    for page, batch, first, rerun, widget in rows:
        w = "—" if widget is None else f"{widget:.0f}"
        print(f"| {page} | {batch} | {first:.0f} | {rerun:.0f} | {w} |")


if __name__ == "__main__":
    main()
