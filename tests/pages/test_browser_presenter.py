"""Real browser: presenter mode fits one projector screen with no scrolling.

At 1280x720, 1440x900 and 1920x1080, for several demos and steps (the first step, with its
intro, and later ones, with comparison screens): the figure's bottom edge
(``getBoundingClientRect``) is inside the viewport, its top leaves it a useful height, the main
area does not scroll, the title, the step's narrative and the controls are on screen, and the
intro is shown on the first step only. Screenshots: artifacts/screenshots/presenter_fit_*.png.
"""
import pytest

from browser_support import SHOTS, browser, needs_chromium, server, wait_idle  # noqa: F401 - fixtures
from kvviz.texts.i18n import t

pytestmark = [pytest.mark.browser, needs_chromium()]

SIZES = [(1280, 720), (1440, 900), (1920, 1080)]
CASES = [("fork", 0, "en"), ("hybrid", 3, "es"), ("pcie", 1, "zh"), ("where_stale", 2, "en")]

MEASURE = """() => {
  const box = s => { const e = document.querySelector(s); if (!e) return null; const r = e.getBoundingClientRect();
                     return {top: r.top, bottom: r.bottom, height: r.height}; };
  const main = document.querySelector('[data-testid=stMain]');
  return {fig: box('.st-key-demos_presenter_fig .kv-live-chart'),
          svg: box('.st-key-demos_presenter_fig .main-svg'),
          title: box('[data-testid=stMain] h2'), next: box('.st-key-demos_next button'),
          charts: document.querySelectorAll('.kv-live-chart').length,
          scroll: [main.scrollHeight, main.clientHeight], vh: window.innerHeight,
          text: main.innerText};
}"""


@pytest.fixture(scope="module")
def tab(browser):
    pg = browser.new_page(viewport={"width": 1280, "height": 720})
    yield pg
    pg.close()


@pytest.mark.parametrize("demo,step,lang", CASES)
def test_presenter_fits_the_screen(server, tab, demo, step, lang):
    narrative = t("demos", f"{demo}.step{step}", lang)
    intro = t("demos", f"{demo}.intro", lang)
    for w, h in SIZES:
        tab.set_viewport_size({"width": w, "height": h})
        tab.goto(f"{server}/demos?demo={demo}&step={step}&lang={lang}&presenter=1")
        wait_idle(tab)
        tab.wait_for_selector('.st-key-demos_presenter_fig .kv-live-chart .main-svg', timeout=60_000)
        tab.wait_for_timeout(600)
        SHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SHOTS / f"presenter_fit_{demo}_step{step}_{lang}_{w}x{h}.png"))
        m = tab.evaluate(MEASURE)
        where = f"{demo} step {step} {lang} at {w}x{h}"
        assert m["charts"] == 1, where
        assert m["fig"]["bottom"] <= h + 0.5, f"{where}: figure ends at {m['fig']['bottom']:.0f} px, below the fold"
        assert m["svg"]["bottom"] <= h + 0.5, where
        assert m["fig"]["height"] >= 0.4 * h, f"{where}: the figure is only {m['fig']['height']:.0f} px tall"
        assert m["scroll"][0] <= m["scroll"][1] + 1, f"{where}: the page scrolls ({m['scroll']})"
        assert 0 <= m["title"]["top"] and m["next"]["bottom"] <= m["fig"]["top"], where
        # the narrative is on screen; the intro only on the first step
        flat = " ".join(m["text"].split())
        assert " ".join(narrative.split())[:40] in flat, where
        assert (intro.split()[0] in m["text"] and " ".join(intro.split())[:40] in flat) == (step == 0), where
