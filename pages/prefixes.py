"""Shared prefixes: shared blocks, ref counts, the hash chain, hits, evictions, copy-on-write."""
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views import figures
from kvviz.views import links as share
from kvviz.views import scenarios as stepper

tr = ui.texts("prefixes")
st_tr = ui.texts("step_through")
S = st.session_state

ui.restore_scenario_link("pre", stepper.NAMES[::-1], "prefixes", 2)

st.title(tr("title"))
st.markdown(tr("intro"))
c = st.columns([2, 1.3, 1.7, 4])
c[0].selectbox(st_tr("scenario"), stepper.NAMES[::-1], key="pre.sc")
choice = ui.version_runner("pre", (c[1], c[2]))
scenario, records = ui.replay(S["pre.sc"], S["pre.vllm"], S["pre.runner"])
S["pre.idx"] = max(0, min(int(S["pre.idx"]), len(records) - 1))
c[3].slider(st_tr("step"), 0, len(records) - 1, key="pre.idx")
ui.keep("pre.sc", "pre.idx")
rec = records[S["pre.idx"]]
v2 = stepper.is_v2(rec)
ui.runner_note(choice, rec.runner, v1_only=stepper.is_v1_only(scenario))
st.caption(ui.plain(scenario.description))

left, right = st.columns([3, 2], gap="large")
with left:
    cols = stepper.shown_columns(records, extra=0)
    blocks, ref = stepper.sharing_matrix(rec, cols)
    st.markdown(f"**{tr('sharing')}**")
    fig = figures.sharing_figure(blocks, ref, rec.rows, lang=ui.lang(),
                                 row_title=ui.texts("figures")("batch_position") if v2 else None)
    ui.plot(fig, "pre.sharefig", "sharing")
    if v2:  # the rows are the gathered input table's (batch order), each a copy of a state row
        st.caption(tr("sharing_v2", idx=list(rec.idx_mapping),
                      states=", ".join(f"{s}: {r}" for s, r in enumerate(rec.state_rows) if r) or "—"))
    shared = stepper.shared_blocks(blocks, ref)
    st.markdown(tr("shared_now", blocks=", ".join(map(str, shared))) if shared else tr("none_shared"))
    # the pool after this step's finishes (what the events end with), or as the kernels saw it
    when, queue, refs = ui.pool_view("pre", rec)
    st.markdown(f"**{st_tr('refs')} — {st_tr('when_' + when)}**")
    ui.plot(figures.ref_count_figure(refs, queue, rec.cached_blocks, lang=ui.lang(),
                                     highlight=[b for b in shared if b < len(refs) and refs[b] > 1]),
            "pre.reffig", "ref_counts")
with right:
    st.subheader(tr("why_title"))
    st.markdown(tr("why"))
    ex = stepper.prompt_blocks(scenario)
    st.caption(tr("example", n=ex["n"], b=ex["b"], full=", ".join(map(str, ex["full"])), rest=ex["rest"]))
    st.subheader(tr("this_step"))
    for _, e in stepper.events_frame(rec.events, ui.lang()).iterrows():
        if e["kind"] in stepper.PREFIX_EVENTS:
            st.markdown(f"- `{e['kind']}` {ui.plain(e['what happened'])}")
    ui.download_fig(fig, "sharing", "pre.dl_fig", "figure HTML")
# the two tables full width: every cached block (where it came from, who holds it), every event
st.subheader(tr("chain"))
st.caption(tr("chain_help", when=st_tr("when_" + when)))
chain = stepper.hash_chain_frame(scenario, records, int(S["pre.idx"]), when)
st.dataframe(chain, hide_index=True)
ui.download_csv(chain, "hash_chain", "pre.dl_chain", "chain CSV")
st.subheader(tr("log"))
log = stepper.prefix_events(records, ui.lang())
st.dataframe(log, hide_index=True, height=300)
ui.download_csv(log, "prefix_events", "pre.dl_log", "events CSV")
st.query_params.from_dict({**share.encode_scenario(S["pre.sc"], S["pre.idx"], S["pre.vllm"], S["pre.runner"]), "lang": ui.lang()})
