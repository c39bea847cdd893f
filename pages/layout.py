"""Memory layout: NHD vs HND addresses in a named cache layout family, decoding, and a
picture of memory order."""
import re

import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views import figures
from kvviz.core.layout import CACHE_LAYOUTS, DEFAULT_CACHE_LAYOUT, CacheGeometry

tr = ui.texts("layout")
S = st.session_state
DEFAULTS = {"lay.blocks": 2, "lay.bs": 4, "lay.heads": 2, "lay.dim": 4, "lay.dtype": "float16", "lay.kv": "k",
            "lay.block": 1, "lay.off": 2, "lay.head": 1, "lay.d": 0, "lay.byte": "0", "lay.as": "NHD",
            "lay.family": DEFAULT_CACHE_LAYOUT}
MAX_PICTURE = 2048
MAX_BYTE_CHARS = 64
for key, default in DEFAULTS.items():
    if key not in S:
        S[key] = S.get(key + ".kept", default)
S["lay.byte"] = str(S["lay.byte"])  # a text input (decimal or 0x-hex)
if S["lay.family"] not in CACHE_LAYOUTS:
    S["lay.family"] = DEFAULT_CACHE_LAYOUT


def parse_byte(text: str) -> int:
    """A pasted byte address: decimal or 0x-hex (also 0o/0b, underscores), as Python's int(s, 0);
    leading zeros read as decimal. ValueError with a sentence for anything else."""
    s = text.strip()
    if len(s) > MAX_BYTE_CHARS:
        raise ValueError(tr("byte_garbage", text=s[:MAX_BYTE_CHARS]))
    try:
        value = int(s, 0)
    except ValueError:
        if not re.fullmatch(r"[+-]?\d+", s):
            raise ValueError(tr("byte_garbage", text=s)) from None
        value = int(s, 10)
    if value < 0:
        raise ValueError(tr("byte_negative", value=value))
    return value


st.title(tr("title"))
st.markdown(tr("intro"))
st.subheader(tr("geometry"))
g = st.columns(5)
g[0].number_input(tr("blocks"), 1, 4096, key="lay.blocks")
g[1].number_input(tr("block_size"), 1, 256, key="lay.bs")
g[2].number_input(tr("heads"), 1, 64, key="lay.heads")
g[3].number_input(tr("dim"), 1, 256, key="lay.dim")
g[4].selectbox(tr("dtype"), ["float16", "bfloat16", "float32", "fp8"], key="lay.dtype")
st.selectbox(tr("family"), CACHE_LAYOUTS, format_func=lambda f: tr("fam_" + f), key="lay.family")
family = S["lay.family"]
st.markdown(tr("whose_" + family))
geo = {lay: CacheGeometry(lay, S["lay.blocks"], S["lay.bs"], S["lay.heads"], S["lay.dim"], S["lay.dtype"], family)
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
        st.markdown(tr("result", layout=lay, byte=a["byte_offset"], hex=hex(a["byte_offset"]),
                       el=a["element_offset"]))
        st.caption(tr("strides", family=family, layout=lay, shape_text=gm.shape_text, shape=gm.shape,
                      strides=gm.strides))
with right:
    st.subheader(tr("decode"))
    q = st.columns(2)
    q[0].text_input(tr("byte"), key="lay.byte", max_chars=MAX_BYTE_CHARS, help=tr("byte_help"))
    q[1].segmented_control(tr("decode_as"), ["NHD", "HND"], key="lay.as")
    as_layout = S["lay.as"] or "NHD"
    byte = None
    if not S["lay.byte"].strip():
        st.info(tr("byte_help"))
    else:
        try:
            byte = parse_byte(S["lay.byte"])
        except ValueError as e:
            st.error(str(e), icon=":material/error:")
    if byte is not None:
        try:
            dec = geo[as_layout].decode(byte)
            st.caption(tr("byte_read", dec=byte, hex=hex(byte), family=family, layout=as_layout))
            st.dataframe([dec], hide_index=True)
        except ValueError as e:
            st.error(tr("bad_byte", msg=e), icon=":material/error:")
    st.subheader(tr("changes_title"))
    st.markdown(tr("changes"))
ui.keep(*DEFAULTS)

if geo["NHD"].total_elements <= MAX_PICTURE:
    cols = st.columns(2)
    # one picture line = one token's heads (K|V of each head in the packed family), the same in both columns
    g0 = geo["NHD"]
    per_line = g0.num_kv_heads * g0.head_dim * (2 if family == "flashinfer_packed" else 1)
    for col, (lay, gm) in zip(cols, geo.items()):
        with col:
            order = tr("order", family=family, layout=lay, shape_text=gm.shape_text, n=per_line * gm.itemsize)
            st.markdown(f"**{order}**")
            fig = figures.memory_order_figure(gm, picked_byte=picked[lay], lang=ui.lang(), per_line=per_line)
            ui.plot(fig, f"lay.fig_{lay}", f"memory_{lay}")
            ui.download_fig(fig, f"memory_{lay}", f"lay.dl_{lay}", f"{lay} HTML")
else:
    st.info(tr("too_big", n=MAX_PICTURE))
