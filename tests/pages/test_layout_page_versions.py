"""The Memory layout page's vLLM version and attention-backend selectors: they pick the cache layout
family (the newest release's, packed, by default), the family control can override them, and the
page says which family is in effect and why. Expected byte offsets are computed here with numpy on
each family's physical shape, independently of kvviz.core.layout."""

import numpy as np
import pytest

from page_support import chart_figures, decoded, open_page

# the page's default cache: 2 blocks x 4 slots x 2 KV heads x head dim 4, fp16; the picked element is
# K of block 1, offset 2, head 1, dim 0
NB, BS, H, D = 2, 4, 2, 4
PICK = dict(kv=0, block=1, off=2, head=1, dim=0)


def _byte(family, layout, kv, block, off, head, dim, itemsize=2):
    """Byte offset of an element, from the physical shape vLLM allocates (read from vLLM's
    get_kv_cache_shape permuted by get_kv_cache_stride_order)."""
    if family == "flash_attn":          # (2, num_blocks, block_size, H, D); HND swaps block_size and H
        shape, idx = ((2, NB, BS, H, D), (kv, block, off, head, dim)) if layout == "NHD" else \
            ((2, NB, H, BS, D), (kv, block, head, off, dim))
    elif family == "flashinfer":        # (num_blocks, 2, block_size, H, D)
        shape, idx = ((NB, 2, BS, H, D), (block, kv, off, head, dim)) if layout == "NHD" else \
            ((NB, 2, H, BS, D), (block, kv, head, off, dim))
    elif family == "flashinfer_packed":  # (num_blocks, block_size, H, 2D), V at [..., D:]
        shape, idx = ((NB, BS, H, 2 * D), (block, off, head, kv * D + dim)) if layout == "NHD" else \
            ((NB, H, BS, 2 * D), (block, head, off, kv * D + dim))
    else:                               # flex v0.23-v0.25: (num_blocks, 2, ...) in stride order (0, 2, 1, 3, 4)
        assert layout == "NHD"
        shape, idx = (NB, BS, 2, H, D), (block, off, kv, head, dim)
    return int(np.ravel_multi_index(idx, shape)) * itemsize, shape


def _text(at):
    return " ".join(m.value for m in at.markdown)


def _captions(at):
    return " ".join(c.value for c in at.caption)


def _plots(at):
    return chart_figures(at)


def _set(at, key, value):
    at.selectbox(key=key).set_value(value).run()
    assert not at.exception, at.exception
    return at


def _assert_shows(at, family, layouts):
    text, caps = _text(at), _captions(at)
    for lay in ("NHD", "HND"):
        want, shape = _byte(family, lay, **PICK) if lay in layouts else (None, None)
        if lay in layouts:
            assert f"{lay}: byte **{want}**" in text, (family, lay, want)
            assert f"{family} {lay}" in caps and f"shape {shape}" in caps, (family, lay, shape)
        else:
            assert f"{lay}: byte **" not in text, (family, lay)
    assert len(_plots(at)) == len(layouts)


def test_default_is_the_newest_release_packed(at):
    open_page(at, "layout")
    assert at.selectbox(key="lay.vllm").value == "main"
    assert at.selectbox(key="lay.backend").value == "flash_attn"
    assert at.selectbox(key="lay.family").value == "auto"
    assert "main · flash_attn → flashinfer_packed" in _text(at)
    assert "**flashinfer_packed**" in _text(at)
    _assert_shows(at, "flashinfer_packed", ("NHD", "HND"))
    assert _byte("flashinfer_packed", "NHD", **PICK)[0] == 208   # hand-worked: (64 + 32 + 8) * 2


# (version, backend, family vLLM allocates, layouts it allocates), on each side of each change
CASES = [
    ("v0.22.1", "flash_attn", "flash_attn", ("NHD", "HND")),
    ("v0.23.0", "flash_attn", "flashinfer", ("NHD", "HND")),
    ("v0.25.1", "flash_attn", "flashinfer", ("NHD", "HND")),
    ("v0.26.0", "flash_attn", "flashinfer_packed", ("NHD", "HND")),
    ("v0.25.1", "flashinfer", "flashinfer", ("NHD", "HND")),
    ("v0.27.1", "flashinfer", "flashinfer_packed", ("NHD", "HND")),
    ("v0.19.1", "triton", "flashinfer", ("NHD",)),
    ("v0.20.0", "triton", "flashinfer", ("NHD", "HND")),
    ("v0.26.0", "triton", "flashinfer_packed", ("NHD", "HND")),
    ("v0.22.1", "flex", "flash_attn", ("NHD",)),
    ("v0.23.0", "flex", "flex_interleaved", ("NHD",)),
    ("v0.26.0", "flex", "flashinfer_packed", ("NHD",)),
]


@pytest.mark.parametrize("version,backend,family,layouts", CASES)
def test_version_and_backend_pick_the_family(at, version, backend, family, layouts):
    open_page(at, "layout")
    _set(at, "lay.vllm", version)
    _set(at, "lay.backend", backend)
    assert f"{version} · {backend} → {family}" in _text(at)
    assert f"**{family}**" in _text(at)
    _assert_shows(at, family, layouts)
    if layouts == ("NHD",):
        assert any("ignores VLLM_KV_CACHE_LAYOUT=HND" in i.value for i in at.info)


