"""Every page's whole state in its link (``from ui import links``).

A page lists its selections as fields (``kvviz.views.links``: query key, session key, default) and
calls ``links.sync(page, fields)`` once its defaults are in session state, before drawing its widgets:

- when the session *started* on this page (a link opened, a tab reloaded, a tab reconnecting to a
  restarted server or to another replica), the link's values are taken (validated, bounded; one
  warning, as plain text, for what was refused: the default stays);
- on every run the address is rewritten from session state: the page's fields and the language,
  nothing of another page (``from_dict`` replaces the whole query).

A Streamlit tab whose server was killed reconnects and reruns its page with the address it shows, in
a new session: the address being current at every moment is what brings the tab back.
"""
from __future__ import annotations

import streamlit as st

from kvviz.views import links as share
from kvviz.views.safe_text import plain

START_KEY = "links.start"    # the url path of the page this session started on (app.py sets it)


def started_on(page: str) -> bool:
    """Whether this session started on ``page`` (its url path: the file's stem). Where app.py did
    not run first (a page file run alone, as AppTest does), the first page asking is the start."""
    return st.session_state.setdefault(START_KEY, page) == page


def read(page: str, fields) -> dict:
    """On the session's first run of ``page``, when the session started there: the link's values,
    put into session state (each widget key and its ``.kept`` copy, see ``ui.keep``); {} otherwise.
    The warnings are kept for ``warnings``."""
    S = st.session_state
    done = f"links.read.{page}"
    if done in S:
        return {}
    S[done] = True
    if not started_on(page):
        return {}
    values, warns = share.decode_fields(fields, st.query_params)
    for key, value in values.items():
        S[key] = S[key + ".kept"] = value
    S[f"links.warn.{page}"] = warns
    return values


def restore_batch(page: str) -> None:
    """CSR's source "the Batch page's batch" from a link (``src=batch`` and the batch's own parameters,
    ``batch_params``): on the first run of a session started on ``page``, the batch is explored again
    (``batch.explored``, as the Batch page leaves it), so that the source is offered and shown. Call
    before the page lists its sources."""
    S = st.session_state
    done = f"links.batch.{page}"
    if done in S:
        return
    S[done] = True
    if not started_on(page) or st.query_params.get("src") != "batch" or "batch.explored" in S:
        return
    from kvviz.errors import BadInput
    from kvviz.views import batch as ex

    rows, cfg, _, warns = share.decode_batch(st.query_params)
    if cfg is not None:
        rows = rows or ex.default_rows()
        try:
            S["batch.explored"], S["batch.explored_key"] = ex.explore(rows, cfg), ex.batch_key(rows, cfg)
        except BadInput as e:
            warns.append(f"the link's batch cannot be built ({' '.join(str(e).split())[:200]})")
    S[f"links.batch_warn.{page}"] = warns


def batch_params() -> dict:
    """The link parameters of the Batch page's batch this session holds ({} if none)."""
    eb = st.session_state.get("batch.explored")
    return share.encode_batch(eb.rows, eb.config) if eb is not None else {}


def warnings(page: str) -> None:
    """The link's refusals, one warning box, as plain text (the values come from a URL)."""
    warns = [*st.session_state.get(f"links.batch_warn.{page}", []), *st.session_state.get(f"links.warn.{page}", [])]
    if warns:
        st.warning("  \n".join(plain(w) for w in warns), icon=":material/link_off:")


def write(fields, extra: dict | None = None, values=None) -> dict:
    """Set the address to the fields' values (``values``, else session state), ``extra`` and the
    language; returns the query as a dict. Nothing is sent when the address already says it."""
    from ui import lang

    params = {**(extra or {}), **share.encode_fields(fields, st.session_state if values is None else values),
              "lang": lang()}
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)
    return params


def sync(page: str, fields, extra: dict | None = None) -> dict:
    """``read``, ``warnings`` and ``write`` in one call: a page's one line."""
    read(page, fields)
    warnings(page)
    return write(fields, extra)


# A tab whose server went away (killed, restarted, a replica gone behind the balancer) reconnects by
# itself, but Streamlit 1.67 does not rerun its page then: the new session stays empty and the tab shows
# the dead session's last screen, which no longer answers as it should. Once such a tab is connected
# again it reloads its address: a new session on the same page, restored from the link (``read``).
_RECONNECT_JS = """<script>(() => {
  if (window.__kvvizReconnect) return;
  window.__kvvizReconnect = true;
  let seen = false, lost = false;
  const check = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    const s = app && app.getAttribute('data-test-connection-state');
    if (s === 'CONNECTED') { if (lost) { location.reload(); return; } seen = true; }
    else if (seen && s) lost = true;
  };
  new MutationObserver(check).observe(document.body, {subtree: true, attributes: true,
                                                      attributeFilter: ['data-test-connection-state']});
  check();
})();</script>"""


def reconnect_reloads() -> None:
    """Draw (once a run; app.py) the script that reloads a tab reconnected after losing its server
    (in the sidebar, under the language: no gap above a page's title)."""
    st.sidebar.html(_RECONNECT_JS, unsafe_allow_javascript=True)
