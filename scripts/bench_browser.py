"""Browser-felt latency (issue 12): action -> page idle, in a real chromium, against the real server.

    .venv/bin/python scripts/bench_browser.py [--n 7] [--only batch.token,pcie.reqs] [--label before]
                                              [--url http://127.0.0.1:8501] [--json OUT]

Starts ``streamlit run app.py`` (headless, a free port; unless ``--url``), opens Debian's chromium
through Playwright (1400 x 1000) and drives each interaction ``--n`` times after one warm-up. One
sample is the time, measured inside the page (``performance.now()``), from the action's event (the
Enter that commits a number or text, the click on a button or on a menu option) to the last DOM
change of the rerun it caused: the script has run (``data-test-script-state`` went to ``running``
and back to ``notRunning``) and nothing in the document changed for ``QUIET_MS`` afterwards (the
quiet time itself is not counted; a fragment's rerun does not flip the script state, so there the
last DOM change within NO_RUN_MS counts). Beside the wall time it records, per sample, the CPU time
the server process and the browser (all its processes) spent, from /proc: on a shared machine the
wall time grows with the load average, the CPU time hardly does. Prints a table of medians and p90s
and writes the same figures as JSON (atomically) to artifacts/bench/browser_<label>.json (or
``--json``), with /proc/loadavg before and after. ``--no-plotly`` (a diagnosis) refuses plotly's
renderer chunk, to see how much of the time is drawing charts.

First visits (issue 25), ``visit.PAGE`` (``--only visit`` for all of them): every page of app.py's
navigation, from the navigation's start to the page idle (the same rule), each in a new tab of one
browser context (a new session; app.py and the page's session work counted) after one untimed visit
of every page (the server's process-wide caches and the HTTP cache warm).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kvviz.files import atomic_writer  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
from bench_load import start_server  # noqa: E402  (the load benches' server, one copy)

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage", "--disable-renderer-backgrounding",
        "--disable-background-timer-throttling"]
QUIET_MS = 500            # no DOM change for this long after the run ended: the page is idle
NO_RUN_MS = 4000          # an action that started no run at all: give up on it after this
TIMEOUT_S = 120

# Installed in every document: records the armed action's time and every DOM change after it.
PROBE = """
(() => {
  const kv = window.__kv = {t0: null, armed: false, last: 0, ran: false, ranEnd: null};
  const start = () => {
    new MutationObserver((muts) => {
      if (kv.t0 === null) return;
      kv.last = performance.now();
      for (const m of muts) {
        if (m.type === 'attributes' && m.attributeName === 'data-test-script-state') {
          const s = m.target.getAttribute('data-test-script-state');
          if (s === 'running') kv.ran = true;
          else if (kv.ran) kv.ranEnd = performance.now();
        }
      }
    }).observe(document.documentElement, {subtree: true, childList: true, attributes: true,
                                           characterData: true});
    const mark = (e) => {
      if (!kv.armed) return;
      if (e.type === 'keydown' && e.key !== 'Enter') return;
      kv.armed = false; kv.t0 = performance.now(); kv.last = kv.t0; kv.ran = false; kv.ranEnd = null;
    };
    document.addEventListener('keydown', mark, true);
    document.addEventListener('click', mark, true);
  };
  if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
})();
"""
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'

# A first visit (issue 25): armed from the navigation's start (performance.now() is 0 there); the
# app's element is created already running, so a run also counts when a DOM change finds it running.
FIRST = """
(() => {
  const kv = window.__kv;
  kv.t0 = 0; kv.last = 0; kv.first = true;
  new MutationObserver(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (app && app.getAttribute('data-test-script-state') === 'running') kv.ran = true;
    else if (app && kv.ran && kv.ranEnd === null) kv.ranEnd = performance.now();
  }).observe(document, {subtree: true, childList: true, attributes: true});
})();
"""




TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, user + system CPU ms) of a live process, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) * TICK_MS


def tree_cpu_ms(root: int | None) -> float:
    """CPU ms used so far by ``root`` and every live descendant (CPU time, unlike wall time, hardly
    depends on what else the shared machine runs)."""
    if root is None:
        return 0.0
    stats = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _stat(int(d))
            if st is not None:
                stats[int(d)] = st
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        kids.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += stats[pid][1]
        todo += kids.get(pid, [])
    return total


def find_pid(tag: str) -> int | None:
    """The process whose command line holds ``tag`` (the browser this script launched)."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if tag.encode() in Path(f"/proc/{d}/cmdline").read_bytes():
                    return int(d)
            except OSError:
                continue
    return None


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "?"


# --- waiting ---------------------------------------------------------------------------------------

