"""Memory layout: NHD vs HND addresses, decoding, and a picture of memory order."""
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz import figures
from kvviz.layout import CacheGeometry

tr = ui.texts("layout")
S = st.session_state
DEFAULTS = {"lay.blocks": 2, "lay.bs": 4, "lay.heads": 2, "lay.dim": 4, "lay.dtype": "float16", "lay.kv": "k",
            "lay.block": 1, "lay.off": 2, "lay.head": 1, "lay.d": 0, "lay.byte": 0, "lay.as": "NHD"}
MAX_PICTURE = 2048
for key, default in DEFAULTS.items():
    if key not in S:
        S[key] = S.get(key + ".kept", default)

st.title(tr("title"))
st.markdown(tr("intro"))
st.subheader(tr("geometry"))
g = st.columns(5)
g[0].number_input(tr("blocks"), 1, 4096, key="lay.blocks")
g[1].number_input(tr("block_size"), 1, 256, key="lay.bs")
g[2].number_input(tr("heads"), 1, 64, key="lay.heads")
g[3].number_input(tr("dim"), 1, 256, key="lay.dim")
g[4].selectbox(tr("dtype"), ["float16", "bfloat16", "float32", "fp8"], key="lay.dtype")
geo = {lay: CacheGeometry(lay, S["lay.blocks"], S["lay.bs"], S["lay.heads"], S["lay.dim"], S["lay.dtype"])
       for lay in ("NHD", "HND")}
for key, top in (("lay.block", S["lay.blocks"] - 1), ("lay.off", S["lay.bs"] - 1), ("lay.head", S["lay.heads"] - 1),
                 ("lay.d", S["lay.dim"] - 1)):
    S[key] = min(int(S[key]), top)

left, right = st.columns(2, gap="large")
with left:
    st.subheader(tr("pick"))
    p = st.columns(5)
    p[0].segmented_control("K/V", ["k", "v"], key="lay.kv")
    p[1].number_input("block", 0, S["lay.blocks"] - 1, key="lay.block")
    p[2].number_input("offset", 0, S["lay.bs"] - 1, key="lay.off")
    p[3].number_input("head", 0, S["lay.heads"] - 1, key="lay.head")
    p[4].number_input("dim", 0, S["lay.dim"] - 1, key="lay.d")
    slot = S["lay.block"] * S["lay.bs"] + S["lay.off"]
    picked = {}
    for lay, gm in geo.items():
        a = gm.address(slot, S["lay.head"], S["lay.d"], S["lay.kv"] or "k")
        picked[lay] = a["byte_offset"]
        st.markdown(tr("result", layout=lay, byte=a["byte_offset"], el=a["element_offset"]))
        st.caption(tr("strides", layout=lay, strides=gm.strides))
with right:
    st.subheader(tr("decode"))
    q = st.columns(2)
    q[0].number_input(tr("byte"), 0, None, key="lay.byte")
    q[1].segmented_control(tr("decode_as"), ["NHD", "HND"], key="lay.as")
    try:
        dec = geo[S["lay.as"] or "NHD"].decode(int(S["lay.byte"]))
        st.dataframe([dec], hide_index=True)
    except ValueError as e:
        dec = None
        st.error(tr("bad_byte", msg=e))
    st.subheader(tr("changes_title"))
    st.markdown(tr("changes"))
ui.keep(*DEFAULTS)

if geo["NHD"].total_elements <= MAX_PICTURE:
    cols = st.columns(2)
    for col, (lay, gm) in zip(cols, geo.items()):
        with col:
            st.markdown(f"**{tr('order', layout=lay, n=gm.head_dim * gm.num_kv_heads * gm.itemsize)}**")
            fig = figures.memory_order_figure(gm, picked_byte=picked[lay], lang=ui.lang())
            ui.plot(fig, f"lay.fig_{lay}", f"memory_{lay}")
            ui.download_fig(fig, f"memory_{lay}", f"lay.dl_{lay}", f"{lay} HTML")
else:
    st.info(tr("too_big", n=MAX_PICTURE))
