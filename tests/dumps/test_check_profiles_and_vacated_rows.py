"""The audit's checker gaps: vacated rows that were not cleared (with or without padding), profiles
(older vLLM rules, the dump's `profile` key and `kvviz check --profile`), sliding-window block reuse
without seq_lens, and state (Mamba-like) groups."""
import copy
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dump_fixtures import base_dump, base_mapping
from kvviz.views import dumps as view
from kvviz.dumps.faults import SCENARIO
from kvviz.dumps.capture import dump_from_step
from kvviz.dumps.check import applicable_checks, resolve_profile, run_checks
from kvviz.dumps.diff import diff_dumps
from kvviz.dumps.format import dump_to_npz_bytes, load_dump, load_dump_bytes, save_dump
from kvviz.core.engine import Engine
from kvviz.errors import BadInput
from kvviz.core.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[2]


def ids(findings):
    return [(f.check, f.row, f.index) for f in findings]


def cli(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "kvviz", *args], cwd=ROOT, capture_output=True, text=True, env=env)


# --- 1. a vacated row that was not cleared, with no padding ------------------------------------------

def condense_fault_mapping() -> dict:
    """Condense moved row 2 ([5, 6, 7], 3 blocks) into row 0 without clearing row 2; no padding."""
    bt = np.zeros((4, 8), np.int32)
    bt[0, :3] = bt[2, :3] = [5, 6, 7]
    bt[1, :2] = [3, 4]
    ref = np.zeros(16, np.int32)
    ref[3:8] = 1
    return {"kvviz_dump_version": 1, "block_size": 4, "num_blocks": 16, "num_reqs": 2, "num_reqs_padded": 2,
            "block_table": bt, "block_table_device": bt.copy(),
            "num_blocks_per_row": np.array([3, 2, 3, 0], np.int32), "seq_lens": np.array([10, 7], np.int32),
            "query_start_loc": np.array([0, 1, 2], np.int32), "positions": np.array([9, 6]),
            "slot_mapping": np.array([29, 18]), "paged_kv_indptr": np.array([0, 3, 5], np.int32),
            "paged_kv_indices": np.array([5, 6, 7, 3, 4], np.int32),
            "paged_kv_last_page_len": np.array([2, 3], np.int32), "ref_cnt": ref,
            "free_block_ids": np.array([2, 8, 9, 10, 11, 12, 13, 14, 15, 1], np.int32)}


def test_vacated_row_without_padding_is_flagged():
    m = condense_fault_mapping()
    f = run_checks(load_dump_bytes(json.dumps({k: v.tolist() if hasattr(v, "tolist") else v
                                               for k, v in m.items()}).encode()))
    assert ids(f) == [("pad-row", 2, 0)]
    assert f[0].message.startswith("Row 2 is not live (num_reqs is 2) but still counts 3 block(s) in the CPU "
                                   "table (block 5 at column 0)")
    # the same without a device mirror and without num_reqs_padded
    m2 = {k: v for k, v in m.items() if k not in ("block_table_device", "num_reqs_padded")}
    from kvviz.dumps.format import dump_from_mapping
    assert ids(run_checks(dump_from_mapping(m2))) == [("pad-row", 2, 0)]
    assert "pad-row" in applicable_checks(dump_from_mapping(m2))
    # cleared (count 0, prefix zeroed): clean
    m["block_table"][2] = 0
    m["num_blocks_per_row"][2] = 0
    assert run_checks(dump_from_mapping(m)) == []


def test_vacated_row_count_left_with_zeroed_prefix():
    d = base_dump(num_blocks_per_row=np.array([3, 2, 0, 1], np.int32))
    f = run_checks(d)
    assert ids(f) == [("pad-row", 3, None)]
    assert "num_blocks_per_row[3] is still 1" in f[0].message


