"""Step through: play a scenario forward and back; V1: CPU table beside the device mirror; V2: the
request-state table beside the gathered input table and idx_mapping."""
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views.report import event_line
from kvviz.views import links as share
from ui import links
from kvviz.views import scenarios as stepper
from kvviz.core.capacity import capacity_check
from kvviz.core.versions import rules_for
from kvviz.errors import BadInput
from kvviz.views.report import step_to_json
from kvviz.texts.scenarios import STRINGS as SCENARIO_TEXTS

tr = ui.texts("step_through")
S = st.session_state


def move(delta):
    S["step.idx"] = max(0, min(S["step.idx"] + delta, S["step.n"] - 1))


def load_custom():
    """Replay the pasted scenario once here; only a good one replaces what is on screen. The version
    and runner selectors take the scenario's own ``vllm`` / ``runner`` keys (when it has them)."""
    text = S["step.custom_text"]
    try:
        vllm, runner = stepper.selectors_for(text, S.get("step.vllm"), S.get("step.runner"))
        stepper.require_steps(ui.replay(text, vllm, runner)[1])
    except BadInput as e:
        S["step.custom_error"] = str(e)      # the scenario and step on screen stay as they were
        return
    S.pop("step.custom_error", None)
    S["step.custom_note"] = stepper.version_note(text)
    S["step.custom"] = text
    S["step.vllm"] = S["step.vllm.kept"] = vllm
    S["step.runner"] = S["step.runner.kept"] = runner
    S["step.idx"] = 0


def unload_custom():
    S.pop("step.custom", None)
    S["step.idx"] = 0


ui.restore_scenario_link("step", stepper.NAMES, stepper.NAMES[0], 0)
links.read("step_through", share.scenario_view_fields("step"))   # and the pool's moment, before / after (ui/links.py)
links.warnings("step_through")

st.title(tr("title"))
intro = st.empty()
intro.markdown(tr("intro"))
top = st.columns([1.9, 1.7, 1.7, 2.7])   # wide enough for "main (newest)" at 1280 px
top[0].selectbox(tr("scenario"), stepper.NAMES, key="step.sc", disabled="step.custom" in S)
try:   # a pasted scenario's KV-cache groups: a hybrid model's "auto" is V1 before v0.29.0
    groups = stepper.load(S["step.custom"]).config.groups if S.get("step.custom") else None
except BadInput:
    groups = None
choice = ui.version_runner("step", (top[1], top[2]), groups=groups)
with top[3].expander(tr("custom")):
    st.caption(tr("custom_help"))
    st.caption(tr("custom_versions"))
    st.text_area("JSON", key="step.custom_text", height=160,
                 value=S.get("step.custom", '{"config": {"num_blocks": 8, "block_size": 4}, '
                                            '"requests": [{"id": "A", "prompt_len": 6, "max_tokens": 3}]}'))
    st.button(tr("load"), on_click=load_custom, key="step.load")      # one under the other: never clipped
    st.button(tr("unload"), on_click=unload_custom, key="step.unload", disabled="step.custom" not in S)
if S.get("step.custom_error"):
    st.error(tr("bad_scenario", msg=ui.plain(S["step.custom_error"])), icon=":material/error:")
if S.get("step.custom") and S.get("step.custom_note"):
    st.warning(ui.plain(S["step.custom_note"]), icon=":material/warning:")
source = S.get("step.custom", S["step.sc"])
try:
    scenario, records = ui.replay(source, S["step.vllm"], S["step.runner"])
    stepper.require_steps(records)
except BadInput as e:
    st.error(tr("bad_scenario", msg=ui.plain(e)), icon=":material/error:")
    ui.keep("step.sc", "step.idx")
    st.stop()
v2 = stepper.is_v2(records)
ui.runner_note(choice, records[0].runner, v1_only=stepper.is_v1_only(scenario))
if v2:
    intro.markdown(tr("intro_v2"))
if scenario.description == stepper.SCENARIOS.get(S["step.sc"], {}).get("description"):   # built in: translated
    desc = "desc." + S["step.sc"]    # the text true for the runner shown (V2 has no condense)
    st.caption(ui.texts("scenarios")(desc + ".v2" if v2 and desc + ".v2" in SCENARIO_TEXTS else desc))
else:   # a user's scenario: its own text, as text
    st.caption(ui.plain(scenario.description))

cap = capacity_check(scenario.config, rules_for(scenario.config.vllm))
st.caption(tr("capacity_ok" if cap["fits"] else "capacity_refused", v=scenario.config.vllm, mml=cap["max_model_len"],
              needed=cap["needed"], counted=cap["counted"], est=cap.get("estimated_max_model_len", 0),
              why=tr("capacity_null" if cap["null_reserved"] else "capacity_all")))
st.caption(tr("none_hash_fixed" if rules_for(scenario.config.vllm).none_hash_seed == "fixed" else "none_hash_random"))
S["step.n"] = len(records)
# the step's tables keep their English keys (tests, CSV); the headers are the page's language
COLS = {k: tr("col." + k) for k in stepper.STEP_TABLE_COLUMNS}


