"""AppTest: the notations page shows the six notations of one batch, the picked token
highlighted in each, in every language and at every page size."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kvviz.notations import models as nt
from kvviz.texts.i18n import LANGS, t

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "notations.py")


def _page(lang="en") -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["lang"] = lang
    at.run()
    assert not at.exception
    return at


def _prose(at) -> list:
    """The page's markdown other than the arrays' tables (each one markdown table)."""
    return [m for m in at.markdown if not m.value.startswith("| |")]


def _slot_in_answer(at) -> int:
    return int(at.success[0].value.split("**")[1])


@pytest.mark.parametrize("lang", list(LANGS))
def test_six_notations_side_by_side(lang):
    at = _page(lang)
    assert at.title[0].value == t("notations", "title", lang)
    subheads = [s.value for s in at.subheader]
    for label, _, _ in nt.NOTATIONS.values():
        assert label in subheads
    assert not at.warning                                  # every notation holds the batch
    c = nt.example_batch()
    assert _slot_in_answer(at) == c.address(1, 255)
    lookups = [m.value for m in _prose(at) if f"**{c.address(1, 255)}**" in m.value]
    assert len(lookups) == 6                              # each notation's arithmetic lands there
    rt = at.dataframe[-1].value
    assert (rt.to_numpy() == 0).all() and rt.shape == (6, 6)


def test_pick_a_token_and_a_page_size():
    at = _page("en")
    c = nt.example_batch()
    at.selectbox(key="notations_req").set_value("C").run()
    assert not at.exception
    at.number_input(key="notations_pos").set_value(17).run()
    assert _slot_in_answer(at) == c.address(2, 17)
    for ps in (32, 64, 128):
        at.segmented_control(key="notations_page_size").set_value(ps).run()
        assert not at.exception and not at.warning
        assert _slot_in_answer(at) == c.address(2, 17)
        assert len([m for m in _prose(at) if f"**{c.address(2, 17)}**" in m.value]) == 6
    at.selectbox(key="notations_req").set_value("A").run()     # A is longer: position stays valid
    at.number_input(key="notations_pos").set_value(300).run()
    assert not at.exception and _slot_in_answer(at) == c.address(0, 300)


ENGLISH = ["cell with pos", "its page", "= block ", "runs over", "-token pages", " of 1024", "(dummy)",
           "row 0", "cell 3", "run 0", "positions"]


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_no_english_labels_left(lang):
    """The lookup lines, the array captions and the table labels follow the language (array and
    field names stay as the engines spell them)."""
    at = _page(lang)
    for req, pos in (("B", 255), ("C", 17), ("A", 0)):
        at.selectbox(key="notations_req").set_value(req).run()
        at.number_input(key="notations_pos").set_value(pos).run()
        assert not at.exception
        for ps in (16, 128):
            at.segmented_control(key="notations_page_size").set_value(ps).run()
            shown = [m.value for m in at.markdown] + [c.value for c in at.caption]
            for df in at.dataframe:
                shown += [str(x) for x in df.value.index] + [str(x) for x in df.value.columns]
            text = "\n".join(shown)
            for en in ENGLISH:
                assert en not in text, (lang, req, pos, ps, en)
            lookups = [m.value for m in _prose(at) if t("notations", "lookup", lang) in m.value]
            assert len(lookups) == 6
            rt = at.dataframe[-1].value                          # the round-trip table's axes
            assert (rt.index.name, rt.columns.name) == (t("notations", "v.from", lang),
                                                        t("notations", "v.to", lang))


def _llama_note(at, lang) -> str:
    """The llama.cpp card's line with the cells the batch takes."""
    heads = [t("notations", k, lang).split("{")[0] for k in ("v.llama_used_streams", "v.llama_used_unified")]
    notes = [c.value for c in at.caption if c.value.startswith(tuple(heads))]
    assert len(notes) == 1, notes
    return notes[0]


def _cells(note: str) -> int:
    import re
    return int(re.search(r"\d+", note).group())


@pytest.mark.parametrize("lang", list(LANGS))
def test_llamacpp_kv_unified_toggle(lang):
    """llama.cpp shows one stream per sequence by default (kv_unified = false, as in llama.cpp);
    the toggle switches to the unified cache, whose shared prefix is stored once."""
    at = _page(lang)
    c = nt.example_batch()
    lens = [r.seq_len for r in c.requests]
    toggle = at.toggle(key="notations_kv_unified")
    assert toggle.label == t("notations", "kv_unified", lang) and toggle.value is False
    captions = [x.value for x in at.caption]
    assert t("notations", "d_llamacpp", lang) in captions
    assert t("notations", "d_llamacpp_unified", lang) not in captions
    streams = _llama_note(at, lang)
    assert _cells(streams) == sum(lens)                         # the shared prefix in each stream
    assert " + ".join(map(str, lens)) in streams

    toggle.set_value(True).run()
    assert not at.exception and not at.warning
    captions = [x.value for x in at.caption]
    assert t("notations", "d_llamacpp_unified", lang) in captions
    assert _cells(_llama_note(at, lang)) == sum(lens) - 256       # stored once: smaller
    assert _slot_in_answer(at) == c.address(1, 255)
    assert len([m for m in _prose(at) if f"**{c.address(1, 255)}**" in m.value]) == 6
    assert (at.dataframe[-1].value.to_numpy() == 0).all()        # round trips still exact

    at.toggle(key="notations_kv_unified").set_value(False).run()
    assert not at.exception and _cells(_llama_note(at, lang)) == sum(lens)


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_llamacpp_layouts_have_no_english_left(lang):
    at = _page(lang)
    for unified in (False, True):
        at.toggle(key="notations_kv_unified").set_value(unified).run()
        assert not at.exception
        shown = [m.value for m in at.markdown] + [c.value for c in at.caption]
        shown.append(at.toggle(key="notations_kv_unified").label)
        for df in at.dataframe:
            shown += [str(x) for x in df.value.index] + [str(x) for x in df.value.columns]
        text = "\n".join(shown)
        for en in ENGLISH + ["stream ", "Cells in use", "cells in use", "unified KV cache", "copies",
                             "its cell", "holds the K/V", "in each stream"]:
            assert en not in text, (lang, unified, en)


def test_the_token_is_marked_in_the_tables():
    """The chosen token's cells are highlighted in the arrays' tables (one markdown table each): the
    vLLM slot_mapping cell holds its slot; every mark is a number."""
    from kvviz.views.notations import marked_cells

    at = _page("en")
    c = nt.example_batch()
    for req, pos in (("B", 255), ("C", 17)):
        at.selectbox(key="notations_req").set_value(req).run()
        at.number_input(key="notations_pos").set_value(pos).run()
        tables = [m.value for m in at.markdown if m.value.startswith("| |")]
        assert not at.exception and len(tables) >= 10
        marks = [v for text in tables for v in marked_cells(text)]
        ans = c.address(["A", "B", "C"].index(req), pos)
        assert str(ans) in marks, (req, pos, marks)
        assert all(m.lstrip("-").isdigit() for m in marks) and 6 <= len(marks) <= 30