def test_the_displayed_shape_changes_with_the_version(at):
    open_page(at, "layout")
    at.number_input(key="lay.blocks").set_value(3).run()   # 3 blocks: no axis of size 2 but K/V's
    want = {"v0.22.1": ("[2, B, N, H, D]", (2, 3, 4, 2, 4)), "v0.23.0": ("[B, 2, N, H, D]", (3, 2, 4, 2, 4)),
            "main": ("[B, N, H, 2D]", (3, 4, 2, 8))}
    seen = []
    for version, (shape_text, shape) in want.items():
        _set(at, "lay.vllm", version)
        caps = _captions(at)
        assert f"NHD: {shape_text} = shape {shape}" in caps, (version, caps)
        seen.append(caps)
    assert len(set(seen)) == 3


def test_family_control_overrides_and_says_so(at):
    open_page(at, "layout")
    _set(at, "lay.vllm", "v0.25.1")
    _set(at, "lay.backend", "flex")
    _assert_shows(at, "flex_interleaved", ("NHD",))
    _set(at, "lay.family", "flashinfer")
    text = _text(at)
    assert "picked by hand" in text and "v0.25.1 · flex → flex_interleaved" in text
    _assert_shows(at, "flashinfer", ("NHD", "HND"))    # a family by hand is shown in all its layouts
    _set(at, "lay.vllm", "v0.22.1")                    # the override stays while the version moves
    assert at.selectbox(key="lay.family").value == "flashinfer"
    assert "v0.22.1 · flex → flash_attn" in _text(at)
    _assert_shows(at, "flashinfer", ("NHD", "HND"))
    _set(at, "lay.family", "flex_interleaved")          # an NHD-only family by hand
    assert any("no HND form" in i.value for i in at.info)
    _assert_shows(at, "flex_interleaved", ("NHD",))
    _set(at, "lay.family", "auto")
    assert "picked by hand" not in _text(at)
    _assert_shows(at, "flash_attn", ("NHD",))


def test_decoding_follows_the_family_and_an_nhd_only_backend(at):
    open_page(at, "layout")
    at.segmented_control(key="lay.as").set_value("HND").run()
    at.text_input(key="lay.byte").set_value("0x40").run()       # byte 64 = element 32
    dec = decoded(at)
    block, head, off, kv_dim = np.unravel_index(32, (NB, H, BS, 2 * D))       # packed HND [B, H, N, 2D]
    assert (block, head, off, kv_dim) == (0, 1, 0, 0)
    assert (dec["kv"], dec["block"], dec["offset_in_block"], dec["head"], dec["dim"]) == ("k", block, off, head, 0)
    _set(at, "lay.vllm", "v0.24.0")
    _set(at, "lay.backend", "flex")                              # NHD only: "read as" falls back to NHD
    assert not at.error
    assert list(at.segmented_control(key="lay.as").options) == ["NHD"]
    dec = decoded(at)
    block, off, kv, head, dim = np.unravel_index(32, (NB, BS, 2, H, D))      # flex_interleaved [B, N, 2, H, D]
    assert (block, off, kv, head, dim) == (0, 2, 0, 0, 0)
    assert (dec["kv"], dec["block"], dec["offset_in_block"], dec["head"], dec["dim"]) == ("k", block, off, head, dim)
    assert "flex_interleaved" in _captions(at)


def test_memory_picture_of_the_flex_family(at):
    open_page(at, "layout")
    _set(at, "lay.vllm", "v0.23.0")
    _set(at, "lay.backend", "flex")
    (spec,) = _plots(at)
    first_line = spec["data"][0]["text"][0]          # one token: K of both heads, then V of both heads
    assert first_line == ["K0"] * 4 + ["K1"] * 4 + ["V0"] * 4 + ["V1"] * 4
    box = spec["layout"]["shapes"][0]                 # the picked element, element 100 on 16-element lines
    el = _byte("flex_interleaved", "NHD", **PICK)[0] // 2
    assert ((box["y0"] + box["y1"]) / 2, (box["x0"] + box["x1"]) / 2) == divmod(el, 16)


@pytest.mark.parametrize("lang,word", [("zh", "当前生效"), ("es", "En uso")])
def test_selectors_in_every_language(at, lang, word):
    open_page(at, "layout")
    at.session_state["lang"] = lang
    at.run()
    _set(at, "lay.vllm", "v0.11.0")
    _set(at, "lay.backend", "triton")
    text = _text(at)
    assert word in text and "v0.11.0 · triton → flashinfer" in text
    assert any("VLLM_KV_CACHE_LAYOUT=HND" in i.value for i in at.info)
    _set(at, "lay.family", "flash_attn")
    assert not at.exception


def test_choices_survive_a_page_switch(at):
    open_page(at, "layout")
    _set(at, "lay.vllm", "v0.21.0")
    _set(at, "lay.backend", "triton")
    open_page(at, "batch")
    open_page(at, "layout")
    assert (at.selectbox(key="lay.vllm").value, at.selectbox(key="lay.backend").value) == ("v0.21.0", "triton")
    assert "v0.21.0 · triton → flashinfer" in _text(at)


def test_every_version_is_offered(at):
    from kvviz.core.versions import VERSIONS

    open_page(at, "layout")
    # the labels start with the version (main's with its date, the newest marked): newest first
    assert [o.split(" ")[0] for o in at.selectbox(key="lay.vllm").options] == list(reversed(VERSIONS))
    assert list(at.selectbox(key="lay.backend").options) == ["flash_attn", "flashinfer", "triton", "flex"]
