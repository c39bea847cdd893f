"""Cache layout families (flash_attn, flashinfer, flashinfer_packed; flex_interleaved, NHD only) ×
NHD/HND × dtype: hand-worked byte offsets, encode/decode round trips, and the offsets torch itself
computes for a real tensor allocated the way each framework allocates it (logical shape + stride
order, from the spec's §3.2, §5 and §7.1, and vLLM's get_kv_cache_shape / get_kv_cache_stride_order);
then which family each vLLM release allocates for each attention backend."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from kvviz.core.layout import (ALL_CACHE_LAYOUTS, CACHE_LAYOUTS, DEFAULT_CACHE_LAYOUT, LAYOUTS, CacheGeometry,
                               family_layouts)

FAMILY_LAYOUTS = [(f, lay) for f in ALL_CACHE_LAYOUTS for lay in family_layouts(f)]

DTYPES = ["float16", "bfloat16", "float32", "fp8"]
TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
                "fp8": torch.float8_e4m3fn}


# --- hand-worked vectors ------------------------------------------------------------------------

def _default_batch_geo(family, layout):
    # the batch page's default cache: 48 kernel blocks of 4 slots, 2 KV heads, head dim 8, fp16
    return CacheGeometry(layout, 48, 4, 2, 8, "float16", family)


def test_audit_example_token_12():
    """Default batch token 12 = slot 18 = block 4, offset 2; K, head 0, dim 0."""
    # flash_attn NHD [2, 48, 4, 2, 8], strides (3072, 64, 16, 8, 1): 4*64 + 2*16 = 288 el = 576 B
    # flashinfer NHD [48, 2, 4, 2, 8], strides (128, 64, 16, 8, 1): 4*128 + 2*16 = 544 el = 1088 B
    # packed NHD [48, 4, 2, 16], strides (128, 32, 16, 1): 4*128 + 2*32 = 576 el = 1152 B
    want_nhd = {"flash_attn": 576, "flashinfer": 1088, "flashinfer_packed": 1152}
    # flash_attn HND [2, 48, 2, 4, 8], strides (3072, 64, 32, 8, 1): 4*64 + 2*8 = 272 el = 544 B
    # flashinfer HND [48, 2, 2, 4, 8], strides (128, 64, 32, 8, 1): 4*128 + 2*8 = 528 el = 1056 B
    # packed HND [48, 2, 4, 16], strides (128, 64, 16, 1): 4*128 + 2*16 = 544 el = 1088 B
    want_hnd = {"flash_attn": 544, "flashinfer": 1056, "flashinfer_packed": 1088}
    for fam in CACHE_LAYOUTS:
        for layout, want in (("NHD", want_nhd[fam]), ("HND", want_hnd[fam])):
            a = _default_batch_geo(fam, layout).address(18, 0, 0, "k")
            assert a == {"element_offset": want // 2, "byte_offset": want, "block": 4, "offset_in_block": 2}, \
                (fam, layout)


def test_hand_worked_v_elements():
    """Slot 18 (block 4, offset 2), V, head 1, dim 3, same geometry."""
    want = {
        ("flash_attn", "NHD"): 3072 + 4 * 64 + 2 * 16 + 1 * 8 + 3,          # 3371
        ("flash_attn", "HND"): 3072 + 4 * 64 + 1 * 32 + 2 * 8 + 3,          # 3379
        ("flashinfer", "NHD"): 4 * 128 + 1 * 64 + 2 * 16 + 1 * 8 + 3,       # 619
        ("flashinfer", "HND"): 4 * 128 + 1 * 64 + 1 * 32 + 2 * 8 + 3,       # 627
        ("flashinfer_packed", "NHD"): 4 * 128 + 2 * 32 + 1 * 16 + 8 + 3,   # 603: V at [..., D:]
        ("flashinfer_packed", "HND"): 4 * 128 + 1 * 64 + 2 * 16 + 8 + 3,   # 619
    }
    for (fam, layout), el in want.items():
        g = _default_batch_geo(fam, layout)
        assert g.element_offset(18, 1, 3, "v") == el, (fam, layout)
        assert g.decode(2 * el + 1) == {"kv": "v", "block": 4, "offset_in_block": 2, "slot": 18, "head": 1,
                                        "dim": 3, "byte_in_element": 1}


def test_shapes_and_strides():
    B, N, H, D = 5, 16, 8, 128
    want = {("flash_attn", "NHD"): (2, B, N, H, D), ("flash_attn", "HND"): (2, B, H, N, D),
            ("flashinfer", "NHD"): (B, 2, N, H, D), ("flashinfer", "HND"): (B, 2, H, N, D),
            ("flashinfer_packed", "NHD"): (B, N, H, 2 * D), ("flashinfer_packed", "HND"): (B, H, N, 2 * D)}
    for (fam, layout), shape in want.items():
        g = CacheGeometry(layout, B, N, H, D, "bfloat16", fam)
        assert g.shape == shape
        assert g.strides == torch.empty(shape, device="meta").stride()
        assert g.total_elements == torch.empty(shape, device="meta").numel()
    # packed NHD: one token's row is H*2D elements; V of head h starts D after its K
    g = CacheGeometry("NHD", B, N, H, D, "float16", "flashinfer_packed")
    assert g.element_offset(0, 0, 0, "v") == D and g.element_offset(1, 0, 0, "k") == H * 2 * D
    assert g.element_offset(0, 1, 0, "k") == 2 * D


def test_default_family_is_flash_attn_and_unchanged():
    assert DEFAULT_CACHE_LAYOUT == "flash_attn"
    assert CacheGeometry("NHD", 100, 16, 8, 128).cache_layout == "flash_attn"
    # the formula of the layout module before families existed: [2, N, B, H, D] / [2, N, H, B, D]
    for layout in LAYOUTS:
        g = CacheGeometry(layout, 7, 4, 3, 5, "float32")
        for slot in range(g.num_slots):
            for head in range(3):
                for dim in range(5):
                    for p, kv in enumerate("kv"):
                        blk, off = divmod(slot, 4)
                        idx = (p, blk, off, head, dim) if layout == "NHD" else (p, blk, head, off, dim)
                        shape = (2, 7, 4, 3, 5) if layout == "NHD" else (2, 7, 3, 4, 5)
                        el = 0
                        for i, n in zip(idx, shape):
                            el = el * n + i
                        assert g.element_offset(slot, head, dim, kv) == el


def test_bad_family_and_coordinates():
    with pytest.raises(ValueError, match="cache layout"):
        CacheGeometry("NHD", 2, 4, 2, 8, "float16", "flashattn")
    for fam in CACHE_LAYOUTS:
        g = CacheGeometry("HND", 2, 4, 2, 8, "fp8", fam)
        for args in [(8, 0, 0), (0, 2, 0), (0, 0, 8), (-1, 0, 0)]:
            with pytest.raises(ValueError):
                g.element_offset(*args)
        with pytest.raises(ValueError):
            g.element_offset(0, 0, 0, "x")
        for bad in (-1, g.total_bytes):
            with pytest.raises(ValueError, match="outside the cache"):
                g.decode(bad)
        with pytest.raises(ValueError):
            g.element_index("k", 2, 0, 0, 0)
        with pytest.raises(ValueError):
            g.element_index("k", 0, 4, 0, 0)


@pytest.mark.parametrize("family,layout", FAMILY_LAYOUTS)
def test_every_byte_decodes_to_a_distinct_element(family, layout):
    """Exhaustive on a small cache: decode is a bijection onto (element, byte) and inverts encode."""
    g = CacheGeometry(layout, 3, 4, 2, 3, "float16", family)
    seen = set()
    for byte in range(g.total_bytes):
        d = g.decode(byte)
        key = (d["kv"], d["slot"], d["head"], d["dim"], d["byte_in_element"])
        assert key not in seen
        seen.add(key)
        assert g.address(d["slot"], d["head"], d["dim"], d["kv"])["byte_offset"] + d["byte_in_element"] == byte
    assert len(seen) == g.total_bytes


def test_decode_elements_vectorised_matches_scalar():
    for fam, layout in FAMILY_LAYOUTS:
        g = CacheGeometry(layout, 3, 4, 2, 3, "fp8", fam)
        arr = g.decode_elements(np.arange(g.total_elements))
        for e in range(g.total_elements):
            assert tuple(int(a[e]) for a in arr) == g.decode_elements(e)


# --- properties: round trip -----------------------------------------------------------------------

geometries = st.tuples(st.sampled_from(FAMILY_LAYOUTS), st.sampled_from(DTYPES),
                       st.integers(1, 40), st.sampled_from([1, 2, 4, 16]), st.integers(1, 8),
                       st.sampled_from([1, 3, 8, 64])).map(lambda t: (*t[0], *t[1:]))


@settings(max_examples=400, deadline=None)
@given(geometries, st.data())
def test_encode_decode_round_trip(geo, data):
    fam, layout, dtype, n, b, h, d = geo
    g = CacheGeometry(layout, n, b, h, d, dtype, fam)
    slot = data.draw(st.integers(0, n * b - 1))
    head = data.draw(st.integers(0, h - 1))
    dim = data.draw(st.integers(0, d - 1))
    kv = data.draw(st.sampled_from(["k", "v"]))
    byte = data.draw(st.integers(0, g.itemsize - 1))
    a = g.address(slot, head, dim, kv)
    assert 0 <= a["byte_offset"] < g.total_bytes and a["byte_offset"] == a["element_offset"] * g.itemsize
    dec = g.decode(a["byte_offset"] + byte)
    assert (dec["slot"], dec["head"], dec["dim"], dec["kv"], dec["byte_in_element"]) == (slot, head, dim, kv, byte)
    assert (dec["block"], dec["offset_in_block"]) == (a["block"], a["offset_in_block"]) == divmod(slot, b)


@settings(max_examples=300, deadline=None)
@given(geometries, st.data())
def test_decode_encode_round_trip(geo, data):
    fam, layout, dtype, n, b, h, d = geo
    g = CacheGeometry(layout, n, b, h, d, dtype, fam)
    byte = data.draw(st.integers(0, g.total_bytes - 1))
    dec = g.decode(byte)
    a = g.address(dec["slot"], dec["head"], dec["dim"], dec["kv"])
    assert a["byte_offset"] + dec["byte_in_element"] == byte


# --- properties: torch agrees -------------------------------------------------------------------------

def _framework_tensor(fam, layout, n, b, h, d, dtype):
    """(physical storage tensor, write(kv, block, off, head, dim, value)) built independently of
    kvviz.core.layout: each framework's logical shape, allocated in its stride order (physical = logical
    dims taken in that order, contiguous), then viewed back through the inverse permutation."""
    if fam == "flash_attn":      # vLLM FlashAttention: (2, B, N, H, D); HND stride order (0, 1, 3, 2, 4)
        logical, order = (2, n, b, h, d), ((0, 1, 2, 3, 4) if layout == "NHD" else (0, 1, 3, 2, 4))
    elif fam == "flashinfer":    # FlashInfer 5-D / vLLM FlashInfer before 2026-07: (B, 2, N, H, D)
        logical, order = (n, 2, b, h, d), ((0, 1, 2, 3, 4) if layout == "NHD" else (0, 1, 3, 2, 4))
    elif fam == "flex_interleaved":  # vLLM Flex v0.23-v0.25: (B, 2, N, H, D) in stride order (0, 2, 1, 3, 4)
        logical, order = (n, 2, b, h, d), (0, 2, 1, 3, 4)
    else:                        # vLLM FlashInfer since 2026-07: (B, H, N, 2D); NHD stride order (0, 2, 1, 3)
        logical, order = (n, h, b, 2 * d), ((0, 2, 1, 3) if layout == "NHD" else (0, 1, 2, 3))
    phys = torch.zeros(tuple(logical[i] for i in order), dtype=dtype)
    view = phys.permute(*[order.index(i) for i in range(len(order))])
    assert tuple(view.shape) == logical

    def index(kv, block, off, head, dim):
        p = 0 if kv == "k" else 1
        if fam == "flash_attn":
            return view, (p, block, off, head, dim)
        if fam in ("flashinfer", "flex_interleaved"):
            return view, (block, p, off, head, dim)
        k_cache, v_cache = view.split(d, dim=-1)   # vLLM's zero-copy split: K = [..., :D], V = [..., D:]
        return (k_cache if kv == "k" else v_cache), (block, head, off, dim)

    return phys, index


@settings(max_examples=300, deadline=None)
@given(geometries, st.data())
def test_offset_matches_torch_tensor(geo, data):
    fam, layout, dtype, n, b, h, d = geo
    n = min(n, 12)
    g = CacheGeometry(layout, n, b, h, d, dtype, fam)
    phys, index = _framework_tensor(fam, layout, n, b, h, d, TORCH_DTYPES[dtype])
    assert tuple(phys.shape) == g.shape and phys.stride() == g.strides
    slot = data.draw(st.integers(0, n * b - 1))
    head = data.draw(st.integers(0, h - 1))
    dim = data.draw(st.integers(0, d - 1))
    kv = data.draw(st.sampled_from(["k", "v"]))
    block, off = divmod(slot, b)
    a = g.address(slot, head, dim, kv)
    # 1. torch's own element offset of the indexed element (storage offset + index · strides)
    t, idx = index(kv, block, off, head, dim)
    el = t[idx]
    assert el.storage_offset() == a["element_offset"]
    # 2. write a marker through the logical view; find it, and only it, at the byte offset in raw storage
    marker = torch.tensor([-1.5], dtype=TORCH_DTYPES[dtype])
    t[idx] = marker[0]
    raw = phys.reshape(-1).view(torch.uint8)
    want = torch.zeros_like(raw)
    want[a["byte_offset"]:a["byte_offset"] + g.itemsize] = marker.view(torch.uint8)
    assert torch.equal(raw, want)
    # 3. and the decoding of that byte names the element written
    dec = g.decode(a["byte_offset"])
    assert (dec["kv"], dec["block"], dec["offset_in_block"], dec["head"], dec["dim"]) == (kv, block, off, head, dim)


@pytest.mark.parametrize("family,layout", FAMILY_LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_element_matches_torch(family, layout, dtype):
    """Exhaustive on a small cache: every element's unique value sits where kvviz says."""
    n, b, h, d = 3, 4, 2, 3
    g = CacheGeometry(layout, n, b, h, d, dtype, family)
    phys, index = _framework_tensor(family, layout, n, b, h, d, torch.float32)
    code = 0
    for kv in "kv":
        for slot in range(n * b):
            for head in range(h):
                for dim in range(d):
                    t, idx = index(kv, *divmod(slot, b), head, dim)
                    t[idx] = code
                    e = g.element_offset(slot, head, dim, kv)
                    assert phys.reshape(-1)[e] == code and g.address(slot, head, dim, kv)["byte_offset"] == e * g.itemsize
                    code += 1
    flat = phys.reshape(-1)
    assert sorted(flat.tolist()) == list(range(g.total_elements))


