"""Model Runner V2 dumps: the format (idx_mapping, state_block_table, state_num_blocks, the gathered
block_table), the V2 checks (v2-idx-mapping, v2-gather, v2-pad-row), capture from the simulator and
from MRV2-shaped objects."""
import copy
import json

import numpy as np
import pytest

from dump_fixtures import v2_dump, v2_mapping
from kvviz.core.engine import Engine
from kvviz.core.scenario import parse_scenario
from kvviz.dumps.capture import capture_v2, dump_from_step
from kvviz.dumps.check import applicable_checks, run_checks
from kvviz.dumps.faults import SCENARIO
from kvviz.dumps.format import dump_from_mapping, load_dump, load_dump_bytes, save_dump
from kvviz.errors import BadInput


def ids(found):
    return [(f.check, f.row, f.index) for f in found]


def test_clean_v2_dump_and_its_checks():
    d = v2_dump()
    assert d.is_v2 and d.num_blocks_per_row.tolist() == [3, 2, 0, 0]     # from state_num_blocks[idx]
    assert run_checks(d) == []                                           # stale tail and row 3: legit
    checks = applicable_checks(d)
    assert {"v2-idx-mapping", "v2-gather", "v2-pad-row"} <= set(checks)
    assert "pad-row" not in checks and "mirror-stale" not in checks


def test_stale_gathered_row_is_caught_by_its_id():
    g = v2_mapping()["block_table"]
    g[1, 1] = 9                                     # row 1 still holds the old id of an earlier request
    f = run_checks(v2_dump(block_table=g))
    assert ("v2-gather", 1, 1) in ids(f)
    msg = [x for x in f if x.check == "v2-gather"][0].message
    assert msg.startswith("Row 1 column 1 of the gathered input table is block 9, but request state 6")


def test_padded_gathered_row_must_be_zero():
    g = v2_mapping()["block_table"]
    g[2, 0] = 7
    assert ids(run_checks(v2_dump(block_table=g))) == [("v2-pad-row", 2, 0)]
    assert run_checks(v2_dump(block_table=g, num_reqs_padded=2)) == []   # row 2 no longer padding


@pytest.mark.parametrize("idx,want", [([7, 7], ("v2-idx-mapping", 1, 7)), ([7, 8], ("v2-idx-mapping", 1, 8)),
                                      ([7, 4], ("v2-idx-mapping", 1, 4))])
def test_idx_mapping_duplicate_out_of_range_or_empty_state(idx, want):
    f = run_checks(v2_dump(idx_mapping=np.array(idx, np.int32)))
    assert want in ids(f)


@pytest.mark.parametrize("change,msg", [
    (dict(runner="v1"), "'idx_mapping' belongs to a Model Runner V2 dump"),
    (dict(idx_mapping=None), "needs 'idx_mapping'"),
    (dict(state_block_table=np.zeros((8, 3), np.int32)), "as wide as block_table"),
    (dict(state_num_blocks=np.zeros(7, np.int32)), "state_num_blocks has 7 entries"),
    (dict(state_num_blocks=np.full(8, 5, np.int32)), "outside \\[0, 4\\]"),
    (dict(idx_mapping=np.array([7], np.int32)), "one per live row"),
    (dict(block_table_device=np.zeros((4, 4), np.int32)), "has no 'block_table_device'"),
    (dict(runner="v3"), "'runner' is 'v3'"),
    (dict(vllm="v0.9.0"), "kvviz knows vLLM v0.11.0 to"),
])
def test_bad_v2_dumps_are_refused(change, msg):
    m = v2_mapping()
    for k, v in change.items():
        if v is None:
            m.pop(k)
        else:
            m[k] = v
    with pytest.raises(BadInput, match=msg):
        dump_from_mapping(m)


def test_v2_dump_round_trips(tmp_path):
    d = v2_dump()
    for name in ("d.json", "d.npz"):
        p = str(tmp_path / name)
        save_dump(d, p)
        back = load_dump(p)
        assert back.runner == "v2" and back.vllm == "v0.25.1"
        assert back.idx_mapping.tolist() == [7, 6]
        assert np.array_equal(back.state_block_table, d.state_block_table)
        assert run_checks(back) == []
    j = json.dumps(d.to_json()).encode()
    assert load_dump_bytes(j, "x").to_json() == d.to_json()


