import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from dump_fixtures import base_dump, base_mapping
from kvviz.dumps.diff import diff_dumps

ROOT = Path(__file__).resolve().parents[2]


def test_equal_dumps():
    r = diff_dumps(base_dump(), base_dump())
    assert r.equal and r.to_json() == {"differences": [], "stale_rows": {"a": [], "b": []}, "equal": True}


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
        {"table": "slot_mapping", "row": 1, "col": None, "a": 20, "b": 21, "token": 2},   # token 2 is row 1's
    ]
    assert r.stale_rows["a"] == []
    assert r.stale_rows["b"] == [{"row": 1, "col": 1, "cpu": 5, "device": 9, "live": True},
                                 {"row": 3, "col": 2, "cpu": 0, "device": 7, "live": False}]


def test_shape_differences_and_one_sided_tables():
    a = base_dump()
    b = base_dump(free_block_ids=np.arange(6, 14, dtype=np.int32), ref_cnt=None)
    r = diff_dumps(a, b)
    assert [d.to_json() for d in r.differences] == [
        {"table": "free_block_ids", "row": None, "col": None, "a": 14, "b": None, "index": 8},
        {"table": "free_block_ids", "row": None, "col": None, "a": 15, "b": None, "index": 9}]
    assert r.only_in == {"a": ["ref_cnt"]}
    assert not r.equal


def test_a_table_in_one_dump_only_makes_them_different():
    """Equal means the same keys with the same values: a key only one dump holds is a difference,
    even when every table both carry agrees."""
    a, b = base_dump(), base_dump(block_table_device=None)
    r = diff_dumps(a, b)
    assert r.differences == [] and r.only_in == {"a": ["block_table_device"]}
    assert not r.equal
    j = r.to_json()
    assert j["equal"] is False and j["only_in"] == {"a": ["block_table_device"]}
    assert set(j) >= {"differences", "stale_rows"}          # the old keys stay
    assert not diff_dumps(b, a).equal
    assert diff_dumps(b, b).equal


def test_a_profile_in_one_dump_only_makes_them_different():
    r = diff_dumps(base_dump(), base_dump(profile="2025-11"))
    assert not r.equal
    assert [d.to_json() for d in r.differences] == [
        {"table": "profile", "row": None, "col": None, "a": None, "b": "2025-11"}]
    assert diff_dumps(base_dump(profile="2025-11"), base_dump(profile="2025-11")).equal


def _cli(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "kvviz", "diff", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env)


def test_cli_key_in_one_dump_only_exits_1(tmp_path):
    from kvviz.dumps.format import save_dump
    m = base_mapping()
    dev = m["block_table_device"]
    dev[1, 0] = 0                         # a live stale row in A
    pa, pb = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    save_dump(base_dump(block_table_device=dev), pa)
    save_dump(base_dump(block_table_device=None), pb)
    r = _cli(pa, pb)
    assert r.returncode == 1, r.stdout
    assert not r.stdout.startswith("equal")
    assert "only A has: block_table_device" in r.stdout
    assert "row 1 (live) col 0: cpu=4 device=0" in r.stdout
    j = _cli(pa, pb, "--json")
    assert j.returncode == 1
    out = json.loads(j.stdout)
    assert out["equal"] is False and out["differences"] == [] and out["only_in"] == {"a": ["block_table_device"]}
    assert out["stale_rows"]["a"] == [{"row": 1, "col": 0, "cpu": 4, "device": 0, "live": True}]


def test_cli_rows_past_num_reqs_are_not_listed_as_stale(tmp_path):
    from kvviz.dumps.format import save_dump
    m = base_mapping()
    dev = m["block_table_device"]
    dev[3, 2] = 7                         # an unused row: not live, the kernel does not read it
    pa = str(tmp_path / "a.json")
    save_dump(base_dump(block_table_device=dev), pa)
    r = _cli(pa, pa)
    assert r.returncode == 0 and r.stdout.startswith("equal")
    assert "stale rows" not in r.stdout
    assert "not live" in r.stdout and "3" in r.stdout.splitlines()[-1]
    # the JSON keeps listing it, marked live: false
    out = json.loads(_cli(pa, pa, "--json").stdout)
    assert out["equal"] is True
    # ... and says whether the release leaves it so: row 3 is past the padded rows, never read
    assert out["stale_rows"]["a"] == [{"row": 3, "col": 2, "cpu": 0, "device": 7, "live": False, "expected": True}]
    assert out["vllm"] == {"a": "main", "b": "main"}
    # a padded row (row 2) that the release fills: -1 is what v0.12 .. v0.19 leave, not what main leaves
    dev = base_mapping()["block_table"].copy()
    dev[2] = -1
    pb = str(tmp_path / "b.json")
    save_dump(base_dump(block_table_device=dev), pb)
    for version, expected in (("v0.15.0", True), ("main", False), ("v0.11.0", True)):
        out = json.loads(_cli(pb, pb, "--json", "--vllm", version).stdout)
        assert out["stale_rows"]["a"][0]["row"] == 2 and out["stale_rows"]["a"][0]["expected"] is expected
        assert out["vllm"]["a"] == version
    text = _cli(pb, pb, "--vllm", "main").stdout
    assert "2 (not what vLLM main leaves)" in text
    bad = _cli(pb, pb, "--vllm", "v0.1")
    assert bad.returncode == 2 and "v0.11.0" in bad.stderr


def test_cli_names_the_file_with_a_bad_array(tmp_path):
    """An error about an array inside an .npz names the file it is in, whichever side it is."""
    ok, bad = tmp_path / "ok.npz", tmp_path / "float.npz"
    arrays = {k: np.asarray(v) for k, v in base_mapping().items()}
    np.savez(ok, **arrays)
    arrays["block_table"] = arrays["block_table"].astype(np.float32)
    np.savez(bad, **arrays)
    for args in ((ok, bad), (bad, ok)):
        r = _cli(*map(str, args))
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr.strip() == ("kvviz diff: float.npz: array 'block_table' has dtype float32; "
                                    "integers are required")


def test_cli_exit_codes(tmp_path):
    from kvviz.dumps.format import save_dump
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
        {"table": "slot_mapping", "row": None, "col": None, "a": -1, "b": 0, "token": 3}]   # a padding token
    bad = run(pa, str(tmp_path / "missing.npz"))
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1


def test_one_dimensional_arrays_are_named_as_they_are_indexed():
    """Per-request arrays by request row (every differing row), per-token arrays by token and its row,
    ref_cnt by block: the broken request row is named, not "row 0, col N"."""
    m = base_mapping()
    b = base_dump(num_blocks_per_row=np.array([3, 1, 0, 2], np.int32), seq_lens=np.array([10, 4, 0], np.int32),
                  slot_mapping=np.array([12, 14, 20, -1]), ref_cnt=np.where(np.arange(16) == 5, 2, m["ref_cnt"]))
    got = [(d.table, d.row, d.token, d.block, d.where()) for d in diff_dumps(base_dump(), b).differences]
    assert got == [("num_blocks_per_row", 1, None, None, " row 1"), ("num_blocks_per_row", 3, None, None, " row 3"),
                   ("seq_lens", 1, None, None, " row 1"), ("slot_mapping", 0, 1, None, " token 1 (row 0)"),
                   ("ref_cnt", None, None, 5, " block 5")]
