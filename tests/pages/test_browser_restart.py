"""A restart mid-class loses no one (issue 33): tabs on different pages, each with its selections
changed, the server SIGKILLed and started again on the same port; each tab reconnects by itself,
in a new session, and comes back to the same page, step and selection, from the address it shows.
(Streamlit 1.67 reconnects such a tab but does not rerun it: the dead session's screen stayed, frozen;
ui/links.py reloads a tab that reconnected, and this test checks the page was loaded anew.)"""
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from browser_support import ARGS, CHROMIUM, ROOT, _free_port, needs_chromium, no_exception, wait_idle
from link_support import FIRST_KEY, arrives, choose, number, opened, settled

pytestmark = [pytest.mark.browser, needs_chromium()]


def _start(port: int) -> subprocess.Popen:
    """The app on ``port``, in its own process group (its workers go with it), once healthy."""
    env = {**os.environ, "TRITON_INTERPRET": os.environ.get("TRITON_INTERPRET", "1")}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    for _ in range(600):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).read() == b"ok":
                return proc
        except OSError:
            time.sleep(0.2)
    _kill(proc)
    pytest.fail("streamlit did not become healthy")


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL the server and whatever it started (its process group: only what this test started)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def step_through(page):     # a step: Next twice (step=2 in the address)
    for _ in range(2):
        page.get_by_role("button", name="Next").click()
        wait_idle(page)


def csr(page):              # a release, a runner and a request
    choose(page, "csr.vllm", "v0.19.0")
    choose(page, "csr.runner", "V2")
    number(page, "csr.req", 2)


def layout(page):           # the block / offset / head 1 / 3 / 0
    number(page, "lay.off", 3)
    number(page, "lay.head", 0)


TABS = [("step_through", "en", step_through, "step=2"), ("csr", "es", csr, "req=2"), ("layout", "zh", layout, "off=3")]


def test_tabs_come_back_after_a_server_restart():
    playwright = pytest.importorskip("playwright.sync_api")
    port = _free_port()
    server = _start(port)
    try:
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            tabs = []
            for name, lang, change, holds in TABS:        # one student each: a context of its own
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                ctx.set_default_timeout(120_000)
                page = ctx.new_page()
                opened(page, f"http://127.0.0.1:{port}/{name}?lang={lang}", FIRST_KEY[name])
                change(page)
                shown = settled(page)
                assert holds in page.url and f"lang={lang}" in page.url, page.url
                tabs.append((page, shown, page.url))
            for page, _, _ in tabs:                        # gone once the tab has loaded its page anew
                page.evaluate("() => { window.__kvOldSession = true; }")
            os.killpg(server.pid, signal.SIGKILL)          # mid-class: no goodbye to any tab
            server.wait(timeout=30)
            for page, _, _ in tabs:                        # every tab sees the server gone
                page.wait_for_selector('[data-testid="stApp"]:not([data-test-connection-state="CONNECTED"])',
                                       timeout=60_000)
            server = _start(port)
            for page, shown, url in tabs:                  # nobody reloads: each tab comes back by itself
                page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]',
                                       timeout=120_000)
                page.wait_for_function("() => !window.__kvOldSession", timeout=120_000)   # a new page, a new
                wait_idle(page)                            # session: what it shows comes from the address alone
                arrives(page, shown)
                assert page.url == url
                no_exception(page)
            browser.close()
    finally:
        _kill(server)
