"""Step through in a real browser (Playwright + Debian chromium), its step part being an
st.fragment (issue 11): Next reruns only that part, yet the address, the link shown and the
selectors above stay right, and a change above the fragment still redraws it."""
import pytest

from browser_support import needs_chromium, no_exception, wait_idle

pytestmark = [pytest.mark.browser, needs_chromium()]


def test_next_in_the_fragment_updates_the_address_and_link(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/step_through?lang=en")
    wait_idle(page)
    for _ in range(3):
        page.get_by_role("button", name="Next").click()
        wait_idle(page)
    expect(page.get_by_text("Step 4 of 8")).to_be_visible()
    assert "step=3" in page.url and "sc=lifecycle" in page.url, page.url
    expect(page.get_by_test_id("stCode").filter(has_text="step=3")).to_be_visible()
    page.get_by_role("button", name="Back").click()
    wait_idle(page)
    expect(page.get_by_text("Step 3 of 8")).to_be_visible()
    assert "step=2" in page.url, page.url
    no_exception(page)
    # a reload of that address opens the same step (the link is the state)
    page.goto(page.url)
    wait_idle(page)
    expect(page.get_by_text("Step 3 of 8")).to_be_visible()
    no_exception(page)
