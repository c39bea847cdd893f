"""Real browser: play a demo to its end in each language, then open a presenter-mode link
and save full-page screenshots to artifacts/screenshots/ (git-ignored) for a human to look at."""
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from kvviz import demos
from kvviz.i18n import t

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
IDLE = ('[data-testid="stApp"][data-test-script-state="notRunning"]'
        '[data-test-connection-state="CONNECTED"]')
# (language, demo played to its end, presenter step screenshotted)
PLAN = [("en", "cudagraph", 1), ("zh", "condense", 3), ("es", "fork", 1)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    if not os.path.exists(CHROMIUM):
        pytest.skip("no chromium at /usr/bin/chromium")
    port = _free_port()
    env = {**os.environ, "TRITON_INTERPRET": os.environ.get("TRITON_INTERPRET", "1")}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
                             "--server.headless", "true", "--server.port", str(port),
                             "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read().strip() == b"ok":
                    break
            except OSError:
                pass
            if time.time() > deadline or proc.poll() is not None:
                raise RuntimeError("streamlit did not start")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _wait_idle(page, timeout=60_000):
    from playwright.sync_api import expect

    page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=timeout)
    page.wait_for_selector(IDLE, timeout=timeout)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout)


def _no_error(page):
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0


def _shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    h = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": 1400, "height": max(int(h), 900)})
    page.wait_for_timeout(600)
    path = SHOTS / name
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    return path


@pytest.mark.parametrize("lang,key,shot_step", PLAN)
def test_play_and_present(server, browser, lang, key, shot_step):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(f"{server}/demos?demo={key}&step=0&lang={lang}")
        _wait_idle(page)
        expect(page.get_by_text(t("demos", f"{key}.step0", lang))).to_be_visible(timeout=60_000)
        n = demos.num_steps(key)
        for s in range(1, n):
            page.get_by_role("button", name=t("demos", "ui.next", lang)).click()
            expect(page.get_by_text(t("demos", f"{key}.step{s}", lang))).to_be_visible(timeout=60_000)
            _wait_idle(page)
            _no_error(page)
        expect(page.get_by_role("button", name=t("demos", "ui.next", lang))).to_be_disabled()
        page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg')
        _shot(page, f"demo_{key}_{lang}_end.png")

        # the link to a presenter-mode step restores it
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto(f"{server}/demos?demo={key}&step={shot_step}&lang={lang}&presenter=1")
        _wait_idle(page)
        expect(page.get_by_text(t("demos", f"{key}.step{shot_step}", lang))).to_be_visible(timeout=60_000)
        page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg')
        _no_error(page)
        _shot(page, f"presenter_{key}_{lang}_step{shot_step}_fig1.png")
        page.get_by_role("button", name=t("demos", "ui.fig_next", lang)).click()
        page.wait_for_timeout(300)
        _wait_idle(page)
        page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg')
        _shot(page, f"presenter_{key}_{lang}_step{shot_step}_fig2.png")
    finally:
        page.close()


def test_notations_page(server, browser):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(f"{server}/notations?lang=zh")
        _wait_idle(page)
        expect(page.get_by_text(t("notations", "title", "zh"))).to_be_visible(timeout=60_000)
        _no_error(page)
        _shot(page, "notations_zh.png")
    finally:
        page.close()