def _v2_run(faults=()):
    sc = copy.deepcopy(SCENARIO)
    sc["config"]["runner"] = "v2"
    engine = Engine(parse_scenario(sc), faults=set(faults))
    return engine, engine.run(40)


def test_simulated_v2_steps_are_clean_and_their_faults_are_caught():
    engine, recs = _v2_run()
    assert engine.runner == "v2" and recs
    for r in recs:
        d = dump_from_step(r, engine.config)
        assert d.runner == "v2" and d.idx_mapping.tolist() == r.idx_mapping
        assert run_checks(d) == [], r.index
    for fault in ("skip_gather", "skip_apply_staged_writes"):
        engine_f, bad = _v2_run([fault])
        flagged = set()
        for r in bad:
            flagged |= {f.check for f in run_checks(dump_from_step(r, engine_f.config))}
        assert flagged, fault


def test_v1_and_v2_dumps_of_one_run_have_the_same_slots():
    e2, r2 = _v2_run()
    sc = copy.deepcopy(SCENARIO)
    e1 = Engine(parse_scenario(sc))
    r1 = e1.run(40)
    assert len(r1) == len(r2)
    for a, b in zip(r1, r2):
        d1, d2 = dump_from_step(a, e1.config), dump_from_step(b, e2.config)
        assert d1.runner == "v1" and d2.runner == "v2"
        # the batch order may differ (V2 sorts its batch): compare each request's slots
        assert _slots_by_request(a, d1) == _slots_by_request(b, d2), a.index


def _slots_by_request(rec, d):
    q = d.query_start_loc
    return {s.req_id: d.slot_mapping[q[i]:q[i + 1]].tolist() for i, s in enumerate(rec.scheduled)}


class _Staged:
    def __init__(self, a):
        self.np = a
        self.gpu = a


class _MRV2BlockTables:
    """MRV2-shaped (vllm/v1/worker/gpu/block_table.py BlockTables): per group a state table, counts and
    the input table, as attributes holding numpy arrays (torch tensors work the same way)."""
    def __init__(self, state, counts, gathered, block_size):
        self.block_tables = [_Staged(state)]
        self.num_blocks = _Staged(counts[None, :])
        self.input_block_tables = [gathered]
        self.block_sizes = [block_size]


def test_capture_from_mrv2_shaped_objects():
    m = v2_mapping()
    bt = _MRV2BlockTables(m["state_block_table"], m["state_num_blocks"], m["block_table"], 4)
    d = capture_v2(bt, idx_mapping=m["idx_mapping"], num_reqs_padded=3, num_blocks=16,
                   seq_lens=m["seq_lens"], query_start_loc=m["query_start_loc"], positions=m["positions"],
                   slot_mapping=m["slot_mapping"], vllm="v0.25.1")
    assert d.runner == "v2" and d.num_reqs == 2 and d.vllm == "v0.25.1"
    assert np.array_equal(d.block_table, m["block_table"]) and run_checks(d) == []
    with pytest.raises(BadInput, match="does not look like"):
        capture_v2(object(), idx_mapping=[0], num_blocks=16)


def test_check_runner_option(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    m = v2_mapping()
    m.pop("runner")
    p = tmp_path / "no_key.json"
    p.write_text(json.dumps({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in m.items()}))

    def cli(*a):
        return subprocess.run([sys.executable, "-m", "kvviz", "check", *a], cwd=root, capture_output=True, text=True)
    r = cli(str(p))
    assert r.returncode == 2 and "add \"runner\": \"v2\"" in r.stderr          # V2 tables, no key: refused
    r = cli(str(p), "--runner", "v2", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["runner"] == "v2" and json.loads(r.stdout)["findings"] == []
    q = tmp_path / "v2.json"
    save_dump(v2_dump(), str(q))
    r = cli(str(q), "--runner", "v1")
    assert r.returncode == 2 and "the dump says runner 'v2', --runner says 'v1'" in r.stderr


def test_diff_lists_a_stale_gathered_row_with_its_state():
    from kvviz.dumps.diff import diff_dumps
    g = v2_mapping()["block_table"]
    g[1, 1] = 9
    res = diff_dumps(v2_dump(), v2_dump(block_table=g))
    assert res.stale_rows == {"a": [], "b": [{"row": 1, "col": 1, "cpu": 5, "device": 9, "live": True, "state": 6}]}
