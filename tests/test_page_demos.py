"""AppTest: every demo plays to its end and back in each language, presenter mode included,
and a link to a step restores it (links are untrusted: bad values fall back safely)."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kvviz import demos
from kvviz.demo_views import screens_for
from kvviz.i18n import LANGS, t

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
PAGE = str(ROOT / "pages" / "demos.py")


def _page(lang: str, **query) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["lang"] = lang
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    return at


def _click(at, key):
    at.button(key=key).click().run()
    assert not at.exception


def _narrative_shown(at, key, step, lang):
    text = t("demos", f"{key}.step{step}", lang)
    shown = [m.value for m in at.markdown] + [m.value for m in at.info]
    assert text in shown, (key, step, lang)


@pytest.mark.parametrize("key", demos.DEMO_KEYS)
def test_play_every_demo_in_every_language(key):
    n = demos.num_steps(key)
    for lang in LANGS:
        at = _page(lang, demo=key)
        assert at.session_state["demos_demo"] == key
        assert at.session_state["demos_step"] == 0
        _narrative_shown(at, key, 0, lang)
        for s in range(1, n):                       # forward, every figure on the page
            _click(at, "demos_next")
            assert at.session_state["demos_step"] == s
            _narrative_shown(at, key, s, lang)
        assert at.button(key="demos_next").disabled
        assert str(at.query_params["step"]).strip("[]'") == str(n - 1)   # the URL is the link
        at.toggle(key="demos_presenter").set_value(True).run()   # back, in presenter mode
        assert not at.exception
        for _ in range(len(screens_for(key, n - 1, lang))):   # every screen of the last step
            _click(at, "demos_fig_next")
        for s in range(n - 2, -1, -1):
            _click(at, "demos_prev")
            assert at.session_state["demos_step"] == s
            _narrative_shown(at, key, s, lang)
        assert at.button(key="demos_prev").disabled


def test_link_restores_a_step():
    at = _page("es", demo="condense", step="2", presenter="1")
    assert at.session_state["demos_demo"] == "condense"
    assert at.session_state["demos_step"] == 2
    assert at.session_state["demos_presenter"] is True
    _narrative_shown(at, "condense", 2, "es")
    assert not at.warning


@pytest.mark.parametrize("query", [
    {"demo": "<script>alert(1)</script>", "step": "1"},
    {"demo": "fork", "step": "99999"},
    {"demo": "fork", "step": "-3"},
    {"demo": "fork", "step": "1e9"},
    {"demo": "fork", "step": "2", "presenter": "maybe"},
])
def test_untrusted_links_fall_back(query):
    at = _page("en", **query)
    key = at.session_state["demos_demo"]
    assert key in demos.DEMOS
    assert 0 <= at.session_state["demos_step"] < demos.num_steps(key)
    if query.get("presenter") == "maybe":
        assert at.session_state["demos_presenter"] is False
    else:
        assert at.warning                           # says the link was not understood


def test_registered_in_the_app():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = "zh"
    at.run()
    for page, title in (("pages/demos.py", ("demos", "ui.title")),
                        ("pages/notations.py", ("notations", "title"))):
        at.switch_page(page).run()
        assert not at.exception
        assert at.title[0].value in {t(*title, lang) for lang in LANGS}
