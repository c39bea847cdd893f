"""Step through: play a scenario forward and back; CPU table beside the device mirror."""
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views import figures
from kvviz.views import links as share
from kvviz.views import scenarios as stepper
from kvviz.errors import BadInput
from kvviz.views.report import step_to_json

tr = ui.texts("step_through")
S = st.session_state


def move(delta):
    S["step.idx"] = max(0, min(S["step.idx"] + delta, S["step.n"] - 1))


def load_custom():
    """Replay the pasted scenario once here; only a good one replaces what is on screen."""
    try:
        stepper.require_steps(ui.replay(S["step.custom_text"])[1])
    except BadInput as e:
        S["step.custom_error"] = str(e)      # the scenario and step on screen stay as they were
        return
    S.pop("step.custom_error", None)
    S["step.custom"] = S["step.custom_text"]
    S["step.idx"] = 0


def unload_custom():
    S.pop("step.custom", None)
    S["step.idx"] = 0


ui.restore_scenario_link("step", stepper.NAMES, stepper.NAMES[0], 0)

st.title(tr("title"))
st.markdown(tr("intro"))
top = st.columns([2, 3])
top[0].selectbox(tr("scenario"), stepper.NAMES, key="step.sc", disabled="step.custom" in S)
with top[1].expander(tr("custom")):
    st.caption(tr("custom_help"))
    st.text_area("JSON", key="step.custom_text", height=160,
                 value=S.get("step.custom", '{"config": {"num_blocks": 8, "block_size": 4}, '
                                            '"requests": [{"id": "A", "prompt_len": 6, "max_tokens": 3}]}'))
    b = st.columns(2)
    b[0].button(tr("load"), on_click=load_custom, key="step.load")
    b[1].button(tr("unload"), on_click=unload_custom, key="step.unload", disabled="step.custom" not in S)
if S.get("step.custom_error"):
    st.error(tr("bad_scenario", msg=ui.plain(S["step.custom_error"])), icon=":material/error:")
source = S.get("step.custom", S["step.sc"])
try:
    scenario, records = ui.replay(source)
    stepper.require_steps(records)
except BadInput as e:
    st.error(tr("bad_scenario", msg=ui.plain(e)), icon=":material/error:")
    st.stop()
st.caption(ui.plain(scenario.description))

S["step.n"] = len(records)
S["step.idx"] = max(0, min(int(S["step.idx"]), len(records) - 1))
nav = st.columns([1, 1, 6])
nav[0].button(tr("back"), icon=":material/skip_previous:", on_click=move, args=(-1,), key="step.back",
              disabled=S["step.idx"] == 0, use_container_width=True)
nav[1].button(tr("next"), icon=":material/skip_next:", on_click=move, args=(1,), key="step.next",
              disabled=S["step.idx"] >= len(records) - 1, use_container_width=True)
if len(records) > 1:
    nav[2].slider(tr("step"), 0, len(records) - 1, key="step.idx")
rec = records[S["step.idx"]]
ui.keep("step.sc", "step.idx")
cfg = scenario.config
st.info(tr("summary", i=rec.index, n=len(records), reqs=rec.num_reqs, tok=rec.num_tokens, rpad=rec.num_reqs_padded,
           tpad=rec.num_tokens_padded, rows=rec.commit_rows, bytes=rec.commit_bytes), icon=":material/info:")

left, right = st.columns([3, 2], gap="large")
with left:
    cols = stepper.shown_columns(records)
    n_rows = stepper.rows_shown(records)
    stale = stepper.stale_rows(rec, n_rows, cols)
    sizes = stepper.table_sizes(cfg)
    t1, t2 = st.columns(2)
    with t1:
        st.markdown(f"**{tr('cpu')}**")
        fig_cpu = figures.block_table_heatmap(rec.cpu_tables[0][:n_rows], num_reqs=n_rows, **sizes,
                                              counts=rec.num_blocks_per_row[0], lang=ui.lang(), max_cols=cols,
                                              showscale=False)
        ui.plot(fig_cpu, "step.cpufig", "cpu_table")
    with t2:
        after = st.toggle(tr("show_after"), key="step.after")
        st.markdown(f"**{tr('dev_after') if after else tr('dev_before')}**")
        dev = rec.device_tables[0] if after else rec.device_before_commit[0]
        fig_dev = figures.block_table_heatmap(dev[:n_rows], num_reqs=n_rows, **sizes,
                                              stale_rows=[] if after else stale, lang=ui.lang(), max_cols=cols,
                                              showscale=False)
        ui.plot(fig_dev, "step.devfig", "device_table")
    st.caption(tr("stale", rows=", ".join(map(str, stale))) if stale else tr("no_stale"))
    # the pool after this step's finishes (what the events end with), or as the kernels saw it
    when, queue, refs = ui.pool_view("step", rec)
    st.markdown(f"**{tr('free_queue')} — {tr('when_' + when)}**")
    ui.plot(figures.free_queue_figure(queue, rec.cached_blocks, lang=ui.lang()), "step.queuefig", "free_queue")
    st.markdown(f"**{tr('refs')} — {tr('when_' + when)}**")
    ui.plot(figures.ref_count_figure(refs, queue, rec.cached_blocks, lang=ui.lang()),
            "step.reffig", "ref_counts")
with right:
    st.subheader(tr("events"))
    events = stepper.events_frame(rec.events, ui.lang())
    for _, e in events.iterrows():
        st.markdown(f"- `{e['kind']}` {ui.plain(e['what happened'])}")
    st.subheader(tr("scheduled"))
    st.dataframe(stepper.scheduled_rows(rec), hide_index=True)
    st.subheader(tr("requests"))
    reqs = stepper.requests_frame(rec)
    st.dataframe(reqs, hide_index=True)
    ui.download_json(lambda: step_to_json(rec, cfg), f"step_{rec.index}", "step.dl_json", "step JSON")
    ui.download_csv(events, f"events_{rec.index}", "step.dl_events", "events CSV")
    ui.download_fig(fig_cpu, f"cpu_table_{rec.index}", "step.dl_fig", "table HTML")

if "step.custom" not in S:
    params = {**share.encode_scenario(S["step.sc"], S["step.idx"]), "lang": ui.lang()}
    st.query_params.from_dict(params)
    st.caption(tr("link"))
    st.code(share.query_string(params), language=None)
else:  # the address must not name the built-in scenario that is no longer shown
    st.query_params.from_dict({"lang": ui.lang()})
    st.caption(tr("no_link"))
