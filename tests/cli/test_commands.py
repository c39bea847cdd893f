import json
import subprocess
import sys

import pytest

from kvviz.cli import main


def run_cli(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_compute_contract(tmp_path, capsys):
    p = tmp_path / "b.json"
    p.write_text(json.dumps({"block_size": 4, "num_reqs_padded": 3, "num_tokens_padded": 4,
                             "requests": [{"block_ids": [2, 9], "seq_len": 6, "query_len": 2}]}))
    rc, out, _ = run_cli(capsys, "compute", str(p))
    assert rc == 0
    d = json.loads(out)
    assert set(d) == {"backend", "query_start_loc", "positions", "seq_lens", "slot_mapping", "block_table",
                      "paged_kv_indptr", "paged_kv_indices", "paged_kv_last_page_len", "vllm", "runner",
                      "idx_mapping", "state_block_table", "state_num_blocks"}
    assert d["vllm"] == "main" and d["runner"] == "v2"         # main picks Model Runner V2
    # request 0 took the last of the 3 state indices; its state row is its blocks
    assert d["idx_mapping"] == [2] and d["state_block_table"][2][:2] == [2, 9] and d["state_num_blocks"] == [0, 0, 2]
    rc, out, _ = run_cli(capsys, "compute", str(p), "--runner", "v1")
    v1 = json.loads(out)
    assert v1["runner"] == "v1" and "idx_mapping" not in v1
    assert v1["slot_mapping"] == d["slot_mapping"] and v1["block_table"] == d["block_table"]
    rc, _, err = run_cli(capsys, "compute", str(p), "--vllm", "v0.11.1", "--runner", "v2")
    assert rc == 2 and "v0.12.0" in err
    assert d["slot_mapping"] == [36, 37, -1, -1]
    assert d["query_start_loc"] == [0, 2, 2, 2]
    assert d["seq_lens"] == [6, 0, 0]
    assert d["paged_kv_last_page_len"] == [2, 0, 0]
    assert len(d["block_table"]) == 3 and d["block_table"][1] == [0] * 32


def test_compute_dcp_csr_per_release(tmp_path, capsys):
    """The CSR under DCP is this rank's, per release (vLLM flashinfer.py
    FlashInferMetadataBuilder.build): up to v0.29.x page counts from the global seq_len and the
    prefill row's last page from its global context (3 - 3 = 0); from v0.30.0 both from rank-local
    lengths (rank 1 of 2 holds 1 token of a 3-token sequence, its context 0). The Triton kernel
    agrees (exit 0)."""
    p = tmp_path / "b.json"
    p.write_text(json.dumps({"block_size": 4, "dcp_world_size": 2, "dcp_rank": 1,
                             "requests": [{"block_ids": [2], "seq_len": 3, "query_len": 3}]}))
    rc, out, _ = run_cli(capsys, "compute", str(p), "--vllm", "v0.29.0", "--runner", "v1", "--backend", "triton")
    d = json.loads(out)
    assert rc == 0 and d["slot_mapping"] == [-1, 8, -1]
    assert (d["paged_kv_indptr"], d["paged_kv_indices"], d["paged_kv_last_page_len"]) == ([0, 1], [2], [0])
    rc, out, _ = run_cli(capsys, "compute", str(p), "--vllm", "v0.30.0", "--runner", "v1", "--backend", "triton")
    d = json.loads(out)
    assert rc == 0 and (d["paged_kv_indptr"], d["paged_kv_indices"], d["paged_kv_last_page_len"]) == ([0, 0], [], [0])


def test_compute_kernel_block_table_from_v032(tmp_path, capsys):
    """vLLM 0.32.0 worker/block_table.py (manager ids, manager width) and worker/utils.py
    AttentionGroup.map_to_kernel_block_table (every column, r*b + j); v0.31.0 the kernel-block
    table only. The Triton slot and CSR kernels read kernel_block_table and agree (exit 0)."""
    p = tmp_path / "b.json"
    p.write_text(json.dumps({"block_size": 8, "kernel_block_size": 4, "num_reqs_padded": 2,
                             "requests": [{"block_ids": [3, 1], "seq_len": 10, "query_len": 2}]}))
    outs = {}
    for v in ("v0.31.0", "v0.32.0"):
        rc, out, _ = run_cli(capsys, "compute", str(p), "--vllm", v, "--runner", "v1", "--backend", "triton")
        assert rc == 0
        outs[v] = json.loads(out)
    old, new = outs["v0.31.0"], outs["v0.32.0"]
    assert "kernel_block_table" not in old and old["block_table"][0][:4] == [6, 7, 2, 3]
    width = 16                                            # 128 tokens of 8-token manager blocks
    assert new["block_table"] == [[3, 1] + [0] * (width - 2), [0] * width]
    assert new["kernel_block_table"] == [[2 * b + j for b in row for j in range(2)] for row in new["block_table"]]
    assert new["kernel_block_table"][1][:4] == [0, 1, 0, 1]
    for key in ("slot_mapping", "paged_kv_indptr", "paged_kv_indices", "paged_kv_last_page_len"):
        assert new[key] == old[key]
    assert new["slot_mapping"] == [1 * 8 + 0, 1 * 8 + 1]   # manager block 1, offsets 0 and 1


@pytest.mark.parametrize("content", ["{not json", "[]", json.dumps({"block_size": 4, "requests": [
    {"block_ids": [1], "seq_len": 5}]}), "\xff\xfe", json.dumps({"block_size": 6, "cp_kv_cache_interleave_size": 4,
                                                               "requests": []})])
def test_compute_bad_input_exit_2_one_line(tmp_path, capsys, content):
    p = tmp_path / "b.json"
    p.write_bytes(content.encode("latin-1") if content.startswith("\xff") else content.encode())
    rc, out, err = run_cli(capsys, "compute", str(p))
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_compute_missing_file(capsys):
    rc, _, err = run_cli(capsys, "compute", "/nonexistent/x.json")
    assert rc == 2 and "cannot read" in err


def test_offset_roundtrip(capsys):
    base = ["offset", "--layout", "HND", "--block-size", "16", "--num-kv-heads", "8", "--head-dim", "128",
            "--dtype", "bfloat16", "--num-blocks", "100", "--cache-layout", "flash_attn"]
    rc, out, _ = run_cli(capsys, *base, "--slot", "37", "--head", "3", "--dim", "5", "--kv", "v")
    a = json.loads(out)
    assert rc == 0 and set(a) == {"element_offset", "byte_offset", "block", "offset_in_block", "cache_layout",
                                  "vllm", "attn_backend"}
    assert (a["cache_layout"], a["vllm"], a["attn_backend"]) == ("flash_attn", "main", "flash_attn")
    assert a["element_offset"] == 100 * 16 * 8 * 128 + 39557 and a["byte_offset"] == 2 * a["element_offset"]
    rc, out, _ = run_cli(capsys, *base, "--byte-offset", str(a["byte_offset"] + 1))
    d = json.loads(out)
    assert d == {"kv": "v", "block": 2, "offset_in_block": 5, "slot": 37, "head": 3, "dim": 5, "byte_in_element": 1,
                 "cache_layout": "flash_attn", "vllm": "main", "attn_backend": "flash_attn"}


@pytest.mark.parametrize("extra", [["--slot", "5000", "--head", "0", "--dim", "0"], ["--slot", "1"],
                                   ["--byte-offset", "-1"], ["--byte-offset", "1", "--slot", "1"]])
def test_offset_bad(capsys, extra):
    rc, _, err = run_cli(capsys, "offset", "--layout", "NHD", "--block-size", "16", "--num-kv-heads", "2",
                         "--head-dim", "8", "--dtype", "fp8", "--num-blocks", "10", *extra)
    assert rc == 2 and len(err.strip().splitlines()) == 1


def test_help_for_each_command():
    for cmd in ["compute", "offset", "run"]:
        r = subprocess.run([sys.executable, "-m", "kvviz", cmd, "--help"], capture_output=True, text=True)
        assert r.returncode == 0 and "usage: kvviz " + cmd in r.stdout


def test_unknown_command_exits_2():
    r = subprocess.run([sys.executable, "-m", "kvviz", "nope"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_run_json_and_text(tmp_path, capsys):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"config": {"num_blocks": 8, "block_size": 4},
                             "requests": [{"id": "A", "prompt_len": 5, "max_tokens": 2}]}))
    rc, out, _ = run_cli(capsys, "run", str(p), "--json")
    d = json.loads(out)
    assert rc == 0 and [s["step"] for s in d["steps"]] == [0, 1]
    g = d["steps"][0]["groups"][0]
    # max_model_len 256 / block 4 = 64 columns (a multiple of 128 tokens)
    assert g["slot_mapping"] == [4, 5, 6, 7, 8]
    assert g["block_table_device"] == [[1, 2] + [0] * 62]
    rc, out, _ = run_cli(capsys, "run", str(p))
    assert rc == 0 and "step 1" in out and "A finishes" in out


