"""ui/server_tuning.py: Streamlit's theme message is built once per process (issue 33, the hall's CPU),
and is the same message the original builds, section by section, from the repository's config."""
import os

from streamlit import config
from streamlit.proto.NewSession_pb2 import CustomThemeConfig
from streamlit.runtime import app_session

from page_support import app_test

SECTIONS = ("theme", "theme.sidebar", "theme.light", "theme.dark", "theme.light.sidebar", "theme.dark.sidebar")


def _original():
    f = app_session._populate_theme_msg
    return getattr(f, "original", f)


def test_memoized_theme_is_the_original_message_built_once(monkeypatch):
    from ui import server_tuning

    monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    config.get_config_options(force_reparse=True)          # the repository's .streamlit/config.toml
    calls = []
    orig = _original()

    def counting(msg, section="theme"):
        calls.append(section)
        orig(msg, section)
    monkeypatch.setattr(app_session, "_populate_theme_msg", counting)
    assert server_tuning.memoize_theme() is True
    assert server_tuning.memoize_theme() is False                 # once
    memo = app_session._populate_theme_msg
    for section in SECTIONS:
        want, got, again = CustomThemeConfig(), CustomThemeConfig(), CustomThemeConfig()
        orig(want, section)
        memo(got, section)
        memo(again, section)
        assert got == want and again == want, section
    assert calls == list(SECTIONS)                                # each section built once, then reused
    want = CustomThemeConfig()
    orig(want, "theme")
    assert len(want.font_faces) > 50                              # what made it worth it: the CJK font faces


def test_app_installs_it():
    at = app_test()
    assert not at.exception
    assert getattr(app_session._populate_theme_msg, "kvviz_memo", False)


class _Loop:
    """The one call the callback makes on the runtime's event loop, recorded instead of run."""

    def __init__(self):
        import threading

        self.scheduled, self.lock = [], threading.Lock()

    def call_soon_threadsafe(self, fn):
        with self.lock:
            self.scheduled.append(fn)

    def run(self):
        with self.lock:
            todo, self.scheduled = self.scheduled, []
        for fn in todo:
            fn()


def test_send_loop_woken_once_per_batch_and_never_missed():
    import asyncio
    import threading

    from ui.server_tuning import coalesced_wakeup

    loop, need = _Loop(), asyncio.Event()
    enqueued = coalesced_wakeup(loop, need)
    for _ in range(60):                          # a Step through press queues ~60 messages
        enqueued()
    assert len(loop.scheduled) == 1              # Streamlit's own callback: 60 wake-ups
    loop.run()
    assert need.is_set()
    enqueued()                                   # the loop has not flushed yet: that flush sends it
    assert loop.scheduled == []
    need.clear()                                 # the loop's flush cycle starts
    enqueued()                                   # queued after the clear: a new wake-up
    assert len(loop.scheduled) == 1
    loop.run()
    assert need.is_set()
    need.clear()
    threads = [threading.Thread(target=lambda: [enqueued() for _ in range(2000)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 1 <= len(loop.scheduled) <= 4         # script threads racing: at most one each, never none
    loop.run()
    assert need.is_set()


def test_a_live_server_still_delivers_every_run():
    """Through a real server with the tuning on: each run of a page ends (script_finished) with its
    widgets drawn, press after press, and the page's own buttons work."""
    import asyncio
    import sys

    from browser_support import ROOT, serve

    sys.path.insert(0, str(ROOT / "scripts"))
    from bench_load_ws import Session

    async def walk(url):
        s = Session(url, "step_through", {"lang": "en"}, 120)
        await s.connect()
        try:
            await s.rerun()
            for _ in range(4):
                await s.rerun(s.press("step.next"), s.fragment_of("step.next"))
            assert s.widget("step.back")[1].disabled is False       # four steps in: Back is live
            return s.query
        finally:
            await s.close()

    with serve() as (url, _):
        assert "step=4" in asyncio.run(walk(url))


class _BatchLoop(_Loop):
    def __init__(self):
        super().__init__()
        self.errors = []

    def call_exception_handler(self, ctx):
        self.errors.append(ctx["exception"])


def test_event_hops_batched_in_order_and_never_dropped():
    import threading

    from ui.server_tuning import LoopBatch

    loop = _BatchLoop()
    batch = LoopBatch(loop)
    seen = []
    for i in range(60):                          # one run's events, from its script thread
        batch.add(lambda i=i: seen.append(i))
    assert len(loop.scheduled) == 1              # one hop to the event loop, not 60
    loop.run()
    assert seen == list(range(60))               # in order: a session's messages keep theirs

    def grow():                                  # a callback that queues another: runs in the next drain
        seen.append("a")
        batch.add(lambda: seen.append("b"))
    batch.add(grow)
    batch.add(lambda: 1 / 0)                     # a failing callback: reported, the rest still run
    batch.add(lambda: seen.append("c"))
    loop.run()
    assert seen[60:] == ["a", "c"] and len(loop.errors) == 1 and len(loop.scheduled) == 1
    loop.run()
    assert seen[-1] == "b"
    seen.clear()
    threads = [threading.Thread(target=lambda k=k: [batch.add(lambda k=k, j=j: seen.append((k, j)))
                                                    for j in range(3000)]) for k in range(4)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads) or loop.scheduled:   # the loop drains while they add
        loop.run()
    assert len(seen) == 12000 and not batch.items
    for k in range(4):
        assert [j for kk, j in seen if kk == k] == list(range(3000))   # each thread's order kept


def test_switch_interval_shortened_by_install(monkeypatch):
    import sys

    from ui import server_tuning

    before = sys.getswitchinterval()
    try:
        monkeypatch.setenv("KVVIZ_SERVER_TUNING", "switch")
        sys.setswitchinterval(0.005)
        server_tuning.install()
        assert sys.getswitchinterval() == server_tuning.SWITCH_INTERVAL_S
        sys.setswitchinterval(0.005)
        monkeypatch.setenv("KVVIZ_SERVER_TUNING", "0")           # off: Python's own 5 ms stays
        server_tuning.install()
        assert sys.getswitchinterval() == 0.005
    finally:
        sys.setswitchinterval(before)
