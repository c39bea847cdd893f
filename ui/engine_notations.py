"""The Notations page's part drawn from the engines' own code (kvviz/views/engine_notations.py
computes it; here it is laid out): SGLang's own arrays beside kvviz's model of them, where vLLM
and SGLang keep the same tokens, and llama.cpp's own cell strip."""
from __future__ import annotations

import pandas as pd
import streamlit as st

import ui
from kvviz.notations import engine_examples as ex
from kvviz.notations.sglang_model import compare_sglang
from kvviz.views import engine_notations as en

CHECKED = {"vllm": ("e.checked_vllm", {}), "flashinfer": ("e.checked_flashinfer", {}),
           "sglang": ("e.checked_sglang", {"v": "0.5.23"}), "llamacpp": ("e.checked_llamacpp", {"v": "0.3.36"}),
           "trtllm": ("e.checked_trtllm", {}), "deepinfer": ("e.checked_deepinfer", {})}


def checked_caption(name: str) -> None:
    """What notation ``name`` was checked against, said plainly under its heading."""
    tr = ui.texts("notations")
    key, fields = CHECKED[name]
    st.caption(":material/verified: " + tr("e.checked", what=tr(key, **fields)))


@st.cache_data(max_entries=2, show_spinner=False)
def _sglang():
    return en.sglang_runs(), ex.example_schedule()


def sglang_own_form(c, page_size: int):
    """The page's batch as SGLang places it (kvviz's model at ``page_size``; the section below
    shows it equals SGLang's own recorded arrays)."""
    from kvviz.notations.sglang import sglang_placement
    (_, models), _ = _sglang()
    sizes = list(ex.SGLANG_PAGE_SIZES)
    model = models[sizes.index(page_size) if page_size in sizes else -1]
    return sglang_placement(c, model["steps"][1])


def _table(rows: list[list], header: str) -> None:
    cols = header.split("|")
    st.dataframe(pd.DataFrame(rows, columns=cols).astype(str), hide_index=True, width="stretch")


def sglang_section(step: int, vllm_slots: dict, token: tuple[str, int] | None = None) -> None:
    tr = ui.texts("notations")
    (rec, models), schedule = _sglang()
    sizes = [run["page_size"] for run in rec["runs"]]
    ui.restore({"notations_sglang_ps": sizes[-1]})
    ps = st.segmented_control(tr("e.page"), sizes, key="notations_sglang_ps") or sizes[-1]
    k = sizes.index(ps)
    real, model = rec["runs"][k], models[k]
    st.markdown(f"**{tr('e.sglang', v=rec['version'], step=step + 1)}**")
    if token is not None:   # the page's picked token, in both engines
        req, pos = token
        row = real["steps"][step]["req_pool_indices"].get(req)
        if row is not None and pos < len(real["steps"][step]["req_to_token"][req]):
            st.info(tr("e.token", req=req, pos=pos, v=vllm_slots[req][pos], row=row,
                       s=real["steps"][step]["req_to_token"][req][pos], ps=ps), icon=":material/my_location:")
    rows = [[*r[:3], tr(f"e.{r[3]}"), *r[4:]] for r in en.sglang_rows(real, step)]
    _table(rows, tr("e.cols"))
    diff = compare_sglang(real, model)
    if diff:
        st.error(tr("e.differs", what=diff[0]))
    else:
        st.success(tr("e.equal", ps=ps), icon=":material/check_circle:")
    st.markdown(f"**{tr('e.place')}**")
    rows = [[r, v, s, tr("e.yes") if same else tr("e.no")]
            for r, v, s, same in en.placements(real, step, vllm_slots)]
    _table(rows, tr("e.place_cols"))
    notes = [tr(key, last=ps - 1, **fields) for key, fields in en.sglang_notes(real, schedule, step)]
    if real["steps"][step]["decode"]["reqs"] and real["steps"][step]["extend"]["reqs"]:
        notes.append(tr("e.sglang_order"))
    st.markdown("\n".join(f"- {n}" for n in notes))
    ui.keep("notations_sglang_ps")


@st.cache_data(max_entries=4, show_spinner=False)
def _llamacpp(kv_unified: bool):
    from kvviz.notations.llamacpp_cells import compare_llamacpp, llamacpp_side_by_side
    real, model = en.llamacpp_runs(kv_unified)
    side = llamacpp_side_by_side(ex.example_scenario(), 1, kv_unified=kv_unified, n_ctx=real["n_ctx"])
    return real, side, compare_llamacpp(real, model)


def llamacpp_section(step: int, vllm_slots: dict, kv_unified: bool) -> None:
    tr = ui.texts("notations")
    real, side, diff = _llamacpp(kv_unified)
    st.markdown(f"**{tr('e.llama', v=real['version'], step=step + 1)}**")
    st.caption(tr("e.llama_unified" if kv_unified else "e.llama_streams", n=real["n_ctx"]))
    for stream, req, strip in en.llamacpp_strips(real, step, side["requests"]):
        st.caption(tr("e.llama_cells") if stream is None else tr("e.llama_stream", s=stream, req=req))
        st.code(strip, language=None, wrap_lines=True)
    st.caption(tr("e.llama_legend"))
    if diff:
        st.error(tr("e.llama_differs", what=diff[0]))
    else:
        st.success(tr("e.llama_equal"), icon=":material/check_circle:")
    _table(en.llamacpp_rows(side, vllm_slots), tr("e.llama_cols"))
    st.markdown("\n".join(f"- {tr(k)}" for k in ("e.llama_lowest", "e.llama_new_cells",
                                                   "e.llama_copy" if kv_unified else "e.llama_copy_streams")))


def engines_section(step: int, vllm_slots: dict, token: tuple[str, int] | None = None,
                    kv_unified: bool = False) -> None:
    tr = ui.texts("notations")
    st.subheader(tr("e.title"))
    st.markdown(tr("e.intro", sg="0.5.23"))
    with st.container(border=True):
        st.markdown("#### SGLang")
        sglang_section(step, vllm_slots, token)
    with st.container(border=True):
        st.markdown("#### llama.cpp")
        llamacpp_section(step, vllm_slots, kv_unified)
