"""Dump round trips, the example files, and capture from vLLM-shaped objects."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from dump_fixtures import base_dump, base_mapping
from kvviz.dumps.capture import capture
from kvviz.dumps.check import run_checks
from kvviz.dumps.format import Dump, dump_from_mapping, dump_to_npz_bytes, load_dump, load_dump_bytes, save_dump

ROOT = Path(__file__).resolve().parents[2]


def same(a: Dump, b: Dump):
    assert a.to_json() == b.to_json()


def test_npz_and_json_round_trip(tmp_path):
    d = base_dump(sliding_window=None)
    for name in ("d.npz", "d.json"):
        p = str(tmp_path / name)
        save_dump(d, p)
        back = load_dump(p)
        same(d, back)
        assert back.block_table.dtype == np.int32 and back.slot_mapping.dtype == np.int64
    same(d, load_dump_bytes(dump_to_npz_bytes(d)))
    same(d, load_dump_bytes(json.dumps(d.to_json()).encode()))


def test_derived_fields():
    d = base_dump()
    assert (d.rows, d.width, d.padded_reqs, d.num_tokens, d.kbs) == (4, 4, 3, 3, 4)
    assert "ref_cnt" in d.present() and "sliding_window" not in d.present()


def test_geometry_of_a_dump():
    from kvviz.core.geometry import Geometry
    assert base_dump().geometry == Geometry(4)
    m = {**base_mapping(), "block_size": 8, "kernel_block_size": 4, "dcp_world_size": 2, "dcp_rank": 1,
         "cp_kv_cache_interleave_size": 2}
    geo = dump_from_mapping(m).geometry
    assert (geo.block_size, geo.kernel_block_size, geo.dcp_world_size, geo.dcp_rank, geo.interleave) == (8, 4, 2, 1, 2)
    assert (geo.blocks_per_kv_block, geo.virtual_block_size) == (2, 16)


def test_optional_keys_absent():
    m = {k: base_mapping()[k] for k in ("kvviz_dump_version", "block_size", "num_blocks", "num_reqs",
                                        "block_table", "num_blocks_per_row")}
    d = load_dump_bytes(json.dumps({k: (v.tolist() if hasattr(v, "tolist") else v)
                                    for k, v in m.items()}).encode())
    assert d.block_table_device is None and d.padded_reqs == 2
    assert run_checks(d) == []


def test_example_dumps_cli():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    clean = subprocess.run([sys.executable, "-m", "kvviz", "check", "examples/dumps/clean.json"],
                           cwd=ROOT, capture_output=True, text=True, env=env)
    assert clean.returncode == 0, clean.stderr
    bad = subprocess.run([sys.executable, "-m", "kvviz", "check", "--json",
                          "examples/dumps/commit_too_few_rows.json"], cwd=ROOT, capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 1
    got = json.loads(bad.stdout)["findings"]
    assert [(f["check"], f["row"]) for f in got] == [("mirror-stale", 3), ("slot-mismatch", 3),
                                                     ("csr-indices", 3)]


# --- capture from objects shaped like vLLM's -------------------------------------------

class FakeTensor:
    """Stands in for a torch tensor: .detach().cpu().numpy()."""
    def __init__(self, a):
        self.a = np.asarray(a)

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.a


class CpuGpuBuffer:
    def __init__(self, cpu, gpu):
        self.cpu, self.gpu, self.np = FakeTensor(cpu), FakeTensor(gpu), np.asarray(cpu)


class VllmBlockTable:
    def __init__(self, cpu, gpu, counts, block_size, kernel_block_size=None):
        self.block_table = CpuGpuBuffer(cpu, gpu)
        self.num_blocks_per_row = np.asarray(counts, np.int32)
        self.block_size = kernel_block_size or block_size
        self.kv_cache_block_size = block_size
        self.dcp_world_size, self.dcp_rank, self.cp_kv_cache_interleave_size = 1, 0, 1


class MultiGroupBlockTable:
    def __init__(self, tables):
        self.block_tables = tables

    def __getitem__(self, i):
        return self.block_tables[i]


class InputBatch:
    def __init__(self, block_table, num_reqs):
        self.block_table = block_table
        self.num_reqs = num_reqs


class KVCacheBlock:
    def __init__(self, block_id, ref_cnt):
        self.block_id, self.ref_cnt = block_id, ref_cnt


class FreeQueue:
    def __init__(self, blocks):
        self.blocks = blocks

    def get_all_free_blocks(self):
        return list(self.blocks)


class BlockPool:
    def __init__(self, refs, free_ids):
        self.blocks = [KVCacheBlock(i, r) for i, r in enumerate(refs)]
        self.free_block_queue = FreeQueue([self.blocks[i] for i in free_ids])


def test_capture_from_input_batch_matches_hand_built_dump():
    m = base_mapping()
    bt = VllmBlockTable(m["block_table"], m["block_table_device"], m["num_blocks_per_row"], 4)
    batch = InputBatch(MultiGroupBlockTable([bt]), num_reqs=2)
    pool = BlockPool(m["ref_cnt"].tolist(), m["free_block_ids"].tolist())
    d = capture(batch, num_reqs_padded=3, block_pool=pool, seq_lens=FakeTensor(m["seq_lens"]),
                query_start_loc=m["query_start_loc"], positions=FakeTensor(m["positions"]),
                slot_mapping=m["slot_mapping"], paged_kv_indptr=m["paged_kv_indptr"],
                paged_kv_indices=m["paged_kv_indices"], paged_kv_last_page_len=m["paged_kv_last_page_len"])
    same(d, base_dump())
    # a copy: later edits of the live buffers do not change the dump
    bt.block_table.np[0, 0] = 9
    assert d.block_table[0, 0] == 1


def test_capture_bare_hybrid_block_table():
    # manager block 32 tokens, kernel block 16: manager block 2 -> kernel blocks 4, 5
    cpu = np.array([[4, 5, 0, 0]], np.int32)
    t = VllmBlockTable(cpu, cpu.copy(), [2], 32, kernel_block_size=16)
    d = capture(t, num_reqs=1, num_blocks=8, seq_lens=[20])
    assert (d.block_size, d.kernel_block_size, d.blocks_per_kv_block) == (32, 16, 2)
    assert run_checks(d) == []
    d2 = capture(t, num_reqs=1, num_blocks=2, seq_lens=[20])   # kernel ids must be < 2 * 2
    assert [f.check for f in run_checks(d2)] == ["block-out-of-range"]


def test_capture_rejects_strangers():
    import pytest
    from kvviz.errors import BadInput
    with pytest.raises(BadInput, match="cannot find KV-cache group 0"):
        capture(object(), num_reqs=1, num_blocks=4)


def test_capture_drops_ref_cnt_for_a_hybrid_batch():
    """One pool serves every KV-cache group, so a block's ref count counts the holders in all of them;
    compared with one group's rows it would give false refcount-mismatch findings."""
    m = base_mapping()
    full = VllmBlockTable(m["block_table"], m["block_table_device"], m["num_blocks_per_row"], 4)
    other = np.zeros_like(m["block_table"])
    other[:2, 0] = [6, 7]                 # the second group's rows hold blocks 6 and 7
    second = VllmBlockTable(other, other.copy(), [1, 1, 0, 0], 4)
    ref = m["ref_cnt"].copy()
    ref[6] = ref[7] = 1
    free = list(range(8, 16))
    pool = BlockPool(ref.tolist(), free)
    kw = dict(num_reqs_padded=3, block_pool=pool)
    for obj in (InputBatch(MultiGroupBlockTable([full, second]), num_reqs=2),
                MultiGroupBlockTable([full, second])):
        for g in (0, 1):
            d = capture(obj, group=g, num_reqs=2, **kw)
            assert d.ref_cnt is None and d.free_block_ids.tolist() == free
            assert [f.check for f in run_checks(d)] == []
    # a single group keeps the pool's ref counts (and they are checked)
    single = capture(InputBatch(MultiGroupBlockTable([full]), num_reqs=2), **kw)
    assert single.ref_cnt is not None
    assert {f.check for f in run_checks(single)} == {"refcount-mismatch"}   # blocks 6 and 7: no holder here


