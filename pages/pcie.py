"""PCIe bytes per step: the traffic model, what-if strategies, and (on a GPU) measured copies."""
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views import figures
from kvviz.gpu import traffic
from kvviz.errors import BadInput

SWEEP_TITLE_CHARS = 22   # a sweep chart is a third of the page: ~270 px at 1280, its title in lines

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
    stacked = figures.stacked_bytes(parts, title=titles[0], lang=lang)
    sweeps = []
    for (field, title, xt, here) in titles[1]:
        df = traffic.sweep(shape, field, traffic.sweep_values(field, here))
        shown = df.rename(columns=strategy)
        sweeps.append((field, df, figures.bytes_lines(shown, x=field, title=title, x_title=xt, lang=lang,
                                                      marker_x=here, wrap=SWEEP_TITLE_CHARS)))
    return stacked, sweeps


# the strategies and tables in the page's language (the CSV downloads keep the English names)
STRATEGY = dict(zip(traffic.STRATEGIES, (tr("s_full"), tr("s_prefix"), tr("s_dirty"), tr("s_dirty_prefix"))))
TABLE = {"block table": tr("t_block_table"), "positions": tr("t_positions"), "total": tr("t_total")}

DEFAULTS = {"pcie.reqs": 64, "pcie.ctx": 2048, "pcie.bs": 16, "pcie.len": 32768, "pcie.q": 1, "pcie.host": False}
ui.restore(DEFAULTS)

st.title(tr("title"))
st.markdown(tr("intro"))
ui.shows(what="shows_pcie")
c = st.columns([1, 1, 1, 1, 1.2])
c[0].number_input(tr("num_reqs"), 1, 4096, key="pcie.reqs")
c[1].number_input(tr("context"), 1, 1 << 20, key="pcie.ctx")
c[2].selectbox(tr("block_size"), list(traffic.BLOCK_SIZES), key="pcie.bs")
c[3].number_input(tr("max_len"), 1, 1 << 21, key="pcie.len")
c[4].number_input(tr("query"), 1, 8192, key="pcie.q")
st.toggle(tr("host_idx"), key="pcie.host")
ui.keep(*DEFAULTS)
shape = traffic.StepShape(num_reqs=S["pcie.reqs"], context_len=S["pcie.ctx"], block_size=S["pcie.bs"],
                          max_model_len=S["pcie.len"], query_len=S["pcie.q"], host_csr_indices=S["pcie.host"])
try:
    traffic.validate(shape)
except BadInput as e:
    st.error(tr("bad", msg=ui.plain(e)), icon=":material/error:")
    st.stop()
st.info(tr("width", w=shape.width, t=shape.width * shape.kbs, u=shape.pages_per_req, d=shape.dirty_rows,
           n=shape.num_reqs), icon=":material/straighten:")

comp = traffic.components_frame(shape)
# the table takes the page's whole width (five columns do not fit beside the figure at 1280 px)
st.subheader(tr("components"))
shown = comp.assign(table=comp["table"].map(lambda k: TABLE.get(k, k)))
ui.table(shown, {"table": tr("col_table"), **STRATEGY})
ui.download_csv(comp, "bytes_per_table", "pcie.dl_comp")
sweeps = (("num_reqs", tr("vs_batch"), tr("num_reqs"), shape.num_reqs),
          ("context_len", tr("vs_context"), tr("context"), shape.context_len),
          ("block_size", tr("vs_block"), tr("block_size"), shape.block_size))
fig_s, swept = _figures(shape, ui.lang(), (tr("stacked"), sweeps), (tuple(STRATEGY.items()), tuple(TABLE.items())))
ui.plot(fig_s, "pcie.stacked", "bytes_by_strategy")
ui.download_fig(fig_s, "bytes_by_strategy", "pcie.dl_fig_stacked", ui.texts("downloads")("figure HTML"))

cols = st.columns(3)
for col, (field, df, fig) in zip(cols, swept):
    with col:
        ui.plot(fig, f"pcie.sweep_{field}", f"bytes_vs_{field}")
        d = st.columns(2)
        with d[0]:
            ui.download_csv(df, f"bytes_vs_{field}", f"pcie.dl_{field}")
        with d[1]:
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