def test_padded_row_message_unchanged_and_not_doubled():
    """A padded row that was not cleared keeps its old message, once."""
    m = base_mapping()
    m["block_table"][2, :2] = [4, 5]
    m["num_blocks_per_row"][2] = 2
    f = run_checks(base_dump(block_table=m["block_table"], num_blocks_per_row=m["num_blocks_per_row"]))
    assert ids(f) == [("pad-row", 2, 0)]
    assert f[0].message.startswith("Padded row 2 still counts 2 block(s) in the CPU table")


@pytest.mark.parametrize("source", ["demo:condense", "demo:prefix", "demo:kernel_block", "builtin:lifecycle"])
def test_move_row_no_clear_fault_is_flagged_wherever_it_shows(source):
    """Every simulator step the fault changes is flagged, padded or not."""
    cfg, recs = view.sim_run(source, "move_row_no_clear")
    _, recs0 = view.sim_run(source, None, "v1")         # a V1 fault: compared with the healthy V1 run
    changed = 0
    for i in range(min(len(recs), len(recs0))):
        healthy, faulty = view.sim_dump(source, None, i, runner="v1"), view.sim_dump(source, "move_row_no_clear", i)
        assert healthy.runner == faulty.runner == "v1"
        assert run_checks(healthy) == []
        if not diff_dumps(healthy, faulty).equal:
            changed += 1
            assert "pad-row" in {f.check for f in run_checks(faulty)}, (source, i)
    assert changed


# --- 2. profiles ------------------------------------------------------------------------------------

def run_profile(profile: str):
    sc = copy.deepcopy(SCENARIO)
    sc["config"]["profile"] = profile
    engine = Engine(parse_scenario(sc))
    records = engine.run(40)
    return [dump_from_step(r, engine.config) for r in records]


@pytest.mark.parametrize("profile,extra", [("2025-11", {"csr-last-page-len"}), ("2025-early", {"csr-last-page-len"})])
def test_older_profile_runs_are_clean_under_their_profile(profile, extra):
    dumps = run_profile(profile)
    assert all(d.profile == profile for d in dumps)
    assert all(run_checks(d) == [] for d in dumps)                     # the dump's own key
    for d in dumps:                                                    # the same with the key left out
        bare = dump_from_step_without_profile(d)
        assert run_checks(bare, profile=profile) == []
    # under the current rules the vacated row (and 2025-early's empty-row last_page_len) is flagged
    flagged = set().union(*({f.check for f in run_checks(d, profile="current")} for d in dumps))
    assert flagged == {"pad-row"} | extra


def dump_from_step_without_profile(d):
    import dataclasses
    return dataclasses.replace(d, profile=None)