@st.fragment
def steps(source, scenario, records, v2):
    """Everything a step shows, from Back / Next / the slider on: a press reruns only this part of
    the page (the selectors, the custom-scenario box and the replay above are not redrawn)."""
    S["step.idx"] = max(0, min(int(S["step.idx"]), len(records) - 1))
    nav = st.columns([1.5, 1.5, 5])
    nav[0].button(tr("back"), icon=":material/skip_previous:", on_click=move, args=(-1,), key="step.back",
                  disabled=S["step.idx"] == 0, use_container_width=True)
    nav[1].button(tr("next"), icon=":material/skip_next:", on_click=move, args=(1,), key="step.next",
                  disabled=S["step.idx"] >= len(records) - 1, use_container_width=True)
    if len(records) > 1:    # steps are shown counted from 1 (the link's step= and step.idx count from 0)
        nav[2].select_slider(tr("step"), list(range(len(records))), key="step.idx", format_func=lambda i: str(i + 1))
    rec = records[S["step.idx"]]
    ui.keep("step.sc", "step.idx")
    cfg = scenario.config
    st.info(tr("summary_v2" if v2 else "summary", i=S["step.idx"] + 1, n=len(records), reqs=rec.num_reqs, tok=rec.num_tokens,
               rpad=rec.num_reqs_padded, tpad=rec.num_tokens_padded, rows=rec.commit_rows, bytes=rec.commit_bytes),
            icon=":material/info:")

    left, right = st.columns([3, 2], gap="large")
    with left:   # the toggle above the two tables: its label has the left column's whole width
        S.setdefault("step.after_v2" if v2 else "step.after", v2)   # (a link may have set it)
        after = st.toggle(tr("show_after_v2" if v2 else "show_after"), key="step.after_v2" if v2 else "step.after")
        t1, t2 = st.columns(2)

    def figures_of(part, option):    # a built-in scenario's: built once for every session (ui.step_figures)
        return ui.step_figures(part, source, S["step.vllm"], S["step.runner"], S["step.idx"], ui.lang(), option,
                               scenario, records)

    if v2:  # Model Runner V2: the request-state table by state index, the gathered input table, idx_mapping
        figs = figures_of("tables", after)
        fig_cpu, changed, tails = figs["cpu"], figs["changed"], figs["tails"]
        with t1:
            st.markdown(f"**{tr('state_table')}**")
            ui.plot(fig_cpu, "step.cpufig", "state_table")
        with t2:
            st.markdown(f"**{tr('input_after') if after else tr('input_before')}**")
            ui.plot(figs["dev"], "step.devfig", "input_table")
        with left:
            st.caption(tr("gathered_rows", rows=", ".join(map(str, changed))) if changed else tr("no_gathered_rows"))
            if after and tails:
                st.caption(tr("stale_tails", rows=", ".join(map(str, tails))))
    else:
        figs = figures_of("tables", after)
        fig_cpu, stale = figs["cpu"], figs["stale"]
        with t1:
            st.markdown(f"**{tr('cpu')}**")
            ui.plot(fig_cpu, "step.cpufig", "cpu_table")
        with t2:
            st.markdown(f"**{tr('dev_after') if after else tr('dev_before')}**")
            ui.plot(figs["dev"], "step.devfig", "device_table")
        with left:
            st.caption(tr("stale", rows=", ".join(map(str, stale))) if stale else tr("no_stale"))
    with left:
        st.caption(tr("colours"))      # every figure says what its colour encodes
        # the pool after this step's finishes (what the events end with), or as the kernels saw it
        when, _, _ = ui.pool_view("step", rec)
        pool = figures_of("pool", when)
        st.markdown(f"**{tr('free_queue')} — {tr('when_' + when)}**")
        ui.plot(pool["queue"], "step.queuefig", "free_queue")
        st.markdown(f"**{tr('refs')} — {tr('when_' + when)}**")
        ui.plot(pool["refs"], "step.reffig", "ref_counts")
    with right:
        st.subheader(tr("events"))
        events = stepper.events_frame(rec.events, ui.lang())
        st.markdown("\n".join(event_line(e["kind"], ui.plain(e["what happened"])) for _, e in events.iterrows()))
    # the step's tables at the page's full width (in the narrow right column their last columns hid)
    if v2:
        st.markdown(f"**{tr('idx_mapping')}**")
        ui.table(stepper.idx_mapping_frame(rec), COLS)
        st.caption(tr("idx_caption", idx=list(rec.idx_mapping)))
    st.subheader(tr("scheduled"))
    ui.table(stepper.scheduled_rows(rec), COLS)
    st.subheader(tr("requests"))
    ui.table(stepper.requests_frame(rec), COLS)
    with st.container(horizontal=True):
        ui.download_json(lambda: step_to_json(rec, cfg), f"step_{rec.index}", "step.dl_json", ui.texts("downloads")("step JSON"))
        ui.download_csv(events, f"events_{rec.index}", "step.dl_events", ui.texts("downloads")("events CSV"))
        ui.download_fig(fig_cpu, f"cpu_table_{rec.index}", "step.dl_fig", ui.texts("downloads")("table HTML"))

    ui.prefetch_step_figures(source, S["step.vllm"], S["step.runner"], S["step.idx"] + 1, ui.lang(), after, when,
                             scenario, records)
    if "step.custom" not in S:
        params = links.write(share.scenario_view_fields("step"),
                             share.encode_scenario(S["step.sc"], S["step.idx"], S["step.vllm"], S["step.runner"]))
        st.caption(tr("link"))
        st.code(share.query_string(params), language=None)
    else:  # the address must not name the built-in scenario that is no longer shown
        st.query_params.from_dict({"lang": ui.lang()})
        st.caption(tr("no_link"))


steps(source, scenario, records, v2)
