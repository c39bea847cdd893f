"""One batch in six engines' notations, side by side, with the same token highlighted in each."""
import json

import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views import links as share  # noqa: E402
from ui import links  # noqa: E402
from ui.engine_notations import checked_caption, engines_section, sglang_own_form  # noqa: E402

from kvviz.notations import models as nt  # noqa: E402
from kvviz.views.notations import (description_key, forms_json, lookup_text, markdown_table, notation_notes,  # noqa: E402
                                   round_trip_report, tables, token_answer)

tr = ui.texts("notations")


@st.cache_resource
def _batch() -> nt.CanonicalBatch:
    return nt.example_batch()


# the round trip converts every notation into every other and checks every token (1-3 s on the 2-core
# machine): it depends only on the page size and llama.cpp's layout switch, so it runs once per server
# for each; the copy each caller gets is labelled in the page's language
@st.cache_data(max_entries=16, show_spinner=False)
def _round_trip(page_size: int, kv_unified: bool):
    return round_trip_report(_batch(), page_size, kv_unified=kv_unified)


st.title(tr("title"))
st.markdown(tr("intro"))
ui.shows(what="shows_notations")
c = _batch()
st.caption(tr("batch"))

ids = [r.req_id for r in c.requests]
ui.restore({"notations_page_size": 16, "notations_req": ids[1], "notations_pos": 255,
            "notations_kv_unified": nt.LLAMA_KV_UNIFIED_DEFAULT})   # widgets are forgotten off the page
links.sync("notations", share.notations_fields(ids, ids[1]))   # the whole page in its link (ui/links.py)
pick = st.columns([2, 1, 1])
page_size = pick[0].segmented_control(tr("page_size"), [16, 32, 64, 128],
                                      key="notations_page_size") or 16
req = pick[1].selectbox(tr("request"), ids, key="notations_req")
i = ids.index(req)
seq = c.requests[i].seq_len
if "notations_pos" not in st.session_state or not 0 <= st.session_state["notations_pos"] < seq:
    st.session_state["notations_pos"] = min(255, seq - 1)
pos = int(pick[2].number_input(tr("position"), 0, seq - 1, step=1, key="notations_pos"))

ans = token_answer(c, i, pos, page_size)
slot = ans["slot"]
st.success(tr("answer", pos=pos, req=req, slot=slot, block=ans["page"], bs=page_size, off=ans["offset"]),
           icon=":material/my_location:")
notes = []
if len(ans["sharers"]) > 1:
    notes.append(tr("shared", reqs=tr("list_sep").join(ans["sharers"])))
notes.append(tr("new_token") if ans["new"] else tr("old_token"))
st.markdown("  \n".join(notes))
st.caption(tr("marks"))   # what the tables' one colour encodes

unified = nt.LLAMA_KV_UNIFIED_DEFAULT
forms = nt.all_forms(c, page_size, kv_unified=unified)
sglang_ps = st.session_state.get("notations_sglang_ps") or 16   # SGLang's own run, picked further down
forms["sglang"] = sglang_own_form(c, sglang_ps)                  # SGLang's notation follows SGLang
names = list(nt.NOTATIONS)
# one engine a row, at the page's width: a window of nine array entries with its row labels does not
# fit half the page at 1280 px (it scrolled sideways, hiding the token's cell)
for name in names:
    with st.container(border=True):
        st.subheader(nt.NOTATIONS[name][0])
        if name == "llamacpp":   # llama.cpp's own layout switch; its default is off
            unified = st.toggle(tr("kv_unified"), key="notations_kv_unified", help=tr("kv_unified_help"))
            forms[name] = nt.convert(c, name, page_size, kv_unified=unified)
        form = forms[name]
        st.caption(tr(description_key(name, form), ps=sglang_ps))
        checked_caption(name)
        for note in notation_notes(name, form, ui.lang()):
            st.caption(note)
        if isinstance(form, Exception):
            st.warning(tr("not_representable", why=str(form)))
            continue
        assert form.address(i, pos) == slot
        st.markdown(f"**{tr('lookup')}** {lookup_text(name, form, i, pos, ui.lang())}")
        for label, df, marks in tables(name, form, i, pos, ui.lang()):
            st.caption(f"`{label}`")
            st.markdown(markdown_table(df, marks))

ui.keep("notations_page_size", "notations_req", "notations_pos", "notations_kv_unified")
engines_section(1, {r.req_id: r.slots for r in c.requests}, (req, pos), unified)   # the page's batch is the example's step 1
st.subheader(tr("roundtrip"))
st.caption(tr("roundtrip_help"))
trip = _round_trip(page_size, unified)
trip.index.name, trip.columns.name = tr("v.from"), tr("v.to")
st.dataframe(trip, width="stretch")

box, opened = ui.lazy_expander(tr("arrays"), "notations.arrays_open")
if opened:   # drawn only while open: a folded JSON view was redrawn on every rerun
    blob = forms_json(forms)
    box.download_button(":material/download: JSON", json.dumps(blob), file_name="notations.json",
                        mime="application/json", key="notations_dl", on_click="ignore")
    box.json(blob, expanded=False)
