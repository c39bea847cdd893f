"""The dump key kernel_block_table (vLLM v0.32.0: persistent tables in KV-manager ids, the backend's
kernel-block table per attention group): loading refuses what cannot be that table, and the checker
reads block_table as manager ids, the CSR in kernel blocks, and the backend's table by the release's
rule. Expected tables are written out by hand from the rule."""
import types

import numpy as np
import pytest

from dump_fixtures import base_mapping
from kvviz.dumps.capture import capture
from kvviz.dumps.check import applicable_checks, run_checks
from kvviz.dumps.format import dump_from_mapping, load_dump, save_dump
from kvviz.errors import BadInput
from test_real_states_corpus import _kernel_block_table_per_group as v032_mapping


def test_v032_dump_clean_and_every_check_applies():
    """vLLM 0.32.0 v1/worker/utils.py:389 map_to_kernel_block_table over every column."""
    d = dump_from_mapping({**v032_mapping(), "vllm": "v0.32.0"})
    assert run_checks(d) == []
    assert {"kernel-table", "csr-indices", "slot-mismatch", "mirror-stale"} <= set(applicable_checks(d))


def test_v031_flags_the_pattern_row_by_row():
    """Before 0.32.0 (0.31.0 v1/worker/block_table.py append_row: map_to_kernel_blocks at append) the
    backend's table is the expanded persistent table: unused entries stay 0, padded rows the fill 0."""
    d = dump_from_mapping(v032_mapping())
    found = [(f.check, f.row, f.index) for f in run_checks(d, profile="v0.31.0")]
    # row 0 holds 3 blocks of 4: columns 6, 7 read 0, 1; row 1 columns 4..7; padded row 2 every column
    assert found == [("kernel-table", 0, 7), ("kernel-table", 1, 5), ("kernel-table", 2, 1)]
    msg = run_checks(d, profile="v0.31.0")[0].message
    assert msg.startswith("kernel_block_table[0, 7] is 1, not 0: under vLLM v0.31.0 the backend reads")
    assert "0..1 pattern is v0.32.0's rule" in msg


def test_v032_flags_an_unmapped_column():
    """0.32.0: a column left 0 (not 2*0+1) means the group did not map every column."""
    m = v032_mapping()
    m["kernel_block_table"][2, 3] = 0
    found = run_checks(dump_from_mapping(m), profile="v0.32.0")
    assert [(f.check, f.row, f.index) for f in found] == [("kernel-table", 2, 3)]
    assert "writes 2*b+j for every column" in found[0].message


def test_manager_ids_and_kernel_pages_are_checked_as_such():
    """slot = manager block * 4 + offset (0.32.0 _compute_slot_mappings_kernel); the CSR indices are
    kernel blocks of the mapped table."""
    m = v032_mapping()
    m["slot_mapping"] = np.array([12, 14, 20, -1])
    m["paged_kv_indices"] = np.array([2, 3, 4, 5, 7, 8, 9, 10], np.int32)
    found = {(f.check, f.row) for f in run_checks(dump_from_mapping(m), profile="v0.32.0")}
    assert found == {("slot-mismatch", 0), ("csr-indices", 0)}


@pytest.mark.parametrize("change,msg", [
    ({"kernel_block_size": None}, "needs a 'kernel_block_size' smaller"),
    ({"kernel_block_size": 4}, "needs a 'kernel_block_size' smaller"),
    ({"kernel_block_table": np.zeros((3, 4), np.int32)}, "must be 8 wide"),
    ({"kernel_block_table": np.zeros((2, 8), np.int32)}, "with 3 to 4 rows"),
    ({"kernel_block_table": np.full((3, 8), 32, np.int32)}, "outside [-1, 32)"),
    ({"kernel_block_table": np.zeros((3, 8), np.float32)}, "integers are required"),
    ({"kernel_block_table": [[0, 1], [2]]}, "not a rectangular array"),
])
def test_loader_refuses(change, msg):
    m = {**v032_mapping(), **change}
    with pytest.raises(BadInput, match=msg.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        dump_from_mapping({k: v for k, v in m.items() if v is not None})


def test_round_trip_and_capture(tmp_path):
    """capture() of a 0.32.0-like BlockTable (block_size = manager size, no kv_cache_block_size) with
    the group's table derives kernel_block_size from the widths."""
    m = v032_mapping()
    buf = types.SimpleNamespace(np=m["block_table"], gpu=m["block_table_device"])
    bt = types.SimpleNamespace(block_table=buf, num_blocks_per_row=m["num_blocks_per_row"], block_size=4)
    d = capture(bt, num_reqs=2, num_reqs_padded=3, num_blocks=16, kernel_block_table=m["kernel_block_table"],
                profile="v0.32.0")
    assert d.kernel_block_size == 2 and d.kernel_block_table.tolist() == m["kernel_block_table"].tolist()
    for name in ("d.json", "d.npz"):
        save_dump(d, str(tmp_path / name))
        back = load_dump(str(tmp_path / name))
        assert back.kernel_block_table.tolist() == m["kernel_block_table"].tolist()
