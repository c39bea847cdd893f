"""Memory layout: NHD vs HND addresses in the cache layout family a vLLM version and attention
backend allocate (or one picked by hand), decoding, and a picture of memory order."""
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views import figures
from kvviz.views import layout as lay_vm
from kvviz.views import layout5 as lay5
from kvviz.views import links as share
from ui import links
from kvviz.core import kv_cache_layout as std

tr = ui.texts("layout")
S = st.session_state
DECODED = {"kv": "K/V", "block": tr("d_block"), "offset_in_block": tr("d_offset"), "slot": tr("d_slot"),
           "head": tr("d_head"), "dim": tr("d_dim"), "byte_in_element": tr("d_byte")}
DEFAULTS = {"lay.blocks": 2, "lay.bs": 4, "lay.heads": 2, "lay.dim": 4, "lay.dtype": "float16", "lay.kv": "k",
            "lay.block": 1, "lay.off": 2, "lay.head": 1, "lay.d": 0, "lay.byte": "0", "lay.as": "NHD",
            "lay.vllm": lay_vm.DEFAULT_VERSION, "lay.backend": lay_vm.DEFAULT_BACKEND, "lay.family": lay_vm.AUTO,
            "lay.order": "LBNHC", "lay.layers": 2, "lay.layer": 0, "lay.sm10x": False}
ui.restore(DEFAULTS)
links.sync("layout", share.layout_fields())   # the whole page in its link (ui/links.py); ?vllm= as before
S["lay.byte"] = str(S["lay.byte"])  # a text input (decimal or 0x-hex)
for key, choices in (("lay.vllm", lay_vm.VERSION_CHOICES), ("lay.backend", lay_vm.BACKEND_CHOICES),
                     ("lay.family", lay_vm.FAMILY_CHOICES)):
    if S[key] not in choices:
        S[key] = DEFAULTS[key]

st.title(tr("title"))
st.markdown(tr("intro"))
st.subheader(tr("geometry"))
g = st.columns(5)
g[0].number_input(tr("blocks"), 1, 4096, key="lay.blocks")
g[1].number_input(tr("block_size"), 1, 256, key="lay.bs")
g[2].number_input(tr("heads"), 1, 64, key="lay.heads")
g[3].number_input(tr("dim"), 1, 256, key="lay.dim")
g[4].selectbox(tr("dtype"), ["float16", "bfloat16", "float32", "fp8"], key="lay.dtype")
f = st.columns([1, 1, 2])
ui.version_select(f[0], tr("vllm"), lay_vm.VERSION_CHOICES, "lay.vllm")
f[1].selectbox(tr("backend"), lay_vm.BACKEND_CHOICES, key="lay.backend")
choice = lay_vm.pick_family(S["lay.vllm"], S["lay.backend"], S["lay.family"])
# "auto" names what this release allocates for this backend, sent again on every run (ui.labels_follow)
auto_label = tr("fam_auto", family=choice.vllm_family)
ui.labels_follow("lay.family")
f[2].selectbox(tr("family"), lay_vm.FAMILY_CHOICES, key="lay.family",
               format_func=lambda x: auto_label if x == lay_vm.AUTO else tr("fam_" + x))
family = choice.family
ui.shows([(choice.version, None)], backend=choice.backend)
if choice.by_hand:
    st.markdown(tr("effect_hand", family=family, shapes=lay_vm.shapes_text(family, choice.layouts),
                   line=choice.vllm_line()))
else:
    st.markdown(tr("effect_vllm", line=choice.vllm_line()))
if choice.history():
    st.caption(tr("history", version=choice.version, prs=choice.history()))


