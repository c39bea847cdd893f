"""Real browser: "run on W ranks" on the DCP demo and on the Batch page. Click run, watch the
progress while the gloo ranks work (the page answers meanwhile), wait for the merged result, and
save full-page screenshots (and the caches figure alone) to artifacts/screenshots/ for a human to
look at."""
import re

import pytest

from browser_support import SHOTS, charts_drawn, needs_chromium, shot, wait_idle
from kvviz.texts.i18n import t

pytestmark = [pytest.mark.browser, needs_chromium()]
RUN_MS = 240_000


def _tr(key, lang, **f):
    return t("dcp_ranks", key, lang, **f)


def _run_and_wait(page, lang: str, w: int = 2):
    from playwright.sync_api import expect

    run = page.get_by_role("button", name=_tr("ui.run", lang, w=w))
    expect(run).to_be_enabled(timeout=60_000)
    run.click()
    # while the ranks run: a progress bar, the run button off, the page still answering
    expect(page.locator('[data-testid="stProgress"]')).to_be_visible(timeout=60_000)
    expect(run).to_be_disabled()
    try:   # a picture of the progress (the run may end before it is taken: then none)
        page.locator('[data-testid="stProgress"]').scroll_into_view_if_needed(timeout=2_000)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"dcp_ranks_running_{lang}.png"))
    except Exception:  # noqa: BLE001 - only the picture is lost
        pass
    verdict = page.get_by_text(re.compile(re.escape(_tr("pass", lang, err="X", tol="Y", dtype="Z", w=w,
                                                        backend="gloo").split("X")[0])))
    expect(verdict).to_be_visible(timeout=RUN_MS)
    wait_idle(page)
    expect(run).to_be_enabled(timeout=60_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "None" not in body and "nan" not in body.split()


def _figure(page, name: str):
    """The caches figure alone (its chart element), saved as a PNG."""
    charts_drawn(page)
    chart = page.locator('.kv-live-chart').filter(has_text=re.compile(r"rank 1|rango 1"))
    chart.last.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    chart.last.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    return path


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_dcp_demo_runs_on_two_ranks(server, browser, lang):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server}/demos?demo=dcp&step=1&lang={lang}")
        wait_idle(page)
        _run_and_wait(page, lang)
        for r in range(2):
            assert page.get_by_text(_tr("fig.rank_title", lang, r=r, n=6)).count() >= 1
        _figure(page, f"dcp_ranks_figure_demo_{lang}")
        shot(page, f"dcp_ranks_demo_{lang}")
    finally:
        page.close()


def test_the_batch_page_runs_its_dcp_preset(server, browser):
    from playwright.sync_api import expect

    lang = "es"
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server}/batch?lang={lang}")
        wait_idle(page)
        page.get_by_test_id("stSelectbox").filter(has_text=t("batch", "preset", lang)).click()
        page.get_by_role("option", name=t("batch", "p_dcp", lang)).click()
        wait_idle(page)
        expect(page.get_by_role("button", name=_tr("ui.run", lang, w=2))).to_be_visible(timeout=60_000)
        _run_and_wait(page, lang)
        _figure(page, "dcp_ranks_figure_batch_es")
        shot(page, "dcp_ranks_batch_es")
    finally:
        page.close()