def test_page_texts_complete_and_consistent():
    """The family texts of the Memory layout and batch pages exist in every language, with the
    same placeholders in each."""
    import string

    from kvviz.texts.i18n import LANGS, missing_translations
    from kvviz.texts import batch, layout

    assert missing_translations(["layout", "batch"]) == []
    for table, families in ((layout.STRINGS, ALL_CACHE_LAYOUTS), (batch.STRINGS, CACHE_LAYOUTS)):
        for fam in families:
            assert "fam_" + fam in table and "whose_" + fam in table
        for key, entry in table.items():
            fields = [{f for _, f, _, _ in string.Formatter().parse(entry[lang]) if f} for lang in LANGS]
            assert all(f == fields[0] for f in fields), key


# --- the memory-layout page's view-model ----------------------------------------------------------

def test_layout_page_view_model():
    from kvviz.views import layout as lay_vm

    geo = lay_vm.caches(2, 4, 2, 4, "float16", "flashinfer_packed")
    assert set(geo) == {"NHD", "HND"} and geo["HND"].cache_layout == "flashinfer_packed"
    got = lay_vm.picked_addresses(geo, 1, 2, 1, 0, "v")           # slot 1 * 4 + 2 = 6
    assert got["NHD"] == geo["NHD"].address(6, 1, 0, "v") and got["NHD"]["byte_offset"] == 216
    assert got["HND"]["byte_offset"] == 232
    assert lay_vm.picture_line(geo["NHD"]) == 16                  # packed: K|V of each head on a line
    assert lay_vm.picture_line(lay_vm.caches(2, 4, 2, 4, "float16", "flash_attn")["HND"]) == 8


