"""Every page's whole state is in its link (issue 33, item 3), in a real browser: a teacher changes a
page through its widgets, copies the address, and a student opens it in a FRESH browser context (no
cookies, no session): every widget, every line of text and every figure is the same. Also: a bad
value gives one warning (as text) and the default; another page's address carries nothing of this one."""
import pytest

from browser_support import needs_chromium, no_exception, wait_idle
from link_support import FIRST_KEY, arrives, settled, choose, flip, key, number, opened, press, state

pytestmark = [pytest.mark.browser, needs_chromium()]


def csr(page):       # the case the issue saw lost: v0.19.0 + V2 reopened as main / auto
    choose(page, "csr.vllm", "v0.19.0")
    choose(page, "csr.runner", "V2")
    number(page, "csr.empty", 3)
    number(page, "csr.req", 2)


def layout(page):    # the 1/3/0 came back 1/2/1
    choose(page, "lay.vllm", "v0.24.0")
    number(page, "lay.off", 3)
    number(page, "lay.head", 0)
    press(page, "lay.kv", "v")


def batch(page):     # head, dim and K/V were dropped
    number(page, "batch.head", 1)
    number(page, "batch.dim", 5)
    press(page, "batch.kv", "v")


def notations(page):
    press(page, "notations_page_size", "32")
    choose(page, "notations_req", "C")
    number(page, "notations_pos", 33)


def kernel_lab(page):
    press(page, "lab.kernel", "csr")
    press(page, "lab.tl_groups", "4")
    flip(page, "lab.more_columns")


def dumps(page):
    press(page, "dumps.source", "Volcados de ejemplo")
    choose(page, "dumps.ex_a", "commit_too_few_rows.json")
    choose(page, "dumps.ex_b", "commit_too_few_rows.json")


def step_through(page):
    choose(page, "step.runner", "V1")
    for _ in range(2):
        page.get_by_role("button", name="Next").click()
        wait_idle(page)
    press(page, "step.pool", "at the kernels' launch")


def prefixes(page):
    choose(page, "pre.vllm", "v0.20.0")
    press(page, "pre.pool", "内核启动时")


def pcie(page):
    choose(page, "pcie.vllm", "v0.19.0")
    number(page, "pcie.reqs", 128)
    choose(page, "pcie.bs", "32")


def home(page):      # the language, picked in the sidebar
    choose(page, "lang.widget", "Español")


def demos(page):     # a release and presenter mode (the page's own link: demo, step, release, presenter, fig)
    choose(page, "demos_release", "v0.24.0")
    flip(page, "demos_presenter")


# (page, the language it is opened in, what the teacher changes, a query value the link must hold)
CASES = [("csr", "es", csr, "vllm=v0.19.0"), ("layout", "en", layout, "off=3"), ("batch", "en", batch, "dim=5"),
         ("notations", "zh", notations, "req=C"), ("kernel_lab", "en", kernel_lab, "kernel=csr"),
         ("dumps", "es", dumps, "ex_a=commit_too_few_rows.json"), ("step_through", "en", step_through, "step=2"),
         ("prefixes", "zh", prefixes, "pool=launch"), ("pcie", "en", pcie, "bs=32"), ("", "en", home, "lang=es"),
         ("demos", "zh", demos, "presenter=1")]


@pytest.mark.parametrize("name,lang,change,holds", CASES, ids=[c[0] or "home" for c in CASES])
def test_a_pages_link_reopens_it_in_a_fresh_context(server, browser, name, lang, change, holds):
    teacher = browser.new_context(viewport={"width": 1400, "height": 1000})
    teacher.set_default_timeout(120_000)      # a machine shared with other test runs draws slowly
    page = teacher.new_page()
    opened(page, f"{server}/{name}?lang={lang}", FIRST_KEY[name])
    before = state(page)
    change(page)
    shown = settled(page)
    assert shown["widgets"] != before["widgets"]       # the change took
    link = page.url
    assert holds in link and (f"lang={lang}" in link or change is home), link
    no_exception(page)
    teacher.close()
    student = browser.new_context(viewport={"width": 1400, "height": 1000})   # nothing shared with the teacher
    student.set_default_timeout(120_000)
    other = student.new_page()
    opened(other, link, FIRST_KEY[name])
    arrives(other, shown)
    assert other.url == link                           # and the student's address is the same link
    no_exception(other)
    student.close()


def test_a_bad_value_is_one_warning_and_the_default(server, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(120_000)
    page = ctx.new_page()
    opened(page, f"{server}/csr?lang=en&empty=99&rule=%3Cb%3Ex%3C/b%3E&req=2", "csr.req")
    warn = page.get_by_test_id("stAlertContentWarning").filter(has_text="link parameter")
    assert warn.count() == 1
    assert "empty='99'" in warn.inner_text() and "rule='<b>x</b>'" in warn.inner_text()   # shown as text
    assert key(page, "csr.empty").locator("input").input_value() == "2"                # the default
    assert key(page, "csr.req").locator("input").input_value() == "2"                  # the good one taken
    assert "empty=2" in page.url and "req=2" in page.url
    ctx.close()


def test_switching_pages_carries_nothing_across(server, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(120_000)
    page = ctx.new_page()
    opened(page, f"{server}/pcie?lang=es&vllm=v0.19.0&reqs=128", "pcie.reqs")
    page.get_by_test_id("stSidebarNav").get_by_role("link").nth(4).click()   # CSR (home, batch, step, prefixes, csr)
    key(page, "csr.req").wait_for()
    wait_idle(page)
    assert "/csr?" in page.url and "reqs=" not in page.url and "lang=es" in page.url, page.url
    assert "vllm=main" in page.url                     # CSR's own release, not the one PCIe's link named
    ctx.close()


def test_csr_from_the_batch_pages_batch_carries_that_batch(server, browser):
    """CSR's default source after the Batch page is that page's batch (this session's): its link
    carries the batch, and a fresh context builds it again and shows the same CSR."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(120_000)
    page = ctx.new_page()
    opened(page, f"{server}/batch?lang=en&bs=8&kbs=8&reqs=5.0.5,19.0.19,7.7.1", "batch.head")
    page.get_by_test_id("stSidebarNav").get_by_role("link").nth(4).click()   # CSR
    key(page, "csr.req").wait_for()
    number(page, "csr.req", 1)
    shown = settled(page)
    link = page.url
    assert "src=batch" in link and "reqs=5.0.5,19.0.19,7.7.1" in link.replace("%2C", ","), link
    ctx.close()
    student = browser.new_context(viewport={"width": 1400, "height": 1000})
    student.set_default_timeout(120_000)
    other = student.new_page()
    opened(other, link, "csr.req")
    arrives(other, shown)
    assert other.get_by_test_id("stAlertContentWarning").count() == 0
    student.close()
