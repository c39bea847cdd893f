"""Real browser: presenter mode for a projector.

- Keys (a presentation clicker sends them): → / PageDown / space move to the next figure, then on
  to the next step's own screen (the figure index restarts there); ← / PageUp move back, from a
  step's own screen to the previous step's last figure. A key typed into a menu is the menu's.
  Checked through the address bar (``fig=``, ``step=``) and what is on screen.
- One screen at a time fits 1280x720 (and 1920x1080) with no scrolling: on a figure's screen the
  figure's bottom edge is inside the viewport and it keeps at least 40% of the height, its own
  sentence is on screen in type of at least 18 px, and the main area does not scroll.
Screenshots: artifacts/screenshots/presenter_*.png.
"""
import re

import pytest

from browser_support import SHOTS, needs_chromium, wait_idle
from kvviz.texts.i18n import t
from kvviz.views import demo_catalogue as demos
from kvviz.views.demos import presenter_screens, screens_for

pytestmark = [pytest.mark.browser, needs_chromium()]

REL = demos.DEFAULT_RELEASE
MEASURE = """() => {
  const box = s => { const e = document.querySelector(s); if (!e) return null; const r = e.getBoundingClientRect();
                     return {top: r.top, bottom: r.bottom, height: r.height}; };
  const main = document.querySelector('[data-testid=stMain]');
  const note = [...document.querySelectorAll('[data-testid=stMain] .stMarkdown p')].pop();
  return {fig: box('.st-key-demos_presenter_fig .kv-live-chart'), svg: box('.st-key-demos_presenter_fig .main-svg'),
          title: box('[data-testid=stMain] h2'), charts: document.querySelectorAll('.kv-live-chart').length,
          scroll: [main.scrollHeight, main.clientHeight], text: main.innerText,
          note: note ? {px: parseFloat(getComputedStyle(note).fontSize), bottom: note.getBoundingClientRect().bottom} : null};
}"""


def _figures(key, step, lang="en"):
    return presenter_screens(screens_for(key, step, lang, REL), lang)


def _at(page, step, fig):
    """Wait until the address bar names this step and figure (fig 0: no ``fig=``), and the page is idle."""
    want = f"step={step}"
    page.wait_for_function(
        "([s, f]) => { const q = new URLSearchParams(location.search);"
        " return q.get('step') === s && (q.get('fig') || '0') === f; }", arg=[str(step), str(fig)], timeout=60_000)
    wait_idle(page)
    assert want in page.url


def _on_screen(page, key, step, fig, lang="en"):
    """The screen shown is the step's own (fig 0: its narrative, no chart) or figure ``fig`` (its title)."""
    from playwright.sync_api import expect

    main = page.get_by_test_id("stMain")
    if fig == 0:
        expect(main.get_by_text(t("demos", f"{key}.step{step}", lang)[:60])).to_be_visible(timeout=60_000)
        assert page.locator('.kv-live-chart').count() == 0
    else:
        want = _figures(key, step, lang)[fig - 1]
        expect(main.locator("h3").first).to_have_text(want.title, timeout=60_000)
        expect(main.get_by_text(want.notes[0][:50])).to_be_visible()
        page.wait_for_selector('.st-key-demos_presenter_fig .kv-live-chart .main-svg', timeout=60_000)