@pytest.mark.parametrize("text, value", [("0x1a0", 416), ("0010", 10), ("1_000", 1000), (" 64 ", 64)])
def test_layout_page_reads_byte_addresses(text, value):
    from kvviz.views.layout import parse_byte

    assert parse_byte(text) == value


@pytest.mark.parametrize("text, message", [("-3", "cannot be negative"), ("abc", "Not a byte address"),
                                           ("9" * 70, "Not a byte address")])
def test_layout_page_refuses_bad_byte_addresses(text, message):
    from kvviz.views.layout import parse_byte

    with pytest.raises(ValueError, match=message):
        parse_byte(text, "en")
    with pytest.raises(ValueError):
        parse_byte(text, "zh")


# --- which family each vLLM release allocates for each attention backend ----------------------------
#
# Read from vLLM's git history (get_kv_cache_shape and get_kv_cache_stride_order of
# vllm/v1/attention/backends/{flash_attn,flashinfer,triton_attn,flex_attention}.py):
# * PR #37940 (2026-04-01, first in v0.20.0): Triton's stride order follows HND; before, always NHD;
# * PR #42095 (2026-05-26, first in v0.23.0): FlashAttention (2, nb, ...) -> (nb, 2, ...); Flex
#   (2, nb, ...) -> (nb, 2, bs, H, D) allocated in stride order (0, 2, 1, 3, 4);
# * PR #44455 (2026-07-11, first in v0.26.0): every backend (nb, H, bs, 2D), NHD order (0, 2, 1, 3),
#   HND (0, 1, 2, 3); Flex always (0, 2, 1, 3).
# (release, backend) -> (family, layouts the backend allocates)
VLLM_TABLE = {
    ("v0.11.0", "flash_attn"): ("flash_attn", LAYOUTS), ("v0.22.1", "flash_attn"): ("flash_attn", LAYOUTS),
    ("v0.23.0", "flash_attn"): ("flashinfer", LAYOUTS), ("v0.25.1", "flash_attn"): ("flashinfer", LAYOUTS),
    ("v0.26.0", "flash_attn"): ("flashinfer_packed", LAYOUTS), ("main", "flash_attn"): ("flashinfer_packed", LAYOUTS),
    ("v0.11.0", "flashinfer"): ("flashinfer", LAYOUTS), ("v0.25.1", "flashinfer"): ("flashinfer", LAYOUTS),
    ("v0.26.0", "flashinfer"): ("flashinfer_packed", LAYOUTS), ("v0.27.1", "flashinfer"): ("flashinfer_packed", LAYOUTS),
    ("v0.11.0", "triton"): ("flashinfer", ("NHD",)), ("v0.19.1", "triton"): ("flashinfer", ("NHD",)),
    ("v0.20.0", "triton"): ("flashinfer", LAYOUTS), ("v0.25.1", "triton"): ("flashinfer", LAYOUTS),
    ("v0.26.0", "triton"): ("flashinfer_packed", LAYOUTS), ("main", "triton"): ("flashinfer_packed", LAYOUTS),
    ("v0.11.0", "flex"): ("flash_attn", ("NHD",)), ("v0.22.1", "flex"): ("flash_attn", ("NHD",)),
    ("v0.23.0", "flex"): ("flex_interleaved", ("NHD",)), ("v0.25.1", "flex"): ("flex_interleaved", ("NHD",)),
    ("v0.26.0", "flex"): ("flashinfer_packed", ("NHD",)), ("main", "flex"): ("flashinfer_packed", ("NHD",)),
}

