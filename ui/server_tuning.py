"""Process-wide tuning of the Streamlit server for a hall of students (issue 33), applied once per
process by app.py's first run: the theme message built once, the send loop woken once per batch,
the script threads' events handed to the event loop in batches.

The theme, built once. Streamlit sends a ``new_session`` message at the start of EVERY script run (a
button press, a fragment's rerun), and builds its theme part anew each time from the config:
``.streamlit/config.toml`` declares ~120 font faces (the CJK font's unicode ranges), each turned into
a protobuf by ``json_format.ParseDict`` in pure Python. Measured with py-spy on a server under 40
websocket students: ~10 % of the server's whole CPU time (7.7 % in ParseDict alone), for a message
that is the same every time. Here the theme message of each config section is built once, kept as
bytes, and merged into every later ``new_session``: the same message, no parse. The config is read
once anyway (``fileWatcherType = "none"``: restart the server after editing it).
"""
from __future__ import annotations

import os
import threading

_lock = threading.Lock()


def memoize_theme() -> bool:
    """Make Streamlit build each theme section's message once per process; True if installed now
    (False: already installed, or this Streamlit has no ``_populate_theme_msg`` to wrap)."""
    try:
        from streamlit.runtime import app_session
    except ImportError:
        return False
    with _lock:
        orig = getattr(app_session, "_populate_theme_msg", None)
        if orig is None or getattr(orig, "kvviz_memo", False):
            return False
        built: dict[str, bytes] = {}

        def populate(msg, section: str = "theme") -> None:
            blob = built.get(section)
            if blob is None:
                fresh = type(msg)()
                orig(fresh, section)
                blob = built[section] = fresh.SerializeToString()
            if blob:              # an empty section leaves the field unset, as the original does
                msg.MergeFromString(blob)

        populate.kvviz_memo = True
        populate.original = orig
        app_session._populate_theme_msg = populate
        return True


def coalesced_wakeup(loop, need_send_data):
    """The callback a session calls after queueing a message for its browser, waking the runtime's
    send loop at most once until that loop has run: Streamlit's own calls
    ``loop.call_soon_threadsafe(need_send_data.set)`` for EVERY message (50-70 per Step through
    press), each a write to the loop's self-pipe and a handover of the GIL between the script thread
    and the event loop's thread. Nothing is lost: the loop clears the event and then flushes every
    session's whole queue, so a message queued while the event is still set is sent by that flush, and
    one queued after the clear schedules a new wake-up."""
    pending = [False]

    def wake() -> None:
        pending[0] = False
        need_send_data.set()

    def enqueued() -> None:
        if pending[0] or need_send_data.is_set():
            return
        pending[0] = True
        loop.call_soon_threadsafe(wake)

    enqueued.kvviz_coalesced = True
    return enqueued


def coalesce_wakeups() -> bool:
    """Give the running Streamlit runtime's session manager (and its live sessions) the coalescing
    callback; True if installed now. No runtime (AppTest, bare mode) or another Streamlit: False."""
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return False
        rt = Runtime.instance()
        mgr = rt._session_mgr
        if getattr(getattr(mgr, "_message_enqueued_callback", None), "kvviz_coalesced", False):
            return False
        objs = rt._get_async_objs()
        cb = coalesced_wakeup(objs.eventloop, objs.need_send_data)
    except (ImportError, AttributeError, RuntimeError):
        return False
    with _lock:
        if getattr(mgr._message_enqueued_callback, "kvviz_coalesced", False):
            return False
        mgr._message_enqueued_callback = cb
        for info in mgr.list_sessions():
            if hasattr(info.session, "_message_enqueued_callback"):
                info.session._message_enqueued_callback = cb
    return True


class LoopBatch:
    """Callbacks handed from script threads to the event loop in batches: ``add`` queues one and
    schedules a drain only when none is pending, so a run's ~60 hops cost one self-pipe write and
    one GIL handover, not 60. The drain runs the callbacks in the order they were added (a session's
    messages keep their order) and at most as many as were queued when it started (the loop's other
    work, the websocket sends, is not starved by a busy producer). A failing callback is reported
    to the loop's exception handler, as the loop does for its own callbacks, and the rest run."""

    def __init__(self, loop):
        import collections

        self.loop, self.items, self.pending = loop, collections.deque(), False
        self.lock = threading.Lock()

    def add(self, callback) -> None:
        self.items.append(callback)
        with self.lock:
            if self.pending:
                return
            self.pending = True
        self.loop.call_soon_threadsafe(self.drain)

    def drain(self) -> None:
        with self.lock:
            self.pending = False          # from here on, an add schedules the next drain
        for _ in range(len(self.items)):
            try:
                callback = self.items.popleft()
            except IndexError:
                break
            try:
                callback()
            except Exception as e:  # noqa: BLE001 - as the loop treats a failing callback
                self.loop.call_exception_handler({"message": "kvviz: a batched callback failed",
                                                  "exception": e})


def batch_event_hops() -> bool:
    """Every AppSession hands its ScriptRunner's events (one per ForwardMsg) to the event loop through
    one ``LoopBatch`` per loop instead of one ``call_soon_threadsafe`` each; True if installed now."""
    try:
        from streamlit.runtime.app_session import AppSession
    except ImportError:
        return False
    with _lock:
        orig = getattr(AppSession, "_call_soon_on_event_loop", None)
        if orig is None or getattr(orig, "kvviz_batched", False):
            return False
        batches: dict[int, LoopBatch] = {}

        def call_soon(self, callback) -> None:
            loop = self._event_loop
            if loop.is_closed():
                return orig(self, callback)       # the original drops it (shutdown)
            batch = batches.get(id(loop))
            if batch is None or batch.loop is not loop:
                with _lock:
                    batch = batches[id(loop)] = LoopBatch(loop)
            batch.add(callback)

        call_soon.kvviz_batched = True
        call_soon.original = orig
        AppSession._call_soon_on_event_loop = call_soon
        return True


SWITCH_INTERVAL_S = 0.001


def shorter_switch_interval() -> bool:
    """Hand the GIL over every ``SWITCH_INTERVAL_S`` instead of Python's 5 ms: with a hundred sessions'
    script threads running Python, the event loop's thread (every websocket's reads and writes)
    otherwise waits up to 5 ms for the GIL after each of its system calls (the convoy effect)."""
    import sys

    if sys.getswitchinterval() == SWITCH_INTERVAL_S:
        return False
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    return True


PARTS = {"theme": memoize_theme, "wake": coalesce_wakeups, "hops": batch_event_hops,
         "switch": shorter_switch_interval}


def install() -> None:
    """Everything above; cheap to call on every run (an attribute check per part after the first).
    ``KVVIZ_SERVER_TUNING`` in the server's environment picks parts to measure with and without
    them: ``0`` none, ``theme,wake`` only those; unset, all of them."""
    chosen = os.environ.get("KVVIZ_SERVER_TUNING")
    names = PARTS if chosen is None else [n for n in chosen.split(",") if n in PARTS]
    for name in names:
        PARTS[name]()
