"""Geometry against the loop oracle (kvviz.reference) and hand-computed cases.

Random geometries cover block sizes, kernel-block splits and DCP world / rank / interleave; on a
failure hypothesis prints the geometry and positions it drew.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kvviz import reference
from kvviz.constants import PAD_SLOT_ID
from kvviz.core.geometry import Geometry
from kvviz.core.scenario import parse_scenario
from kvviz.core.step import build_step_from_batch
from kvviz.errors import BadInput

MAX_BLOCKS = 4   # manager blocks a drawn request spans


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def geometries(draw):
    kbs = draw(st.sampled_from([1, 2, 3, 4, 8, 16]))
    block_size = kbs * draw(st.integers(1, 4))
    world = draw(st.integers(1, 4))
    return Geometry(block_size, kbs, world, draw(st.integers(0, world - 1)),
                    draw(st.sampled_from(_divisors(block_size))))


def _loose(geo: Geometry) -> dict:
    """The geometry as the oracle's keyword arguments."""
    return dict(block_size=geo.block_size, kernel_block_size=geo.kernel_block_size,
                dcp_world_size=geo.dcp_world_size, dcp_rank=geo.dcp_rank, interleave=geo.interleave)


def _span(geo: Geometry) -> int:
    """Positions MAX_BLOCKS manager blocks cover, computed by hand."""
    return MAX_BLOCKS * geo.block_size * geo.dcp_world_size


