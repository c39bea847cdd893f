"""Classroom load: N students, one chromium, each acting every few seconds (issue 11).

    .venv/bin/python scripts/bench_load.py --sessions 30 --duration 90 [--period 5] [--hostile]
                                           [--url http://127.0.0.1:8501 --server-pid PID] [--json OUT]

Starts ``streamlit run app.py`` itself (unless ``--url``), opens N browser contexts in ONE headless
chromium (small viewport), half of them on the Guided demos page, half on Step through (each on its
own demo / scenario, taken in turn). Every ``--period`` seconds (each student with its own phase)
a student presses the page's next-step button (Next; Back on the way back once at the end) and the
time from the click to the page being idle again (the step slider shows the new step, the script is
not running, no status widget) is one latency sample. ``--hostile``: one more session uploads a
several-MB valid dump (.npz, new bytes each time) on the Debug dumps page, side A then B, as fast
as the page lets it. The server's RSS (its process and children, from /proc) is sampled every
0.5 s. Prints p50/p95/max latency, RSS at start/peak/end, the load average and who used the CPU;
``--json OUT`` writes the same figures (atomically: a temp file, then os.replace).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage", "--disable-extensions",
        "--disable-renderer-backgrounding", "--disable-background-timer-throttling",
        "--disable-backgrounding-occluded-windows"]
VIEWPORT = {"width": 1000, "height": 700}
TIMEOUT_MS = 60_000
# --no-render: the browser never loads the plotly and dataframe renderers (their chunks are refused),
# so on a 2-core box chromium stops drawing 30 pages of charts; the server still builds and sends
# every chart (the same messages), the page still reruns and goes idle.
NO_RENDER = re.compile(r"/static/js/(PlotlyChart|DataFrame)\.[^/]*\.js")

# JS: the page is idle (connected, script not running, no status widget); the step slider (the
# first slider of the main area) shows ``want`` when ``want`` is not null.
IDLE_JS = """(want) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning'
      || app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (!document.querySelector('[data-testid="stAppViewContainer"]')) return false;
  if (want === null) return true;
  const s = document.querySelector('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]');
  return !!s && Number(s.value) === want;
}"""
STEP_JS = """() => { const s = document.querySelector('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]');
  return s ? [Number(s.value), Number(s.max)] : null; }"""


# --- the server and its memory ---------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(opts=()) -> tuple[subprocess.Popen, str]:
    """``streamlit run app.py`` on a free port (the load and browser benches' server), with
    ``--OPTION VALUE`` for each ``OPTION=VALUE`` in ``opts``; (process, url) once it is healthy."""
    port = _free_port()
    env = {**os.environ, "TRITON_INTERPRET": os.environ.get("TRITON_INTERPRET", "1")}
    extra = [a for o in opts for a in ("--" + o.split("=", 1)[0], o.split("=", 1)[1])]
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--browser.gatherUsageStats", "false", *extra],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit("streamlit did not become healthy")


def _children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    out.append(int(d))
            except OSError:
                pass
    return out


def tree(pid: int) -> list[int]:
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += _children(p)
    return seen


def rss_bytes(pid: int) -> int:
    """VmRSS of ``pid`` and its children (a process pool's workers included)."""
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def cpu_seconds(pids) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            pass
    return total


def machine_cpu() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


class Sampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.every, self.samples, self.stop = pid, every, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.samples.append((time.time(), rss_bytes(self.pid)))
            self.stop.wait(self.every)


# --- the hostile upload -------------------------------------------------------------------------------

def big_dump(seed: int, rows: int, width: int = 2048):
    """A valid dump of ``rows`` x ``width`` tables (CPU table and device mirror), different per seed."""
    import numpy as np

    from kvviz.dumps.format import Dump

    cnt = np.full(rows, width, dtype=np.int32)
    cnt[seed % rows] -= 1
    bt = np.arange(1, rows * width + 1, dtype=np.int32).reshape(rows, width)
    bt[seed % rows, width - 1] = 0
    return Dump(block_size=16, num_blocks=rows * width + 1, num_reqs=rows, block_table=bt,
                num_blocks_per_row=cnt, block_table_device=bt.copy(), num_reqs_padded=rows)


def big_dump_bytes(seed: int, rows: int = 512, width: int = 2048) -> bytes:
    """``big_dump`` as an .npz (4 MiB tables, ~10 MB in all), new bytes per seed."""
    from kvviz.dumps.format import dump_to_npz_bytes

    return dump_to_npz_bytes(big_dump(seed, rows, width))


def write_json(res: dict, path: str) -> None:
    """The results as JSON, written atomically (kvviz.files.atomic_writer)."""
    from kvviz.files import atomic_writer

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(path) as f:
        json.dump(res, f, indent=1)


# --- the students ---------------------------------------------------------------------------------------

def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


async def idle(page, want=None):
    await page.wait_for_function(IDLE_JS, arg=want, polling=100, timeout=TIMEOUT_MS)


async def student(i, browser, url, args, t_end, out):
    """Student ``i``: demos (even) or step through (odd); one action every period."""
    from kvviz.views import demo_catalogue as demos
    from kvviz.views import scenarios as stepper

    ctx = await browser.new_context(viewport=VIEWPORT)
    if args.no_render:
        await ctx.route(NO_RENDER, lambda route: route.abort())
    page = await ctx.new_page()
    on_demos = i % 2 == 0 or args.only == "demos"
    if args.only == "step":
        on_demos = False
    if on_demos:
        key = demos.DEMO_KEYS[(i // 2) % len(demos.DEMO_KEYS)]
        where, button = f"{url}/demos?demo={key}&step=0&lang=en", '.st-key-demos_next button'
        back = '.st-key-demos_prev button'
    else:
        key = stepper.NAMES[(i // 2) % len(stepper.NAMES)]
        where, button = f"{url}/step_through?scenario={key}&step=0&lang=en", '.st-key-step-next button'
        back = '.st-key-step-back button'
    rec = {"student": i, "page": "demos" if on_demos else "step_through", "what": key, "lat": [], "errors": 0}
    out.append(rec)
    try:
        t0 = time.perf_counter()
        await page.goto(where, timeout=TIMEOUT_MS)
        await idle(page, 0)
        rec["first_load"] = time.perf_counter() - t0
        direction = 1
        nxt = time.time() + random.uniform(0, args.period)   # each student its own phase
        while True:
            await asyncio.sleep(max(0.0, nxt - time.time()))
            if time.time() >= t_end:
                break
            nxt += args.period
            cur, top = await page.evaluate(STEP_JS)
            if cur + direction > top or cur + direction < 0:
                direction = -direction
            want = cur + direction
            t0 = time.perf_counter()
            try:
                await page.click(button if direction > 0 else back, timeout=TIMEOUT_MS)
                await idle(page, want)
                rec["lat"].append(time.perf_counter() - t0)
            except Exception as e:   # noqa: BLE001 - a timeout is a sample too: counted, not hidden
                rec["errors"] += 1
                rec.setdefault("error", repr(e)[:200])
                await page.goto(where, timeout=TIMEOUT_MS)
                await idle(page, 0)
                direction = 1
    finally:
        await ctx.close()


async def hostile(browser, url, args, t_end, out):
    from kvviz.texts.i18n import t

    ctx = await browser.new_context(viewport=VIEWPORT)
    if args.no_render:
        await ctx.route(NO_RENDER, lambda route: route.abort())
    page = await ctx.new_page()
    rec = {"student": "hostile", "page": "dumps", "lat": [], "errors": 0, "bytes": 0}
    out.append(rec)
    tmp = Path(tempfile.mkdtemp(prefix="kvviz_hostile_"))
    try:
        await page.goto(f"{url}/dumps?lang=en", timeout=TIMEOUT_MS)
        await idle(page)
        await page.get_by_text(t("dumps", "src.upload", "en"), exact=True).click()
        await page.wait_for_timeout(300)
        await idle(page)
        seed = 0
        while time.time() < t_end:
            seed += 1
            f = tmp / f"dump_{seed % 4}.npz"
            data = big_dump_bytes(seed)
            f.write_bytes(data)
            rec["bytes"] += len(data)
            side = seed % 2                    # A, B, A, B, ...
            t0 = time.perf_counter()
            try:
                await page.locator('input[type="file"]').nth(side).set_input_files(str(f), timeout=TIMEOUT_MS)
                await page.wait_for_timeout(300)
                await idle(page)
                rec["lat"].append(time.perf_counter() - t0)
            except Exception as e:   # noqa: BLE001
                rec["errors"] += 1
                rec.setdefault("error", repr(e)[:200])
        rec["uploads"] = seed
    finally:
        await ctx.close()
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()


async def drive(url, args):
    from playwright.async_api import async_playwright

    t_start = time.time()
    t_end = t_start + args.ramp + args.duration
    out: list[dict] = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        tasks = []
        for i in range(args.sessions):
            tasks.append(asyncio.create_task(student(i, browser, url, args, t_end, out)))
            await asyncio.sleep(args.ramp / max(args.sessions, 1))     # students arrive over the ramp
        if args.hostile:
            tasks.append(asyncio.create_task(hostile(browser, url, args, t_end, out)))
        res = await asyncio.gather(*tasks, return_exceptions=True)
        for r in res:
            if isinstance(r, Exception):
                print("task failed:", repr(r)[:300], file=sys.stderr)
        browser_pid = None
        await browser.close()
    return out, browser_pid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--duration", type=float, default=90, help="seconds of measured acting after the ramp")
    ap.add_argument("--ramp", type=float, default=None, help="seconds over which students arrive (default sessions)")
    ap.add_argument("--period", type=float, default=5.0)
    ap.add_argument("--hostile", action="store_true")
    ap.add_argument("--no-render", action="store_true",
                    help="browser skips drawing charts and tables (server work unchanged)")
    ap.add_argument("--only", choices=("demos", "step"), default=None, help="every student on one page")
    ap.add_argument("--url", default=None, help="a running server (then --server-pid for its RSS)")
    ap.add_argument("--server-pid", type=int, default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    if args.ramp is None:
        args.ramp = float(max(5, args.sessions))
    proc = None
    if args.url:
        url, pid = args.url, args.server_pid
    else:
        proc, url = start_server()
        pid = proc.pid
    try:
        sampler = Sampler(pid) if pid else None
        if sampler:
            sampler.start()
            time.sleep(1.0)
        cpu0, mach0, t0 = cpu_seconds(tree(pid)) if pid else 0.0, machine_cpu(), time.time()
        out, _ = asyncio.run(drive(url, args))
        cpu1, mach1, t1 = cpu_seconds(tree(pid)) if pid else 0.0, machine_cpu(), time.time()
        load = os.getloadavg()
        if sampler:
            sampler.stop.set()
            sampler.join()
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    students = [r for r in out if r["student"] != "hostile"]
    lat = [x for r in students for x in r["lat"]]
    by_page = {pg: [x for r in students if r["page"] == pg for x in r["lat"]] for pg in ("demos", "step_through")}
    host = [r for r in out if r["student"] == "hostile"]
    rss = [b for _, b in sampler.samples] if sampler else []
    busy = (mach1[0] - mach0[0]) / max(mach1[1] - mach0[1], 1)
    ncpu = os.cpu_count() or 1
    res = {
        "label": args.label, "sessions": args.sessions, "period_s": args.period, "duration_s": args.duration,
        "ramp_s": args.ramp, "hostile": args.hostile, "no_render": args.no_render, "date": time.strftime("%Y-%m-%d %H:%M"),
        "actions": len(lat), "errors": sum(r["errors"] for r in students),
        "p50_s": pct(lat, 50), "p95_s": pct(lat, 95), "max_s": max(lat) if lat else None,
        "by_page": {pg: {"n": len(v), "p50_s": pct(v, 50), "p95_s": pct(v, 95)} for pg, v in by_page.items()},
        "first_load_p50_s": pct([r["first_load"] for r in students if "first_load" in r], 50),
        "first_load_max_s": max([r["first_load"] for r in students if "first_load" in r], default=None),
        "rss_start_mb": rss[0] / 2**20 if rss else None, "rss_peak_mb": max(rss) / 2**20 if rss else None,
        "rss_end_mb": rss[-1] / 2**20 if rss else None,
        "loadavg_1_5_15": [round(x, 2) for x in load],
        "machine_busy_pct": round(100 * busy, 1),
        "server_cpu_pct_of_machine": round(100 * (cpu1 - cpu0) / ((t1 - t0) * ncpu), 1),
        "errors_seen": [r["error"] for r in students if "error" in r][:3],
    }
    if host:
        h = host[0]
        res["hostile_uploads"] = len(h["lat"])
        res["hostile_p50_s"] = pct(h["lat"], 50)
        res["hostile_errors"] = h["errors"]
        res["hostile_mb_sent"] = round(h["bytes"] / 2**20, 1)
    print(f"{args.sessions} sessions{' + hostile' if args.hostile else ''}{' (no render)' if args.no_render else ''}, period {args.period:g} s, "
          f"{args.duration:g} s: {res['actions']} actions, {res['errors']} errors")
    if lat:
        print(f"  latency p50 {res['p50_s']:.2f} s, p95 {res['p95_s']:.2f} s, max {res['max_s']:.2f} s"
              + "".join(f"  | {pg} n={v['n']} p50 {v['p50_s'] or 0:.2f} p95 {v['p95_s'] or 0:.2f}"
                        for pg, v in res["by_page"].items() if v["n"]))
    if rss:
        print(f"  server RSS start {res['rss_start_mb']:.0f} MB, peak {res['rss_peak_mb']:.0f} MB, "
              f"end {res['rss_end_mb']:.0f} MB")
    print(f"  load average {res['loadavg_1_5_15']}, machine busy {res['machine_busy_pct']} %, "
          f"server {res['server_cpu_pct_of_machine']} % of the machine (the rest: chromium, this script)")
    if host:
        print(f"  hostile: {res['hostile_uploads']} uploads ({res['hostile_mb_sent']} MB), "
              f"p50 {res['hostile_p50_s'] or 0:.2f} s, {res['hostile_errors']} errors")
    if args.json:
        write_json(res, args.json)


if __name__ == "__main__":
    main()