def settle(page, timeout_s: float = TIMEOUT_S) -> None:
    """Wait for a loaded page to be idle (connected, not running, no status widget, quiet)."""
    page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=timeout_s * 1000)
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=timeout_s * 1000)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                           timeout=timeout_s * 1000)
    page.wait_for_timeout(QUIET_MS)


def arm(page) -> None:
    page.evaluate("() => { window.__kv.armed = true; window.__kv.t0 = null; }")


# Resolves (one call, checked inside the page every 50 ms: no polling from outside, which would load
# the renderer it measures) when the armed action's rerun is over: connected, not running, no status
# widget, a run seen (or none for NO_RUN_MS) and no DOM change for QUIET_MS.
WAIT_JS = """([quiet, noRun, timeout]) => new Promise((resolve) => {
  const kv = window.__kv;
  const start = performance.now();
  // every chart on screen drawn (plotly.js loading is a silent gap longer than the quiet time)
  const drawn = () => [...document.querySelectorAll('div.kv-live-chart, [data-testid="stPlotlyChart"]')].every((d) => {
    const r = d.getBoundingClientRect();
    const seen = r.bottom > 0 && r.top < window.innerHeight && r.width > 0 && r.height > 0;
    return !seen || d.querySelector('.main-svg') !== null || d.textContent.length > 0;
  });
  const check = () => {
    const now = performance.now();
    const app = document.querySelector('[data-testid="stApp"]');
    const idle = app && app.getAttribute('data-test-script-state') === 'notRunning'
      && app.getAttribute('data-test-connection-state') === 'CONNECTED'
      && !document.querySelector('[data-testid="stStatusWidget"]');
    if (kv.t0 !== null && idle && now - kv.last >= quiet && (kv.ran || now - kv.t0 >= noRun) && drawn()) {
      resolve({t0: kv.t0, last: kv.last, ranEnd: kv.ranEnd});
    } else if (now - start > timeout) {
      resolve(null);
    } else {
      setTimeout(check, 50);
    }
  };
  check();
})"""


def measured(page, timeout_s: float = TIMEOUT_S) -> tuple[float, float | None]:
    """Milliseconds from the armed action to the last DOM change of its rerun, and to the end of
    the script run (the page's state going back to notRunning; None if no run was seen)."""
    s = page.evaluate(WAIT_JS, [QUIET_MS, NO_RUN_MS, timeout_s * 1000])
    if s is None:
        raise TimeoutError("the page did not become idle")
    return s["last"] - s["t0"], (s["ranEnd"] - s["t0"]) if s["ranEnd"] is not None else None


# --- actions -----------------------------------------------------------------------------------------

def number(label: str, values):
    """Type each of ``values`` in turn into the number or text input ``label`` and press Enter."""
    it = iter(values)

    def act(page):
        box = page.get_by_label(label, exact=True)
        box.fill(str(next(it)))
        arm(page)
        box.press("Enter")
    return act


def click_button(name: str, reload_url: str):
    """Click the button ``name``; when it is disabled (the end of a walk), reload the page first."""
    def act(page):
        btn = page.get_by_role("button", name=name, exact=True)
        if btn.is_disabled():
            page.goto(re.match(r"https?://[^/]+", page.url).group(0) + reload_url)
            settle(page)
            btn = page.get_by_role("button", name=name, exact=True)
        arm(page)
        btn.click()
    return act


def pick(page, label: str, option: str, measure: bool) -> None:
    page.get_by_test_id("stSelectbox").filter(has_text=label).click()
    opt = page.get_by_role("option", name=option, exact=True)
    if measure:
        arm(page)
    opt.click()


def preset(to: str, back: str):
    """Choose the preset ``to`` (measured), then ``back`` (not measured) for the next sample."""
    state = {"first": True}

    def act(page):
        if not state["first"]:
            pick(page, "Preset batch", back, measure=False)
            settle(page)
        state["first"] = False
        pick(page, "Preset batch", to, measure=True)
    return act


def cycle(values, n):
    return [values[i % len(values)] for i in range(n)]


from kvviz.texts.i18n import t as _t  # noqa: E402 - the menu's own words, whatever they become

BIG = _t("batch", "p_big", "en")
MIXED = _t("batch", "p_default", "en")
TOKEN = "Token of the step (or click a marker in the slot mapping)"