def test_run_bad_scenario(tmp_path, capsys):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"config": {"block_size": 0}}))
    rc, _, err = run_cli(capsys, "run", str(p))
    assert rc == 2 and "block_size" in err


def test_examples_run(capsys):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "examples"
    for p in sorted((root / "scenarios").glob("*.json")):
        rc, out, _ = run_cli(capsys, "run", str(p), "--json")
        assert rc == 0 and json.loads(out)["steps"], p
    for p in sorted((root / "batches").glob("*.json")):
        rc, out, _ = run_cli(capsys, "compute", str(p))
        assert rc == 0 and json.loads(out)["slot_mapping"], p


@pytest.mark.parametrize("profile,width", [("current", 8), ("2025-11", 1), ("2025-early", 1)])
def test_compute_width_follows_the_profile(tmp_path, capsys, profile, width):
    """One 16-token block: current vLLM aligns the row to 128 tokens (8 blocks); the 2025 profiles
    did not align (1 block) — compute must not mix the current width into an older profile."""
    p = tmp_path / "b.json"
    p.write_text(json.dumps({"block_size": 16, "requests": [{"block_ids": [3], "seq_len": 5}]}))
    assert main(["compute", str(p), "--profile", profile]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [len(r) for r in out["block_table"]] == [width]
    assert out["slot_mapping"] == [3 * 16 + 4]


def test_compute_v2_state_rows_in_manager_ids_from_v032(tmp_path, capsys):
    """vLLM 0.32.0: Model Runner V2's state rows hold KV-manager ids too (v1/worker/gpu/block_table.py;
    the attention group maps them, v1/worker/gpu/attn_utils.py build_metadata); v0.31.0 kernel ids."""
    p = tmp_path / "b.json"
    p.write_text(json.dumps({"block_size": 8, "kernel_block_size": 4, "num_reqs_padded": 2,
                             "requests": [{"block_ids": [3, 1], "seq_len": 10, "query_len": 2}]}))
    rc, out, _ = run_cli(capsys, "compute", str(p), "--vllm", "v0.32.0", "--runner", "v2")
    new = json.loads(out)
    rc2, out, _ = run_cli(capsys, "compute", str(p), "--vllm", "v0.31.0", "--runner", "v2")
    old = json.loads(out)
    assert rc == rc2 == 0 and new["idx_mapping"] == old["idx_mapping"] == [1]
    assert new["state_block_table"][1][:3] == [3, 1, 0] and new["state_num_blocks"] == [0, 2]
    assert old["state_block_table"][1][:5] == [6, 7, 2, 3, 0] and old["state_num_blocks"] == [0, 4]
