"""PCIe bytes per step: the chosen release and runner's copies (V1's commit, MRV2's staged writes and
on-device gather), V1's what-if strategies, and (on a GPU) measured copies."""
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views import figures
from kvviz.views import links as share
from ui import links
from kvviz.views import pcie as view
from kvviz.gpu import traffic
from kvviz.errors import BadInput

tr = ui.texts("pcie")
S = st.session_state


# The figures depend only on the step's shape and the language: built once per server for each (a
# class trying the same sizes, or a user going back to a value, gets them at once). Shared objects:
# read only (the page only draws them and offers them as HTML).
@st.cache_resource(max_entries=64, show_spinner=False)
def _figures(shape: traffic.StepShape, lang: str, titles: tuple, names: tuple) -> tuple:
    # names: the strategies and the tables in the page's language, as (original, shown) pairs
    strategy, table = dict(names[0]), dict(names[1])
    parts = {strategy[s]: {table.get(k, k): v for k, v in traffic.step_bytes(shape, s).items()}
             for s in traffic.STRATEGIES}
    if view.has_v2(shape):     # the release's Model Runner V2 beside V1's strategies
        parts[strategy[view.V2]] = {table.get(k, k): v for k, v in view.v2_parts(shape).items()}
    stacked = figures.stacked_bytes(parts, title=titles[0], lang=lang)
    sweeps = []
    for (field, title, xt, here) in titles[1]:
        values = traffic.sweep_values(field, here)
        df = traffic.sweep(shape, field, values)
        if view.has_v2(shape):
            df[view.V2] = view.v2_sweep(shape, field, values)
        shown = df.rename(columns=strategy)
        sweeps.append((field, df, figures.bytes_lines(shown, x=field, title=title, x_title=xt, lang=lang,
                                                      marker_x=here)))
    return stacked, sweeps


# the strategies and tables in the page's language (the CSV downloads keep the English names)
STRATEGY = dict(zip(traffic.STRATEGIES, (tr("s_full"), tr("s_prefix"), tr("s_dirty"), tr("s_dirty_prefix"))))
SERIES = {**STRATEGY, view.V2: tr("s_v2")}    # the charts' series: V1's strategies, then MRV2
TABLE = {"block table": tr("t_block_table"), "positions": tr("t_positions"), "total": tr("t_total"),
         "slot mapping": tr("t_slot_mapping")}
# the parts of the chosen release's step (kvviz.core.step_bytes names them in English: the CSV's)
PART = {**TABLE, "staged writes": tr("t_staged"), "num_blocks": tr("t_num_blocks"), "positions, seq_lens": tr("t_pos_seq"),
        "gather": tr("t_gather"), "host → device total": tr("t_pcie_total")}
LINK = {"pcie": tr("link_pcie"), "device": tr("link_device")}

DEFAULTS = {"pcie.reqs": 64, "pcie.ctx": 2048, "pcie.bs": 16, "pcie.len": 32768, "pcie.q": 1, "pcie.host": False,
            "pcie.maxreqs": 256}
ui.restore(DEFAULTS)
links.sync("pcie", share.pcie_fields())   # the whole page in its link (ui/links.py); ?vllm=&runner= as before

st.title(tr("title"))
st.markdown(tr("intro"))
vr = st.columns([2, 2, 3])
choice = ui.version_runner("pcie", (vr[0], vr[1]))
with vr[2]:
    ui.runner_note(choice, choice.runner)
c = st.columns([1, 1, 1, 1, 1.2, 1])
c[0].number_input(tr("num_reqs"), 1, 4096, key="pcie.reqs")
c[1].number_input(tr("context"), 1, 1 << 20, key="pcie.ctx")
c[2].selectbox(tr("block_size"), list(traffic.BLOCK_SIZES), key="pcie.bs")
c[3].number_input(tr("max_len"), 1, 1 << 21, key="pcie.len")
c[4].number_input(tr("query"), 1, 8192, key="pcie.q")
c[5].number_input(tr("max_reqs"), 1, 4096, key="pcie.maxreqs", help=tr("max_reqs_help"))
st.toggle(tr("host_idx"), key="pcie.host")
ui.keep(*DEFAULTS)
shape = traffic.StepShape(num_reqs=S["pcie.reqs"], context_len=S["pcie.ctx"], block_size=S["pcie.bs"],
                          max_model_len=S["pcie.len"], query_len=S["pcie.q"], host_csr_indices=S["pcie.host"],
                          vllm=choice.version, max_num_reqs=S["pcie.maxreqs"])
