"""``frames.static_columns`` and ``frames.markdown_table``: what ``ui.table`` draws (headers translated,
text kept as text, nothing "None", numbers still numbers, one line per row)."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from kvviz.views.frames import MISSING, static_columns
from kvviz.views.safe_text import plain


def static_table(data, labels=None):
    out = static_columns(data, labels)
    return pd.DataFrame(out, columns=list(out))


def test_headers_go_through_the_labels_and_unknown_keys_keep_their_name():
    out = static_table([{"row": 0, "request": "A", "seq_len": 7}], {"row": "请求行", "request": "请求"})
    assert list(out.columns) == ["请求行", "请求", "seq_len"]
    assert out.iloc[0].tolist() == [0, "A", 7] and out["请求行"].dtype.kind == "i"


def test_markup_in_cells_and_headers_is_escaped():
    raw = ["![](//h/i.png)", "**b**", "<b>x</b>"]
    out = static_table(pd.DataFrame({"[x](http://e)": raw}))
    assert out.columns[0] == plain("[x](http://e)") and out.columns[0].startswith(r"\[x\]\(")
    assert out.iloc[:, 0].tolist() == [plain(v) for v in raw]
    assert out.iloc[1, 0] == r"\*\*b\*\*" and out.iloc[2, 0].startswith(r"\<b\>")


def test_missing_cells_read_a_dash_and_numbers_beside_them_become_text():
    out = static_table(pd.DataFrame({"a": [1.5, np.nan], "b": [None, "x"], "c": [3, 4]}))
    assert out["a"].tolist() == ["1.5", MISSING] and out["b"].tolist() == [MISSING, "x"]
    assert out["c"].tolist() == [3, 4]


def test_whole_numbers_upcast_by_a_missing_cell_stay_whole():
    """A request-state index is missing for a finished request: pandas makes the column float, and
    Step through's requests table read "2.0" beside "—"; a column with a real fraction keeps it."""
    df = pd.DataFrame([{"request": "A", "state index": None}, {"request": "B", "state index": 2},
                       {"request": "C", "state index": 10**12}])
    assert df["state index"].dtype.kind == "f"
    assert static_table(df)["state index"].tolist() == [MISSING, "2", str(10**12)]
    assert static_table(pd.DataFrame({"x": [0.5, 2.0, None]}))["x"].tolist() == ["0.5", "2.0", MISSING]


def test_two_keys_with_one_header_are_refused():
    with pytest.raises(ValueError):
        static_table([{"a": 1, "b": 2}], {"a": "x", "b": "x"})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-10**12, 10**12), st.text(max_size=12)), min_size=1, max_size=8))
def test_random_rows_keep_their_shape_values_and_order(rows):
    df = pd.DataFrame(rows, columns=["n", "s"])
    out = static_table(df, {"n": "N"})
    assert out.shape == df.shape and out["N"].tolist() == df["n"].tolist()
    for raw, shown in zip(df["s"], out["s"]):      # only backslashes were added (one line)
        assert shown.replace("\\", "") == " ".join(raw.splitlines()).replace("\\", "")


def test_markdown_table_rows_alignment_and_escaping():
    from kvviz.views.frames import markdown_table

    text = markdown_table([{"row": np.int64(0), "request": "A|B", "blocks": "1 2"},
                           {"row": 1, "request": "[x](http://e)", "blocks": None}], {"row": "行"})
    lines = text.splitlines()
    assert lines[0] == "| 行 | request | blocks |" and lines[1] == "|---:|---|---|"
    assert lines[2] == r"| 0 | A\|B | 1 2 |"
    assert lines[3] == "| 1 | " + plain("[x](http://e)") + " | " + MISSING + " |"
    assert "](" not in text and len(lines) == 4


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-10**12, 10**12), st.text(max_size=12)), min_size=1, max_size=8))
def test_markdown_table_keeps_one_line_per_row_and_every_cell(rows):
    """Whatever the text (pipes, newlines, markup), a row stays one line of the same number of
    cells: no cell can open another."""
    import re

    from kvviz.views.frames import markdown_table

    lines = markdown_table(pd.DataFrame(rows, columns=["n", "s"])).splitlines()
    assert len(lines) == 2 + len(rows)
    for line, (n, _) in zip(lines[2:], rows):
        cells = re.split(r"(?<!\\)\|", line)[1:-1]
        assert len(cells) == 2 and cells[0].strip() == str(n)


def test_fits_static_bounds_rows_and_text():
    from kvviz.views.frames import STATIC_MAX_CHARS, STATIC_MAX_ROWS, fits_static

    small = pd.DataFrame({"row": range(STATIC_MAX_ROWS), "blocks": ["1 2 3"] * STATIC_MAX_ROWS})
    assert fits_static(small)
    assert not fits_static(pd.concat([small, small.iloc[:1]]))                  # one row too many
    # a few requests whose block ids run long: a grid (it scrolls), not a page-long markdown cell
    long_ids = " ".join(map(str, range(2000)))
    assert len(long_ids) > STATIC_MAX_CHARS and not fits_static(pd.DataFrame({"row": [0, 1], "blocks": [long_ids, "1"]}))
    # numbers do not count as text, whatever their width
    assert fits_static(pd.DataFrame({"slot": np.full(STATIC_MAX_ROWS, 10 ** 15)}))
