"""Kernel lab: run kvviz.bench on this machine's backend with a progress bar, and plot it."""
import pandas as pd
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz import figures

tr = ui.texts("kernel_lab")
S = st.session_state
if "lab.quick" not in S:
    S["lab.quick"] = S.get("lab.quick.kept", True)

st.title(tr("title"))
st.markdown(tr("intro"))
label = ui.backend_label()
dev = ui.device_text(label)
c = st.columns([1, 1, 4])
c[0].toggle(tr("quick"), key="lab.quick")
run = c[1].button(tr("run"), key="lab.run", icon=":material/speed:", type="primary")
ui.keep("lab.quick")
if run:
    from kvviz import bench
    from kvviz.backend import KernelMismatch

    bar = st.progress(0.0, text=tr("running"))

    def progress(done, total, msg):
        bar.progress(min(done / max(total, 1), 1.0), text=f"{done}/{total} · {msg}")

    try:
        S["lab.result"] = ui.run_backend(bench.run_bench, quick=S["lab.quick"], progress=progress)
        S.pop("lab.error", None)
    except KernelMismatch as e:
        S["lab.error"] = str(e)
    bar.empty()
if S.get("lab.error"):
    st.error(tr("mismatch", msg=S["lab.error"]), icon=":material/cancel:")
res = S.get("lab.result")
if res is None:
    st.info(tr("not_run", dev=dev), icon=":material/info:")
    st.stop()

df = pd.DataFrame(res["rows"])
st.success(tr("done", n=len(df), dev=ui.device_text(res["label"]), date=res["date"]), icon=":material/check_circle:")
st.caption(res["note"])
st.caption(tr("floors", e=res["floors"]["empty_us"], c=res["floors"]["copy_gbps"]))
kernels = list(dict.fromkeys(df["kernel"]))
pick = st.segmented_control(tr("kernel"), kernels, key="lab.kernel", default=kernels[0])
sub = df[df["kernel"] == (pick or kernels[0])]
fig = figures.bench_figure(sub, x="shape", y="us", color="variant", title=tr("plot", kernel=pick or kernels[0]),
                           x_title=tr("shape"), y_title="µs", log_x=False)
ui.plot(fig, "lab.fig", "bench")
st.dataframe(df, hide_index=True)
if res.get("goals"):
    st.subheader(tr("goals"))
    st.dataframe(pd.DataFrame(res["goals"]), hide_index=True)
d = st.columns(3)
with d[0]:
    ui.download_csv(df, "bench", "lab.dl_csv")
with d[1]:
    ui.download_json(lambda: res, "bench", "lab.dl_json")
with d[2]:
    ui.download_fig(fig, "bench", "lab.dl_fig")