# physical shape and index of (kv p, block, off, head, dim) per (family, layout), from vLLM's logical
# shape taken in its stride order
PHYSICAL = {
    ("flash_attn", "NHD"): lambda nb, bs, h, d, p, b, o, hd, dm: ((2, nb, bs, h, d), (p, b, o, hd, dm)),
    ("flash_attn", "HND"): lambda nb, bs, h, d, p, b, o, hd, dm: ((2, nb, h, bs, d), (p, b, hd, o, dm)),
    ("flashinfer", "NHD"): lambda nb, bs, h, d, p, b, o, hd, dm: ((nb, 2, bs, h, d), (b, p, o, hd, dm)),
    ("flashinfer", "HND"): lambda nb, bs, h, d, p, b, o, hd, dm: ((nb, 2, h, bs, d), (b, p, hd, o, dm)),
    ("flashinfer_packed", "NHD"): lambda nb, bs, h, d, p, b, o, hd, dm: ((nb, bs, h, 2 * d), (b, o, hd, p * d + dm)),
    ("flashinfer_packed", "HND"): lambda nb, bs, h, d, p, b, o, hd, dm: ((nb, h, bs, 2 * d), (b, hd, o, p * d + dm)),
    ("flex_interleaved", "NHD"): lambda nb, bs, h, d, p, b, o, hd, dm: ((nb, bs, 2, h, d), (b, o, p, hd, dm)),
}


