"""Integers read as integers in every table of every page (issue 25): a whole number is never
shown "20.0" - the way pandas turns an int column holding a missing cell into floats. Every page in
its default state, the kernel lab on each recorded run and kernel, the batch explorer on every
preset; the dataframes (glide grids) and the small markdown tables alike.

What is checked: the value the table holds for each cell. A grid draws a float column through a
number format (a whole 20.0 reads "20", 5.47 reads "5.47"), so a float *column* is fine; what
reads "20.0" is a number held as text, or a float held in an object column (``no_none`` filling
the missing cells with "—"): those are the findings."""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from page_support import frames, open_page
from ui import PAGES

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"^-?\d+(\.\d+)?$")   # (a hex hash "096131e7" is text)
PAGE_NAMES = [path.split("/")[-1].removesuffix(".py") for path, _, _ in PAGES]


def whole_floats(df: pd.DataFrame) -> list[str]:
    """The columns of ``df`` that show whole numbers as "N.0": every number in the column whole,
    held as text "20.0" or as floats in a column of mixed objects (a missing cell's "—"). A column
    of one float dtype is drawn through a number format; a column with a fraction anywhere ("29.0",
    "31.4": a measurement written to one decimal) is a decimal column, meant."""
    bad = []
    for col in df.columns:
        s = df[col]
        if pd.api.types.is_float_dtype(s):
            continue
        nums = []
        for v in s.tolist():
            if isinstance(v, str) and NUMBER.match(v.strip()):
                nums.append((v, "." in v, float(v)))
            elif isinstance(v, (float, np.floating)) and v == v:
                nums.append((v, True, float(v)))
        shown_float = [v for v, dotted, x in nums if dotted]
        if shown_float and all(x.is_integer() for _, _, x in nums):
            bad.append(f"{col}: {shown_float[:3]!r}")
    return bad


def test_whole_floats_found():
    """The check itself: a NaN-filled int column before and after ``frames.no_none``."""
    from kvviz.views.frames import no_none

    raw = pd.DataFrame({"bytes": [20, None, 5184], "us": [5.47, None, 7.0], "name": ["a", "b", "c"]})
    assert whole_floats(raw.astype(object).where(raw.notna(), "—")) == ["bytes: [20.0, 5184.0]"]
    shown = no_none(raw)
    # a column with a missing cell is text throughout (Arrow takes no mix of text and numbers)
    assert list(shown["bytes"]) == ["20", "—", "5184"] and list(shown["us"]) == ["5.47", "—", "7.0"]
    assert list(shown["name"]) == ["a", "b", "c"] and whole_floats(shown) == []
    import pyarrow as pa

    pa.Table.from_pandas(shown)           # travels to the browser as it is
    assert whole_floats(pd.DataFrame({"n": ["3", "4.0"], "t": ["29.0", "31.4"]})) == ["n: ['4.0']"]


def _check(at, where):
    bad = [f"{where} table {i}: {b}" for i, df in enumerate(frames(at)) for b in whole_floats(df)]
    return bad


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_every_page_default_tables_integers(at, page):
    open_page(at, page)
    assert _check(at, page) == []


def test_kernel_lab_every_run_and_kernel(at):
    from kvviz.gpu.bench import results

    open_page(at, "kernel_lab")
    bad = []
    for run in results.example_runs():
        at.selectbox(key="lab.recorded").set_value(run).run()
        for kernel in at.segmented_control(key="lab.kernel").options:
            at.segmented_control(key="lab.kernel").set_value(kernel).run()
            at.toggle(key="lab.more_columns").set_value(True).run()
            assert not at.exception
            assert len(at.dataframe) == 2
            bad += _check(at, f"kernel_lab {run} {kernel}")
    assert bad == []


def test_prefixes_every_step(at):
    """Every built-in scenario's every step on Shared prefixes."""
    from kvviz.views import scenarios as stepper

    open_page(at, "prefixes")
    bad = []
    for sc in stepper.NAMES:
        at.selectbox(key="pre.sc").set_value(sc).run()
        for i in range(len(at.select_slider(key="pre.idx").options)):
            at.select_slider(key="pre.idx").set_value(i).run()
            assert not at.exception
            bad += _check(at, f"prefixes {sc} step {i}")
    assert bad == []


def test_hash_chain_uncached_blocks_stay_integers():
    """The hash-chain table mixes cached blocks with a waiting request's prompt blocks, not cached
    yet (no physical block, no step, no ref count): those missing cells made the other rows' block
    numbers floats, and the page showed "1.0", "0.0". The page's table is ``no_none`` of the frame."""
    import json

    from kvviz.views import scenarios as stepper
    from kvviz.views.frames import no_none

    text = json.dumps({"config": {"num_blocks": 5, "block_size": 4, "enable_prefix_caching": True},
                       "requests": [{"id": "A", "prompt_len": 12, "max_tokens": 4},
                                    {"id": "B", "prompt_len": 12, "max_tokens": 2}]})
    sc = stepper.load(text)
    chain = stepper.hash_chain_frame(sc, stepper.replay(sc), 0)
    assert chain["physical block"].isna().any() and chain["physical block"].notna().any()   # the case
    assert whole_floats(chain.astype(object).where(chain.notna(), "—")) != []                  # the old way
    shown = no_none(chain)
    assert whole_floats(shown) == []
    assert list(shown["physical block"]) == ["1", "2", "3", "—", "—", "—"]
    page = (ROOT / "pages" / "prefixes.py").read_text(encoding="utf-8")
    assert "st.dataframe(frames.no_none(shown_chain)" in page


@pytest.mark.parametrize("preset", ["decode", "prefix", "kernel", "dcp"])
def test_batch_presets(at, preset):
    open_page(at, "batch")
    at.selectbox(key="batch.preset").set_value(preset).run()
    assert not at.exception
    assert _check(at, f"batch {preset}") == []
