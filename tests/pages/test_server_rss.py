"""A real server's memory comes back (issue 11): N websocket sessions (scripts/bench_load_ws.py's
client, no browser) each paste two big dumps into Debug dumps, hold them, then switch the source
away (``ui.own_while_shown`` drops them) and disconnect; the RSS of ``streamlit run app.py`` and its
parse worker must rise while the dumps are held and fall back near the warmed-up baseline after.

Bounds (measured on the 2-core machine, see docs/app.md's classroom paragraph): the held dumps add at
least HELD_MIN_MB, and after the first class the RSS is within RELEASED_MAX_MB of the baseline; a
second class then adds at most ROUND_GROWTH_MAX_MB. Before issue 11's fix each class of 5 left +60 MB
more, and the first +63 MB (see the end of the test)."""
import asyncio
import importlib.util
import time
from pathlib import Path

import pytest

from browser_support import serve

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.browser, pytest.mark.slow]   # a real server: out of the quick runs, as the browser tests

SESSIONS = 5
ROWS = 192              # rows x 2048 ints per table, two tables: ~5.5 MB of JSON per paste
HELD_MIN_MB = 80        # the dumps held by SESSIONS sessions must show (measured +153..+183 MB)
RELEASED_MAX_MB = 40    # after the first class, RSS is at most baseline + this (measured +4..+7 MB)
SETTLE_S = 20           # how long RSS may take to come back
ROUNDS = 2              # two classes in turn: the second should not add to what the first left
ROUND_GROWTH_MAX_MB = 40   # a second class adds at most this to what the first left (measured +1..+4 MB)


def _bench():
    """scripts/bench_load_ws.py as a module (its websocket client and dump builder)."""
    spec = importlib.util.spec_from_file_location("bench_load_ws", ROOT / "scripts" / "bench_load_ws.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def server_proc():
    """``streamlit run app.py`` (browser_support.serve, no file watcher): (url, its pid)."""
    with serve("--server.fileWatcherType", "none") as (url, proc):
        yield url, proc.pid


def _mb(bench, pid) -> float:
    return bench.rss_bytes(pid) / 2**20


def _each(bench, pid) -> str:
    """RSS per process of the server's tree (MB), for the failure message."""
    return " ".join(f"{p}:{bench.rss_bytes(p) / 2**20 if p != pid else _own(p):.0f}" for p in bench.tree(pid))


def _own(p) -> float:
    try:
        with open(f"/proc/{p}/status") as f:
            return next(int(x.split()[1]) for x in f if x.startswith("VmRSS:")) / 1024
    except (OSError, StopIteration):
        return 0.0


def _settled(bench, pid, seconds=3.0) -> float:
    """RSS once it stops moving (two samples 1 s apart within 2 MB), at most ``seconds`` * 3 s."""
    prev = _mb(bench, pid)
    for _ in range(int(seconds * 3)):
        time.sleep(1.0)
        cur = _mb(bench, pid)
        if abs(cur - prev) < 2:
            return cur
        prev = cur
    return prev


async def _paste_two(bench, url, texts, timeout):
    """One session: Debug dumps, Upload, paste ``texts[0]`` into A, then ``texts[1]`` into B (the page
    empties a big paste's box: the next rerun sends it empty, as a browser does). The open session."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    s = bench.Session(url, "dumps", {"lang": "en"}, timeout)
    await s.connect()
    src, ida, idb = await bench.open_upload(s)
    s.exceptions.clear()        # the first run shows the default source, a known bug (its st.error on purpose)
    await s.rerun([src, WidgetState(id=ida, string_value=texts[0]), WidgetState(id=idb, string_value="")])
    await s.rerun([src, WidgetState(id=ida, string_value=""), WidgetState(id=idb, string_value=texts[1])])
    s.widget("dumps.profile")   # drawn only once the page has dumps to check (KeyError otherwise)
    return s


async def _release(bench, s):
    """Switch the source away from Upload (drops the parsed dumps), then close the tab."""
    await s.rerun([bench.source_state(s, "bug")])
    await s.close()


async def _warm_up(bench, url, small):
    """Each page once, and one paste just past ui.OFF_THREAD_BYTES (the parse worker starts, its
    imports load), then released: what a server has after its first student."""
    import ui
    for page in [Path(f).stem for f, _, _ in ui.PAGES]:
        s = bench.Session(url, "" if page == "home" else page, {"lang": "en"}, 180)
        await s.connect()
        await s.rerun()
        await s.close()
    s = await _paste_two(bench, url, [small, small], 180)
    await _release(bench, s)


def test_rss_returns_after_sessions_drop_their_dumps(server_proc):
    import ui

    bench = _bench()
    url, pid = server_proc
    small = bench.big_dump_json(99, 48)
    assert len(small) > ui.OFF_THREAD_BYTES          # goes through the worker process, which then exists

    t0 = time.time()
    asyncio.run(_warm_up(bench, url, small))
    base = _settled(bench, pid)
    procs = [_each(bench, pid)]
    t_warm = time.time() - t0

    async def hold_then_release(texts):
        sessions = await asyncio.gather(*[_paste_two(bench, url, texts[2 * i:2 * i + 2], 120)
                                          for i in range(SESSIONS)])
        errors = [e for s in sessions for e in s.exceptions]
        held = _settled(bench, pid)                     # the control: dumps shown, tabs connected
        procs.append(_each(bench, pid))
        await asyncio.gather(*[_release(bench, s) for s in sessions])
        return errors, held

    rounds = []
    for r in range(ROUNDS):                             # new dumps each round: every paste is parsed again
        texts = [bench.big_dump_json(100 * r + seed, ROWS) for seed in range(2 * SESSIONS)]
        errors, held = asyncio.run(hold_then_release(texts))
        assert not errors, errors                       # every paste was a valid dump: no st.error
        deadline = time.time() + SETTLE_S
        after = _mb(bench, pid)
        while after > base + RELEASED_MAX_MB / 2 and time.time() < deadline:
            time.sleep(1.0)
            after = _mb(bench, pid)
        procs.append(_each(bench, pid))
        rounds.append((held, after))
    sent_mb = sum(map(len, texts)) / 2**20
    print(f"\nserver RSS: baseline {base:.0f} MB (warm-up {t_warm:.0f} s); {SESSIONS} sessions x 2 pastes of "
          f"{sent_mb / 2 / SESSIONS:.1f} MB per round: " + ", ".join(f"held {h:.0f} released {a:.0f}" for h, a in rounds)
          + f" MB; in {time.time() - t0:.0f} s; load {open('/proc/loadavg').read().split()[:3]}; per process (MB) {procs}")
    for held, after in rounds:
        assert held - base >= HELD_MIN_MB, (base, rounds, procs)    # the dumps were really held: a leak would show
    assert rounds[0][1] - base <= RELEASED_MAX_MB, (base, rounds, procs)
    growth = rounds[-1][1] - rounds[0][1]
    # Issue 11 (measured 2026-12-02): a class of 5 left +63 MB and each further class +60 MB more, in the
    # server process (the workers did not move). The paste boxes' on_change was a function of the page's
    # script: Streamlit keeps a widget's last callback for the session's life, even once the widget is
    # gone (and a closed tab's session for server.disconnectedSessionTTL), so each session kept that
    # run's globals: its last 5.8 MB paste and both parsed dumps (ui.take_paste now). And ui.drop
    # collected during the run that drops the dumps, while the widgets and downloads of the run before
    # still held it; it waited for Python's own collector (ui.drop now collects once the run has ended).
    assert growth <= ROUND_GROWTH_MAX_MB, (base, rounds, procs)