def test_profile_rules_in_the_checker():
    # 2025-early: an empty row's last_page_len is the page size
    d = base_dump(paged_kv_last_page_len=np.array([2, 1, 4], np.int32))
    assert ids(run_checks(d)) == [("csr-last-page-len", 2, 0)]
    # ... but row 2 is a padded row, and v0.11.x gave padded decode rows last_page_len 1 (#21367 .. #28579)
    assert ids(run_checks(d, profile="2025-early")) == [("csr-last-page-len", 2, 0)]
    one = base_dump(paged_kv_last_page_len=np.array([2, 1, 1], np.int32))
    for old in ("2025-early", "2025-11", "v0.11.0", "v0.11.1"):
        assert run_checks(one, profile=old) == []
        assert ids(run_checks(base_dump(), profile=old)) == [("csr-last-page-len", 2, 0)]
    for new in ("v0.20.0", "v0.21.1", "main"):      # 0 from v0.12.0 on (and padded rows 0 from v0.20.0)
        assert ids(run_checks(one, profile=new)) == [("csr-last-page-len", 2, 0)]
        assert run_checks(base_dump(), profile=new) == []
    # 2025-11: a vacated row keeps its blocks, padded or not
    m = base_mapping()
    m["block_table"][2, :2] = m["block_table"][3, :2] = [4, 5]
    m["num_blocks_per_row"][2:] = 2
    lpl1 = np.array([2, 1, 1], np.int32)
    d = base_dump(block_table=m["block_table"], num_blocks_per_row=m["num_blocks_per_row"])
    assert ids(run_checks(d)) == [("pad-row", 2, 0), ("pad-row", 3, 0)]
    d1 = base_dump(block_table=m["block_table"], num_blocks_per_row=m["num_blocks_per_row"],
                   paged_kv_last_page_len=lpl1)
    assert run_checks(d1, profile="2025-11") == []
    assert run_checks(base_dump(block_table=m["block_table"], num_blocks_per_row=m["num_blocks_per_row"],
                                paged_kv_last_page_len=lpl1, profile="2025-11")) == []
    # ... the padded device rows: never written in v0.11.x (whatever is there is legitimate), -1 in
    # v0.12.0 .. v0.19.x (#28579), 0 from v0.20.0 (#35431)
    d_dev = base_dump(block_table=m["block_table"], block_table_device=m["block_table"].copy(),
                      num_blocks_per_row=m["num_blocks_per_row"], paged_kv_last_page_len=lpl1)
    assert run_checks(d_dev, profile="2025-11") == []
    d_dev = base_dump(block_table=m["block_table"], block_table_device=m["block_table"].copy(),
                      num_blocks_per_row=m["num_blocks_per_row"])
    assert ids(run_checks(d_dev, profile="v0.20.0")) == [("pad-row", 2, 0)]
    assert run_checks(d_dev, profile="v0.20.0")[0].message.startswith("Padded row 2 holds 4 at column 0 of the device")
    dev = base_mapping()["block_table"].copy()
    dev[2] = -1
    minus = base_dump(block_table_device=dev)
    assert run_checks(minus, profile="v0.12.0") == run_checks(minus, profile="v0.19.1") == []
    assert ids(run_checks(minus, profile="v0.20.0")) == [("pad-row", 2, 0)]
    assert ids(run_checks(base_dump(), profile="v0.15.0")) == [("pad-row", 2, 0)]
    assert "filled with -1 on the device" in run_checks(base_dump(), profile="v0.15.0")[0].message
    # the option overrides the dump's key; unknown names are refused
    assert resolve_profile(base_dump(profile="2025-11"))[0].label == "2025-11"
    assert resolve_profile(base_dump(profile="2025-11"))[0].name == "v0.11.1"
    assert resolve_profile(base_dump(profile="2025-11"), "current")[0].name == "main"
    assert resolve_profile(base_dump())[1] == "default"
    with pytest.raises(ValueError, match="unknown vLLM version '2024'; kvviz knows vLLM v0.11.0 to v0.34.0"):
        run_checks(base_dump(), profile="2024")


def test_profile_key_round_trips_without_pickle(tmp_path):
    d = base_dump(profile="2025-early")
    for name in ("d.npz", "d.json"):
        p = str(tmp_path / name)
        save_dump(d, p)
        assert load_dump(p).profile == "2025-early"
    with np.load(str(tmp_path / "d.npz"), allow_pickle=False) as z:
        assert z["profile"].dtype == np.uint8 and bytes(z["profile"]) == b"2025-early"
    assert json.loads((tmp_path / "d.json").read_text())["profile"] == "2025-early"
    assert load_dump_bytes(dump_to_npz_bytes(d)).profile == "2025-early"
    assert base_dump().profile is None and "profile" not in base_dump().present()
    # np.savez(..., profile="2025-11") writes a string array: read too, without pickling
    buf = io.BytesIO()
    np.savez(buf, **{k: np.asarray(v) for k, v in base_mapping().items()}, profile="2025-11")
    assert load_dump_bytes(buf.getvalue()).profile == "2025-11"


def npz_with(**extra) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **{k: np.asarray(v) for k, v in base_mapping().items()}, **extra)
    return buf.getvalue()


