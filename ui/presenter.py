"""Presenter mode's keys: a tiny component (static/presenter_keys.js) that turns → / PageDown /
space and ← / PageUp into a "next" / "back" for the demos page, so a presentation clicker works."""
from __future__ import annotations

import os

import streamlit as st

_JS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "static", "presenter_keys.js")
KEY = "demos_keys"


@st.cache_resource
def _component():
    with open(_JS, encoding="utf-8") as f:
        js = f.read()
    return st.components.v2.component("kvviz_presenter_keys", js=js, isolate_styles=False)


def keys(on_move) -> None:
    """Mount the key listener (once per tab; each rerun hands it the newest trigger). ``on_move``:
    called with "next" or "prev" for each key press, in order, however quickly they come (the
    browser sends the recent presses, numbered; those already applied are skipped)."""
    def changed():
        value = st.session_state.get(KEY)
        event = value.get("key") if hasattr(value, "get") else None
        log = event.get("log") if hasattr(event, "get") else None
        done = st.session_state.get(KEY + ".done", 0)
        for item in log if isinstance(log, list) else []:     # the presses not applied yet, in order
            if isinstance(item, list) and len(item) == 2 and isinstance(item[0], int) and item[0] > done \
                    and item[1] in ("next", "prev"):
                on_move(item[1])
                done = item[0]
        st.session_state[KEY + ".done"] = done

    # the last press applied goes back to the browser, which then sends the presses made meanwhile
    _component()(key=KEY, data={"done": st.session_state.get(KEY + ".done", 0)}, height="content",
                 on_key_change=changed)
