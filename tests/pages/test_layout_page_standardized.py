"""The Memory layout page on vLLM v0.29.0+ (#51718): the order selector (the orders the backend
accepts, its default first: backends' ``supported_kv_cache_layouts``, backends/utils.py
``_DEFAULT_LAYOUT_PREFERENCE``), the layer count and layer selectors, the SM10x switch for
FlashInfer, v0.34.0's padded layer regions (worker/extensible_kv_cache.py ``pad_kv_cache_segments``)
and the band picture. Expected bytes come from numpy arrays of byte numbers laid out in each order's
physical shape and transposed back to the logical [L, B, H, N, C], not from kvviz."""
import numpy as np
import pytest

from page_support import chart_figures, open_page, table_frames

NB, BS, H, D, ES = 2, 4, 2, 4, 2         # the page's default cache, fp16; picked: K, block 1, offset 2, head 1, dim 0
C = 2 * D * ES


def _byte(order, L, layer, block=1, off=2, head=1, c=0):
    sizes = dict(zip("LBHNC", (L, NB, H, BS, C)))
    phys = np.arange(L * NB * H * BS * C).reshape([sizes[a] for a in order])
    return int(phys.transpose([order.index(a) for a in "LBHNC"])[layer, block, head, off, c])


def _text(at):
    return " ".join(m.value for m in at.markdown)


def _caps(at):
    return " ".join(c.value for c in at.caption)


def _go(at, version, backend="flash_attn"):
    open_page(at, "layout")
    at.selectbox(key="lay.vllm").set_value(version).run()
    at.selectbox(key="lay.backend").set_value(backend).run()
    assert not at.exception, at.exception
    return at


def test_default_order_layers_and_picture(at):
    _go(at, "v0.29.0")
    assert list(at.selectbox(key="lay.order").options) == ["LBNHC", "LBHNC", "BLNHC", "BLHNC", "BHLNC", "LHBNC"]
    assert at.selectbox(key="lay.order").value == "LBNHC"
    assert "v0.29.0 · flash_attn → LBNHC [L, B, N, H, C]" in _text(at)
    assert f"LBNHC, layer 0: byte **{_byte('LBNHC', 2, 0)}**" in _text(at)
    assert _byte("LBNHC", 2, 0) == 208                      # = packed NHD of one layer: (64 + 32 + 8) * 2
    at.number_input(key="lay.layer").set_value(1).run()
    want = _byte("LBNHC", 2, 1)
    assert f"LBNHC, layer 1: byte **{want}**" in _text(at) and "layer stride 256" in _caps(at)
    figs = chart_figures(at)
    assert len(figs) == 1 and {y for tr in figs[0]["data"] for y in tr["y"]} == {"layer 0", "layer 1"}
    assert "alias from byte 0" in _caps(at)


@pytest.mark.parametrize("order", ["LBHNC", "LHBNC", "BLHNC", "BLNHC", "BHLNC"])
def test_every_order_moves_the_byte(at, order):
    _go(at, "v0.31.0")
    at.number_input(key="lay.layers").set_value(3).run()
    at.number_input(key="lay.layer").set_value(2).run()
    at.selectbox(key="lay.order").set_value(order).run()
    assert not at.exception
    assert f"{order}, layer 2: byte **{_byte(order, 3, 2)}**" in _text(at)
    at.text_input(key="lay.byte").set_value(str(_byte(order, 3, 2) + 1)).run()
    row = table_frames(at, {"layer": "layer"})[0].iloc[0]
    assert (row["layer"], row["slot"], row["head"], row["dim"]) == (2, 6, 1, 0)


def test_flex_and_flashinfer_sm10x_offer_what_they_accept(at):
    _go(at, "v0.30.0", "flex")
    assert list(at.selectbox(key="lay.order").options) == ["LBNHC"]
    _go(at, "v0.30.0", "flashinfer")
    at.checkbox(key="lay.sm10x").check().run()
    assert list(at.selectbox(key="lay.order").options) == ["LBHNC", "BLHNC"]
    assert at.selectbox(key="lay.order").value == "LBHNC"
    assert f"LBHNC, layer 0: byte **{_byte('LBHNC', 2, 0)}**" in _text(at)


def test_v034_pads_each_layer_region(at):
    _go(at, "v0.34.0")
    at.number_input(key="lay.layer").set_value(1).run()
    assert f"layer 1: byte **{2 * 1024 * 1024 + _byte('LBNHC', 1, 0)}**" in _text(at)
    assert "2097152-byte VMM granule" in _caps(at)


def test_an_old_family_by_hand_keeps_the_old_view(at):
    _go(at, "v0.29.0")
    at.selectbox(key="lay.family").set_value("flash_attn").run()
    assert not at.exception and "NHD: byte **" in _text(at)
    assert len(at.selectbox(key="lay.vllm").options) > 1 and not [s for s in at.selectbox if s.key == "lay.order"]


@pytest.mark.parametrize("lang,word", [("zh", "所有层分配一块缓冲区"), ("es", "un solo búfer para todas las capas")])
def test_standardized_texts_in_every_language(at, lang, word):
    open_page(at, "layout")
    at.session_state["lang"] = lang
    at.run()
    at.selectbox(key="lay.vllm").set_value("v0.34.0").run()
    assert not at.exception and word in _text(at)
