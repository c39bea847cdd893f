"""Kernel lab: run the kernel bench (kvviz.gpu.bench) on this machine's backend with a progress bar, and plot it."""
import pandas as pd
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.gpu.bench import goals, results
from kvviz.gpu.bench.run import run_bench
from kvviz.views import bench_goals, figures, frames, fused_timeline
from kvviz.errors import BadInput
from kvviz.views import links as share
from ui import links

tr = ui.texts("kernel_lab")
MAIN_COLUMNS = ["variant", "shape", "us", "x_empty", "graph_us", "dev_us", "dev_warm_us", "gbps", "picked"]
COLS = {k: st.column_config.Column(tr("col." + k)) for k in
        ("kernel", "variant", "shape", "us", "x_empty", "graph_us", "dev_us", "dev_warm_us", "gbps", "picked", "bytes",
         "x_bytes", "graph_x_empty", "dev_x_empty", "dev_warm_x_empty", "host_us", "of_copy_bw")}
S = st.session_state
label = ui.backend_label()
# on a CPU the page opens on the recorded H200 run (the interpreter's timings say little); on a GPU, on Run
ui.restore({"lab.quick": True, "lab.source": "recorded" if label["mode"] == "interpreter" else "run"})
links.sync("kernel_lab", share.kernel_lab_fields(results.example_runs(),   # the whole page in its link
                                                 "recorded" if label["mode"] == "interpreter" else "run"))

st.title(tr("title"))
st.markdown(tr("intro"))
ui.shows(what="shows_kernel_lab")
dev = ui.device_text(label)
SOURCES = ("run", "recorded", "upload")
source = st.segmented_control(tr("source"), SOURCES, key="lab.source",
                              format_func=lambda k: tr(f"source_{k}", dev=dev)) or "run"
ui.keep("lab.source")

if source == "run":
    c = st.columns([1, 1, 4])
    c[0].toggle(tr("quick"), key="lab.quick")
    run = c[1].button(tr("run"), key="lab.run", icon=":material/speed:", type="primary")
    ui.keep("lab.quick")
    if run:
        from kvviz.gpu.harness import KernelMismatch

        bar = st.progress(0.0, text=tr("running"))

        def progress(done, total, msg):
            bar.progress(min(done / max(total, 1), 1.0), text=f"{done}/{total} · {msg}")

        try:
            S["lab.result"] = ui.run_backend(run_bench, quick=S["lab.quick"], progress=progress)
            S.pop("lab.error", None)
        except KernelMismatch as e:
            S["lab.error"] = str(e)
        bar.empty()
    if S.get("lab.error"):
        st.error(tr("mismatch", msg=ui.plain(S["lab.error"])), icon=":material/cancel:")
    res = S.get("lab.result")
    if res is None:
        st.info(tr("not_run", dev=dev), icon=":material/info:")
        st.stop()
elif source == "recorded":
    runs = results.example_runs()
    ui.restore({"lab.recorded": runs[0]})
    if S["lab.recorded"] not in runs:
        S["lab.recorded"] = runs[0]
    name = st.selectbox(tr("recorded"), runs, key="lab.recorded")
    ui.keep("lab.recorded")
    res = results.load_example_run(name)
    st.caption(tr("recorded_note"))
else:
    up = st.file_uploader(tr("upload"), type=["json"], key="lab.upload", max_upload_size=8)
    if up is not None and up.file_id != S.get("lab.upload_id"):
        try:
            S["lab.uploaded"] = results.load_bench_json(up.getvalue(), up.name)
            S["lab.upload_name"] = up.name
            S.pop("lab.upload_error", None)
        except BadInput as e:   # one message; the last good file stays on screen
            S["lab.upload_error"] = str(e)
        except Exception as e:  # noqa: BLE001 - never a traceback for a file someone uploaded
            S["lab.upload_error"] = f"{up.name} could not be read ({type(e).__name__})"
        S["lab.upload_id"] = up.file_id
    if S.get("lab.upload_error"):
        st.error(tr("bad_file", msg=ui.plain(S["lab.upload_error"])), icon=":material/error:")
    res = S.get("lab.uploaded")
    if res is None:
        st.info(tr("give_file"), icon=":material/upload_file:")
        st.stop()
    st.caption(tr("showing_file", name=ui.plain(S.get("lab.upload_name", ""))))

df = pd.DataFrame(res["rows"])
st.success(tr("done", n=len(df), dev=ui.device_text(res["label"]), date=ui.plain(res["date"])), icon=":material/check_circle:")
note, known = bench_goals.note_text(res["note"], ui.lang())
if ui.lang() != "en" and not known:
    st.caption(tr("as_recorded"))
st.caption(note)
st.caption(tr("floors", e=res["floors"]["empty_us"], c=res["floors"]["copy_gbps"]))
if res["floors"].get("empty_dev_us"):
    st.caption(tr("floors_more", g=res["floors"].get("empty_graph_us"), d=res["floors"]["empty_dev_us"],
                  w=res["floors"].get("empty_dev_warm_us")))
kernels = list(dict.fromkeys(df["kernel"]))
if S.get("lab.kernel") not in kernels:   # from a link, or another run's
    S["lab.kernel"] = kernels[0]
