"""Kernel lab's results tables (issue 12): the picked kernel's main columns in one table that fits
the page, its other measured columns in a second one on demand; the file's goals and kvviz's own
notes in the page's language."""
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
    # the file's goals: one line each, read back into Spanish, marked met / not met (orange: a target, not an error)
    from kvviz.texts.i18n import t
    from kvviz.views.bench_goals import figure_text, goal_text

    goals = [m.value for m in at.markdown if m.value.startswith((":green[**cumplido**]", ":orange[**no cumplido**]"))]
    assert len(goals) == len(rec["goals"])
    assert all(m == (":green[**cumplido**]" if g["met"] else ":orange[**no cumplido**]") + " · "
               + goal_text(g["goal"], "es") + " — " + figure_text(g["figure"], "es") for g, m in zip(rec["goals"], goals))
    assert not any(g["goal"] in m for g, m in zip(rec["goals"], goals))            # no recorded English left
    assert t("kernel_lab", "note.gpu", "es") in [c.value for c in at.caption]      # kvviz's own note, translated



def test_gbps_of_a_few_bytes_is_a_dash_with_its_reason_and_torch_explained():
    """A 1x1 slot mapping moves 20 bytes: its recorded GB/s (0.0) is shown "—", a caption says why;
    rows of 4 KiB and more keep their figure. Why torch is slow at 1x1 is said under the table."""
    from kvviz.texts.i18n import t
    from kvviz.views.frames import GBPS_MIN_BYTES

    at = open_page(app_test(lang="en"), "kernel_lab")
    assert at.selectbox(key="lab.recorded").value == "h200-2026-11-30"
    (main,) = [d.value for d in at.dataframe]
    rec = json.loads((ROOT / "examples/bench/h200-2026-11-30.json").read_text())
    rows = [r for r in rec["rows"] if r["kernel"] == "slot_mapping"]
    small = [r["bytes"] < GBPS_MIN_BYTES for r in rows]
    assert any(small) and not all(small)
    shown = main["gbps"].tolist()
    assert [v for v, s in zip(shown, small) if s] == ["—"] * sum(small)      # 1x1: "—", never "0.0"
    assert [float(v) for v, s in zip(shown, small) if not s] == [r["gbps"] for r, s in zip(rows, small) if not s]
    captions = [c.value for c in at.caption]
    assert t("kernel_lab", "gbps_small", "en", n=GBPS_MIN_BYTES) in captions
    note = t("kernel_lab", "torch_note", "en")
    assert note in captions and "slot_mapping_torch" in note and "CUDA graph" in note
    torch_1x1 = next(r for r in rows if r["variant"] == "torch" and r["shape"] == "1x1")
    assert f"{torch_1x1['us']:.0f} µs" in note and f"{torch_1x1['graph_us']:.0f} µs" in note   # the run's own figures
    at.segmented_control(key="lab.kernel").set_value("kv_write").run()   # no small rows, no torch: no captions
    assert t("kernel_lab", "gbps_small", "en", n=GBPS_MIN_BYTES) not in [c.value for c in at.caption]
    assert note not in [c.value for c in at.caption]
