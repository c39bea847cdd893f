"""Real browser: the Captured runs page opened from a link (``?run=…&step=…&lang=…``) in a fresh
browser context shows that run at that step, in en, zh and es; nothing cut, no "None", no English left
on a zh/es page (the sweep's probe, on the page with a run open); screenshots at 1280x720 go to
artifacts/screenshots/runs_*.png (the first screen, and the whole page)."""
import os

import pytest

from browser_support import ARGS, CHROMIUM, SHOTS, charts_drawn, needs_chromium, serve, wait_idle
from kvviz.texts.i18n import LANGS, t
from kvviz.views.runs import RUNS_DIR_ENV
from page_support import ROOT

pytestmark = [pytest.mark.browser, needs_chromium()]
RUN, STEP = "fault-032", 9
W, H = 1280, 720


@pytest.fixture(scope="module")
def runs_server():
    """A server whose operator named tests/data/runs as the folder of runs."""
    old = os.environ.get(RUNS_DIR_ENV)
    os.environ[RUNS_DIR_ENV] = str(ROOT / "tests" / "data" / "runs")
    try:
        with serve() as (url, _):
            yield url
    finally:
        if old is None:
            os.environ.pop(RUNS_DIR_ENV, None)
        else:
            os.environ[RUNS_DIR_ENV] = old


@pytest.fixture(scope="module")
def chromium(runs_server):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _shots(page, name: str) -> None:
    """The first screen at 1280x720, then the whole page (the viewport grown to the page's height)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    charts_drawn(page)
    page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
    page.wait_for_timeout(600)
    page.screenshot(path=str(SHOTS / f"{name}_1280x720.png"))
    h = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": W, "height": max(h, H)})
    charts_drawn(page)
    page.wait_for_timeout(900)
    page.screenshot(path=str(SHOTS / f"{name}_full.png"), full_page=True)
    page.set_viewport_size({"width": W, "height": H})


@pytest.mark.parametrize("lang", list(LANGS))
def test_a_link_opens_the_same_step_in_a_fresh_context(runs_server, chromium, lang):
    from playwright.sync_api import expect
    from test_browser_sweep import findings

    ctx = chromium.new_context(viewport={"width": W, "height": H})
    page = ctx.new_page()
    try:
        page.goto(f"{runs_server}/runs?run={RUN}&step={STEP}&lang={lang}")
        wait_idle(page)
        expect(page.get_by_role("heading", name=t("runs", "title", lang))).to_be_visible(timeout=60_000)
        info = t("runs", "step_info", lang, step=STEP, i=STEP + 1, n=20, reqs=4, rpad=4, tok=4, tpad=4)
        expect(page.get_by_text(info)).to_be_visible(timeout=30_000)
        expect(page.get_by_text(t("runs", "findings_some", lang, k=2, rows="1"))).to_be_visible()
        assert f"run={RUN}" in page.url and f"step={STEP}" in page.url
        assert page.locator('[data-testid="stException"]').count() == 0
        charts_drawn(page)
        problems = [f"{f['kind']} in {f['where']}: {f['text'][:160]!r}" for f in findings(page, lang)]
        _shots(page, f"runs_{RUN}_step{STEP}_{lang}")
        assert not problems, "\n".join(problems)
        if lang == "en":   # Next moves the step and the address with it
            page.get_by_role("button", name=t("runs", "next", lang)).click()
            wait_idle(page)
            expect(page.get_by_text(f"Step {STEP + 1} (", exact=False)).to_be_visible(timeout=30_000)
            page.wait_for_function(f"() => location.search.includes('step={STEP + 1}')", timeout=30_000)
    finally:
        ctx.close()


def test_no_run_open_says_how_to_capture_one(runs_server, chromium):
    from playwright.sync_api import expect

    ctx = chromium.new_context(viewport={"width": W, "height": H})
    page = ctx.new_page()
    try:
        page.goto(f"{runs_server}/runs?lang=en")
        wait_idle(page)
        expect(page.get_by_text("pip install kvviz")).to_be_visible(timeout=60_000)
        expect(page.get_by_text(t("runs", "none_open"))).to_be_visible()
        page.wait_for_timeout(500)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "runs_none_open_en_1280x720.png"))
    finally:
        ctx.close()


def test_a_range_capture_shows_its_finishes_and_new_requests(runs_server, chromium):
    """clean-032 holds steps 30..49: at step 41 the scheduler has freed two finished requests and
    schedules two new ones (the events table), and the page is clean in the sweep's probe."""
    from playwright.sync_api import expect
    from test_browser_sweep import findings

    ctx = chromium.new_context(viewport={"width": W, "height": H})
    page = ctx.new_page()
    try:
        page.goto(f"{runs_server}/runs?run=clean-032&step=41&lang=en")
        wait_idle(page)
        expect(page.get_by_text("Step 41 (12 of 20 captured)", exact=False)).to_be_visible(timeout=60_000)
        expect(page.get_by_text(t("runs", "verdict_clean", n=20, v="v0.32.0"))).to_be_visible()
        charts_drawn(page)
        problems = [f"{f['kind']} in {f['where']}: {f['text'][:160]!r}" for f in findings(page, "en")]
        _shots(page, "runs_clean-032_step41_en")
        assert not problems, "\n".join(problems)
    finally:
        ctx.close()
