"""Classroom load without a browser: N websocket students speaking Streamlit's protocol (issue 11).

    .venv/bin/python scripts/bench_load_ws.py --sessions 30 --duration 90 [--period 5] [--ramp S] [--hostile]
                                              [--url http://127.0.0.1:8501 --server-pids PID[,PID..]]
                                              [--serve N] [--json OUT]

The same classroom as ``scripts/bench_load.py``, but each student is one websocket to
``/_stcore/stream`` (subprotocol ``streamlit``) sending the BackMsgs a browser sends and reading the
ForwardMsgs it would draw; no chromium, so on a small machine the figures are the server's. Starts
``streamlit run app.py`` itself unless ``--url`` (then ``--server-pids`` for its RSS and CPU: each pid
with its descendants, so the pid of ``scripts/serve.py`` measures a whole hall: every replica, their
workers and the balancer). ``--serve N``: start the lecture hall itself (``scripts/serve.py --replicas
N``, HAProxy in front, every page warmed) and send every student through the balancer; each student's
websocket is its own connection there, so the balancer spreads them (leastconn) as it spreads browsers.

A student (half on Guided demos, half on Step through, in a seeded shuffled order; each on its own
demo / scenario in turn) opens
its page (a ``rerun_script`` with the page name and the query string a shared link carries), learns
the page's button ids from the run's deltas (widget ids end in the button's key), then every
``--period`` seconds (each student its own random phase) presses Next (Prev / Back on the way back,
whenever Next is disabled): a ``rerun_script`` whose widget states hold the button's
``trigger_value``; a button drawn inside an ``st.fragment`` is pressed as a browser presses it, a
rerun of that fragment only (``--no-fragments``: the whole page). Latency = send -> the
``script_finished`` ForwardMsg that ends that run (a run
that ends early for a rerun does not count as the end). ``--hostile``: one more session on the Debug
dumps page switches the source to Upload and pastes a large valid dump JSON into paste box A, then
B, ... as fast as the page answers (new content each time, so the page parses it again); like a
browser it sends both boxes' text with every rerun. The server's RSS (its process and children,
from /proc) is sampled every 0.5 s. Prints p50/p95/max latency, errors/timeouts, RSS start/peak/end,
the load average and the CPU shares (server, each of its processes by kind, this client, the
machine); ``--json OUT`` writes them
(atomically: a temp file, then os.replace).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode, urlparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_load import (_free_port, big_dump, start_server, cpu_seconds, machine_cpu, pct, rss_bytes,  # noqa: E402,F401
                        tree, write_json)
from bench_hall import Sampler, cpu_by_kind, cpu_by_pid, start_hall  # noqa: E402

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ClientState_pb2 import ContextInfo  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

FINISHED_EARLY = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")
COMPILE_ERROR = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_WITH_COMPILE_ERROR")


class Session:
    """One browser tab, as the server sees it: a websocket, the current page and query string, and
    the widgets the last run drew (key -> element) so a press can name its widget id."""

    def __init__(self, url: str, page: str, query: dict, timeout: float):
        u = urlparse(url)
        self.ws_url = f"ws://{u.netloc}/_stcore/stream"
        self.http_url = url
        self.page, self.query, self.timeout = page, urlencode(query), timeout
        self.page_hash = ""
        self.widgets: dict[str, tuple[str, object]] = {}    # widget id -> (element type, element proto)
        self.fragments: dict[str, str] = {}                  # widget id -> the st.fragment it is drawn in
        self.use_fragments = True                            # a press inside a fragment reruns only it
        self.ws = None
        self.bytes_in = 0
        self.exceptions: list[str] = []

    async def connect(self):
        from websockets.asyncio.client import connect

        self.ws = await connect(self.ws_url, subprotocols=["streamlit"], max_size=None,
                                open_timeout=self.timeout, ping_interval=None, close_timeout=2)

    async def close(self):
        if self.ws is not None:
            await self.ws.close()

    def _client_state(self, widget_states=(), fragment_id=""):
        b = BackMsg()
        cs = b.rerun_script
        if fragment_id:
            cs.fragment_id = fragment_id
        cs.query_string = self.query
        if self.page_hash:
            cs.page_script_hash = self.page_hash
        else:
            cs.page_name = self.page
        cs.context_info.CopyFrom(ContextInfo(timezone="UTC", timezone_offset=0, locale="en-US",
                                             url=f"{self.http_url}/{self.page}?{self.query}",
                                             is_embedded=False, color_scheme="light"))
        for w in widget_states:
            cs.widget_states.widgets.append(w)
        return b

    async def rerun(self, widget_states=(), fragment_id="") -> float:
        """Send one rerun_script (of the fragment ``fragment_id`` only, when given, as a browser does
        for a widget inside an ``st.fragment``); read until its run has finished; the seconds it took."""
        b = self._client_state(widget_states, fragment_id)
        data = b.SerializeToString()
        t0 = time.perf_counter()
        await self.ws.send(data)
        fresh: dict[str, tuple[str, object]] = {}
        deadline = t0 + self.timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no script_finished within {self.timeout:g} s")
            raw = await asyncio.wait_for(self.ws.recv(), left)
            self.bytes_in += len(raw)
            m = ForwardMsg()
            m.ParseFromString(raw)
            kind = m.WhichOneof("type")
            if kind == "delta" and m.delta.WhichOneof("type") == "new_element":
                el = m.delta.new_element
                et = el.WhichOneof("type")
                inner = getattr(el, et) if et else None
                wid = getattr(inner, "id", "") if inner is not None else ""
                if isinstance(wid, str) and wid.startswith("$$ID"):
                    fresh[wid] = (et, inner)
                    if m.delta.fragment_id:
                        self.fragments[wid] = m.delta.fragment_id
                elif et == "exception":
                    self.exceptions.append(f"{el.exception.type}: {el.exception.message}"[:200])
                elif et == "alert" and el.alert.format == el.alert.ERROR:
                    self.exceptions.append(f"st.error: {el.alert.body}"[:200])
            elif kind == "new_session":
                if m.new_session.page_script_hash:
                    self.page_hash = m.new_session.page_script_hash
            elif kind == "navigation":
                if m.navigation.page_script_hash:
                    self.page_hash = m.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query = m.page_info_changed.query_string
            elif kind == "page_not_found":
                raise RuntimeError(f"page not found: {m.page_not_found.page_name}")
            elif kind == "script_finished":
                if m.script_finished == FINISHED_EARLY:
                    continue                       # the run rerun itself: wait for the real end
                if m.script_finished == COMPILE_ERROR:
                    raise RuntimeError("script compile error")
                # a fragment's run redraws only the fragment: the page's other widgets stay
                kept = {k: v for k, v in self.widgets.items() if self.fragments.get(k) != fragment_id}
                self.widgets = {**kept, **fresh} if fragment_id else fresh
                return time.perf_counter() - t0

    def widget(self, key: str):
        """(id, element) of the widget whose user key is ``key`` in the last run."""
        for wid, (_, el) in self.widgets.items():
            if wid.endswith("-" + key):
                return wid, el
        raise KeyError(f"no widget with key {key!r} in the last run ({len(self.widgets)} widgets)")

    def press(self, key: str):
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        wid, _ = self.widget(key)
        return [WidgetState(id=wid, trigger_value=True)]

    def fragment_of(self, key: str) -> str:
        """The st.fragment the widget ``key`` was drawn in ("" when none, or fragments are off)."""
        return self.fragments.get(self.widget(key)[0], "") if self.use_fragments else ""


# --- the students ------------------------------------------------------------------------------------------

async def student(i, url, args, t_end, out):
    from kvviz.views import demo_catalogue as demos
    from kvviz.views import scenarios as stepper

    on_demos, rank = args.assign[i] if args.only is None else (args.only == "demos", i)
    if on_demos:
        what = demos.DEMO_KEYS[rank % len(demos.DEMO_KEYS)]
        page, query, fwd, back = "demos", {"demo": what, "step": 0, "lang": "en"}, "demos_next", "demos_prev"
    else:
        what = stepper.NAMES[rank % len(stepper.NAMES)]
        page, query, fwd, back = "step_through", {"sc": what, "step": 0, "lang": "en"}, "step.next", "step.back"
    rec = {"student": i, "page": page, "what": what, "lat": [], "t": [], "errors": 0, "timeouts": 0}
    out.append(rec)
    s = Session(url, page, query, args.timeout)
    s.use_fragments = not args.no_fragments
    try:
        t0 = time.perf_counter()
        await s.connect()
        await s.rerun()
        rec["first_load"] = time.perf_counter() - t0
        direction = 1
        nxt = time.time() + random.uniform(0, args.period)       # each student its own phase
        while True:
            await asyncio.sleep(max(0.0, nxt - time.time()))
            if time.time() >= t_end:
                break
            nxt += args.period
            try:
                if s.widget(fwd if direction > 0 else back)[1].disabled:
                    direction = -direction
                key = fwd if direction > 0 else back
                lat = await s.rerun(s.press(key), s.fragment_of(key))
                rec["lat"].append(lat)
                rec["t"].append(time.time())
            except Exception as e:   # noqa: BLE001 - a timeout is a sample too: counted, not hidden
                rec["errors"] += 1
                rec["timeouts"] += isinstance(e, (TimeoutError, asyncio.TimeoutError))
                rec.setdefault("error", repr(e)[:200])
                await s.close()                                   # start over, as a reload would
                s = Session(url, page, query, args.timeout)
                s.use_fragments = not args.no_fragments
                await s.connect()
                await s.rerun()
                direction = 1
                nxt = max(nxt, time.time())
    finally:
        rec["exceptions"] = s.exceptions[:3]
        rec["mb_in"] = round(s.bytes_in / 2**20, 1)
        await s.close()


def assignment(n: int, seed: int = 33) -> list[tuple[bool, int]]:
    """Student i's (on Guided demos?, rank among that page's students): half on each page, in a seeded
    shuffled order. (Alternating pages made a balancer's leastconn put every demos student on one
    replica and every Step through student on the other.)"""
    pages = [True] * ((n + 1) // 2) + [False] * (n // 2)
    random.Random(seed).shuffle(pages)
    seen = {True: 0, False: 0}
    out = []
    for p in pages:
        out.append((p, seen[p]))
        seen[p] += 1
    return out


def big_dump_json(seed: int, rows: int, width: int = 2048) -> str:
    """``bench_load.big_dump`` as JSON text (two rows x width tables), different for every seed."""
    return json.dumps(big_dump(seed, rows, width).to_json())


def source_state(s: Session, source: str):
    """The WidgetState choosing ``source`` (a key of ``kvviz.views.dumps.SOURCES``) in the Debug dumps
    page's source radio, as the last run of ``s`` drew it."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    from kvviz.texts.i18n import t

    label = t("dumps", "src." + source, "en")
    rid, radio = s.widget("dumps.source")
    assert label in list(radio.options), (label, list(radio.options))
    return WidgetState(id=rid, string_value=label)


