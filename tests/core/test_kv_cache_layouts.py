"""vLLM's standardized KV cache (v0.29.0+, #51718): one int8 allocation, every layer a view of the
logical ``[L, B, H, N, C]`` bytes in one of six physical orders (vllm/v1/kv_cache_layout.py
``KVCacheLayout``; kv_cache_interface.py ``compute_layout_strides``, ``create_kv_cache_views``).

Expected addresses are computed here without kvviz's strides: a numpy array of byte numbers
``arange`` laid out contiguously in the layout's physical order, transposed back to the logical
order [L, B, H, N, C] (what ``as_strided`` with vLLM's strides gives), then indexed. v0.34.0's
padding (worker/extensible_kv_cache.py ``pad_kv_cache_segments``) is checked with a hand formula.
"""
import random

import numpy as np
import pytest

from kvviz.core import kv_cache_layout as std
from kvviz.core.kv_cache_layout import KV_CACHE_LAYOUTS, KVCacheGeometry
from kvviz.core.layout import CacheGeometry, cache_layout_for, layouts_for

ES = {"float16": 2, "bfloat16": 2, "float32": 4, "fp8": 1}


def byte_numbers(layout, L, B, H, N, C):
    """Logical [L, B, H, N, C] array of byte offsets of a contiguous buffer in ``layout``'s order."""
    sizes = dict(zip("LBHNC", (L, B, H, N, C)))
    phys = np.arange(L * B * H * N * C).reshape([sizes[a] for a in layout])
    return phys.transpose([layout.index(a) for a in "LBHNC"])


def as_strided_view(layout, L, B, H, N, C):
    """The same through numpy's as_strided over a byte buffer, strides built by hand."""
    sizes = dict(zip("LBHNC", (L, B, H, N, C)))
    strides, s = {}, 1
    for a in reversed(layout):
        strides[a] = s
        s *= sizes[a]
    buf = np.arange(s, dtype=np.int64)
    return np.lib.stride_tricks.as_strided(buf, (L, B, H, N, C), [strides[a] * 8 for a in "LBHNC"])


def shapes(n=25, seed=7):
    rng = random.Random(seed)
    for _ in range(n):
        yield (rng.randint(1, 4), rng.randint(1, 6), rng.randint(1, 5), rng.randint(1, 3), rng.randint(1, 4),
               rng.choice(list(ES)))


@pytest.mark.parametrize("layout", KV_CACHE_LAYOUTS)
def test_address_matches_an_independent_view_and_decode_inverts_it(layout):
    for L, B, N, H, D, dt in shapes():
        g = KVCacheGeometry(L, B, N, H, D, dt, layout)
        es = ES[dt]
        ref = byte_numbers(layout, L, B, H, N, 2 * D * es)
        assert (ref == as_strided_view(layout, L, B, H, N, 2 * D * es)).all()
        assert g.total_bytes == ref.size
        for l, b, n, h, kv, d in np.ndindex(L, B, N, H, 2, D):
            kvs = "kv"[kv]
            a = g.address(l, b, n, h, kvs, d)
            assert a == ref[l, b, h, n, (kv * D + d) * es]
            for j in range(es):
                assert g.decode(a + j) == {"layer": l, "kv": kvs, "block": b, "offset_in_block": n,
                                           "slot": b * N + n, "head": h, "dim": d, "byte_in_element": j}


def test_strides_of_the_default_layout_by_hand():
    """LBNHC: l*(B*page) + b*page + n*(H*C) + h*C + kv*D*es + d*es (spec §9)."""
    g = KVCacheGeometry(3, 10, 16, 8, 128, "bfloat16", "LBNHC")
    C, page = 2 * 128 * 2, 8 * 16 * 512
    assert g.strides == {"L": 10 * page, "B": page, "H": C, "N": 8 * C, "C": 1}
    assert g.address(2, 7, 5, 3, "v", 9) == 2 * 10 * page + 7 * page + 5 * 8 * C + 3 * C + 128 * 2 + 9 * 2
    b = KVCacheGeometry(3, 10, 16, 8, 128, "bfloat16", "BLNHC")    # block-outer: block stride = L pages
    assert b.address(2, 7, 5, 3, "v", 9) == 7 * 3 * page + 2 * page + 5 * 8 * C + 3 * C + 128 * 2 + 9 * 2


def test_aliases_and_head_dim_v():
    assert KVCacheGeometry(1, 2, 4, 2, 8, layout="NHD").layout == "LBNHC"
    assert KVCacheGeometry(1, 2, 4, 2, 8, layout="HND").layout == "LBHNC"
    g = KVCacheGeometry(2, 3, 4, 2, 8, "float16", "LBHNC", head_dim_v=4)
    assert g.content_bytes == 24 and g.address(0, 0, 0, 0, "v", 3) == 16 + 6
    with pytest.raises(ValueError, match="dim 4 is outside 0 .. 3"):
        g.address(0, 0, 0, 0, "v", 4)


def test_groups_alias_from_byte_zero():
    """Every group's layer l starts at the same bytes (kv_cache_utils get_kv_cache_config_from_groups:
    each group's byte_offset restarts at 0)."""
    g = KVCacheGeometry(2, 4, 4, 2, 8, "float16", "BLHNC", num_groups=3)
    for grp in range(3):
        assert g.address(1, 2, 3, 1, "k", 5, group=grp) == g.address(1, 2, 3, 1, "k", 5)
    with pytest.raises(ValueError, match="group 3 is outside 0 .. 2"):
        g.address(0, 0, 0, 0, "k", 0, group=3)
    assert "alias from byte 0" in g.describe()["groups"]


