"""Home: what kvviz shows, how to read it, where the kernels run, and every page."""
import streamlit as st

import ui

ui.ensure_app_shell()
from ui import links  # noqa: E402

links.write([])   # the language; nothing of the page left before
from kvviz.core.versions import MAIN_COMMIT, NEWEST, RELEASES  # noqa: E402

tr = ui.texts("home")
# scripts/live_fuzz.py on this machine, 2026-12-06 (BENCHMARKS.md, "The simulator held against real vLLM")
FUZZ = {"r1": "0.32.0", "n1": "511", "s1": "42,848", "r2": "0.28.0", "n2": "699", "s2": "57,060"}
st.title(tr("title"))
st.markdown(tr("intro"))
ui.shows(what="shows_home", oldest=RELEASES[0], newest=NEWEST, main=MAIN_COMMIT)
st.info(tr("chain"), icon=":material/link:")
with st.expander(tr("fidelity_title"), icon=":material/verified:"):
    st.markdown(tr("fidelity", r1="0.32.0", r2="0.28.0", fuzz=tr("fidelity_fuzz", **FUZZ)))

left, right = st.columns([3, 2], gap="large")
with left:
    st.subheader(tr("how_title"))
    st.markdown(tr("how"))
with right:
    st.subheader(tr("backend_title"))
    label = ui.backend_label()
    with st.container(border=True):
        # a sentence, not st.metric: a device name is text, and a metric would cut it short
        where = tr("device_cpu") if label.get("mode") == "interpreter" else tr("device_gpu", device=label["device"])
        st.markdown(tr("device", where=where))   # zh: a full-width colon
        st.markdown(tr("versions", triton=label["triton"], torch=label["torch"], mode=label["mode"]))
        st.caption(tr("backend_interp") if label["mode"] == "interpreter" else tr("backend_gpu"))

st.subheader(tr("pages_title"))
app = ui.texts("app")
cols = st.columns(2)
for i, (path, key, _) in enumerate(ui.PAGES[1:]):  # every page but this one
    with cols[i % 2].container(border=True):
        st.page_link(path, label=f"**{app(key)}**")
        st.caption(tr("d_" + key.removeprefix("nav_")))
