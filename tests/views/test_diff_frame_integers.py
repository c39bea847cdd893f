"""The Debug dumps page's differences table keeps indices whole: a difference without a column (a
slot-mapping entry) or without a token used to turn the column into floats ("row 3.0", "token 19.0")."""
from pathlib import Path

from kvviz.dumps.diff import diff_dumps
from kvviz.dumps.format import load_dump
from kvviz.views import frames
from kvviz.views.dumps import diff_frame

ROOT = Path(__file__).resolve().parents[2]


def test_indices_stay_integers():
    a = load_dump(str(ROOT / "examples/dumps/clean.json"))
    b = load_dump(str(ROOT / "examples/dumps/commit_too_few_rows.json"))
    shown = frames.no_none(diff_frame(diff_dumps(a, b)))
    shown = shown.astype({c: str for c in shown.columns if shown[c].dtype == object})
    cells = [v for c in ("row", "col", "token", "index") for v in shown[c]]
    assert cells and all(v == "—" or v.lstrip("-").isdigit() for v in cells), cells
    slot_rows = shown[shown["table"] == "slot_mapping"]
    # commit_too_few_rows: D's row 3 reads block 0, so its tokens 19.. differ from the CPU table's
    assert list(slot_rows["row"])[:1] == ["3"] and list(slot_rows["token"])[:1] == ["19"]


def test_an_event_says_its_name_once():
    """Step through and Shared prefixes list events as `kind` + sentence: "gather: 3 state row(s) …"
    used to read "`gather` gather: …"."""
    from kvviz.views.report import describe_event, event_line
    text = describe_event({"kind": "gather", "rows": 3, "padded_rows": 1, "idx_mapping": [2, 1, 0]})
    assert text.startswith("gather")
    line = event_line("gather", text)
    assert line.count("gather") == 1 and line.startswith("- `gather`:")
    alloc = describe_event({"kind": "alloc", "req": "A", "blocks": [1, 2]})
    assert event_line("alloc", alloc) == f"- `alloc` {alloc}"
