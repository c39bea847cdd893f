import numpy as np
import pytest

from kvviz.core.block_table import BlockTable, MultiGroupBlockTable, get_block_table_width, map_to_kernel_blocks


@pytest.mark.parametrize("args,kw,expected", [
    ((1875, 64), {}, 1876),            # 2 blocks of 64 = 128 tokens
    ((235, 256, 64), {}, 940),         # width counted in kernel blocks
    ((3, 48), {}, 8),                  # lcm(128, 48) = 384 tokens = 8 blocks
    ((3, 48), {"alignment": "pow2"}, 4),  # 2026-05 rule: cdiv(3, 128 // 48 = 2) * 2
    ((5, 16), {}, 8),
    ((5, 16), {"alignment": "none"}, 5),
    ((1, 256), {}, 1),
])
def test_width(args, kw, expected):
    assert get_block_table_width(*args, **kw) == expected


def test_width_rejects_non_dividing_kernel_block():
    with pytest.raises(ValueError):
        get_block_table_width(4, 32, 12)


def test_map_to_kernel_blocks():
    assert map_to_kernel_blocks([0, 1, 2], 2) == [0, 1, 2, 3, 4, 5]
    assert map_to_kernel_blocks([10, 11], 2) == [20, 21, 22, 23]
    assert map_to_kernel_blocks([7], 1) == [7]


def table(**kw):
    return BlockTable(4, 8, 16, alignment="none", **kw)


def test_append_add_clear():
    t = table()
    t.append_row([3, 4], 0)
    t.append_row([9], 0)
    assert t.row_prefix(0).tolist() == [3, 4, 9]
    t.append_row([], 0)  # no-op
    assert t.num_blocks_per_row[0] == 3
    t.add_row([7], 0)  # count reset; the old tail stays
    assert t.cpu[0, :4].tolist() == [7, 4, 9, 0]
    assert t.num_blocks_per_row[0] == 1
    t.clear_row(0)  # clears only the counted prefix
    assert t.cpu[0, :4].tolist() == [0, 4, 9, 0]
    assert t.num_blocks_per_row[0] == 0


def test_move_row_clears_source_and_keeps_target_tail():
    t = table()
    t.append_row([1, 2, 9], 0)
    t.add_row([8], 0)      # count 1; [2, 9] stay behind as a stale tail
    t.append_row([5, 6], 2)
    t.clear_row(0)         # zeroes only the counted prefix: [0, 2, 9]
    assert t.cpu[0, :3].tolist() == [0, 2, 9]
    t.move_row(2, 0)
    assert t.cpu[0, :3].tolist() == [5, 6, 9]  # target beyond n keeps its old 9
    assert t.num_blocks_per_row[0] == 2
    assert t.cpu[2, :2].tolist() == [0, 0] and t.num_blocks_per_row[2] == 0


def test_move_row_old_rule_leaves_source():
    t = table(move_row_clears_source=False)
    t.append_row([5, 6], 2)
    t.move_row(2, 0)
    assert t.cpu[2, :2].tolist() == [5, 6] and t.num_blocks_per_row[2] == 2


def test_swap_row_swaps_whole_rows():
    t = table()
    t.append_row([1, 2, 3], 0)
    t.add_row([4], 1)
    t.cpu[1, 5] = 77  # stale tail travels with the row
    t.swap_row(0, 1)
    assert t.cpu[0, :6].tolist() == [4, 0, 0, 0, 0, 77]
    assert t.cpu[1, :3].tolist() == [1, 2, 3]
    assert t.num_blocks_per_row[:2].tolist() == [1, 3]


def stale_rows(t: BlockTable, num_rows: int) -> list[int]:
    """Rows among the first ``num_rows`` whose mirror differs from the CPU table."""
    return np.nonzero((t.cpu[:num_rows] != t.device[:num_rows]).any(axis=1))[0].tolist()


def test_mirror_changes_only_on_commit():
    t = table()
    t.append_row([3, 4], 0)
    t.append_row([5], 1)
    assert t.device.sum() == 0
    assert stale_rows(t, 2) == [0, 1]
    nbytes = t.commit(1)
    assert nbytes == 1 * t.width * 4
    assert t.device[0, :2].tolist() == [3, 4]
    assert t.device[1].sum() == 0 and stale_rows(t, 2) == [1]
    t.commit(2)
    assert stale_rows(t, 2) == []
    np.testing.assert_array_equal(t.device, t.cpu)


def test_device_view_pads_rows_with_null():
    t = table()
    for r in range(4):
        t.append_row([r + 1], r)
    t.commit(4)
    v = t.device_view(2, 4)
    assert v[:2, 0].tolist() == [1, 2] and (v[2:] == 0).all()


def test_append_past_width_raises():
    t = table()
    with pytest.raises(ValueError):
        t.append_row(list(range(1, 10)), 0)


def test_kernel_blocks_in_table():
    t = BlockTable(2, 4, 32, 16, alignment="none")
    t.append_row([10, 11], 0)
    assert t.row_prefix(0).tolist() == [20, 21, 22, 23]
    assert t.width == 8 and t.block_size == 16


def test_multigroup_fans_out():
    m = MultiGroupBlockTable([table(), table()])
    m.add_row([[1, 2], [3]], 0)
    m.move_row(0, 1)
    assert m[0].row_prefix(1).tolist() == [1, 2] and m[1].row_prefix(1).tolist() == [3]
    assert m.commit(2) == 2 * (2 * m[0].width * 4)
