"""Real browser (Playwright + Debian chromium): open every page of issue 4, drive its main
control, save full-page screenshots to artifacts/screenshots/."""
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing (apt-get install chromium)")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    env = {**os.environ, "TRITON_INTERPRET": os.environ.get("TRITON_INTERPRET", "1")}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--browser.gatherUsageStats", "false"],
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
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def page(server):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        yield pg
        browser.close()


def wait_idle(page, timeout=90_000):
    from playwright.sync_api import expect

    page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=timeout)
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=timeout)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout)


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(500)
    h = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": 1400, "height": max(h, 1000)})
    page.wait_for_timeout(700)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 1000})


def no_exception(page):
    assert page.locator('[data-testid="stException"]').count() == 0


def set_number(page, label, value):
    box = page.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")
    wait_idle(page)


def test_home(server, page):
    from playwright.sync_api import expect

    page.goto(server)
    wait_idle(page)
    expect(page.get_by_text("CPU, Triton interpreter").or_(page.get_by_text("compiled Triton"))).to_be_visible()
    no_exception(page)
    shot(page, "01_home")


def test_batch(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/batch")
    wait_idle(page)
    page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=60_000)
    set_number(page, "Token of the step (or click a marker in the slot mapping)", 12)
    expect(page.get_by_text("slot = 4 × 4 + 2 = 18")).to_be_visible(timeout=30_000)
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 3
    no_exception(page)
    shot(page, "02_batch_token12")
    set_number(page, "Pool size (blocks)", 5)
    expect(page.get_by_text("pool is too small")).to_be_visible()
    shot(page, "03_batch_bad_pool")
    set_number(page, "Pool size (blocks)", 48)


def test_batch_link(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/batch?bs=8&kbs=8&nb=32&len=128&cg=1&reqs=5.5.1,12.12.1,16.16.1&tok=2")
    wait_idle(page)
    expect(page.get_by_text("match their references")).to_be_visible(timeout=60_000)
    no_exception(page)
    shot(page, "04_batch_link_decode")


def test_step_through(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/step_through")
    wait_idle(page)
    for _ in range(3):
        page.get_by_role("button", name="Next").click()
        wait_idle(page)
    expect(page.get_by_text("Step 3 of 8")).to_be_visible()
    no_exception(page)
    shot(page, "05_step_through_step3")


def test_prefixes(server, page):
    page.goto(server + "/prefixes?sc=prefixes&step=2")
    wait_idle(page)
    page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=60_000)
    no_exception(page)
    shot(page, "06_prefixes_step2")


def test_csr(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/csr")
    wait_idle(page)
    set_number(page, "Empty padding rows to add", 3)
    expect(page.get_by_text("equal the reference")).to_be_visible(timeout=60_000)
    no_exception(page)
    shot(page, "07_csr")


def test_layout(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/layout")
    wait_idle(page)
    set_number(page, "byte offset", 104)
    expect(page.get_by_text("NHD: byte 104")).to_be_visible()
    no_exception(page)
    shot(page, "08_layout")


def test_pcie(server, page):
    page.goto(server + "/pcie")
    wait_idle(page)
    set_number(page, "Requests in the batch", 256)
    no_exception(page)
    shot(page, "09_pcie_256")


def test_kernel_lab(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/kernel_lab")
    wait_idle(page)
    page.get_by_role("button", name="Run the benchmark").click()
    expect(page.get_by_text("measurements on")).to_be_visible(timeout=180_000)
    wait_idle(page)
    no_exception(page)
    shot(page, "10_kernel_lab")


def test_language_persists_across_pages(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/layout?lang=zh")
    wait_idle(page)
    expect(page.get_by_text("内存布局：NHD 与 HND")).to_be_visible()
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="逐步执行").click()
    wait_idle(page)
    expect(page.get_by_text("逐步执行场景")).to_be_visible(timeout=60_000)
    shot(page, "11_step_zh")
