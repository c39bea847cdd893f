"""Real browser: on the Batch page, clicking a marker of the slot-mapping chart selects that token
(plotly's click event in the live chart -> a trigger value -> ``on_pick_token`` -> the token box),
checked in chromium. The figure leaves drag to pan: a click is a click."""
import pytest

from browser_support import needs_chromium, wait_idle
from kvviz.texts.i18n import t

pytestmark = [pytest.mark.browser, needs_chromium()]


def test_click_a_slot_marker_selects_its_token(server, browser):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        page.goto(f"{server}/batch?lang=en")
        wait_idle(page)
        chart = page.locator('[class*="slotfig"] .kv-live-chart').first
        chart.wait_for(timeout=60_000)
        chart.scroll_into_view_if_needed()          # a chart is drawn when it comes near the screen
        box = page.get_by_label(t("batch", "token", "en"), exact=True)
        before = int(box.input_value())
        points = chart.locator(".scatterlayer .point")
        points.first.wait_for(timeout=60_000)      # plotly.js draws after the element is there
        assert points.count() > 3
        # a marker other than the selected token's: the x of a point is its token index
        target = None
        for i in range(points.count() - 1, -1, -1):
            x = int(round(points.nth(i).evaluate("p => p.__data__.x")))
            if x != before:
                target, want = points.nth(i), x
                break
        assert target is not None
        target.scroll_into_view_if_needed()
        target.click(force=True)
        page.wait_for_timeout(500)
        wait_idle(page)
        for _ in range(40):    # the rerun the selection starts
            if box.input_value() == str(want):
                break
            page.wait_for_timeout(500)
        assert int(box.input_value()) == want != before
    finally:
        page.close()
