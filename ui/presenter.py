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
    called with "next" or "prev" when a key asks for it."""
    def changed():
        value = st.session_state.get(KEY)
        event = value.get("key") if hasattr(value, "get") else None
        move = event.get("move") if hasattr(event, "get") else None
        if move in ("next", "prev"):
            on_move(move)

    _component()(key=KEY, data={}, height="content", on_key_change=changed)
