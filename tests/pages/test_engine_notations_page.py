"""AppTest: the Notations page's part from the engines' own code: SGLang's recorded arrays, the
model's verdict, where vLLM and SGLang keep the picked token, in every language."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kvviz.notations import engine_examples as ex
from kvviz.notations import models as nt
from kvviz.texts.i18n import LANGS, t

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "notations.py")


def _page(lang="en") -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["lang"] = lang
    at.run()
    assert not at.exception
    return at


def _frame(at, header_key, lang):
    cols = t("notations", header_key, lang).split("|")
    return next(df.value for df in at.dataframe if list(df.value.columns) == cols)


@pytest.mark.parametrize("lang", list(LANGS))
def test_sglang_own_arrays_beside_kvviz(lang):
    at = _page(lang)
    assert t("notations", "e.title", lang) in [s.value for s in at.subheader]
    rows = _frame(at, "e.cols", lang)
    got = {r[0]: r[1:] for r in rows.values.tolist()}
    assert got["B"][0] == "1" and got["B"][1] == "16–271, 320–333" and got["B"][4] == "256"   # page 16
    assert got["A"][2] == t("notations", "e.decode", lang) and got["A"][3] == "316"
    assert any(s.value == t("notations", "e.equal", lang, ps=16) for s in at.success)
    place = _frame(at, "e.place_cols", lang)
    assert place.values.tolist()[1][1:3] == ["128–383, 512–525", "16–271, 320–333"]
    rec = ex.recorded("sglang")
    row_b = rec["runs"][1]["steps"][1]["req_to_token"]["B"]
    c = nt.example_batch()
    assert any(f"**{c.address(1, 255)}**" in i.value and f"**{row_b[255]}**" in i.value for i in at.info)
    captions = [c.value for c in at.caption]
    assert sum(t("notations", "e.checked", lang, what="").rstrip() in c for c in captions) == 6


def test_page_size_one_and_another_token():
    at = _page("en")
    at.segmented_control(key="notations_sglang_ps").set_value(1).run()
    assert not at.exception
    got = {r[0]: r[1:] for r in _frame(at, "e.cols", "en").values.tolist()}
    assert got["B"][1] == "1–256, 301–314" and got["C"][3] == "315–354"
    notes = "\n".join(m.value for m in at.markdown)
    assert "never hands out slot 0" in notes and "matched 256 tokens" in notes
    at.selectbox(key="notations_req").set_value("C").run()
    at.number_input(key="notations_pos").set_value(3).run()
    info = [i.value for i in at.info if "Token 3 of C" in i.value]
    assert info and "**643**" in info[0] and "**318**" in info[0]


@pytest.mark.parametrize("lang", list(LANGS))
def test_llamacpp_own_cells_in_both_layouts(lang):
    from kvviz.notations.llamacpp_cells import recorded_example

    at = _page(lang)
    rec = recorded_example()
    streams = [g["strip"] for g in next(s for s in rec["streams"]["steps"] if s["index"] == 1)["streams"]]
    codes = [c.value for c in at.code]
    assert all(s in codes for s in streams)                 # llama.cpp's own strips, one per stream
    assert any(s.value == t("notations", "e.llama_equal", lang) for s in at.success)
    rows = {r[0]: r[1:] for r in _frame(at, "e.llama_cols", lang).values.tolist()}
    assert rows["B"] == ["1", "1: 0–269", "0–269", "128–383, 512–525"]
    at.toggle(key="notations_kv_unified").set_value(True).run()
    assert not at.exception
    strip = next(s for s in rec["unified"]["steps"] if s["index"] == 1)["streams"][0]["strip"]
    assert strip in [c.value for c in at.code] and strip.startswith("M" * 256)
    rows = {r[0]: r[1:] for r in _frame(at, "e.llama_cols", lang).values.tolist()}
    assert rows["A"][1] == "0–300"                              # A's prompt, then its decode token next
    assert rows["B"][1] == "0–255, 301–314"                     # the shared prefix's cells, then B's own