@pytest.mark.parametrize("layout", KV_CACHE_LAYOUTS)
def test_v034_extensible_pads_layer_outer_block_compact_regions(layout):
    """pad_kv_cache_segments: LBHNC/LBNHC regions round_up(capacity*page, granule); others unpadded,
    strides of the reserved capacity."""
    L, B, cap, N, H, D, gr = 3, 5, 9, 4, 2, 8, 4096
    g = KVCacheGeometry(L, B, N, H, D, "float16", layout, capacity_blocks=cap, granule_bytes=gr)
    page = H * N * 2 * D * 2
    plain = KVCacheGeometry(L, cap, N, H, D, "float16", layout)
    if layout in ("LBHNC", "LBNHC"):
        stride = -(-cap * page // gr) * gr
        assert stride > cap * page and g.layer_stride == stride and g.total_bytes == L * stride
        assert g.address(2, 4, 3, 1, "v", 7) == plain.address(2, 4, 3, 1, "v", 7) - 2 * cap * page + 2 * stride
        with pytest.raises(ValueError, match="padding after layer 0"):
            g.decode(cap * page)
    else:
        assert g.strides == plain.strides
    with pytest.raises(ValueError, match="not committed"):
        g.decode(plain.address(0, 7, 0, 0, "k", 0) if layout not in ("LBHNC", "LBNHC") else 7 * page)
    with pytest.raises(ValueError, match="block 5 is outside 0 .. 4"):
        g.address(0, 5, 0, 0, "k", 0)


def test_refusals_are_one_sentence():
    g = KVCacheGeometry(2, 3, 4, 2, 8)
    for call, msg in ((lambda: g.address(2, 0, 0, 0, "k", 0), "layer 2 is outside 0 .. 1"),
                      (lambda: g.address(0, 0, 4, 0, "k", 0), "token in block 4 is outside 0 .. 3"),
                      (lambda: g.address(0, 0, 0, 2, "k", 0), "head 2 is outside"),
                      (lambda: g.address(0, 0, 0, 0, "x", 0), "kv must be"),
                      (lambda: g.decode(g.total_bytes), "outside the allocation"),
                      (lambda: g.decode(-1), "outside the allocation"),
                      (lambda: g.decode(1.5), "whole number"),
                      (lambda: KVCacheGeometry(1, 2, 4, 2, 8, layout="NBHLC"), "must be one of"),
                      (lambda: KVCacheGeometry(1, 4, 4, 2, 8, capacity_blocks=3, granule_bytes=64), "below")):
        with pytest.raises(ValueError, match=msg) as e:
            call()
        assert "\n" not in str(e.value)


def test_release_defaults_per_backend():
    """flash_attn/triton declare nothing (default preference), flex LBNHC only, FlashInfer on SM10x
    LBHNC/BLHNC, and from v0.34.0 FlashInfer drops LHBNC (attention/backends/*.py
    supported_kv_cache_layouts; backends/utils.py _DEFAULT_LAYOUT_PREFERENCE)."""
    for v in ("v0.29.0", "v0.31.0", "v0.34.0"):
        for be in ("flash_attn", "triton", "flex", "flashinfer"):
            assert cache_layout_for(v, be) == "LBNHC"
        assert cache_layout_for(v, "flashinfer", sm10x=True) == "LBHNC"
        assert std.supported_layouts(v, "flashinfer", sm10x=True) == ("LBHNC", "BLHNC")
        assert layouts_for(v, "flex") == ("NHD",) and layouts_for(v, "flash_attn") == ("NHD", "HND")
    assert "LHBNC" in std.supported_layouts("v0.33.0", "flashinfer")
    assert "LHBNC" not in std.supported_layouts("v0.34.0", "flashinfer")
    assert cache_layout_for("v0.28.0", "flash_attn") == "flashinfer_packed"
    assert std.default_layout("v0.28.0", "flash_attn") is None
    with pytest.raises(ValueError, match="first appear in vLLM v0.29.0"):
        std.check_layout_for("v0.28.0", "flash_attn", "LBNHC")


@pytest.mark.parametrize("layout,family", [("LBNHC", ("flashinfer_packed", "NHD")), ("LBHNC", ("flashinfer_packed", "HND")),
                                           ("BLNHC", ("flashinfer_packed", "NHD")), ("BHLNC", ("flashinfer_packed", "HND")),
                                           ("LHBNC", None)])
def test_one_layer_equals_the_packed_family(layout, family):
    assert std.one_layer_family(layout) == family
    if family is None:
        return
    g, old = KVCacheGeometry(1, 3, 4, 2, 8, "float16", layout), CacheGeometry(family[1], 3, 4, 2, 8, "float16", family[0])
    for b, n, h, kv, d in np.ndindex(3, 4, 2, 2, 8):
        assert g.address(0, b, n, h, "kv"[kv], d) == old.address(b * 4 + n, h, d, "kv"[kv])["byte_offset"]


def test_geometry_cache_reads_a_standardized_layout_as_one_layer():
    """kvviz.core.geometry.Geometry.cache: a one-layer LBHNC cache is the packed HND family byte for
    byte (checked above); LHBNC has no such family and is refused with one sentence."""
    from kvviz.core.geometry import Geometry
    g = Geometry(4, num_kv_heads=2, head_dim=8, dtype="float16", layout="NHD", cache_layout="LBHNC")
    cache = g.cache(3)
    assert (cache.cache_layout, cache.layout) == ("flashinfer_packed", "HND")
    assert cache.address(9, 1, 3, "v")["byte_offset"] == \
        KVCacheGeometry(1, 3, 4, 2, 8, "float16", "LBHNC").address(0, 2, 1, 1, "v", 3)
    with pytest.raises(ValueError, match="heads outside blocks"):
        g.with_cache(cache_layout="LHBNC").cache(3)
