"""Real browser: a chart is drawn when it comes on screen (static/live_chart.js), so a rerun
pays only for the charts the reader sees (issue 12, speed where it is felt).

On the PCIe page at 1400x1000 the three sweep charts start below the fold: they are not drawn
until scrolled to; scrolled to, each shows its figure. A rerun while they are off screen (another
batch size) leaves them half transparent with their older figure; scrolled to again, they are
redrawn with the new one (the batch-size sweep's marker at the new value) and opaque.
"""
import pytest

from browser_support import charts_drawn, needs_chromium, no_exception, wait_idle
from kvviz.texts.i18n import t

pytestmark = [pytest.mark.browser, needs_chromium()]

STATE = """() => [...document.querySelectorAll('.kv-live-chart')].map(d => {
  const r = d.getBoundingClientRect();
  return {rev: d.dataset.kvRev || null, seq: d._kvSeq, opacity: d.style.opacity,
          below: r.top >= window.innerHeight,
          marker: d.layout && d.layout.shapes && d.layout.shapes.length ? d.layout.shapes[0].x0 : null};
})"""


def _scroll_to(page, k):
    page.locator('.kv-live-chart').nth(k).scroll_into_view_if_needed()
    page.wait_for_function("(k) => { const d = document.querySelectorAll('.kv-live-chart')[k];"
                           " return d.dataset.kvRev === String(d._kvSeq) && !d.style.opacity; }", arg=k,
                           timeout=30_000)


def test_charts_below_the_fold_are_drawn_when_scrolled_to(server, page):
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{server}/pcie?lang=en")
    wait_idle(page)
    # the release's own table comes first (issue 25), so the what-if charts may all start below the fold
    page.wait_for_function("() => document.querySelectorAll('.kv-live-chart').length >= 4", timeout=60_000)
    page.wait_for_timeout(800)
    first = page.evaluate(STATE)
    assert len(first) == 4
    far = [k for k, c in enumerate(first) if c["below"]]
    assert far, first                                   # some chart starts below the fold...
    assert all(first[k]["rev"] is None for k in far)    # ...and is not drawn
    near = [k for k in range(4) if k not in far]
    assert all(first[k]["rev"] is not None for k in near), first   # the ones in view are
    sweep = 1                                           # the batch-size sweep (after the stacked bars)
    _scroll_to(page, sweep)
    drawn = page.evaluate(STATE)[sweep]
    assert drawn["marker"] == 64                        # the default batch: 64 requests

    page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")
    page.wait_for_timeout(300)
    box = page.get_by_label(t("pcie", "num_reqs", "en"), exact=True)
    box.fill("100")
    box.press("Enter")
    wait_idle(page)
    page.wait_for_timeout(800)
    now = page.evaluate(STATE)[sweep]
    assert now["below"]                                 # off screen: the older figure, marked as such
    assert now["seq"] > int(now["rev"]) and now["opacity"] == "0.45" and now["marker"] == 64
    _scroll_to(page, sweep)
    assert page.evaluate(STATE)[sweep]["marker"] == 100
    charts_drawn(page)                                  # and every chart can be asked for at once
    no_exception(page)