@pytest.mark.parametrize("value,match", [
    ("2024-01", "'profile' is '2024-01'; it must be one of 2025-11, 2025-early, current"),
    (3, "'profile' must be a string, got int"),
    (["current"], "'profile' must be a string, got list"),
    ("x" * 5000, "'profile' is 'x{64}\\.\\.\\.'"),
])
def test_profile_key_validated_in_json(value, match):
    j = base_dump().to_json()
    j["profile"] = value
    with pytest.raises(BadInput, match=match):
        load_dump_bytes(json.dumps(j).encode(), "x")


@pytest.mark.parametrize("value,match", [
    (np.frombuffer(b"2024-01", np.uint8), "'profile' is '2024-01'"),
    (np.array([1.0, 2.0]), "array 'profile' has dtype float64; a string"),
    (np.array([[50, 48]], np.uint8), "'profile' must be a string .*shape \\(1, 2\\)"),
    (np.array([0xE4, 0xB8], np.uint8), "printable ASCII"),
    (np.full(65, 0x61, np.uint8), "at most 64"),
    (np.array([50, 48], np.int32), "'profile' must be a string .*dtype int32"),
    (np.array(["current", "current"]), "'profile' must be a string"),
])
def test_profile_key_validated_in_npz(value, match):
    with pytest.raises(BadInput, match="^x: .*" + match):
        load_dump_bytes(npz_with(profile=value), "x")


def test_check_cli_profile_option_and_output(tmp_path):
    m = base_mapping()
    m["block_table"][2, :2] = [4, 5]
    m["num_blocks_per_row"][2] = 2
    p = str(tmp_path / "old.npz")
    save_dump(base_dump(block_table=m["block_table"], num_blocks_per_row=m["num_blocks_per_row"],
                        paged_kv_last_page_len=np.array([2, 1, 1], np.int32)), p)
    r = cli("check", p)
    assert r.returncode == 1 and "[pad-row] row 2" in r.stdout
    assert r.stdout.rstrip().endswith("checked under vLLM main (the default; the dump names none)")
    r = cli("check", p, "--profile", "2025-11")
    assert r.returncode == 0, r.stdout
    assert "clean" in r.stdout and "checked under vLLM v0.11.1 (--vllm)" in r.stdout
    j = cli("check", "--json", p, "--profile", "2025-11")
    assert j.returncode == 0 and json.loads(j.stdout) == {"findings": [], "profile": "2025-11", "vllm": "v0.11.1"}
    j = cli("check", "--json", p)
    out = json.loads(j.stdout)
    assert j.returncode == 1 and out["profile"] == "current" and out["findings"][0]["check"] == "pad-row"
    # the dump's own key is the default, and --profile overrides it
    q = str(tmp_path / "own.json")
    save_dump(base_dump(block_table=m["block_table"], num_blocks_per_row=m["num_blocks_per_row"],
                        paged_kv_last_page_len=np.array([2, 1, 1], np.int32), profile="2025-11"), q)
    r = cli("check", q)
    assert r.returncode == 0 and "checked under vLLM v0.11.1 (the dump's own key)" in r.stdout
    assert cli("check", q, "--profile", "current").returncode == 1
    bad = cli("check", q, "--profile", "2024")
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1
    assert "unknown vLLM version '2024'" in bad.stderr


# --- 4. sliding window: a block freed from the window may come back ---------------------------------

def sw_dump(**kw):
    ref = np.zeros(16, np.int32)
    ref[5] = 1
    m = {"kvviz_dump_version": 1, "block_size": 4, "num_blocks": 16, "num_reqs": 1, "sliding_window": 4,
         "block_table": [[5, 6, 5, 0]], "num_blocks_per_row": [3], "ref_cnt": ref.tolist(),
         "free_block_ids": [6, 1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15]}
    m.update(kw)
    return load_dump_bytes(json.dumps(m).encode())