def interactions(n: int):
    """(name, inputs, path, setup, action): every interaction of issue 12."""
    k = n + 1   # one warm-up
    return [
        ("batch.token", "default", "/batch", None, number(TOKEN, cycle(list(range(3, 30, 2)), k))),
        ("batch.block_size", "default", "/batch", None,
         number("Block size (tokens)", cycle([8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 4], k))),
        ("step_through.next", "default", "/step_through", None, click_button("Next", "/step_through")),
        ("demos.forward", "default", "/demos", None, click_button("Forward ▶", "/demos")),
        ("notations.position", "default", "/notations", None,
         number("Token position", cycle([100, 200, 150, 50, 250, 20, 180, 230], k))),
        ("pcie.reqs", "default", "/pcie", None, number("Requests in the batch", cycle(list(range(65, 200, 7)), k))),
        ("layout.decode", "default", "/layout", None,
         number("byte offset", cycle([104, 106, 8, 64, 130, 200, 18, 96, 40], k))),
        ("batch.big_build", "256x2048", "/batch", None, preset(BIG, MIXED)),
        ("batch.big_token", "256x2048", "/batch", lambda page: (pick(page, "Preset batch", BIG, False), settle(page)),
         number(TOKEN, cycle([5, 77, 130, 200, 31, 250, 9, 160], k))),
    ]


def page_paths() -> list[tuple[str, str]]:
    """(name, url path) of every page of app.py's navigation (ui.PAGES; the first is the default, "/")."""
    from ui import PAGES
    return [(Path(f).stem, "/" if i == 0 else "/" + Path(f).stem) for i, (f, _, _) in enumerate(PAGES)]


def first_visits(browser, url: str, n: int, only: set[str] | None, server_pid, browser_pid) -> list[dict]:
    """Every page's first visit (issue 25): navigation -> page idle in a new tab, so a new session
    (app.py and the page's own session work counted) on a warm server and a warm HTTP cache: one
    untimed visit of every page first, then ``n`` rounds of one timed visit per page."""
    pages = [(f"visit.{name}", path) for name, path in page_paths() 
             if not only or "visit" in only or f"visit.{name}" in only]
    if not pages:
        return []
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.add_init_script(PROBE + FIRST)
    got = {name: {"samples": [], "runs": [], "cpu_s": [], "cpu_b": [], "error": None} for name, _ in pages}
    try:
        for rnd in range(n + 1):              # round 0 warms the server's caches
            for name, path in pages:
                g = got[name]
                if g["error"]:
                    continue
                page = ctx.new_page()
                try:
                    cpu0 = tree_cpu_ms(server_pid), tree_cpu_ms(browser_pid)
                    page.goto(url + path)
                    ms, run_ms = measured(page)
                    cpu1 = tree_cpu_ms(server_pid), tree_cpu_ms(browser_pid)
                    if page.locator('[data-testid="stException"]').count():
                        raise RuntimeError("the page shows an exception")
                    if rnd:
                        g["samples"].append(round(ms, 1))
                        if run_ms is not None:
                            g["runs"].append(round(run_ms, 1))
                        g["cpu_s"].append(cpu1[0] - cpu0[0])
                        g["cpu_b"].append(cpu1[1] - cpu0[1])
                except Exception as e:  # noqa: BLE001 - one broken page: say so, measure the others
                    g["error"] = f"{type(e).__name__}: {e}"[:400]
                finally:
                    page.close()
    finally:
        ctx.close()
    rows = []
    for name, _ in pages:
        g = got[name]
        rows.append(_row(name, "default", g["samples"], g["runs"], g["cpu_s"], g["cpu_b"], g["error"]))
    return rows


def _row(name, inputs, samples, runs, cpu_server, cpu_browser, error) -> dict:
    row = {"interaction": name, "inputs": inputs, "n": len(samples), "error": error,
           "median_ms": round(statistics.median(samples), 1) if samples else None,
           "p90_ms": round(sorted(samples)[max(0, int(round(0.9 * len(samples))) - 1)], 1)
           if samples else None,
           "run_end_median_ms": round(statistics.median(runs), 1) if runs else None,
           "server_cpu_median_ms": round(statistics.median(cpu_server)) if cpu_server else None,
           "browser_cpu_median_ms": round(statistics.median(cpu_browser)) if cpu_browser else None,
           "samples_ms": samples}
    _say(row)
    return row


def _say(row) -> None:
    name, inputs, error = row["interaction"], row["inputs"], row["error"]
    if error:
        print(f"  {name:22s} {inputs:9s} FAILED: {error}", flush=True)
    else:
        print(f"  {name:22s} {inputs:9s} median {row['median_ms']:7.0f} ms   p90 {row['p90_ms']:7.0f} ms"
              f"   (script run ends at {row['run_end_median_ms']} ms; CPU server "
              f"{row['server_cpu_median_ms']} ms, browser {row['browser_cpu_median_ms']} ms)", flush=True)