async def open_upload(s: Session):
    """Open the Debug dumps page in ``s`` and switch its source to Upload: (the source's
    WidgetState, paste box A's widget id, paste box B's)."""
    await s.rerun()
    src = source_state(s, "upload")
    await s.rerun([src])
    return src, s.widget("dumps.paste_a")[0], s.widget("dumps.paste_b")[0]


async def hostile(url, args, t_end, out, texts):
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    rec = {"student": "hostile", "page": "dumps", "lat": [], "errors": 0, "bytes": 0, "pastes": 0}
    out.append(rec)
    s = Session(url, "dumps", {"lang": "en"}, args.timeout)
    try:
        await s.connect()
        src, ida, idb = await open_upload(s)
        box = {ida: "", idb: ""}
        k = 0
        while time.time() < t_end:
            side = (ida, idb)[k % 2]
            box[side] = texts[k % len(texts)]            # A gets texts 0, 2, ..; B 1, 3, ..: new each time
            k += 1
            states = [src] + [WidgetState(id=w, string_value=v) for w, v in box.items()]
            rec["bytes"] += sum(len(v) for v in box.values())
            try:
                rec["lat"].append(await s.rerun(states))
                rec["pastes"] += 1
            except Exception as e:   # noqa: BLE001
                rec["errors"] += 1
                rec.setdefault("error", repr(e)[:200])
                await s.close()
                s = Session(url, "dumps", {"lang": "en"}, args.timeout)
                await s.connect()
                src, ida, idb = await open_upload(s)
                box = {ida: "", idb: ""}
    finally:
        rec["exceptions"] = s.exceptions[:3]
        await s.close()