@pytest.mark.parametrize("release,backend", sorted(VLLM_TABLE))
def test_cache_layout_for_each_release_and_backend(release, backend):
    from kvviz.core.layout import cache_layout_for, layouts_for
    from kvviz.core.versions import rules_for

    family, layouts = VLLM_TABLE[(release, backend)]
    assert cache_layout_for(release, backend) == family
    assert cache_layout_for(rules_for(release), backend) == family       # a Rules object works too
    assert layouts_for(release, backend) == layouts
    # byte offsets of a few elements, against numpy on the physical shape
    nb, bs, h, d = 6, 16, 4, 8
    for layout in layouts:
        g = CacheGeometry(layout, nb, bs, h, d, "bfloat16", family)
        for kv, slot, head, dim in (("k", 0, 0, 0), ("v", 0, 0, 0), ("k", 37, 2, 5), ("v", 95, 3, 7), ("v", 17, 1, 0)):
            shape, idx = PHYSICAL[(family, layout)](nb, bs, h, d, "kv".index(kv), *divmod(slot, bs), head, dim)
            assert g.shape == shape
            assert g.address(slot, head, dim, kv)["byte_offset"] == int(np.ravel_multi_index(idx, shape)) * 2


@pytest.mark.parametrize("between,release", [("v0.22.9", "v0.22.1"), ("v0.24.3", "v0.24.0"), ("0.25.7", "v0.25.1"),
                                             ("v0.19.5", "v0.19.1"), ("v0.26.9", "v0.26.0")])
