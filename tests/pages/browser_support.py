"""Shared pieces of the real-browser tests: starting a streamlit server, Debian's chromium driven by
Playwright, waiting for a rerun to finish and for the page to stop changing, full-page screenshots.
The fixtures (``server``: one per xdist worker for the whole session; ``browser`` and ``page``: one
chromium per test module) are in tests/pages/conftest.py."""
import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(*extra_args: str):
    """``streamlit run app.py`` on a free port (with ``extra_args``), healthy: (url, process); stopped
    at the end, killed if it does not stop."""
    port = _free_port()
    env = {**os.environ, "TRITON_INTERPRET": os.environ.get("TRITON_INTERPRET", "1")}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--browser.gatherUsageStats", "false", *extra_args],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("streamlit did not become healthy")
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def wait_idle(page, timeout=90_000):
    from playwright.sync_api import expect

    page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=timeout)
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=timeout)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout)


DRAWN = """() => { if (window.__kvvizDrawAll) window.__kvvizDrawAll();
  const c = [...document.querySelectorAll('.kv-live-chart')];
  return c.length > 0 && c.every(d => d.dataset.kvRev && d.dataset.kvRev === String(d._kvSeq)); }"""


def charts_drawn(page, timeout=90_000):
    """Every live chart on the page showing its latest figure. The app draws a chart when it comes
    near the screen (static/live_chart.js); a test that reads every chart asks for the rest now
    (``window.__kvvizDrawAll``) and waits until each chart's drawn revision is its newest."""
    page.wait_for_selector('.kv-live-chart', state="attached", timeout=timeout)
    page.wait_for_function(DRAWN, timeout=timeout)


# Resolves once nothing in the document has changed for ``quiet`` ms (no node, attribute or text
# changed: a rerun's last elements placed, plotly's relayout after a resize, a grid's canvas resized),
# or after ``most`` ms. Then two animation frames, so what the last change asked for is painted.
QUIET = """([quiet, most]) => new Promise(done => {
  let timer = null, end = null;
  const t0 = performance.now();
  const finish = () => { obs.disconnect(); clearTimeout(timer); clearTimeout(end);
    requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t0))); };
  const obs = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(finish, quiet); });
  obs.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  timer = setTimeout(finish, quiet);
  end = setTimeout(finish, most); })"""


def quiet(page, quiet_ms=400, most_ms=5000):
    """Wait until the page has stopped changing for ``quiet_ms`` (at most ``most_ms``): in place of a
    fixed sleep after a rerun or a resize, as long as the page needs and no longer. The ms it took."""
    return page.evaluate(QUIET, [quiet_ms, most_ms])


def shot(page, name):
    """A full-page screenshot for a human to look at (the page stopped changing, every chart drawn, the
    viewport grown to the page's height): the fixed 0.5 s + 0.7 s it waited are waits for quiet now."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    quiet(page, 250)
    if page.locator('.kv-live-chart').count():
        charts_drawn(page)
    h = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": 1400, "height": max(h, 1000)})
    quiet(page, 250)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 1000})
    assert path.stat().st_size > 10_000, f"{path} looks empty"
    return path


def no_exception(page):
    assert page.locator('[data-testid="stException"]').count() == 0




def needs_chromium():
    return pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing (apt-get install chromium)")
