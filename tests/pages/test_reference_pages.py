"""The reference pages (CSR, Notations, Kernel lab, Debug dumps): one colour rule on CSR, every
figure saying what its colour encodes, and no English left over on a zh or es page."""
import functools
import re

import numpy as np
import pytest

from kvviz.texts.i18n import t
from page_support import app_test, chart_figures, open_page, plotly_array


def _lpl_traces(fig: dict) -> list[dict]:
    """The CSR figure's last_page_len strip (its third row of subplots)."""
    return [d for d in fig["data"] if d.get("yaxis") == "y3"]


def test_csr_empty_rows_are_grey_in_the_table_and_in_last_page_len():
    at = open_page(app_test(lang="en"), "csr")
    at.number_input(key="csr.empty").set_value(3).run()
    assert not at.exception
    table, csr = chart_figures(at)[:2]
    n = len(plotly_array(_lpl_traces(csr)[0]["x"]))
    colour, grey = _lpl_traces(csr)
    assert grey["colorscale"] == [[0, "#e6e6e6"], [1, "#e6e6e6"]]
    z_grey = np.array(plotly_array(grey["z"][0]), dtype=float)
    z_colour = np.array(plotly_array(colour["z"][0]), dtype=float)
    assert list(np.flatnonzero(~np.isnan(z_grey))) == [n - 3, n - 2, n - 1]      # the three padding rows
    assert not np.isnan(z_colour[:n - 3]).any() and np.isnan(z_colour[n - 3:]).all()
    # the table's padding rows hold the null block, grey in its colour scale too
    heat = table["data"][0]
    rows = np.array(plotly_array(heat["z"])).reshape([int(k) for k in heat["z"]["shape"].split(",")])
    assert (rows[-3:] == 0).all() and heat["colorscale"][0][1] == "#e6e6e6"
    assert t("csr", "colours", "en") in [c.value for c in at.caption]


def test_notations_says_what_its_one_colour_encodes():
    at = app_test("notations", lang="zh")
    assert t("notations", "marks", "zh") in [c.value for c in at.caption]


# --- no English left over on a zh / es page ------------------------------------------------------------

WORD = re.compile(r"[A-Za-z]{3,}")


def _shown(at) -> list[str]:
    """Every string the page shows: prose, callouts, headings, widget labels and options, expanders."""
    out = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "success", "error", "warning"):
        out += [e.value for e in at.get(kind)]
    for kind in ("selectbox", "number_input", "segmented_control", "toggle", "radio", "button", "text_area",
                 "expander", "tabs"):
        for w in at.get(kind):
            out.append(getattr(w, "label", ""))
            out += [str(o) for o in getattr(w, "options", []) or []]
    return [s for s in out if s]


def _words(text: str) -> list[str]:
    """English-looking words of ``text`` outside code spans, links, identifiers (a_b, a.b, CamelCase
    with a digit) and markup."""
    text = re.sub(r"`[^`]*`|https?://\S+|:material/\w+:|:\w+\[|\{[^}]*\}", " ", text)
    text = re.sub(r"\b\w*[_\d]\w*\b|\b\w+(?:\.\w+)+\b", " ", text)
    return WORD.findall(text)


def _leftovers(en: list[str], other: list[str]) -> list[str]:
    """Strings shown the same in English and in the other language that read as English prose
    (three words or more outside code and identifiers)."""
    same = set(en) & set(other)
    return sorted(s for s in same if len(_words(s)) >= 3)


PAGES = {
    "csr": lambda at: at.number_input(key="csr.empty").set_value(2).run(),
    "notations": lambda at: at,
    "kernel_lab": lambda at: at,                 # the recorded H200 run: its 25 goals (folded, still rendered)
    "dumps": lambda at: at.radio(key="dumps.source").set_value("bug").run(),
}


def _shown_in(page: str, lang: str) -> list[str]:
    at = open_page(app_test(lang=lang), page)
    PAGES[page](at)
    assert not at.exception
    return _shown(at)


@functools.lru_cache(maxsize=None)
def _shown_en(page: str) -> list[str]:   # once per page for both languages (in one worker)
    return _shown_in(page, "en")


@pytest.mark.parametrize("page", list(PAGES))
@pytest.mark.parametrize("lang", ["zh", "es"])
def test_no_english_left_over(page, lang):
    shown = {"en": _shown_en(page), lang: _shown_in(page, lang)}
    assert len(shown[lang]) > 10
    assert _leftovers(shown["en"], shown[lang]) == []
    # English prose shown "as recorded" in a code span, the same in both languages, is left over too
    spans = [{c for x in shown[code] for c in re.findall(r"`([^`]*)`", x)} for code in ("en", lang)]
    assert [c for c in spans[0] & spans[1] if len(re.findall(r"(?<![\w-])[A-Za-z]{3,}(?![\w-])", c)) >= 5] == []
    if lang == "zh":   # what the page writes around its texts keeps full-width punctuation too
        from kvviz.texts.punctuation import ascii_punctuation

        bare = {x: re.sub(r":material/\w+:\s*", "", x) for x in shown["zh"]}   # an icon's markup
        assert {x: ascii_punctuation(b) for x, b in bare.items() if ascii_punctuation(b)} == {}
    if lang == "zh":   # a zh string with a run of English prose in it
        assert [s for s in shown["zh"] if re.search(r"(?:\b[A-Za-z]{3,}\b[ ,]+){4}", re.sub(r"`[^`]*`", " ", s))
                and len(_words(s)) >= 4] == []


def test_the_leftover_rule_catches_english_prose_and_spares_identifiers():
    assert _leftovers(["Press the button to run it", "paged_kv_indptr", "CSR (FlashInfer)", "`a b c d e`"],
                      ["Press the button to run it", "paged_kv_indptr", "CSR (FlashInfer)", "`a b c d e`"]) == [
        "Press the button to run it"]
    assert _words("`slot mapping within 1.5x` kv_indptr[r] block_table v0.34.0 Model") == ["Model"]
