import pytest
from hypothesis import given, settings, strategies as st

from kvviz.core.layout import CacheGeometry


def test_hand_worked_offsets():
    nhd = CacheGeometry("NHD", 100, 16, 8, 128, "float16")
    hnd = CacheGeometry("HND", 100, 16, 8, 128, "float16")
    # slot 37 = block 2, offset 5; head 3, dim 5
    assert nhd.element_offset(37, 3, 5) == (37 * 8 + 3) * 128 + 5
    assert hnd.element_offset(37, 3, 5) == ((2 * 8 + 3) * 16 + 5) * 128 + 5 == 39557
    assert hnd.address(37, 3, 5)["byte_offset"] == 79114
    # V plane starts after all K
    assert nhd.element_offset(0, 0, 0, "v") == 100 * 16 * 8 * 128
    assert nhd.shape == (2, 100, 16, 8, 128) and hnd.shape == (2, 100, 8, 16, 128)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["NHD", "HND"]), st.sampled_from(["float16", "bfloat16", "float32", "fp8"]),
       st.integers(1, 50), st.sampled_from([1, 4, 16]), st.integers(1, 8), st.sampled_from([1, 8, 64]),
       st.data())
def test_decode_inverts_address(layout, dtype, n, b, h, d, data):
    g = CacheGeometry(layout, n, b, h, d, dtype)
    slot = data.draw(st.integers(0, n * b - 1))
    head = data.draw(st.integers(0, h - 1))
    dim = data.draw(st.integers(0, d - 1))
    kv = data.draw(st.sampled_from(["k", "v"]))
    byte = data.draw(st.integers(0, g.itemsize - 1))
    a = g.address(slot, head, dim, kv)
    dec = g.decode(a["byte_offset"] + byte)
    assert (dec["slot"], dec["head"], dec["dim"], dec["kv"], dec["byte_in_element"]) == (slot, head, dim, kv, byte)
    assert (dec["block"], dec["offset_in_block"]) == (a["block"], a["offset_in_block"])


def test_bad_coordinates():
    g = CacheGeometry("NHD", 2, 4, 2, 8)
    for args in [(8, 0, 0), (0, 2, 0), (0, 0, 8), (-1, 0, 0)]:
        with pytest.raises(ValueError):
            g.element_offset(*args)
    with pytest.raises(ValueError):
        g.decode(g.total_bytes)
    with pytest.raises(ValueError):
        CacheGeometry("XYZ", 2, 4, 2, 8)
    with pytest.raises(ValueError):
        CacheGeometry("NHD", 0, 4, 2, 8)
