"""kvviz: the Streamlit entry. `streamlit run app.py`.

Sets the Triton mode before anything imports triton, the page layout, the
language selector (shared by every page), and the navigation. To add a page,
add one line to ui.PAGES.
"""
import os


def _has_cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # no torch or a broken one: the interpreter is all we have
        return False


if not _has_cuda():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import streamlit as st  # noqa: E402

from kvviz.texts.i18n import DEFAULT_LANG, LANGS, t  # noqa: E402
from kvviz.texts.app import STRINGS as APP_STRINGS  # noqa: E402
import ui  # noqa: E402
from ui import PAGES  # noqa: E402
from ui import links  # noqa: E402

from ui.server_tuning import install as tune_server  # noqa: E402

tune_server()   # once per process: Streamlit's theme message built once, not on every run (issue 33)
st.set_page_config(page_title="kvviz", page_icon=":material/grid_view:", layout="wide")

if "lang" not in st.session_state:
    url_lang = st.query_params.get("lang")
    st.session_state["lang"] = url_lang if url_lang in LANGS else DEFAULT_LANG
# The choice lives in the plain key "lang", which survives page switches and reruns that end
# early; the widget only mirrors it (its own state is dropped whenever a run does not draw it).
st.session_state["lang.widget"] = st.session_state["lang"]
st.sidebar.selectbox("Language · 语言 · Idioma", list(LANGS), format_func=LANGS.get, key="lang.widget",
                     on_change=ui.language_changed)   # every picker's label follows the language
lang = st.session_state["lang"]


def _title(key: str) -> str:
    return t("app", key, lang) if key in APP_STRINGS else key


nav = st.navigation([st.Page(path, title=_title(key), icon=icon, default=(i == 0))
                     for i, (path, key, icon) in enumerate(PAGES)])
# the page this session started on: only there does a page take its state from the link (ui/links.py)
st.session_state.setdefault("links.start", nav.url_path)
links.reconnect_reloads()   # a tab that lost its server reloads its link once connected again
nav.run()