def standardized(choice) -> None:
    """vLLM v0.29.0+: the one-allocation cache of every layer, in the order picked among those the
    backend accepts; the picked element's byte, the formula, a decoder and the layer picture."""
    s = st.columns([1.2, 0.8, 0.8, 1.4])
    if choice.backend == "flashinfer":
        s[3].checkbox(tr("sm10x"), key="lay.sm10x", help=tr("sm10x_help"))
    orders = std.supported_layouts(choice.version, choice.backend, bool(S["lay.sm10x"]) and choice.backend == "flashinfer")
    if S["lay.order"] not in orders:
        S["lay.order"] = orders[0]
    s[0].selectbox(tr("order_pick"), orders, key="lay.order", help=tr("order_help"))
    s[1].number_input(tr("layers"), 1, 16, key="lay.layers")
    S["lay.layer"] = min(int(S["lay.layer"]), int(S["lay.layers"]) - 1)
    s[2].number_input(tr("layer"), 0, int(S["lay.layers"]) - 1, key="lay.layer")
    for key, top in (("lay.block", S["lay.blocks"] - 1), ("lay.off", S["lay.bs"] - 1),
                     ("lay.head", S["lay.heads"] - 1), ("lay.d", S["lay.dim"] - 1)):
        S[key] = min(int(S[key]), top)
    g5 = lay5.geometry(choice.version, int(S["lay.layers"]), S["lay.blocks"], S["lay.bs"], S["lay.heads"], S["lay.dim"],
                       S["lay.dtype"], S["lay.order"])
    st.markdown(tr("std_intro", backend=choice.backend, orders=", ".join(orders), default=orders[0],
                   order=g5.layout, shape=g5.shape_text()))
    st.subheader(tr("pick"))
    p = st.columns([1.4, 1.2, 1, 1.1, 0.8], gap="xsmall")
    p[0].segmented_control("K/V", ["k", "v"], key="lay.kv")
    p[1].number_input(tr("p_block"), 0, S["lay.blocks"] - 1, key="lay.block", help=tr("p_block_help"))
    p[2].number_input(tr("p_offset"), 0, S["lay.bs"] - 1, key="lay.off", help=tr("p_offset_help"))
    p[3].number_input(tr("p_head"), 0, S["lay.heads"] - 1, key="lay.head", help=tr("p_head_help"))
    p[4].number_input(tr("p_dim"), 0, S["lay.dim"] - 1, key="lay.d", help=tr("p_dim_help"))
    byte = g5.address(int(S["lay.layer"]), S["lay.block"], S["lay.off"], S["lay.head"], S["lay.kv"] or "k", S["lay.d"])
    st.markdown(tr("std_result", order=g5.layout, layer=S["lay.layer"], byte=byte, hex=hex(byte)))
    st.caption(tr("std_formula", formula=lay5.formula(g5), layer_stride=g5.layer_stride, block_stride=g5.block_stride,
                  page_bytes=g5.page_bytes, total=g5.total_bytes))
    if g5.extensible:
        padded = tr("std_padded", granule=g5.granule_bytes) if g5.padded else tr("std_unpadded")
        st.caption(tr("std_extensible", padded=padded))
    st.caption(tr("std_groups"))
    st.subheader(tr("decode"))
    st.text_input(tr("byte"), key="lay.byte", max_chars=lay_vm.MAX_BYTE_CHARS, help=tr("byte_help"))
    if S["lay.byte"].strip():
        try:
            dec = lay_vm.decode_byte(g5, lay_vm.parse_byte(S["lay.byte"], ui.lang()), ui.lang())
            ui.table([dec], {"layer": tr("d_layer"), **DECODED})
        except ValueError as e:
            st.error(tr("bad_byte", msg=ui.plain(e)), icon=":material/error:")
    n = g5.num_layers * g5.num_blocks * (1 if set(g5.layout[:2]) == {"L", "B"} else g5.num_kv_heads)
    if n <= lay5.MAX_BANDS:
        labels = {"layer": tr("d_layer"), "block": tr("d_block"), "head": tr("p_head"), "byte": tr("byte_word")}
        fig = lay5.figure(g5, byte, labels, tr("std_picture", order=g5.layout))
        ui.plot(fig, "lay.fig_std", f"memory_{g5.layout}")
    else:
        st.info(tr("std_too_big", n=lay5.MAX_BANDS))


if family in lay5.ORDER_CHOICES:         # vLLM v0.29.0+, following vLLM: the standardized cache
    standardized(choice)
    ui.keep(*DEFAULTS)
    st.stop()
st.markdown(tr("whose_" + family))
if len(choice.layouts) == 1:
    st.info(tr("nhd_only_backend", version=choice.version, backend=choice.backend) if not choice.by_hand
            else tr("nhd_only_family", family=family), icon=":material/info:")
geo = lay_vm.caches(S["lay.blocks"], S["lay.bs"], S["lay.heads"], S["lay.dim"], S["lay.dtype"], family,
                    choice.layouts)
