"""A vLLM newer than the newest release kvviz knows (v0.34.0) is never followed silently: every command
that takes --vllm runs v0.34.0's rules, prints one line on stderr naming both versions, and its JSON has
"vllm_requested" beside "vllm". v0.34.0 itself has no V1 model runner (gpu_worker.py of the 0.34.0 wheel
builds only worker/gpu/model_runner.GPUModelRunner): --runner v1 exits 2 in one line naming v0.33.0."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvviz.cli import main

ROOT = Path(__file__).resolve().parents[2]
BATCH = {"block_size": 4, "requests": [{"block_ids": [3, 5], "seq_len": 6, "query_len": 2}]}
NOTE = "is newer than the newest release kvviz knows (v0.34.0"


def run_cli(capsys, *args):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def batch(tmp_path):
    p = tmp_path / "b.json"
    p.write_text(json.dumps(BATCH))
    return p


def _one_note(err: str, asked: str) -> None:
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and NOTE in lines[0] and asked in lines[0], err


@pytest.mark.parametrize("asked", ["v9.0.0", "0.35.0", "v0.34.1"])
def test_compute_follows_v0_34_0_and_says_so(capsys, batch, asked):
    rc, out, err = run_cli(capsys, "compute", batch, "--vllm", asked)
    assert rc == 0
    d = json.loads(out)
    assert d["vllm"] == "v0.34.0" and d["vllm_requested"] == asked
    assert d["runner"] == "v2"                       # the only runner v0.34.0 has
    assert d["slot_mapping"] == [5 * 4 + 0, 5 * 4 + 1]   # positions 4, 5: logical block 1 = block 5
    _one_note(err, asked)


def test_known_release_adds_nothing(capsys, batch):
    for v in ("v0.34.0", "v0.28.0", "main", "current"):
        rc, out, err = run_cli(capsys, "compute", batch, "--vllm", v)
        d = json.loads(out)
        assert rc == 0 and "vllm_requested" not in d and err == ""
    rc, out, err = run_cli(capsys, "compute", batch, "--vllm", "v0.31.2")   # between two releases
    d = json.loads(out)
    assert d["vllm"] == "v0.31.0" and d["vllm_requested"] == "v0.31.2" and err == ""


def test_run_check_diff_offset_say_so(capsys, tmp_path):
    sc = ROOT / "examples" / "scenarios" / "four_requests.json"    # its config says "runner": "v1"
    rc, out, err = run_cli(capsys, "run", sc, "--vllm", "v9.0.0", "--json")
    assert rc == 2 and out == "" and "v0.33.0 is the last release with V1" in err.splitlines()[-1]
    rc, out, err = run_cli(capsys, "run", sc, "--vllm", "v9.0.0", "--runner", "v2", "--json")
    d = json.loads(out)
    assert rc == 0 and d["vllm"] == "v0.34.0" and d["vllm_requested"] == "v9.0.0" and d["runner"] == "v2"
    _one_note(err, "v9.0.0")
    dump = tmp_path / "v2.json"
    rc, _, _ = run_cli(capsys, "run", sc, "--vllm", "v0.33.0", "--runner", "v2", "--dump", 1, "--out", dump)
    assert rc == 0
    rc, out, err = run_cli(capsys, "check", dump, "--vllm", "v9.0.0", "--json")
    d = json.loads(out)
    assert d["vllm"] == "v0.34.0" and d["vllm_requested"] == "v9.0.0"
    _one_note(err, "v9.0.0")
    rc, out, err = run_cli(capsys, "diff", dump, dump, "--vllm", "v9.0.0", "--json")
    d = json.loads(out)
    assert rc == 0 and d["vllm"] == {"a": "v0.34.0", "b": "v0.34.0"}
    assert d["vllm_requested"] == {"a": "v9.0.0", "b": "v9.0.0"}
    _one_note(err, "v9.0.0")
    rc, out, err = run_cli(capsys, "offset", "--layout", "NHD", "--block-size", 4, "--num-kv-heads", 2,
                           "--head-dim", 8, "--dtype", "float16", "--num-blocks", 8, "--slot", 5, "--head", 1,
                           "--dim", 3, "--vllm", "v9.0.0")
    d = json.loads(out)
    assert rc == 0 and d["vllm"] == "v0.34.0" and d["vllm_requested"] == "v9.0.0"
    _one_note(err, "v9.0.0")


@pytest.mark.parametrize("asked", ["v0.34.0", "v9.0.0", "latest"])
def test_runner_v1_exits_2_in_one_line(capsys, batch, asked):
    rc, out, err = run_cli(capsys, "compute", batch, "--vllm", asked, "--runner", "v1")
    assert rc == 2 and out == ""
    last = err.strip().splitlines()[-1]
    assert "no V1 model runner" in last and "v0.33.0 is the last release with V1" in last
    rc, out, _ = run_cli(capsys, "compute", batch, "--vllm", "v0.33.0", "--runner", "v1")
    assert rc == 0 and json.loads(out)["runner"] == "v1"


def test_scenario_and_dump_declaring_v1_on_v0_34_0_are_refused(capsys, tmp_path):
    sc = json.loads((ROOT / "examples" / "scenarios" / "four_requests.json").read_text())
    sc.setdefault("config", {}).update({"vllm": "v0.34.0", "runner": "v1"})
    p = tmp_path / "s.json"
    p.write_text(json.dumps(sc))
    rc, out, err = run_cli(capsys, "run", p)
    assert rc == 2 and "v0.33.0 is the last release with V1" in err and len(err.strip().splitlines()) == 1
    d = json.loads((ROOT / "examples" / "dumps" / "clean.json").read_text())
    d.pop("runner", None)
    d["vllm"] = "v0.34.0"
    q = tmp_path / "d.json"
    q.write_text(json.dumps(d))
    rc, out, err = run_cli(capsys, "check", q)
    assert rc == 2 and "no V1 model runner" in err and "v0.33.0" in err and len(err.strip().splitlines()) == 1
    d["vllm"] = "v0.33.0"
    q.write_text(json.dumps(d))
    rc, out, err = run_cli(capsys, "check", q, "--vllm", "v0.34.0")   # a V1 dump checked under v0.34.0
    assert rc == 2 and "V1 dump" in err and "v0.33.0 is the last release with V1" in err
    d["vllm"] = "v0.33.0"
    q.write_text(json.dumps(d))
    rc, out, err = run_cli(capsys, "check", q)
    assert rc in (0, 1) and "no V1" not in err


def test_hybrid_scenario_runs_v2_from_v0_29_0(capsys):
    """#53183 (config/vllm.py of 0.29.0): MRV2 the default for every model; before, hybrid stays on V1."""
    sc = ROOT / "examples" / "scenarios" / "hybrid.json"
    for v, want in (("v0.28.0", "v1"), ("v0.29.0", "v2"), ("v0.31.0", "v2"), ("v0.34.0", "v2")):
        rc, out, _ = run_cli(capsys, "run", sc, "--vllm", v, "--json")
        assert rc == 0 and json.loads(out)["runner"] == want, v
