"""``make serve`` for real: scripts/serve.py starts two replicas and HAProxy; pages and websockets pass
through the balancer, both replicas get students; a replica killed outright (SIGKILL) sends its
browser tab to the other replica, where the tab's URL rebuilds the same view; the launcher restarts
the dead replica (and reaps its worker processes); Ctrl-C stops everything.

One test function on purpose: a hall costs two Streamlit servers, and ``pytest -n 2`` would start one
per worker for tests split across workers."""
import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from browser_support import ARGS, CHROMIUM, ROOT, needs_chromium, wait_idle

sys.path.insert(0, str(ROOT / "scripts"))
from serve import server_states  # noqa: E402

HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
pytestmark = [pytest.mark.browser, needs_chromium(),
              pytest.mark.skipif(not os.path.exists(HAPROXY),
                                 reason="haproxy is missing (make test / .ci/run install it: apt-get install haproxy)")]
MAIN = '[data-testid="stMain"]'
APP = '[data-testid="stApp"]'
# the tab's connection states, kept in sessionStorage: a tab that reconnected reloads its link (ui/links.py),
# and the page marker (window.__kvOld) is gone once it has (H2: the tab is then restored from its address)
WATCH = """() => { window.__kvOld = true; sessionStorage.setItem('kvStates', '[]');
  new MutationObserver(() => { const s = JSON.parse(sessionStorage.getItem('kvStates'));
      s.push(document.querySelector('[data-testid="stApp"]').getAttribute('data-test-connection-state'));
      sessionStorage.setItem('kvStates', JSON.stringify(s)); })
    .observe(document.querySelector('[data-testid="stApp"]'),
             {attributes: true, attributeFilter: ['data-test-connection-state']}); }"""


def _three_free_ports() -> int:
    """A port P with P, P+1 and P+2 free (the balancer and two replicas)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            p = s.getsockname()[1]
        if p + 2 > 65535:
            continue
        try:
            for q in (p, p + 1, p + 2):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", q))
            return p
        except OSError:
            continue
    pytest.fail("no three consecutive free ports")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:          # a zombie is not alive
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def _until(what, seconds: float, step: float = 0.5):
    end = time.time() + seconds
    while time.time() < end:
        got = what()
        if got:
            return got
        time.sleep(step)
    return what()


def _state(run_dir):
    try:
        return json.loads((run_dir / "state.json").read_text())
    except (OSError, ValueError):
        return None


async def _two_students(url: str) -> list[float]:
    """Two websocket students (Streamlit's protocol) on Step through at once, through the balancer."""
    from bench_load_ws import Session

    ss = [Session(url, "step_through", {"lang": "en"}, 90) for _ in range(2)]
    for s in ss:
        await s.connect()
    try:
        out = [await s.rerun() for s in ss]
        assert all(s.widgets for s in ss), "a run through the balancer drew no widget"
        return out
    finally:
        for s in ss:
            await s.close()


def test_hall_balances_survives_a_killed_replica_and_stops(tmp_path):
    from playwright.sync_api import sync_playwright

    port = _three_free_ports()
    run_dir = tmp_path / "hall"
    log = open(tmp_path / "serve.log", "wb")
    launcher = subprocess.Popen([sys.executable, "scripts/serve.py", "--replicas", "2", "--port", str(port),
                                 "--bind", "127.0.0.1", "--run-dir", str(run_dir), "--warm-pages", "step_through"],
                                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        state = _until(lambda: (s := _state(run_dir)) and s["serving"] and s, 240)
        assert state, f"the hall did not start:\n{(tmp_path / 'serve.log').read_text()}"
        assert [r["port"] for r in state["replicas"]] == [port + 1, port + 2]
        assert all(r["ready"] for r in state["replicas"])
        # a page through the balancer, with the replica cookie
        with urllib.request.urlopen(url + "/", timeout=10) as r:
            assert r.status == 200 and re.search(r"KVVIZ_REPLICA=r[12]", r.headers.get("Set-Cookie", ""))
        # websockets through it, spread over both replicas (leastconn)
        before = server_states(run_dir)
        assert sorted(before) == ["r1", "r2"] and all(v["status"].startswith("UP") for v in before.values())
        asyncio.run(_two_students(url))
        after = server_states(run_dir)
        assert all(after[n]["stot"] > before[n]["stot"] for n in ("r1", "r2")), (before, after)

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = ctx.new_page()
            page.goto(url + "/step_through?lang=zh")
            wait_idle(page)
            for _ in range(3):                                # a student three steps in
                page.locator(".st-key-step-next button").click()
                page.wait_for_timeout(400)
                wait_idle(page)
            assert "step=3" in page.url, page.url
            link, view = page.url, page.inner_text(MAIN)
            assert re.search(r"[\u4e00-\u9fff]", view), "the page is not in Chinese"
            mine = {c["name"]: c["value"] for c in ctx.cookies()}["KVVIZ_REPLICA"]
            other = {"r1": "r2", "r2": "r1"}[mine]
            dead = next(r for r in state["replicas"] if r["name"] == mine)
            assert server_states(run_dir)[mine]["scur"] >= 1     # the tab's websocket is there

            page.evaluate(WATCH)                                # record the tab's connection states
            os.kill(dead["pid"], signal.SIGKILL)               # the replica dies mid-class
            t0 = time.time()

            def moved():
                cookie = {c["name"]: c["value"] for c in ctx.cookies()}["KVVIZ_REPLICA"]
                try:   # the tab reloads once reconnected: its old page goes away under these reads
                    return (cookie == other and page.evaluate("() => !window.__kvOld")
                            and page.get_attribute(APP, "data-test-connection-state") == "CONNECTED"
                            and page.inner_text(MAIN) == view)
                except Exception:  # noqa: BLE001 - mid-reload
                    return False
            back = _until(moved, 60)
            moved_s = time.time() - t0
            wait_idle(page)
            assert back and page.inner_text(MAIN) == view, "the tab did not come back to the same view"
            assert page.url == link
            seen = page.evaluate("() => JSON.parse(sessionStorage.getItem('kvStates'))")
            assert seen[0] != "CONNECTED" and seen[-1] == "CONNECTED", seen    # it lost its server, then found one
            assert server_states(run_dir)[other]["scur"] >= 1     # its websocket now on the other replica
            browser.close()
        print(f"tab restored on {other} {moved_s:.1f} s after {mine} was killed")

        # the launcher restarts the dead replica, reaps its workers, and the balancer takes it back once warm
        def restarted():
            s = _state(run_dir)
            r = next(r for r in s["replicas"] if r["name"] == mine) if s else None
            return r if r and r["restarts"] == 1 and r["ready"] and r["pid"] != dead["pid"] else None
        new = _until(restarted, 180)
        assert new and _alive(new["pid"]) and new["port"] == dead["port"], _state(run_dir)
        assert _until(lambda: server_states(run_dir)[mine]["status"].startswith("UP"), 30)
        assert not _group_alive(dead["pid"]), "the killed replica's worker processes were left behind"
        final = _state(run_dir)
    finally:
        launcher.send_signal(signal.SIGINT)                  # Ctrl-C
        try:
            rc = launcher.wait(timeout=40)
        except subprocess.TimeoutExpired:
            launcher.kill()
            raise
        finally:
            log.close()
    assert rc == 0
    pids = [final["haproxy_pid"]] + [r["pid"] for r in final["replicas"]]
    assert not any(_alive(p) for p in pids), "Ctrl-C left a replica or the balancer running"
    assert not any(_group_alive(r["pid"]) for r in final["replicas"]), "a replica's workers outlived it"