if S["lay.as"] is not None and S["lay.as"] not in geo:
    S["lay.as"] = "NHD"
for key, top in (("lay.block", S["lay.blocks"] - 1), ("lay.off", S["lay.bs"] - 1), ("lay.head", S["lay.heads"] - 1),
                 ("lay.d", S["lay.dim"] - 1)):
    S[key] = min(int(S[key]), top)

left, right = st.columns(2, gap="large")
with left:
    st.subheader(tr("pick"))
    p = st.columns([1.4, 1.2, 1, 1.1, 0.8], gap="xsmall")   # at 1280 px: both K/V buttons, each label on one line
    p[0].segmented_control("K/V", ["k", "v"], key="lay.kv")
    p[1].number_input(tr("p_block"), 0, S["lay.blocks"] - 1, key="lay.block", help=tr("p_block_help"))
    p[2].number_input(tr("p_offset"), 0, S["lay.bs"] - 1, key="lay.off", help=tr("p_offset_help"))
    p[3].number_input(tr("p_head"), 0, S["lay.heads"] - 1, key="lay.head", help=tr("p_head_help"))
    p[4].number_input(tr("p_dim"), 0, S["lay.dim"] - 1, key="lay.d", help=tr("p_dim_help"))
    addresses = lay_vm.picked_addresses(geo, S["lay.block"], S["lay.off"], S["lay.head"], S["lay.d"],
                                        S["lay.kv"] or "k")
    picked = {lay: a["byte_offset"] for lay, a in addresses.items()}
    for lay, gm in geo.items():
        a = addresses[lay]
        st.markdown(tr("result", layout=lay, byte=a["byte_offset"], hex=hex(a["byte_offset"]),
                       el=a["element_offset"]))
        st.caption(tr("strides", family=family, layout=lay, shape_text=gm.shape_text, shape=gm.shape,
                      strides=gm.strides))


# The decoder is a fragment: typing a byte offset (or switching the layout it is read in) reruns only
# this part, not the geometry, the picker and the memory pictures. It reads only its arguments.
@st.fragment
def decoder(geo: dict, family: str):
    q = st.columns(2)
    q[0].text_input(tr("byte"), key="lay.byte", max_chars=lay_vm.MAX_BYTE_CHARS, help=tr("byte_help"))
    q[1].segmented_control(tr("decode_as"), list(geo), key="lay.as")
    as_layout = S["lay.as"] or "NHD"
    byte = None
    if not S["lay.byte"].strip():
        st.info(tr("byte_help"))
    else:
        try:
            byte = lay_vm.parse_byte(S["lay.byte"], ui.lang())
        except ValueError as e:
            st.error(ui.plain(e), icon=":material/error:")
    if byte is not None:
        try:
            dec = lay_vm.decode_byte(geo[as_layout], byte, ui.lang())
            st.caption(tr("byte_read", dec=byte, hex=hex(byte), family=family, layout=as_layout))
            # the decoded coordinates, one line, short headers: all seven columns show at once
            ui.table([dec], DECODED)
        except ValueError as e:
            st.error(tr("bad_byte", msg=ui.plain(e)), icon=":material/error:")
    ui.keep("lay.byte", "lay.as")


with right:
    st.subheader(tr("changes_title"))
    st.markdown(tr("changes"))
# the decoder under both columns, at the page's width: its seven columns fit there at 1280 px
st.subheader(tr("decode"))
decoder(geo, family)
ui.keep(*DEFAULTS)

if geo["NHD"].total_elements <= lay_vm.MAX_PICTURE:
    cols = st.columns(2)
    per_line = lay_vm.picture_line(geo["NHD"])
    for col, (lay, gm) in zip(cols, geo.items()):
        with col:
            st.caption(tr("order", family=family, layout=lay, shape_text=gm.shape_text, n=per_line * gm.itemsize))
            fig = figures.memory_order_figure(gm, picked_byte=picked[lay], lang=ui.lang(), per_line=per_line,
                                              title=tr("order_title", family=family, layout=lay, shape_text=gm.shape_text))
            ui.plot(fig, f"lay.fig_{lay}", f"memory_{lay}")
            ui.download_fig(fig, f"memory_{lay}", f"lay.dl_{lay}", f"{lay} HTML")
else:
    st.info(tr("too_big", n=lay_vm.MAX_PICTURE))
