"""Process-wide tuning of the Streamlit server for a hall of students (issue 33), applied once per
process by app.py's first run.

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


def install() -> None:
    """Everything above; cheap to call on every run (one attribute check after the first)."""
    memoize_theme()
