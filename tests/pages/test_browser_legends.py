"""Real browser: chart legends clear of the chart titles, and the preset menu's value shown whole (issue 12).

For English, Spanish and Chinese at 1280x720: on the Batch page and on a presenter-mode demo
figure with a two-line title (where_stale step 2, the first slot_mapping figure: the run on the
first line, the batch order on the second), no chart's legend box (``.legend``) intersects its
title (``.gtitle``) or its x axis title (``.xtitle``), measured with ``getBoundingClientRect``.
On the Batch page the "Preset batch" menu shows its value whole: the input's ``scrollWidth`` fits
its ``clientWidth`` once an option is chosen, and every option's name (and the placeholder) fits
the input's text box, measured with the input's own font. Screenshots:
artifacts/screenshots/legends_*.png.
"""
import pytest

from browser_support import SHOTS, charts_drawn, needs_chromium, wait_idle
from kvviz.texts.i18n import t
from kvviz.views import batch as ex
from kvviz.views.demos import presenter_screens, screens_for

pytestmark = [pytest.mark.browser, needs_chromium()]

LANGS = ["en", "es", "zh"]
W, H = 1280, 720
DEMO, STEP = "where_stale", 2

# every chart drawn (its live-chart revision set), each with its legend, title and axis-title boxes
CHARTS = """() => [...document.querySelectorAll('.kv-live-chart')].map(c => {
  const box = e => { if (!e) return null; const r = e.getBoundingClientRect();
                     return r.width && r.height ? {l: r.left, t: r.top, r: r.right, b: r.bottom} : null; };
  const title = c.querySelector('.gtitle');
  return {drawn: !!c.dataset.kvRev, legend: box(c.querySelector('.legend')), title: box(title),
          lines: title ? Math.max(1, title.querySelectorAll('tspan.line').length) : 0,
          text: title ? title.textContent : '', xtitle: box(c.querySelector('.xtitle'))};
})"""

# the preset menu's input: its shown text, its widths, and the width of a text in its font
PRESET = """(labels) => {
  const i = document.querySelector('.st-key-batch-preset input');
  const cs = getComputedStyle(i);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = cs.font;
  const room = i.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  return {value: i.value, placeholder: i.placeholder, scroll: i.scrollWidth, client: i.clientWidth, room,
          widths: labels.map(s => ctx.measureText(s).width)};
}"""


def _overlap(a, b) -> bool:
    return bool(a and b) and a["l"] < b["r"] and b["l"] < a["r"] and a["t"] < b["b"] and b["t"] < a["b"]


def _charts(page) -> list:
    """The page's charts once every one is drawn."""
    charts_drawn(page)
    page.wait_for_timeout(800)
    return page.evaluate(CHARTS)


def _check(charts: list, where: str) -> int:
    """No legend on its title or its axis title; returns how many charts have a legend."""
    for k, c in enumerate(charts):
        assert not _overlap(c["legend"], c["title"]), f"{where}, chart {k} ({c['text']!r}): legend {c['legend']} " \
                                                      f"on the title {c['title']}"
        assert not _overlap(c["legend"], c["xtitle"]), f"{where}, chart {k}: legend on the x axis title"
    return sum(c["legend"] is not None for c in charts)


def _shot(page, name: str):
    """The whole main column at 1280 px wide (the main area scrolls, not the page)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    h = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": W, "height": max(h, H)})
    page.wait_for_timeout(800)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    page.set_viewport_size({"width": W, "height": H})


@pytest.fixture(scope="module")
def tab(browser):
    pg = browser.new_page(viewport={"width": W, "height": H})
    yield pg
    pg.close()


@pytest.mark.parametrize("lang", LANGS)
def test_batch_page_legends_and_preset(server, tab, lang):
    tab.set_viewport_size({"width": W, "height": H})
    tab.goto(f"{server}/batch?lang={lang}")
    wait_idle(tab)
    where = f"batch page, {lang} at {W}x{H}"
    assert _check(_charts(tab), where) >= 2, f"{where}: the slot charts' legends are missing"

    labels = [t("batch", f"p_{p}", lang) for p in ex.PRESETS]
    m = tab.evaluate(PRESET, labels)
    assert not m["value"] and m["placeholder"] == t("batch", "p_default", lang)
    assert m["widths"][0] <= m["room"] + 1, f"{where}: the placeholder is cut ({m})"
    # an option chosen (the longest name that is not the big batch): the value fits, and every name
    # fits the text box that is left beside the clear button
    pick = max((p for p in ex.PRESETS if p != "big"), key=lambda p: m["widths"][ex.PRESETS.index(p)])
    tab.locator(".st-key-batch-preset input").click()
    tab.get_by_role("option", name=t("batch", f"p_{pick}", lang), exact=True).click()
    wait_idle(tab)
    m = tab.evaluate(PRESET, labels)
    assert m["value"] == t("batch", f"p_{pick}", lang), m
    assert m["scroll"] <= m["client"] + 1, f"{where}: {m['value']!r} is cut ({m})"
    for label, width in zip(labels, m["widths"]):
        assert width <= m["room"] + 1, f"{where}: {label!r} ({width:.0f} px) does not fit {m['room']:.0f} px"
    assert _check(_charts(tab), where + f", preset {pick}") >= 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SHOTS / f"legends_batch_{lang}_top.png"))    # the preset menu as seen
    _shot(tab, f"legends_batch_{lang}_{pick}")


@pytest.mark.parametrize("lang", LANGS)
def test_presenter_two_line_title_clear_of_legend(server, tab, lang):
    screens = presenter_screens(screens_for(DEMO, STEP, lang, "main"), lang)
    # the first slot_mapping figure whose title has two lines (the batch order on the second)
    index = next(i for i, s in enumerate(screens) if s.key.startswith("slots")
                 and "<br>" in (s.charts[0][1].layout.title.text or ""))
    tab.set_viewport_size({"width": W, "height": H})
    # presenter screen index + 1: screen 0 is the step's own text
    tab.goto(f"{server}/demos?demo={DEMO}&step={STEP}&lang={lang}&presenter=1&vllm=main&fig={index + 1}")
    wait_idle(tab)
    tab.wait_for_selector('.st-key-demos_presenter_fig .kv-live-chart .main-svg', timeout=60_000)
    charts = _charts(tab)
    where = f"presenter {DEMO} step {STEP} figure {index + 1}, {lang} at {W}x{H}"
    assert len(charts) == 1 and charts[0]["lines"] == 2, f"{where}: {charts}"
    assert _check(charts, where) == 1, f"{where}: the legend is missing"
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SHOTS / f"legends_presenter_{DEMO}_{lang}_fig{index + 1}.png"))