try:
    traffic.validate(shape)
except BadInput as e:
    st.error(tr("bad", msg=ui.plain(e)), icon=":material/error:")
    st.stop()
st.info(tr("width", w=shape.width, t=shape.width * shape.kbs, u=shape.pages_per_req, d=shape.dirty_rows,
           n=shape.num_reqs), icon=":material/straighten:")

# --- the chosen release's step: what it copies over PCIe, and what it moves on the device only ---------
rb = traffic.release_bytes(shape, choice.runner)
st.subheader(tr("release_title", version=choice.version, runner=choice.runner.upper()))
frame = view.release_frame(rb)
ui.table(frame.assign(part=frame["part"].map(lambda k: PART.get(k, k)), link=frame["link"].map(LINK)),
         {"part": tr("col_part"), "link": tr("col_link"), "bytes": tr("col_bytes")})
for key, fields in view.release_notes(rb, shape):
    st.caption(tr(key, **fields))
ui.download_csv(frame, f"bytes_{choice.version}_{choice.runner}", "pcie.dl_release")

# --- V1's commit and the what-ifs -------------------------------------------------------------------
comp = traffic.components_frame(shape)
# the table takes the page's whole width (five columns do not fit beside the figure at 1280 px)
st.subheader(tr("components"))
note = view.whatif_note(shape, choice.runner, rb)
if note:
    st.info(tr(note[0], **note[1]), icon=":material/info:")
shown = comp.assign(table=comp["table"].map(lambda k: TABLE.get(k, k)))
ui.table(shown, {"table": tr("col_table"), **STRATEGY})
ui.download_csv(comp, "bytes_per_table", "pcie.dl_comp")
sweeps = (("num_reqs", tr("vs_batch"), tr("num_reqs"), shape.num_reqs),
          ("context_len", tr("vs_context"), tr("context"), shape.context_len),
          ("block_size", tr("vs_block"), tr("block_size"), shape.block_size))
fig_s, swept = _figures(shape, ui.lang(), (tr("stacked"), sweeps), (tuple(SERIES.items()), tuple(PART.items())))
ui.plot(fig_s, "pcie.stacked", "bytes_by_strategy")
ui.download_fig(fig_s, "bytes_by_strategy", "pcie.dl_fig_stacked", ui.texts("downloads")("figure HTML"))

# one what-if a row, at the page's width: three side by side were ~270 px each at 1280 px, their
# titles wrapping to different heights (the plots misaligned), too small for a projector
for field, df, fig in swept:
    ui.plot(fig, f"pcie.sweep_{field}", f"bytes_vs_{field}")
    with st.container(horizontal=True):
        ui.download_csv(df, f"bytes_vs_{field}", f"pcie.dl_{field}")
        ui.download_fig(fig, f"bytes_vs_{field}", f"pcie.dl_fig_{field}", ui.texts("downloads")("figure HTML"))

st.subheader(tr("measured"))
sizes = traffic.strategy_totals(shape)
label = ui.backend_label()
measured = None
if label["mode"] == "interpreter":
    st.caption(tr("no_gpu", g=traffic.MODEL_GBPS, l=traffic.MODEL_LATENCY_US))
elif st.button(tr("measure"), key="pcie.measure", icon=":material/timer:"):
    measured = ui.run_backend(traffic.measure_h2d_us, sizes)
    S["pcie.measured"] = (sizes, measured)
if S.get("pcie.measured") and S["pcie.measured"][0] == sizes:
    measured = S["pcie.measured"][1]
table = traffic.model_vs_measured(sizes, measured, tr("no_gpu_cell" if label["mode"] == "interpreter"
                                                     else "not_measured_cell"))
ui.table(table.assign(strategy=table["strategy"].map(STRATEGY), **{"model µs": table["model µs"].map("{:.1f}".format)}),
         {"strategy": tr("col_strategy"), "bytes": tr("col_bytes"), "model µs": tr("col_model"),
          "measured µs": tr("col_measured")})
st.caption(tr("model_note", g=traffic.MODEL_GBPS, l=traffic.MODEL_LATENCY_US))
ui.download_csv(table, "model_vs_measured", "pcie.dl_measured", ui.texts("downloads")("model vs measured CSV"))