pick = st.segmented_control(tr("kernel"), kernels, key="lab.kernel") or kernels[0]
sub = df[df["kernel"] == pick]
timings = goals.available_timings(sub.to_dict("records"))
timing = "us"
if len(timings) > 1:
    if S.get("lab.timing") not in timings:
        S["lab.timing"] = "us"
    timing = st.segmented_control(tr("timing"), timings, key="lab.timing",
                                    format_func=lambda t: tr(f"timing_{t}"), help=tr("timing_help")) or "us"
    timing = timing if timing in timings else "us"
floor, goal_x = goals.plot_guides(pick, timing, res["floors"])
fig = figures.bench_figure(sub, x="shape", y=timing, color="variant", title=tr("plot", kernel=pick),
                           x_title=tr("shape"), y_title="µs · " + tr(f"timing_{timing}"), log_x=False,
                           floor=floor, floor_label=tr("floor_line", e=floor),
                           goal_x=goal_x, goal_label=tr("goal_line", x=goal_x))
ui.plot(fig, "lab.fig", "bench")
# the picked kernel's main columns fit the page; its other columns in a second table of the same rows
# (columns no row of this kernel was measured by are left out; the CSV below holds every column)
measured = [c for c in sub.columns if sub[c].notna().any()]
main = [c for c in MAIN_COLUMNS if c in measured]
st.caption(tr("table_of", kernel=pick))
shown, blanked = frames.bench_rows(sub)   # GB/s of a row of a few bytes: "—", said why below
st.dataframe(frames.no_none(shown[main]), hide_index=True, column_config=COLS)   # not measured: "—", not None
if blanked:
    st.caption(tr("gbps_small", n=frames.GBPS_MIN_BYTES))
if pick == "slot_mapping" and "torch" in set(sub["variant"]):
    st.caption(tr("torch_note"))
rest = [c for c in measured if c not in main and c != "kernel"]
if rest and st.toggle(tr("more_columns", n=len(rest)), key="lab.more_columns"):
    st.dataframe(frames.no_none(shown[["variant", "shape", *rest]]), hide_index=True, column_config=COLS)

# one step's metadata: the fused launch against the separate ones (this result's fused_step rows,
# else the newest recorded run that has them)
st.subheader(tr("tl_title"))
st.caption(tr("tl_intro"))
tl_res = res
if not fused_timeline.fused_rows(res):
    tl_name, tl_res = fused_timeline.latest_run_with_fused(results.example_runs(), results.load_example_run)
    if tl_res:
        st.caption(tr("tl_from_recorded", name=ui.plain(tl_name)))
if tl_res:
    tl_rows = fused_timeline.fused_rows(tl_res)
    ch = fused_timeline.choices(tl_rows)
    for k, opts in (("lab.tl_shape", ch["shapes"]), ("lab.tl_groups", ch["groups"]), ("lab.tl_runner", ch["runners"])):
        if S.get(k) not in opts:   # another run (its own batches), a link, or the first visit
            S[k] = opts[0]
    c = st.columns([2, 2, 3])
    shape = c[0].selectbox(tr("tl_shape"), ch["shapes"], key="lab.tl_shape")
    groups = c[1].segmented_control(tr("tl_groups"), ch["groups"], key="lab.tl_groups") or ch["groups"][0]
    runner = c[2].segmented_control(tr("tl_runner"), ch["runners"], key="lab.tl_runner",
                                    format_func=lambda r: tr(f"runner_{r}")) or ch["runners"][0]
    frame = fused_timeline.timeline_frame(tl_rows, tl_res["floors"], shape, groups, runner)
    tl_fig = fused_timeline.timeline_figure(frame, tr, runner=runner, groups=groups,
                                            title=tr("tl_fig", shape=shape, g=groups, runner=tr(f"runner_{runner}")))
    ui.plot(tl_fig, "lab.tl_fig", "step_timeline")

# the speed goals, in the page's language: a GPU run's results (a summary, the list folded: targets, not
# errors), or, for the CPU interpreter, the goals as not measured here (its µs are Python emulation)
gpu_run = bench_goals.on_gpu(res)
goal_rows = bench_goals.goal_rows(res, ui.lang(), None if gpu_run else results.load_example_run(results.example_runs()[0]))
if goal_rows:
    st.subheader(tr("goals"))
    if gpu_run:
        met = sum(g["status"] == "met" for g in goal_rows)
        st.info(tr("goals_summary", met=met, n=len(goal_rows), dev=ui.device_text(res["label"]),
                   date=ui.plain(res["date"])), icon=":material/flag:")
        st.caption(tr("goals_about"))
    else:
        st.info(tr("goals_cpu"), icon=":material/info:")
    marks = {"met": f":green[**{tr('goal_met')}**]", "not_met": f":orange[**{tr('goal_not_met')}**]",
             "not_measured": f":gray[{tr('goal_not_measured')}]"}
    with st.expander(tr("goals_all", n=len(goal_rows)), expanded=False):   # one line a goal, wrapped
        for g in goal_rows:
            st.markdown(f"{marks[g['status']]} · {g['goal']}" + (f" — {g['figure']}" if g["figure"] else ""))
d = st.columns(3)
with d[0]:
    ui.download_csv(df, "bench", "lab.dl_csv")
with d[1]:
    ui.download_json(lambda: res, "bench", "lab.dl_json")
with d[2]:
    ui.download_fig(fig, "bench", "lab.dl_fig")