def test_a_version_between_releases_follows_the_older(between, release):
    from kvviz.core.layout import cache_layout_for, layouts_for

    for backend in ("flash_attn", "flashinfer", "triton", "flex"):
        assert cache_layout_for(between, backend) == cache_layout_for(release, backend)
        assert layouts_for(between, backend) == layouts_for(release, backend)


def test_defaults_and_bad_input():
    from kvviz.core.layout import (DEFAULT_ATTN_BACKEND, NEWEST_CACHE_LAYOUT, cache_layout_for,
                                   check_backend_layout, layouts_for)

    assert NEWEST_CACHE_LAYOUT == "flashinfer_packed" == cache_layout_for(None, DEFAULT_ATTN_BACKEND)
    assert DEFAULT_CACHE_LAYOUT == "flash_attn"                 # CacheGeometry's own default is unchanged
    for bad in ("v0.10.0", "banana", "", "v0.1"):
        with pytest.raises(ValueError, match="v0.11.0 to v0.34.0"):
            cache_layout_for(bad, "flash_attn")
    for bad in ("xformers", "", "FLASH_ATTN"):
        with pytest.raises(ValueError, match="attention backend must be one of"):
            cache_layout_for("main", bad)
        with pytest.raises(ValueError, match="attention backend"):
            layouts_for("main", bad)
    assert check_backend_layout("v0.20.0", "triton", "HND") == "HND"
    with pytest.raises(ValueError, match=r"v0\.19\.1's triton backend has no HND cache"):
        check_backend_layout("v0.19.1", "triton", "HND")
    with pytest.raises(ValueError, match="no HND form"):
        CacheGeometry("HND", 2, 4, 2, 8, "float16", "flex_interleaved")