def test_keys_move_through_figures_and_steps(server, browser):
    key = "fork"
    last0 = len(_figures(key, 0))
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(f"{server}/demos?demo={key}&step=0&lang=en&presenter=1&vllm={REL}")
        wait_idle(page)
        page.wait_for_function("() => window.__kvvizKeysInstalled === true", timeout=60_000)   # the listener
        _on_screen(page, key, 0, 0)
        for k, (press, fig) in enumerate([("ArrowRight", 1), ("PageDown", 2), (" ", 3), ("ArrowLeft", 2),
                                          ("PageUp", 1), ("ArrowRight", 2)]):
            page.keyboard.press(press)
            _at(page, 0, fig)
            _on_screen(page, key, 0, fig)
            if k == 1:
                page.screenshot(path=str(SHOTS / "presenter_keys_fork_step1_fig2.png"))
        # the strip: the last figure at a click; then → leads to the next step's own screen
        pills = page.locator(".st-key-demos_fig_pick button")
        assert pills.count() == last0 + 1 and pills.nth(last0).inner_text().strip() == str(last0)
        pills.nth(last0).click()
        _at(page, 0, last0)
        page.keyboard.press("ArrowRight")
        _at(page, 1, 0)                                  # the figure index restarts at the new step
        _on_screen(page, key, 1, 0)
        page.keyboard.press("ArrowRight")
        _at(page, 1, 1)
        page.keyboard.press("ArrowLeft")                 # a clicker's quick double press: both count
        page.keyboard.press("ArrowLeft")                 # from step 2's own screen: step 1's last figure
        _at(page, 0, last0)
        page.keyboard.press("PageDown")                  # three quick presses: three moves
        page.keyboard.press("PageDown")
        page.keyboard.press("PageDown")
        _at(page, 1, 2)
        for _ in range(3):
            page.keyboard.press("PageUp")
        _at(page, 0, last0)
        _on_screen(page, key, 0, last0)
        # a key typed into a menu is the menu's: the demo picker keeps its arrows
        page.get_by_test_id("stMain").get_by_role("combobox", name=t("demos", "ui.demo", "en")).click()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Escape")
        page.wait_for_timeout(800)
        _at(page, 0, last0)
        # the step's buttons do what the keys do
        page.get_by_role("button", name="›", exact=True).click()
        _at(page, 1, 0)
        # out of presenter mode the keys are the page's own again (they scroll; nothing moves)
        page.locator(".st-key-demos_presenter label").first.click()
        page.wait_for_function("() => location.search.includes('presenter=0')", timeout=60_000)
        wait_idle(page)
        page.keyboard.press("ArrowRight")
        page.keyboard.press("PageDown")
        page.wait_for_timeout(1000)
        wait_idle(page)
        assert "step=1" in page.url and "fig=" not in page.url
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        page.close()


CASES = [("fork", 1, "en", 3), ("hybrid", 3, "es", 1), ("pcie", 1, "zh", 1), ("where_stale", 2, "en", 9)]
SIZES = [(1280, 720), (1920, 1080)]


@pytest.mark.parametrize("key,step,lang,fig", CASES)
def test_one_screen_fits_a_projector(server, browser, key, step, lang, fig):
    release = demos.nearest_playable(key, REL)
    want = presenter_screens(screens_for(key, step, lang, release), lang)[fig - 1]
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        for w, h in SIZES:
            page.set_viewport_size({"width": w, "height": h})
            page.goto(f"{server}/demos?demo={key}&step={step}&lang={lang}&presenter=1&vllm={release}&fig={fig}")
            wait_idle(page)
            page.wait_for_selector('.st-key-demos_presenter_fig .kv-live-chart .main-svg', timeout=60_000)
            page.wait_for_timeout(600)
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"presenter_fit_{key}_step{step + 1}_fig{fig}_{lang}_{w}x{h}.png"))
            m = page.evaluate(MEASURE)
            where = f"{key} step {step} fig {fig} {lang} at {w}x{h}"
            assert m["charts"] == 1, where
            assert m["fig"]["bottom"] <= h + 0.5 and m["svg"]["bottom"] <= h + 0.5, where
            assert m["fig"]["height"] >= 0.4 * h, f"{where}: the figure is only {m['fig']['height']:.0f} px tall"
            assert m["scroll"][0] <= m["scroll"][1] + 1, f"{where}: the page scrolls ({m['scroll']})"
            flat = " ".join(m["text"].split())
            assert " ".join(want.notes[0].split())[:40] in flat, where       # the figure's own sentence
            assert m["note"]["px"] >= 18 and m["note"]["bottom"] <= m["fig"]["top"] + 1, (where, m["note"])
            assert re.sub(r"\s+", " ", t("demos", f"{key}.step{step}", lang))[:40] not in flat, where   # not the step's
    finally:
        page.close()


def test_the_longest_step_text_fits_its_screen(server, browser):
    """where_stale step 3, the longest narrative (in es ~1,000 characters; in zh the widest), with
    its list of 12 figures and where each is drawn: the step's own screen holds it all at 1280x720
    (its box does not scroll more than a few pixels, the page not at all)."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        for lang in ("es", "zh"):
            page.goto(f"{server}/demos?demo=where_stale&step=2&lang={lang}&presenter=1&vllm=v0.33.0")
            wait_idle(page)
            page.wait_for_selector(".st-key-demos_story_long", timeout=60_000)
            page.wait_for_timeout(600)
            page.screenshot(path=str(SHOTS / f"presenter_story_where_stale_step3_{lang}_1280x720.png"))
            box, main = page.evaluate("""() => [['.st-key-demos_story_long', '[data-testid=stMain]'].map(s => {
                const e = document.querySelector(s); return [e.scrollHeight, e.clientHeight]; })][0]""")
            assert box[0] <= box[1] + 8 and main[0] <= main[1] + 1, (lang, box, main)
            last = t("demos", "ui.keys", lang)[:12]
            assert page.get_by_text(last).first.bounding_box()["y"] < 720, lang     # the last line is on screen
    finally:
        page.close()
