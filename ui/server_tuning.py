"""Process-wide tuning of the Streamlit server for a hall of students (issue 33), applied once per
process by app.py's first run: the theme message built once, the send loop woken once per batch.

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


def install() -> None:
    """Everything above; cheap to call on every run (two attribute checks after the first).
    ``KVVIZ_SERVER_TUNING=0`` in the server's environment turns it off (to measure without it)."""
    if os.environ.get("KVVIZ_SERVER_TUNING") == "0":
        return
    memoize_theme()
    coalesce_wakeups()
