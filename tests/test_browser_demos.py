"""Real browser: play a demo to its end in each language, then open a presenter-mode link
and save full-page screenshots to artifacts/screenshots/ (git-ignored) for a human to look at."""
import pytest

from browser_support import browser, needs_chromium, server, shot, wait_idle  # noqa: F401 - fixtures
from kvviz import demos
from kvviz.i18n import t

pytestmark = [pytest.mark.browser, needs_chromium()]

# (language, demo played to its end, presenter step screenshotted)
PLAN = [("en", "cudagraph", 1), ("zh", "condense", 3), ("es", "fork", 1)]


def _no_error(page):
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0


@pytest.mark.parametrize("lang,key,shot_step", PLAN)
def test_play_and_present(server, browser, lang, key, shot_step):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(f"{server}/demos?demo={key}&step=0&lang={lang}")
        wait_idle(page)
        expect(page.get_by_text(t("demos", f"{key}.step0", lang))).to_be_visible(timeout=60_000)
        n = demos.num_steps(key)
        for s in range(1, n):
            page.get_by_role("button", name=t("demos", "ui.next", lang)).click()
            expect(page.get_by_text(t("demos", f"{key}.step{s}", lang))).to_be_visible(timeout=60_000)
            wait_idle(page)
            _no_error(page)
        expect(page.get_by_role("button", name=t("demos", "ui.next", lang))).to_be_disabled()
        page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg')
        shot(page, f"demo_{key}_{lang}_end")

        # the link to a presenter-mode step restores it
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto(f"{server}/demos?demo={key}&step={shot_step}&lang={lang}&presenter=1")
        wait_idle(page)
        expect(page.get_by_text(t("demos", f"{key}.step{shot_step}", lang))).to_be_visible(timeout=60_000)
        page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg')
        _no_error(page)
        shot(page, f"presenter_{key}_{lang}_step{shot_step}_fig1")
        page.get_by_role("button", name=t("demos", "ui.fig_next", lang)).click()
        page.wait_for_timeout(300)
        wait_idle(page)
        page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg')
        shot(page, f"presenter_{key}_{lang}_step{shot_step}_fig2")
    finally:
        page.close()


def test_notations_page(server, browser):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(f"{server}/notations?lang=zh")
        wait_idle(page)
        expect(page.get_by_text(t("notations", "title", "zh"))).to_be_visible(timeout=60_000)
        _no_error(page)
        shot(page, "notations_zh")
    finally:
        page.close()
