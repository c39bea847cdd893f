"""Real browser: the app's charts are updated in place (issue 12, speed where it is felt).

A token change on the Batch page must not remount its four charts (st.plotly_chart did: a new
<div> and a full Plotly.newPlot per chart and interaction): the same DOM nodes stay, plotly.js is
the copy the app serves itself, and what changed is drawn — the selection box moves to the new
token's cell, the slot chart's highlighted marker follows."""
import pytest

from browser_support import charts_drawn, needs_chromium, no_exception, wait_idle
from kvviz.texts.i18n import t

pytestmark = [pytest.mark.browser, needs_chromium()]

MARK = """() => [...document.querySelectorAll('.kv-live-chart')].map((d, i) => {
  if (!d.dataset.kvMark) d.dataset.kvMark = 'chart' + i;
  return {mark: d.dataset.kvMark, rev: d.dataset.kvRev || null,
          shapes: JSON.stringify((d.layout && d.layout.shapes || []).map(s => [s.x0, s.x1, s.y0, s.y1])),
          last_x: d.data && d.data.length ? (d.data[d.data.length - 1].x || [null])[0] : null};
})"""


def _settled(page):
    wait_idle(page)
    charts_drawn(page)           # plotly.js draws after the rerun's last delta (off-screen ones: asked for)
    page.wait_for_timeout(300)


def test_a_token_change_updates_the_charts_in_place(server, page):
    page.goto(f"{server}/batch?lang=en")
    wait_idle(page)
    _settled(page)
    src = page.evaluate("() => [...document.scripts].map(s => s.src).filter(s => s.includes('plotly'))")
    assert any(s.endswith("/app/static/plotly/plotly-cartesian.min.js") for s in src), src
    before = page.evaluate(MARK)
    assert len(before) == 4 and all(b["rev"] for b in before)
    box = page.get_by_label(t("batch", "token", "en"), exact=True)
    want = int(box.input_value()) + 7
    box.fill(str(want))
    box.press("Enter")
    _settled(page)
    after = page.evaluate(MARK)
    no_exception(page)
    assert [a["mark"] for a in after] == [b["mark"] for b in before]      # the same nodes: no remount
    assert any(int(a["rev"]) > int(b["rev"]) for a, b in zip(after, before))   # redrawn in place
    assert after[0]["shapes"] != before[0]["shapes"]                        # the table's selection moved
    assert after[2]["last_x"] == want != before[2]["last_x"]                 # the slot chart's ring too