async def warm_up(url, args):
    """One run of each page before the class arrives (the teacher opened them): the first run of a
    fresh server imports the app's modules (seconds), which is not what a student waits for."""
    for page, query in (("demos", {"lang": "en"}), ("step_through", {"lang": "en"}), ("dumps", {"lang": "en"})):
        s = Session(url, page, query, args.timeout)
        await s.connect()
        t0 = time.perf_counter()
        await s.rerun()
        print(f"  warm-up {page}: {time.perf_counter() - t0:.2f} s", file=sys.stderr)
        await s.close()


async def drive(url, args, texts):
    if not args.no_warmup:
        await warm_up(url, args)
    marks = (os.times(), cpu_by_pid(args.server_pids), machine_cpu(), time.time())
    t_start = time.time()
    t_end = t_start + args.ramp + args.duration
    out: list[dict] = []
    tasks = []
    if args.hostile:
        tasks.append(asyncio.create_task(hostile(url, args, t_end, out, texts)))
    for i in range(args.sessions):
        tasks.append(asyncio.create_task(student(i, url, args, t_end, out)))
        await asyncio.sleep(args.ramp / max(args.sessions, 1))          # students arrive over the ramp
    for r in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(r, BaseException):
            print("task failed:", repr(r)[:300], file=sys.stderr)
    return out, t_start + args.ramp, marks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--duration", type=float, default=90, help="seconds of acting after the ramp")
    ap.add_argument("--ramp", type=float, default=None, help="seconds over which students arrive (default sessions, >= 5)")
    ap.add_argument("--period", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a run may take before it counts as a timeout")
    ap.add_argument("--hostile", action="store_true")
    ap.add_argument("--no-warmup", action="store_true", help="no run of each page before the students arrive")
    ap.add_argument("--no-fragments", action="store_true",
                    help="a press inside an st.fragment reruns the whole page (as before fragments)")
    ap.add_argument("--hostile-rows", type=int, default=256,
                    help="rows of the pasted dump's two tables (x 2048 ints; 256 rows: ~7 MB of JSON)")
    ap.add_argument("--only", choices=("demos", "step"), default=None, help="every student on one page")
    ap.add_argument("--url", default=None, help="a running server (then --server-pids for its RSS and CPU)")
    ap.add_argument("--server-pids", "--server-pid", default="", type=lambda v: [int(x) for x in v.split(",") if x],
                    help="comma-separated pids measured with their descendants (e.g. scripts/serve.py's)")
    ap.add_argument("--serve", type=int, default=0, metavar="N",
                    help="start the lecture hall (scripts/serve.py, N replicas behind HAProxy) and use it")
    ap.add_argument("--server-opt", action="append", default=[], metavar="OPTION=VALUE",
                    help="for the server this script starts, e.g. server.fileWatcherType=none (repeatable)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    if args.ramp is None:
        args.ramp = float(max(5, args.sessions))
    args.assign = assignment(args.sessions)
    texts = [big_dump_json(seed, args.hostile_rows) for seed in range(6)] if args.hostile else []
    proc = None
    load_before = [round(x, 2) for x in os.getloadavg()]
    if args.url:
        url = args.url.rstrip("/")
    elif args.serve:
        proc, url = start_hall(args.serve, args.server_opt)
        args.server_pids = [proc.pid]
    else:
        proc, url = start_server(args.server_opt)
        args.server_pids = [proc.pid]
    pids = args.server_pids
    try:
        sampler = Sampler(pids) if pids else None
        if sampler:
            sampler.start()
            time.sleep(1.0)
        out, t_acting, marks = asyncio.run(drive(url, args, texts))
        me0, cpu0, mach0, t0 = marks
        cpu1, mach1, t1 = cpu_by_pid(pids), machine_cpu(), time.time()
        me1 = os.times()
        load = os.getloadavg()
        if sampler:
            sampler.stop.set()
            sampler.join()
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGINT)            # scripts/serve.py stops its hall on Ctrl-C, streamlit too
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
    students = [r for r in out if r["student"] != "hostile"]
    lat = [x for r in students for x in r["lat"]]
    # steady state: the actions after every student has arrived (the ramp's first loads excluded)
    lat_steady = [x for r in students for x, tt in zip(r["lat"], r["t"]) if tt >= t_acting]
    by_page = {pg: [x for r in students if r["page"] == pg for x in r["lat"]] for pg in ("demos", "step_through")}
    host = [r for r in out if r["student"] == "hostile"]
    # RSS from the class's start (after the warm-up), and the warm-up's own figure apart
    rss = [b for tt, b in sampler.samples if tt >= t0] if sampler else []
    rss_before = [b for tt, b in sampler.samples if tt < t0] if sampler else []
    busy = (mach1[0] - mach0[0]) / max(mach1[1] - mach0[1], 1)
    ncpu = os.cpu_count() or 1
    wall = max(t1 - t0, 1e-9)
    first = [r["first_load"] for r in students if "first_load" in r]
    res = {
        "tool": "bench_load_ws", "label": args.label, "sessions": args.sessions, "period_s": args.period,
        "duration_s": args.duration, "ramp_s": args.ramp, "hostile": args.hostile, "fragments": not args.no_fragments, "server_opts": args.server_opt, "date": time.strftime("%Y-%m-%d %H:%M"),
        "actions": len(lat), "expected_actions": round(args.sessions * (args.duration + args.ramp / 2) / args.period),
        "errors": sum(r["errors"] for r in students), "timeouts": sum(r["timeouts"] for r in students),
        "p50_s": pct(lat, 50), "p95_s": pct(lat, 95), "max_s": max(lat) if lat else None,
        "steady_n": len(lat_steady), "steady_p50_s": pct(lat_steady, 50), "steady_p95_s": pct(lat_steady, 95),
        "by_page": {pg: {"n": len(v), "p50_s": pct(v, 50), "p95_s": pct(v, 95), "max_s": max(v, default=None)}
                    for pg, v in by_page.items()},
        "first_load_p50_s": pct(first, 50), "first_load_max_s": max(first, default=None),
        "rss_launch_mb": rss_before[0] / 2**20 if rss_before else None,
        "rss_start_mb": rss[0] / 2**20 if rss else None, "rss_peak_mb": max(rss) / 2**20 if rss else None,
        "rss_end_mb": rss[-1] / 2**20 if rss else None,
        "loadavg_before_1_5_15": load_before, "loadavg_1_5_15": [round(x, 2) for x in load],
        "machine_busy_pct": round(100 * busy, 1), "replicas": args.serve or None,
        "server_cpu_pct_of_machine": round(100 * sum(c - cpu0.get(p, (0, ""))[0] for p, (c, _) in cpu1.items())
                                           / (wall * ncpu), 1),
        "server_cpu_pct_by_kind": cpu_by_kind(cpu0, cpu1, wall * ncpu),
        "server_cpu_ms_per_action": round(1000 * sum(c - cpu0.get(p, (0, ""))[0] for p, (c, _) in cpu1.items())
                                          / max(len(lat), 1), 1),
        "client_cpu_pct_of_machine": round(100 * ((me1.user - me0.user) + (me1.system - me0.system)) / (wall * ncpu), 1),
        "errors_seen": [r["error"] for r in students if "error" in r][:3],
        "app_exceptions": [e for r in out for e in r.get("exceptions", [])][:3],
    }
    if host:
        h = host[0]
        res["hostile_pastes"] = h["pastes"]
        res["hostile_p50_s"] = pct(h["lat"], 50)
        res["hostile_max_s"] = max(h["lat"], default=None)
        res["hostile_errors"] = h["errors"]
        res["hostile_mb_sent"] = round(h["bytes"] / 2**20, 1)
        res["hostile_paste_mb"] = round(len(texts[0]) / 2**20, 1) if texts else None
        if "error" in h:
            res["hostile_error"] = h["error"]
    print(f"{args.sessions} sessions{' + hostile' if args.hostile else ''} (websocket), period {args.period:g} s, "
          f"ramp {args.ramp:g} s + {args.duration:g} s: {res['actions']} actions (~{res['expected_actions']} expected), "
          f"{res['errors']} errors ({res['timeouts']} timeouts)")
    if lat:
        print(f"  latency p50 {res['p50_s']:.3f} s, p95 {res['p95_s']:.3f} s, max {res['max_s']:.3f} s"
              + (f"; after the ramp p50 {res['steady_p50_s']:.3f} p95 {res['steady_p95_s']:.3f} (n={len(lat_steady)})"
                 if lat_steady else "")
              + "".join(f"\n    {pg} n={v['n']} p50 {v['p50_s'] or 0:.3f} p95 {v['p95_s'] or 0:.3f} max {v['max_s'] or 0:.3f}"
                        for pg, v in res["by_page"].items() if v["n"]))
    if first:
        print(f"  first load p50 {res['first_load_p50_s']:.2f} s, max {res['first_load_max_s']:.2f} s")
    if rss:
        print(f"  server RSS at launch {res['rss_launch_mb'] or 0:.0f} MB; from the class's start: start {res['rss_start_mb']:.0f} MB, peak {res['rss_peak_mb']:.0f} MB, "
              f"end {res['rss_end_mb']:.0f} MB")
    print(f"  load average before {res['loadavg_before_1_5_15']}, after {res['loadavg_1_5_15']}, machine busy "
          f"{res['machine_busy_pct']} %, server {res['server_cpu_pct_of_machine']} % "
          f"({', '.join(f'{k} {v} %' for k, v in res['server_cpu_pct_by_kind'].items())}), "
          f"this client {res['client_cpu_pct_of_machine']} % of the machine; "
          f"server CPU {res['server_cpu_ms_per_action']} ms per action")
    if host:
        print(f"  hostile: {res['hostile_pastes']} pastes of ~{res['hostile_paste_mb']} MB ({res['hostile_mb_sent']} MB sent), "
              f"p50 {res['hostile_p50_s'] or 0:.2f} s, max {res['hostile_max_s'] or 0:.2f} s, {res['hostile_errors']} errors")
    if res["errors_seen"] or res["app_exceptions"]:
        print(f"  errors: {res['errors_seen']}  app exceptions / st.error boxes (some pages show them on purpose): "
              f"{res['app_exceptions']}")
    if args.json:
        write_json(res, args.json)


if __name__ == "__main__":
    main()