NO_PLOTLY = re.compile(r"/static/js/PlotlyChart\.[^/]*\.js|/app/static/plotly/plotly-cartesian\.min\.js")


def run(url: str, n: int, only: set[str] | None, server_pid: int | None, no_plotly: bool = False) -> list[dict]:
    from playwright.sync_api import sync_playwright

    out = []
    tag = f"--kvviz-bench-tag={os.getpid()}-{time.time_ns()}"   # an unknown switch: chromium ignores it
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[*ARGS, tag])
        browser_pid = find_pid(tag)
        try:
            for name, inputs, path, setup, act in interactions(n):
                if only and name not in only:
                    continue
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                ctx.add_init_script(PROBE)
                if no_plotly:   # a diagnosis: the same reruns with plotly's renderer never loaded
                    ctx.route(NO_PLOTLY, lambda route: route.abort())
                page = ctx.new_page()
                samples, runs, cpu_server, cpu_browser, error = [], [], [], [], None
                try:
                    page.goto(url + path)
                    settle(page)
                    if setup:
                        setup(page)
                    for i in range(n + 1):
                        cpu0 = tree_cpu_ms(server_pid), tree_cpu_ms(browser_pid)
                        act(page)
                        ms, run_ms = measured(page)
                        cpu1 = tree_cpu_ms(server_pid), tree_cpu_ms(browser_pid)
                        shown = page.locator('[data-testid="stException"]')
                        if shown.count():
                            raise RuntimeError("the page shows an exception: " + shown.first.inner_text()[:300])
                        if i:           # the first one is the warm-up
                            samples.append(round(ms, 1))
                            if run_ms is not None:
                                runs.append(round(run_ms, 1))
                            cpu_server.append(cpu1[0] - cpu0[0])
                            cpu_browser.append(cpu1[1] - cpu0[1])
                    page.wait_for_timeout(200)
                except Exception as e:  # noqa: BLE001 - one broken interaction: say so, measure the others
                    error = f"{type(e).__name__}: {e}"[:400]
                finally:
                    ctx.close()
                row = _row(name, inputs, samples, runs, cpu_server, cpu_browser, error)
                out.append(row)
            out += first_visits(browser, url, n, only, server_pid, browser_pid)
        finally:
            browser.close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=7, help="samples per interaction (after one warm-up)")
    ap.add_argument("--only", default="", help="comma-separated interaction names")
    ap.add_argument("--label", default="now", help="name of this run in the JSON file name")
    ap.add_argument("--url", default=None, help="an already running server (not started or stopped here)")
    ap.add_argument("--no-plotly", action="store_true",
                    help="diagnosis: refuse plotly's renderer chunk (how much of the time is drawing charts)")
    ap.add_argument("--server-pid", type=int, default=None, help="with --url: its pid, for its CPU time")
    ap.add_argument("--json", default=None, help="output file (default artifacts/bench/browser_<label>.json)")
    a = ap.parse_args(argv)
    if a.n < 1:
        ap.error("--n must be at least 1")
    only = {s.strip() for s in a.only.split(",") if s.strip()} or None
    before = loadavg()
    t_start = time.time()
    proc = None
    url = a.url
    if url is None:
        proc, url = start_server()
    try:
        rows = run(url, a.n, only, proc.pid if proc is not None else a.server_pid, a.no_plotly)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    after = loadavg()
    result = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "label": a.label,
              "command": " ".join([Path(sys.executable).name, *sys.argv]), "cpus": os.cpu_count(),
              "loadavg_before": before, "loadavg_after": after, "wall_s": round(time.time() - t_start, 1),
              "quiet_ms": QUIET_MS, "no_plotly": a.no_plotly, "results": rows}
    out = Path(a.json) if a.json else ROOT / "artifacts" / "bench" / f"browser_{a.label}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(str(out)) as f:
        json.dump(result, f, indent=1)
    print("\n| interaction | inputs | n | median (ms) | p90 (ms) | run ends, median (ms) "
          "| CPU server / browser, median (ms) |\n|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        if r["error"]:
            print(f"| {r['interaction']} | {r['inputs']} | failed: {r['error'][:80]} | | | | |")
            continue
        run_end = "—" if r["run_end_median_ms"] is None else f"{r['run_end_median_ms']:.0f}"
        print(f"| {r['interaction']} | {r['inputs']} | {r['n']} | {r['median_ms']:.0f} | {r['p90_ms']:.0f} | {run_end} "
              f"| {r['server_cpu_median_ms']} / {r['browser_cpu_median_ms']} |")
    print(f"\nloadavg before: {before}\nloadavg after:  {after}\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
