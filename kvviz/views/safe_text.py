"""Text from outside (a link, an upload's name or content, a pasted scenario) shown as text.

Streamlit renders the strings of ``st.markdown``, ``st.caption``, ``st.warning``, ``st.error`` and
``st.info`` as markdown, so a value such as ``![](//host/x)`` would make the reader's browser fetch
an image and ``[Log in again](https://…)`` would show a clickable link inside the app.
``plain(value)`` backslash-escapes every ASCII punctuation character CommonMark could read as
markup (and the angle brackets of HTML), so the value reads the same and renders as itself.
"""
from __future__ import annotations

import re

_MARKUP = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&:$=\"'])")


def plain(value) -> str:
    """``str(value)`` with markdown and HTML markup escaped; newlines become spaces (one line)."""
    text = " ".join(str(value).splitlines())
    return _MARKUP.sub(r"\\\1", text)
