"""The key numbers of tests/data/cli_golden.json (written from kvviz's own output) recomputed here
with plain loops, one case or more per command, so the golden file cannot drift into a wrong number."""
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = {tuple(c["argv"]): c for c in json.loads((ROOT / "tests" / "data" / "cli_golden.json").read_text())}


def out(*argv):
    return json.loads(GOLDEN[argv]["stdout"])


def cdiv(a, b):
    return -(-a // b)


def test_compute_slots_and_csr():
    batch = json.loads((ROOT / "examples/batches/two_requests_padded.json").read_text())
    B = batch["block_size"]
    g = out("compute", "examples/batches/two_requests_padded.json")
    slots, indptr, last = [], [0], []
    for r, req in enumerate(batch["requests"]):
        q = req.get("query_len", 1)
        for pos in range(req["seq_len"] - q, req["seq_len"]):
            slots.append(req["block_ids"][pos // B] * B + pos % B)
        indptr.append(indptr[-1] + cdiv(req["seq_len"], B))
        last.append(req["seq_len"] - (cdiv(req["seq_len"], B) - 1) * B)
    pad = batch["num_reqs_padded"] - len(batch["requests"])
    slots += [-1] * (batch["num_tokens_padded"] - len(slots))
    assert g["slot_mapping"] == slots == [63, 112, 113, 114, 115, 95, -1, -1]
    assert g["paged_kv_indptr"] == indptr + [indptr[-1]] * pad
    assert g["paged_kv_last_page_len"] == last + [0] * pad
    assert g["paged_kv_indices"] == [b for req in batch["requests"] for b in req["block_ids"]]


def test_dcp_slots():
    batch = json.loads((ROOT / "examples/batches/dcp.json").read_text())
    B, W, R, I = batch["block_size"], batch["dcp_world_size"], batch["dcp_rank"], batch["cp_kv_cache_interleave_size"]
    g = out("compute", "examples/batches/dcp.json")
    slots = []
    for req in batch["requests"]:
        q = req.get("query_len", 1)
        for pos in range(req["seq_len"] - q, req["seq_len"]):
            vblock, voff = pos // (B * W), pos % (B * W)      # a virtual block spans the W ranks' blocks
            owner = (voff // I) % W
            local = (voff // (I * W)) * I + voff % I
            slots.append(req["block_ids"][vblock] * B + local if owner == R else -1)
    assert g["slot_mapping"] == slots


def test_offset_byte_formula():
    # flashinfer_packed NHD: [num_blocks, block_size, heads, 2 * head_dim], V in [..., head_dim:]
    nb, B, H, D = 48, 4, 2, 8
    argv = ("offset", "--block-size", "4", "--num-kv-heads", "2", "--head-dim", "8", "--num-blocks", "48",
            "--layout", "NHD", "--dtype")
    for dtype, size in (("float16", 2), ("fp8", 1), ("float32", 4)):
        g = out(*argv, dtype, "--slot", "18", "--head", "1", "--dim", "3", "--kv", "v")
        block, off = 18 // B, 18 % B
        elem = ((block * B + off) * H + 1) * 2 * D + D + 3
        assert (g["block"], g["offset_in_block"], g["element_offset"], g["byte_offset"]) == (block, off, elem, elem * size)
    # flash_attn NHD: [2, num_blocks, block_size, heads, head_dim]; K plane first
    g = out(*argv, "bfloat16", "--slot", "18", "--head", "0", "--dim", "0", "--cache-layout", "flash_attn")
    assert g["element_offset"] == ((0 * nb + 18 // B) * B + 18 % B) * H * D and g["byte_offset"] == 2 * g["element_offset"]


def test_run_seq_lens_and_tokens():
    g = out("run", "examples/scenarios/four_requests.json", "--json")
    for step in g["steps"]:
        for s in step["scheduled"]:
            assert s["seq_len"] == s["num_computed"] + s["num_tokens"], (step["step"], s)
    first = g["steps"][0]["scheduled"]
    assert [s["num_computed"] for s in first] == [0] * len(first)


def _dump(name):
    return json.loads((ROOT / "examples" / "dumps" / name).read_text())


def test_check_and_diff_expected_slots():
    d = _dump("clean.json")
    B, bt = d["block_size"], d["block_table"]
    want = [bt[3][p // B] * B + p % B for p in range(3)]     # row 3's tokens 19, 20, 21 sit at positions 0..2
    g = out("check", "examples/dumps/commit_too_few_rows.json", "--json")
    slot = next(f for f in g["findings"] if f["check"] == "slot-mismatch")
    assert slot["row"] == 3 and f"which is slot {want[0]}" in slot["message"]
    diff = out("diff", "examples/dumps/clean.json", "examples/dumps/commit_too_few_rows.json", "--json")
    got = [x["a"] for x in diff["differences"] if x["table"] == "slot_mapping"]
    assert got == want == [28, 29, 30]
    assert {"table": "block_table_device", "row": 3, "col": 0, "a": bt[3][0], "b": 0} in diff["differences"]
