"""Home: what kvviz shows, how to read it, where the kernels run, and every page."""
import streamlit as st

import ui

ui.ensure_app_shell()

tr = ui.texts("home")
st.title(tr("title"))
st.markdown(tr("intro"))
st.info(tr("chain"), icon=":material/link:")

left, right = st.columns([3, 2], gap="large")
with left:
    st.subheader(tr("how_title"))
    st.markdown(tr("how"))
with right:
    st.subheader(tr("backend_title"))
    label = ui.backend_label()
    with st.container(border=True):
        st.metric(tr("device"), ui.device_text(label))
        st.markdown(f"Triton **{label['triton']}** · torch **{label['torch']}** · mode **{label['mode']}**")
        st.caption(tr("backend_interp") if label["mode"] == "interpreter" else tr("backend_gpu"))

st.subheader(tr("pages_title"))
app = ui.texts("app")
cols = st.columns(2)
for i, (path, key) in enumerate([("pages/batch.py", "batch"), ("pages/step_through.py", "step"),
                                 ("pages/prefixes.py", "prefixes"), ("pages/csr.py", "csr"),
                                 ("pages/layout.py", "layout"), ("pages/pcie.py", "pcie"),
                                 ("pages/kernel_lab.py", "kernel_lab"), ("pages/demos.py", "demos"),
                                 ("pages/notations.py", "notations"), ("pages/dumps.py", "dumps")]):
    with cols[i % 2].container(border=True):
        st.page_link(path, label=f"**{app('nav_' + key)}**")
        st.caption(tr("d_" + key))
