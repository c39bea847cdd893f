"""FlashInfer CSR: the 2D table beside indptr / indices / last_page_len, checked on the backend."""
import numpy as np
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views import batch as ex
from kvviz.views import csr as csr_vm
from kvviz.views import figures
from kvviz.views import links as share
from ui import links

AUTO_RUN_PAGES = 65536   # the repack check runs by itself up to this many pages (always on a GPU)
tr = ui.texts("csr")
btr = ui.texts("batch")
S = st.session_state
ui.restore({"csr.src": "batch" if "batch.explored" in S else "default", "csr.empty": 2, "csr.rule": "release",
            "csr.req": 0})

st.title(tr("title"))
st.markdown(tr("intro"))
st.info(tr("rules"), icon=":material/rule:")
links.restore_batch("csr")   # a link from "the Batch page's batch" carries that batch
sources = (["batch"] if "batch.explored" in S else []) + ex.PRESETS[:-1]
links.sync("csr", share.csr_fields(sources),   # the whole page in its link (ui/links.py)
           links.batch_params() if S["csr.src"] == "batch" else None)
if S["csr.src"] not in sources:
    S["csr.src"] = sources[0]
vr = st.columns([2, 2, 4])   # wide enough for the longest version / runner label at 1280 px
choice = ui.version_runner("csr", (vr[0], vr[1]))
v2 = choice.runner == "v2"
with vr[2]:
    ui.runner_note(choice, choice.runner)
# the source on a line of its own: a preset's name is long ("Mixto: prellenados, decodificaciones, ...")
c = [st.container()] + st.columns([0.8, 2.6, 0.8])   # the rule's second option in full ("antes del 2025-11-14: ...")
c[0].selectbox(tr("source"), sources, key="csr.src",
               format_func=lambda s: tr("from_batch") if s == "batch" else btr("p_" + s))
c[1].number_input(tr("empty_rows"), 0, 8, key="csr.empty")
# the empty-request rule is the release's (#25438, v0.11.1); the other two options override it, labelled
release_zero = csr_vm.release_empty_is_zero(choice.version)
if S["csr.rule"] not in csr_vm.RULE_CHOICES:
    S["csr.rule"] = "release"
c[2].segmented_control(tr("rule"), csr_vm.RULE_CHOICES, key="csr.rule", help=tr("rule_help"),
                       format_func=lambda r: tr("rule_release", rule=tr("rule_now" if release_zero else "rule_old_short"))
                       if r == "release" else tr("rule_now_override") if r == "now" else tr("rule_old"))
eb = S["batch.explored"] if S["csr.src"] == "batch" else ex.explore(*ex.preset(S["csr.src"]))
empty_zero = csr_vm.empty_is_zero(S["csr.rule"], choice.version)
step, local_seq, (indptr, indices, lpl) = csr_vm.csr_view(eb, S["csr.empty"], empty_zero)
n = len(local_seq)
S["csr.req"] = min(int(S["csr.req"]), n - 1)
c[3].number_input(tr("request"), 0, n - 1, key="csr.req")
ui.keep("csr.src", "csr.empty", "csr.rule", "csr.req")
r = int(S["csr.req"])
if step.dcp_world_size > 1:
    st.caption(tr("dcp_note"))