def test_sliding_window_reuse_without_seq_lens_is_not_a_duplicate():
    d = sw_dump()
    assert run_checks(d) == []
    assert "duplicate-block-in-row" not in applicable_checks(d)
    assert run_checks(sw_dump(seq_lens=[12])) == []            # block 5 at column 0 fell out of the window
    # with seq_lens known, a repeat inside the window is still a duplicate
    f = run_checks(sw_dump(seq_lens=[12], sliding_window=12, block_table=[[5, 6, 5, 0]]))
    assert ("duplicate-block-in-row", 0, 2) in ids(f)
    # without a window, a repeat is a duplicate
    assert ("duplicate-block-in-row", 0, 2) in ids(run_checks(sw_dump(sliding_window=None)))


# --- 7. state (Mamba-like) groups -----------------------------------------------------------------

def test_state_group_dumps_of_the_simulator_are_clean():
    for source in ("file:hybrid.json", "demo:hybrid"):
        cfg, recs = view.sim_run(source)
        gid = next(i for i, g in enumerate(cfg.groups) if g.kind == "state")
        assert gid in view.sim_groups(source)
        for i in range(len(recs)):
            d = view.sim_dump(source, None, i, gid)
            assert d.group_kind == "state" and d.kernel_block_size is None
            assert run_checks(d) == [], (source, i)


def test_state_group_rules():
    bt = np.zeros((4, 1), np.int32)
    bt[:3, 0] = [3, 0, 4]
    d = base_dump(block_table=bt, block_table_device=bt.copy(), num_blocks_per_row=np.array([1, 0, 1, 0], np.int32),
                  group_kind="state", slot_mapping=None, paged_kv_indptr=None, paged_kv_indices=None,
                  paged_kv_last_page_len=None, ref_cnt=None, free_block_ids=None, num_reqs=3, num_reqs_padded=3,
                  seq_lens=np.array([10, 5, 0], np.int32), query_start_loc=np.array([0, 1, 2, 2], np.int32),
                  positions=np.array([9, 4]))
    f = run_checks(d)
    assert ids(f) == [("too-few-blocks", 1, 0)]       # a request with tokens holds one state block
    assert "state group, which holds one state block per request" in f[0].message
    # the same table read as an attention group wants ceil(10 / 4) = 3 blocks for row 0
    assert ("too-few-blocks", 0, 1) in ids(run_checks(base_dump(
        block_table=bt, block_table_device=bt.copy(), num_blocks_per_row=np.array([1, 0, 1, 0], np.int32),
        slot_mapping=None, paged_kv_indptr=None, paged_kv_indices=None, paged_kv_last_page_len=None,
        ref_cnt=None, free_block_ids=None, num_reqs=3, num_reqs_padded=3, seq_lens=np.array([10, 5, 0], np.int32),
        query_start_loc=np.array([0, 1, 2, 2], np.int32), positions=np.array([9, 4]))))
    assert not {"slot-mismatch", "pad-slot", "csr-indptr", "shared-partial-block"} & set(applicable_checks(d))
    with pytest.raises(BadInput, match="state group .* has no sliding_window"):
        base_dump(group_kind="state", sliding_window=8)
    with pytest.raises(BadInput, match="'group_kind' is 'mamba'; it must be one of attention, state"):
        base_dump(group_kind="mamba")
    assert load_dump_bytes(dump_to_npz_bytes(d)).group_kind == "state"
    assert load_dump_bytes(json.dumps(d.to_json()).encode()).group_kind == "state"


def test_npz_string_keys_are_refused_when_hostile():
    # a member with a huge declared string is checked against its file before anything is read
    zin = zipfile.ZipFile(io.BytesIO(npz_with(profile=np.frombuffer(b"current", np.uint8))))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in zin.infolist():
            raw = zin.read(info)
            if info.filename == "profile.npy":
                hdr = "{'descr': '<U100000', 'fortran_order': False, 'shape': (1,), }"
                hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
                raw = b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + b"\0" * 16
            z.writestr(info.filename, raw)
    with pytest.raises(BadInput, match="claims shape"):
        load_dump_bytes(out.getvalue(), "x")
