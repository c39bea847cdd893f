"""Shared prefixes: shared blocks, ref counts, the hash chain, hits, evictions, copy-on-write."""
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views.report import event_line
from kvviz.views import figures, frames
from kvviz.views import links as share
from ui import links
from kvviz.views import scenarios as stepper

tr = ui.texts("prefixes")
st_tr = ui.texts("step_through")
S = st.session_state

ui.restore_scenario_link("pre", stepper.NAMES[::-1], "prefixes", 2)
links.read("prefixes", share.scenario_view_fields("pre"))   # and the pool's moment (ui/links.py)
links.warnings("prefixes")

st.title(tr("title"))
st.markdown(tr("intro"))
c = st.columns([1.6, 2, 2, 3])   # wide enough for the longest version / runner label
c[0].selectbox(st_tr("scenario"), stepper.NAMES[::-1], key="pre.sc")
choice = ui.version_runner("pre", (c[1], c[2]))
scenario, records = ui.replay(S["pre.sc"], S["pre.vllm"], S["pre.runner"])
S["pre.idx"] = max(0, min(int(S["pre.idx"]), len(records) - 1))
c[3].select_slider(st_tr("step"), list(range(len(records))), key="pre.idx",   # shown from 1, as on Step through
                   format_func=lambda i: str(i + 1))
ui.keep("pre.sc", "pre.idx")
rec = records[S["pre.idx"]]
v2 = stepper.is_v2(rec)
ui.runner_note(choice, rec.runner, v1_only=stepper.is_v1_only(scenario))
if scenario.description == stepper.SCENARIOS.get(S["pre.sc"], {}).get("description"):   # built in: translated
    st.caption(ui.texts("scenarios")("desc." + S["pre.sc"]))
else:   # a user's scenario: its own text, as text
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
            st.markdown(event_line(e["kind"], ui.plain(e["what happened"])))
    ui.download_fig(fig, "sharing", "pre.dl_fig", tr("dl_fig"))
# the two tables full width: every cached block (where it came from, who holds it), every event
st.subheader(tr("chain"))
st.caption(tr("chain_help", when=st_tr("when_" + when)))
chain = stepper.hash_chain_frame(scenario, records, int(S["pre.idx"]), when, lang=ui.lang())
# widths that fit the main column at 1280 px in every language; no value shows as "—", not None
CHAIN_WIDTHS = {"physical block": 85, "hash": 80, "parent hash": 95, "tokens": 150, "request": 75, "block": 60,
                "cached at step": 80, "held by": 70, "ref count": 50, "in prefix cache": 60}


def _col(name: str, width: int):
    helps = {k for k in ("physical block", "parent hash", "block", "cached at step", "held by", "ref count",
                         "in prefix cache")}
    return st.column_config.Column(tr(f"col.{name}"), width=width, help=tr(f"help.{name}") if name in helps else None)


# steps counted from 1 on screen (a block not cached yet has none: "—")
shown_chain = chain.assign(**{"cached at step": chain["cached at step"].map(
    lambda v: None if v is None or v != v else int(v) + 1)})
st.dataframe(frames.no_none(shown_chain), hide_index=True,   # not cached yet: "—", block numbers stay whole
             column_config={c: _col(c, w) for c, w in CHAIN_WIDTHS.items() if c in chain.columns})
ui.download_csv(chain, "hash_chain", "pre.dl_chain", tr("dl_chain"))
st.subheader(tr("log"))
log = stepper.prefix_events(records, ui.lang())
st.dataframe(log.assign(step=log["step"] + 1), hide_index=True, height=300,   # counted from 1, as the picker
             column_config={"step": st.column_config.NumberColumn(tr("col.step"), width=60, format="%d"),
                            "kind": st.column_config.TextColumn(tr("col.kind"), width=90),
                            "what happened": st.column_config.TextColumn(tr("col.what happened"), width=640)})
ui.download_csv(log, "prefix_events", "pre.dl_log", tr("dl_log"))
links.write(share.scenario_view_fields("pre"), share.encode_scenario(S["pre.sc"], S["pre.idx"], S["pre.vllm"],
                                                                      S["pre.runner"]))
