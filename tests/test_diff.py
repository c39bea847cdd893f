import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from dump_fixtures import base_dump, base_mapping
from kvviz.diff import diff_dumps

ROOT = Path(__file__).resolve().parents[1]


def test_equal_dumps():
    r = diff_dumps(base_dump(), base_dump())
    assert r.equal and r.to_json() == {"differences": [], "stale_rows": {"a": [], "b": []}}


def test_rows_first_column_and_stale_view():
    m = base_mapping()
    dev = m["block_table_device"]
    dev[1, 1], dev[1, 3] = 9, 8          # row 1 differs first at column 1
    dev[3, 2] = 7                        # an unused row differs too
    b = base_dump(block_table_device=dev, slot_mapping=np.array([12, 13, 21, -1]), num_reqs_padded=2)
    r = diff_dumps(base_dump(), b)
    assert [d.to_json() for d in r.differences] == [
        {"table": "num_reqs_padded", "row": None, "col": None, "a": 3, "b": 2},
        {"table": "block_table_device", "row": 1, "col": 1, "a": 5, "b": 9},
        {"table": "block_table_device", "row": 3, "col": 2, "a": 0, "b": 7},
        {"table": "slot_mapping", "row": 0, "col": 2, "a": 20, "b": 21},
    ]
    assert r.stale_rows["a"] == []
    assert r.stale_rows["b"] == [{"row": 1, "col": 1, "cpu": 5, "device": 9, "live": True},
                                 {"row": 3, "col": 2, "cpu": 0, "device": 7, "live": False}]
    assert r.rows_of("block_table_device") == {1: 1, 3: 2}


def test_shape_differences_and_one_sided_tables():
    a = base_dump()
    b = base_dump(free_block_ids=np.arange(6, 14, dtype=np.int32), ref_cnt=None)
    r = diff_dumps(a, b)
    assert [d.to_json() for d in r.differences] == [
        {"table": "free_block_ids", "row": 0, "col": 8, "a": 14, "b": None}]
    assert r.only_in == {"a": ["ref_cnt"]}


def test_cli_exit_codes(tmp_path):
    from kvviz.dump import save_dump
    pa, pb = str(tmp_path / "a.npz"), str(tmp_path / "b.json")
    save_dump(base_dump(), pa)
    save_dump(base_dump(slot_mapping=np.array([12, 13, 20, 0])), pb)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = lambda *a: subprocess.run([sys.executable, "-m", "kvviz", "diff", *a], cwd=ROOT,
                                    capture_output=True, text=True, env=env)
    same = run(pa, pa)
    assert same.returncode == 0 and same.stdout.startswith("equal")
    diff = run(pa, pb, "--json")
    assert diff.returncode == 1
    assert json.loads(diff.stdout)["differences"] == [
        {"table": "slot_mapping", "row": 0, "col": 3, "a": -1, "b": 0}]
    bad = run(pa, str(tmp_path / "missing.npz"))
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1