@st.composite
def geometry_and_row(draw):
    """A geometry and one request's table row: arbitrary kernel block ids, wide enough."""
    geo = draw(geometries())
    cols = MAX_BLOCKS * (geo.block_size // geo.kernel_block_size)
    row = draw(st.lists(st.integers(0, 10_000), min_size=cols, max_size=cols))
    return geo, row


# --- slots -----------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(geometry_and_row(), st.data())
def test_slot_of_agrees_with_the_loop_oracle(geo_row, data):
    geo, row = geo_row
    pos = data.draw(st.integers(0, _span(geo) - 1), label="position")
    assert geo.slot_of(pos, row) == reference.slot_of_position(pos, row, **_loose(geo))


@settings(max_examples=200, deadline=None)
@given(geometries(), st.data())
def test_slots_agree_with_the_loop_slot_mapping(geo, data):
    """Several requests in one table: Geometry.slots (vectorised) equals reference.slot_mapping."""
    cols = MAX_BLOCKS * (geo.block_size // geo.kernel_block_size)
    num_reqs = data.draw(st.integers(1, 4), label="num_reqs")
    table = np.array(data.draw(st.lists(st.lists(st.integers(0, 10_000), min_size=cols, max_size=cols),
                                        min_size=num_reqs, max_size=num_reqs), label="table"))
    seq = data.draw(st.lists(st.integers(1, _span(geo)), min_size=num_reqs, max_size=num_reqs), label="seq")
    q = [data.draw(st.integers(1, s), label="query_len") for s in seq]
    qsl = np.concatenate([[0], np.cumsum(q)])
    positions = np.concatenate([np.arange(s - n, s) for s, n in zip(seq, q)])
    rows = np.repeat(np.arange(num_reqs), q)
    want = reference.slot_mapping(qsl, positions, table, **_loose(geo))
    np.testing.assert_array_equal(geo.slots(positions, rows, table), want)


@settings(max_examples=300, deadline=None)
@given(geometries(), st.data())
def test_locate_and_position_of_are_inverse(geo, data):
    pos = data.draw(st.integers(0, _span(geo) - 1), label="position")
    local, col, off = geo.locate(pos)
    owner = (pos % (geo.block_size * geo.dcp_world_size)) // geo.interleave % geo.dcp_world_size
    assert bool(local) == (owner == geo.dcp_rank)
    here = geo.with_rank(owner)
    _, col, off = here.locate(pos)
    assert 0 <= off < geo.kernel_block_size
    assert int(here.position_of(col, off)) == pos
    assert int(geo.position_of(col, off, rank=owner)) == pos


@settings(max_examples=200, deadline=None)
@given(geometries())
def test_every_position_has_one_owner_and_one_cell(geo):
    """Over the ranks, one manager block's positions fill each rank's kernel blocks exactly once."""
    positions = np.arange(geo.block_size * geo.dcp_world_size)
    seen = set()
    for rank in range(geo.dcp_world_size):
        local, col, off = geo.with_rank(rank).locate(positions)
        cells = set(zip(col[local].tolist(), off[local].tolist()))
        assert len(cells) == geo.block_size == int(local.sum())
        assert all(0 <= c < geo.block_size // geo.kernel_block_size and 0 <= o < geo.kernel_block_size
                   for c, o in cells), cells
        seen |= {(rank, c, o) for c, o in cells}
    assert len(seen) == len(positions)


@settings(max_examples=200, deadline=None)
@given(geometries(), st.lists(st.integers(0, 200), max_size=6))
def test_local_seq_lens_count_the_positions_the_oracle_stores(geo, seq_lens):
    """A rank stores the positions whose slot the oracle does not pad."""
    cols = (max(seq_lens, default=0) // (geo.block_size * geo.dcp_world_size) + 1) * (
        geo.block_size // geo.kernel_block_size)
    row = list(range(1, cols + 1))
    want = [sum(reference.slot_of_position(p, row, **_loose(geo)) != PAD_SLOT_ID for p in range(s))
            for s in seq_lens]
    assert geo.local_seq_lens(seq_lens).tolist() == want


@settings(max_examples=200, deadline=None)
@given(geometries(), st.lists(st.integers(0, 500), min_size=1, max_size=6))
def test_page_count_matches_the_oracle_csr(geo, seq_lens):
    indptr, _, _ = reference.flashinfer_csr([[0] * 600] * len(seq_lens), seq_lens, geo.kernel_block_size)
    assert geo.page_count(seq_lens).tolist() == np.diff(indptr).tolist()


# --- blocks and table widths -------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(geometries(), st.integers(0, 1000))
def test_blocks_for_full_blocks_and_tokens_held(geo, n):
    per_block = geo.block_size * geo.dcp_world_size
    assert geo.blocks_for(n) == min(b for b in range(n + 1) if b * per_block >= n)
    assert geo.full_blocks(n) == max(b for b in range(n + 1) if b * per_block <= n)
    assert geo.tokens_held(geo.blocks_for(n)) >= n >= geo.tokens_held(geo.full_blocks(n))


@settings(max_examples=200, deadline=None)
@given(geometries(), st.lists(st.integers(0, 1000), max_size=5))
def test_kernel_blocks_expand_each_manager_block(geo, ids):
    k = geo.block_size // geo.kernel_block_size
    want = [m * k + j for m in ids for j in range(k)]
    assert geo.kernel_blocks(ids) == want


def _width_by_hand(max_blocks: int, block_size: int, kbs: int, alignment: str) -> int:
    """The smallest block count >= max_blocks that the alignment accepts, in kernel blocks."""
    def ok(n):
        if alignment == "lcm":
            return n * block_size % math.lcm(128, block_size) == 0
        if alignment == "pow2" and block_size <= 128:
            return n % (128 // block_size) == 0
        return True
    n = max_blocks
    while not ok(n):
        n += 1
    return n * (block_size // kbs)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([1, 2, 3, 4, 8, 16, 48, 64, 96, 256]), st.sampled_from([1, 2, 4, 8]),
       st.integers(0, 3000), st.sampled_from(["lcm", "pow2", "none"]))
def test_table_width_by_hand(block_size, split, max_blocks, alignment):
    if block_size % split:
        split = 1
    geo = Geometry(block_size, block_size // split)
    assert geo.table_width(max_blocks, alignment) == _width_by_hand(max_blocks, block_size,
                                                                     block_size // split, alignment)


@pytest.mark.parametrize("block_size,kbs,max_blocks,alignment,width", [
    (64, None, 1875, "lcm", 1876),    # 2 blocks of 64 = 128 tokens
    (256, 64, 235, "lcm", 940),       # counted in kernel blocks
    (48, None, 3, "lcm", 8),          # lcm(128, 48) = 384 tokens = 8 blocks
    (48, None, 3, "pow2", 4),         # cdiv(3, 128 // 48 = 2) * 2
    (16, None, 5, "lcm", 8),
    (16, None, 5, "none", 5),
    (256, None, 1, "lcm", 1),
])
def test_table_width_cases(block_size, kbs, max_blocks, alignment, width):
    assert Geometry(block_size, kbs).table_width(max_blocks, alignment) == width


def test_unknown_alignment_is_refused():
    with pytest.raises(ValueError, match="unknown alignment 'pow3'"):
        Geometry(16).table_width(4, "pow3")


# --- hand-computed cases ----------------------------------------------------------------------

def test_plain_blocks():
    geo = Geometry(4)
    assert geo.slot_of(5, [7, 9]) == 9 * 4 + 1
    assert geo.slots([0, 3, 4], [0, 0, 0], [[7, 9]]).tolist() == [28, 31, 36]
    assert (geo.blocks_per_kv_block, geo.virtual_block_size, geo.dcp_span) == (1, 4, 1)


def test_kernel_block_split():
    geo = Geometry(8, 4)   # manager blocks [10, 11] -> kernel blocks [20, 21, 22, 23]
    row = geo.kernel_blocks([10, 11])
    assert row == [20, 21, 22, 23]
    assert [geo.slot_of(p, row) for p in (0, 5, 8, 15)] == [80, 85, 88, 95]
    assert geo.locate(13)[1:] == (3, 1)
    assert int(geo.position_of(3, 1)) == 13


def test_dcp_interleave():
    # world 2, interleave 2: positions 0..7 of a manager block go to ranks 0 0 1 1 0 0 1 1
    geo = Geometry(4, dcp_world_size=2, dcp_rank=1, interleave=2)
    row = [3, 5]
    assert [geo.slot_of(p, row) for p in range(8)] == [-1, -1, 12, 13, -1, -1, 14, 15]
    assert geo.slot_of(10, row) == 20 and geo.slot_of(9, row) == PAD_SLOT_ID
    assert geo.local_seq_lens([12, 5, 0, 3]).tolist() == [6, 2, 0, 1]
    assert geo.with_rank(0).local_seq_lens([12, 5, 0, 3]).tolist() == [6, 3, 0, 2]
    assert int(geo.position_of(1, 1)) == 11 and int(geo.position_of(1, 1, rank=0)) == 9
    assert (geo.virtual_block_size, geo.dcp_span, geo.blocks_for(12), geo.full_blocks(12)) == (8, 4, 2, 1)


# --- refusals -------------------------------------------------------------------------------

@pytest.mark.parametrize("kw,message", [
    (dict(block_size=8, kernel_block_size=3), "kernel_block_size 3 does not divide block_size 8"),
    (dict(block_size=8, kernel_block_size=0), "kernel_block_size 0 does not divide block_size 8"),
    (dict(block_size=0), "'block_size' must be between 1 and 65536, got 0"),
    (dict(block_size=1 << 17), "'block_size' must be between 1 and 65536, got 131072"),
    (dict(block_size=True), "'block_size' must be an integer, got bool"),
    (dict(block_size=4.0), "'block_size' must be an integer, got float"),
    (dict(block_size=4, dcp_world_size=0), "'dcp_world_size' must be between 1 and 1024, got 0"),
    (dict(block_size=4, dcp_world_size=2, dcp_rank=2), "dcp_rank 2 is outside the DCP world of size 2"),
    (dict(block_size=4, dcp_rank=-1), "dcp_rank -1 is outside the DCP world of size 1"),
    (dict(block_size=4, interleave=3), "cp_kv_cache_interleave_size 3 does not divide block_size 4"),
    (dict(block_size=4, interleave=0), "cp_kv_cache_interleave_size 0 does not divide block_size 4"),
    (dict(block_size=4, num_kv_heads=0), "num_kv_heads and head_dim must be positive"),
    (dict(block_size=4, dtype="int3"), "dtype must be one of"),
])
def test_invalid_geometry_is_refused(kw, message):
    with pytest.raises(BadInput) as e:
        Geometry(**kw)
    assert str(e.value).startswith(message)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 512), st.integers(1, 512))
def test_a_kernel_block_size_that_does_not_divide_is_refused(block_size, kbs):
    if block_size % kbs == 0:
        assert Geometry(block_size, kbs).blocks_per_kv_block == block_size // kbs
    else:
        with pytest.raises(BadInput, match=f"^kernel_block_size {kbs} does not divide block_size {block_size}$"):
            Geometry(block_size, kbs)


def test_users_see_the_geometry_messages():
    """The `compute` batch and the scenario config refuse through Geometry, in the same words."""
    with pytest.raises(BadInput, match="^kernel_block_size 3 does not divide block_size 8$"):
        build_step_from_batch({"block_size": 8, "kernel_block_size": 3, "requests": []})
    with pytest.raises(BadInput, match="^dcp_rank 2 is outside the DCP world of size 2$"):
        build_step_from_batch({"block_size": 8, "dcp_world_size": 2, "dcp_rank": 2, "requests": []})
    with pytest.raises(BadInput, match="^cp_kv_cache_interleave_size 3 does not divide block_size 8$"):
        build_step_from_batch({"block_size": 8, "cp_kv_cache_interleave_size": 3, "requests": []})
    with pytest.raises(BadInput, match="^config: kernel_block_size 3 does not divide block_size 8$"):
        parse_scenario({"config": {"block_size": 8, "kernel_block_size": 3}, "requests": []})
    with pytest.raises(BadInput, match="^config: cp_kv_cache_interleave_size 4 does not divide block_size 6$"):
        parse_scenario({"config": {"block_size": 6, "cp_kv_cache_interleave_size": 4}, "requests": []})


def test_columns_and_pages():
    g = Geometry(16, 4)
    assert g.logical_block_of_column([0, 3, 4, 11]).tolist() == [0, 0, 1, 2]
    assert g.as_pages() == Geometry(4)
    assert g.slot_at(7, 3) == 31 and g.split_slot(31) == (7, 3)