class SlotMappingMode:
    """Stands in for vLLM's enum: SlotMappingMode.NONE.value == "none"."""
    def __init__(self, value):
        self.value = value


def test_capture_marks_a_state_group():
    # a Mamba group: one state block per request, no slots; its rows would be "too few blocks" as pages
    cpu = np.array([[3], [9], [0], [0]], np.int32)
    mamba = VllmBlockTable(cpu, cpu.copy(), [1, 1, 0, 0], 4)
    mamba.slot_mapping_mode = SlotMappingMode("none")
    m = base_mapping()
    full = VllmBlockTable(m["block_table"], m["block_table_device"], m["num_blocks_per_row"], 4)
    batch = InputBatch(MultiGroupBlockTable([full, mamba]), num_reqs=2)
    d = capture(batch, group=1, num_reqs_padded=3, num_blocks=16, seq_lens=m["seq_lens"])
    assert d.group_kind == "state"
    assert run_checks(d) == []
    assert capture(batch, group=0, num_reqs_padded=3, num_blocks=16).group_kind is None
    mamba.slot_mapping_mode = SlotMappingMode("token_to_kv_slot")
    d = capture(batch, group=1, num_reqs_padded=3, num_blocks=16, seq_lens=m["seq_lens"])
    assert d.group_kind is None and {f.check for f in run_checks(d)} == {"too-few-blocks"}
    # said explicitly, and with the profile of the vLLM that ran
    d = capture(batch, group=1, num_reqs_padded=3, num_blocks=16, seq_lens=m["seq_lens"], group_kind="state",
                profile="2025-11")
    assert (d.group_kind, d.profile) == ("state", "2025-11") and run_checks(d) == []