left, right = st.columns(2, gap="large")
kbs = step.kernel_block_size
pages_r = int(indptr[r + 1] - indptr[r])
with left:
    # a huge table: only the rows round the highlighted request, numbered as in the whole table
    n_rows = step.block_table.shape[0]
    n_cols, window = csr_vm.table_window(step.block_table, indptr, r)
    r0, r1 = window or (0, n_rows)
    fig_t = figures.block_table_heatmap(step.block_table, num_reqs=eb.step.num_reqs,
                                        num_blocks=eb.num_kernel_blocks, geometry=step.geometry.as_pages(),
                                        counts=np.diff(indptr), lang=ui.lang(), max_cols=n_cols,
                                        title=csr_vm.table_title(tr, v2, window, n_rows), row_window=window,
                                        row_title=ui.texts("figures")("batch_position") if v2 else None)
    if pages_r:  # one outline over the request's pages (one shape per page made big tables crawl)
        fig_t.add_shape(type="rect", x0=-0.5, x1=pages_r - 0.5, y0=r - 0.5, y1=r + 0.5, line=figures.HILITE)
    ui.plot(fig_t, "csr.tablefig", "block_table")
    if v2:  # the repack reads V2's gathered input table; idx_mapping says which state row each row copies
        st.caption(tr("v2_note", idx=ex.short_list(eb.v2["idx_mapping"]), r=eb.step.num_reqs_padded))
with right:
    fig_c = figures.csr_figure(indptr, indices, lpl, page_size=kbs, title=tr("csr"), lang=ui.lang(), selected_req=r,
                               window_title=tr("csr_window"))
    ui.plot(fig_c, "csr.csrfig", "csr")
st.caption(tr("colours"))   # what each figure's colour encodes (one rule for empty rows: grey in both)
per_req = csr_vm.requests_frame(local_seq, indptr, lpl, kbs)
st.subheader(tr("per_req"))
# the table in the page's language: words translated, identifiers (seq_len, indptr...) kept
shown = per_req.assign(rule=per_req["rule"].map(lambda r: tr("rule_" + r.replace(" ", "_"))))
st.dataframe(shown, hide_index=True, height=min(360, 38 + 35 * n),
             column_config={"request": st.column_config.NumberColumn(tr("col_request"), format="%d"),
                            "seq_len (this rank)": st.column_config.NumberColumn(tr("col_seq_len"), format="%d"),
                            "pages": st.column_config.NumberColumn(tr("col_pages"), format="%d"),
                            "rule": st.column_config.TextColumn(tr("col_rule"))})

st.subheader(tr("check"))
from kvviz.gpu import harness as backend  # noqa: E402

run_key = (S.get("batch.explored_key") if S["csr.src"] == "batch" else S["csr.src"], S["csr.empty"], empty_zero)
label = ui.backend_label()
# the CPU interpreter needs seconds for a big table: then the check waits for the button
auto = label["mode"] != "interpreter" or len(indices) <= AUTO_RUN_PAGES
clicked = not auto and st.button(tr("run"), key="csr.run", icon=":material/play_arrow:")
if clicked or (auto and S.get("csr.result_key") != run_key):
    S["csr.result"] = ui.run_backend(backend.run_csr, step, local_seq, (indptr, indices, lpl),
                                     empty_last_page_len_is_zero=empty_zero, timing=True)[0]
    S["csr.result_key"] = run_key
if S.get("csr.result_key") == run_key:
    res = S["csr.result"]
    detail = ui.plain(backend.detail_text(res.detail, ui.lang()))   # the harness writes English
    if res.passed:
        st.success(tr("pass", detail=detail), icon=":material/check_circle:")
    else:
        st.error(tr("fail", detail=detail), icon=":material/cancel:")
    st.caption(f"{ui.device_text(label)} · {res.us:.1f} µs" if res.us is not None else ui.device_text(label))
else:
    st.info(tr("run_big", n=len(indices)), icon=":material/hourglass_empty:")
d = st.columns(3)
with d[0]:
    ui.download_csv(per_req, "csr_per_request", "csr.dl_csv", "CSR CSV")
with d[1]:
    ui.download_json(lambda: {"paged_kv_indptr": indptr.tolist(), "paged_kv_indices": indices.tolist(),
                              "paged_kv_last_page_len": lpl.tolist(), "page_size": kbs}, "csr", "csr.dl_json", "CSR JSON")
with d[2]:
    ui.download_fig(fig_c, "csr", "csr.dl_fig", tr("dl_fig"))
