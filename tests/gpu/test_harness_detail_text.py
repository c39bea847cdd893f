"""The kernels' check details in zh / es (issue 12): every phrase the harness writes is rebuilt in
the language asked for; numbers, identifiers and the first differences stay as they are; English
stays the harness's own text (the CLI and the JSON keep it)."""
import re

import numpy as np
import pytest

from kvviz.gpu import harness
from kvviz.gpu.harness import BackendResult, KernelResult, _close, _exact, detail_text
from kvviz.texts.i18n import LANGS

# English stop words of the browser sweep's half-translation check, minus what details keep
STOP = re.compile(r"\b(entries|identical|of|differ|vs|dense|attention|from|slots lie|outside|were|not|written|"
                  r"requests|heads|over|cached|left|alone|cache bytes|quantised|reference|shape)\b")


def _details() -> list[str]:
    a = np.arange(12, dtype=np.int64)
    b = a.copy()
    b[[2, 7]] = -1
    f = np.linspace(0, 1, 8)
    out = [_exact("slot_mapping", a, a, "12 slots").detail,
           _exact("slot_mapping", b, a, "12 slots").detail,
           _exact("csr", a[:3], a, "paged_kv_indptr").detail,
           _exact("csr", a, a, "entries past indptr[-1] left alone").detail,
           _close("paged_decode[csr]", f, f, None, "4 requests x 8 heads over 96 cached tokens").detail,
           _close("paged_decode[csr]", f + 1, f, None, "4 requests x 8 heads over 96 cached tokens").detail]
    kv = _exact("kv_write", a, a, "cache bytes (NHD, fp8, quantised by torch first: the interpreter's e4m3 cast is "
                                  "inexact, its kernel copies the bytes)")
    kv.detail += "; slots from flat (auto) [the slot mapping it used (flat) was wrong] [3 of its slots lie outside " \
                 "the cache and were not written]"
    out.append(kv.detail)
    out.append(_exact("kv_write", a, a, "cache bytes (HND, float16)").detail + "; slots from grid2d")
    return out


def test_english_is_the_harness_text():
    for d in _details():
        assert detail_text(d, "en") == d


@pytest.mark.parametrize("lang", [x for x in LANGS if x != "en"])
def test_every_phrase_is_translated(lang):
    for d in _details():
        out = detail_text(d, lang)
        assert out != d
        assert not STOP.search(out), (lang, d, out)
        # the numbers of the detail are all still there (a language may order them its own way)
        assert sorted(re.findall(r"\d+(?:\.\d+)?", d)) == sorted(re.findall(r"\d+(?:\.\d+)?", out)), (d, out)
    d = _exact("slot_mapping", np.array([1, 5]), np.array([1, 2]), "2 slots").detail
    assert "[1] 5 != 2" in detail_text(d, lang)                     # the first differences as they are


def test_rows_carry_the_language_and_unknown_phrases_stay():
    res = BackendResult(label={}, kernels={"x": KernelResult("x", True, 0.0, "3 slots: 3 entries identical")})
    assert res.rows()[0]["detail"] == "3 slots: 3 entries identical"
    assert res.rows("es")[0]["detail"] == "3 slots: 3 entradas idénticas"
    assert res.rows("zh")[0]["detail"] == "3 个槽位：3 项完全一致"
    assert detail_text("something new; 3 slots: 3 entries identical", "es") == "something new; 3 slots: 3 entradas idénticas"
    assert harness.detail_text("", "zh") == ""
