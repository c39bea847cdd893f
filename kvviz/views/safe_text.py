"""Text from outside (a link, an upload's name or content, a pasted scenario) shown as text.

Streamlit renders the strings of ``st.markdown``, ``st.caption``, ``st.warning``, ``st.error`` and
``st.info`` as markdown, so a value such as ``![](//host/x)`` would make the reader's browser fetch
an image and ``[Log in again](https://…)`` would show a clickable link inside the app.
``plain(value)`` escapes what could become markup there: brackets, parentheses and ``!`` (links and
images), ``<``/``>`` (HTML), backticks, ``*``/``~``/``|`` (emphasis, strike-through, tables), the
``://`` and ``www.`` of bare links, and a block marker at the start. Everything else is left as
typed, so identifiers such as ``cache_layout`` or ``sys-1`` read (and search) the same.
"""
from __future__ import annotations

import re

_MARKUP = re.compile(r"([\\`\[\]()!<>*~|])")
_BARE_LINK = re.compile(r"(?i)(?<=:)//|(?<=www)\.")
_BLOCK_START = re.compile(r"^(\s*)(\d+(?=[.)])|)([#+=\-.)])")


def plain(value) -> str:
    """``str(value)`` with markdown and HTML markup escaped; newlines become spaces (one line)."""
    text = " ".join(str(value).splitlines())
    text = _MARKUP.sub(r"\\\1", text)
    text = _BARE_LINK.sub(lambda m: "\\/\\/" if m.group(0) == "//" else "\\.", text)
    return _BLOCK_START.sub(lambda m: m.group(1) + m.group(2) + "\\" + m.group(3), text, count=1)