def test_layout_changes_name_the_prs():
    from kvviz.core.layout import CACHE_LAYOUT_CHANGES, layout_changes

    assert [(c.pr, c.first_release) for c in layout_changes("flash_attn")] == [(42095, "v0.23.0"), (44455, "v0.26.0")]
    assert [(c.pr, c.first_release) for c in layout_changes("triton", "v0.25.1")] == [(37940, "v0.20.0")]
    assert [c.pr for c in layout_changes("flex", "v0.23.0")] == [42095]
    assert layout_changes("flashinfer", "v0.25.1") == []
    assert {c.pr for c in CACHE_LAYOUT_CHANGES} == {37940, 42095, 44455, 51718}


def test_layout_page_picks_the_family_from_version_and_backend():
    from kvviz.core.versions import VERSIONS
    from kvviz.views import layout as lay_vm

    c = lay_vm.pick_family("main", "flash_attn")
    assert (c.family, c.layouts, c.by_hand) == ("flashinfer_packed", LAYOUTS, False)
    assert c.vllm_line() == "main · flash_attn → flashinfer_packed [B, N, H, 2D] (NHD) / [B, H, N, 2D] (HND)"
    c = lay_vm.pick_family("v0.22.1", "flash_attn")
    assert c.vllm_line() == "v0.22.1 · flash_attn → flash_attn [2, B, N, H, D] (NHD) / [2, B, H, N, D] (HND)"
    assert c.history() == ""
    c = lay_vm.pick_family("v0.24.5", "flex", lay_vm.AUTO)
    assert (c.version, c.family, c.layouts) == ("v0.24.0", "flex_interleaved", ("NHD",))
    assert c.history() == "#42095 (v0.23.0)"
    geo = lay_vm.caches(2, 4, 2, 4, "float16", c.family, c.layouts)
    assert list(geo) == ["NHD"] and lay_vm.picture_line(geo["NHD"]) == 16
    c = lay_vm.pick_family("v0.24.5", "flex", "flashinfer")               # by hand: every layout of the family
    assert (c.family, c.layouts, c.by_hand, c.vllm_family) == ("flashinfer", LAYOUTS, True, "flex_interleaved")
    assert list(lay_vm.caches(2, 4, 2, 4, "float16", c.family, c.layouts)) == ["NHD", "HND"]
    assert lay_vm.pick_family("v0.19.1", "triton").layouts == ("NHD",)
    assert set(lay_vm.VERSION_CHOICES) == set(VERSIONS)
    assert lay_vm.VERSION_CHOICES[0] == "v0.34.0" and lay_vm.DEFAULT_VERSION == "main" and lay_vm.FAMILY_CHOICES[0] == lay_vm.AUTO
