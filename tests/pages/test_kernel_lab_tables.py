"""Kernel lab's results tables (issue 12): the picked kernel's main columns in one table that fits
the page, its other measured columns in a second one on demand; the file's own note and goals shown
as code spans (its words, not the page's, never read as markdown)."""
import json
from pathlib import Path

from page_support import app_test, open_page

ROOT = Path(__file__).resolve().parents[2]


def test_main_and_other_columns_of_the_picked_kernel():
    at = open_page(app_test(lang="es"), "kernel_lab")
    rec = json.loads((ROOT / "examples/bench" / f"{at.selectbox(key='lab.recorded').value}.json").read_text())
    (main,) = [d.value for d in at.dataframe]
    rows = [r for r in rec["rows"] if r["kernel"] == "slot_mapping"]
    assert len(main) == len(rows) and "kernel" not in main.columns
    assert list(main.columns[:3]) == ["variant", "shape", "us"] and len(main.columns) <= 9
    assert main["us"].tolist() == [r["us"] for r in rows]
    assert not main.isna().any().any()
    at.toggle(key="lab.more_columns").set_value(True).run()
    assert not at.exception
    main2, rest = [d.value for d in at.dataframe]
    measured = {k for r in rows for k, v in r.items() if v is not None}
    assert set(main2.columns) | set(rest.columns) == measured - {"kernel"}
    assert set(rest.columns) & set(main2.columns) == {"variant", "shape"}
    # the file's goals: one line each, the recorded English in code spans, marked met / not met in Spanish
    goals = [m.value for m in at.markdown if m.value.startswith((":green[**cumplido**]", ":red[**no cumplido**]"))]
    assert len(goals) == len(rec["goals"])
    assert all(f"`{g['goal']}`" in m and f"`{g['figure']}`" in m for g, m in zip(rec["goals"], goals))
    assert any(c.value == f"`{rec['note']}`" for c in at.caption)

