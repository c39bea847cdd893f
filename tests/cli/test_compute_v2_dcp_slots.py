"""`kvviz compute --runner v2` under DCP: the slot mapping is Model Runner V2's, in the release's
slot era (``Rules.mrv2_dcp_slots``; vLLM ``v1/worker/gpu/block_table.py``
``_compute_slot_mappings_kernel``), read from the state rows through ``idx_mapping`` — not V1's
arithmetic (issue 32). Up to v0.28.x the virtual block is the kernel block x DCP: with block 32,
kernel block 16, W = 2 and interleave 32 the slots differ from V1's; from v0.29.0 (virtual block =
KV block x DCP) and v0.32.0 (manager ids) they are V1's numbers."""
from __future__ import annotations

import json

import numpy as np
import pytest

from kvviz.cli import main
from kvviz.core.slots_v2 import mrv2_token_slots
from kvviz.core.versions import rules_for

# request 0: a 70-token prefill over manager blocks 5, 9; request 1: a decode at position 39 in block 3
BATCH = {"block_size": 32, "kernel_block_size": 16, "dcp_world_size": 2, "cp_kv_cache_interleave_size": 32,
         "num_reqs_padded": 3, "num_tokens_padded": 72,
         "requests": [{"block_ids": [5, 9], "seq_len": 70, "query_len": 70},
                      {"block_ids": [3], "seq_len": 40, "query_len": 1}]}
ERAS = {"v0.25.1": "kernel_block", "v0.28.0": "kernel_block", "v0.29.0": "kv_block", "v0.31.0": "kv_block",
        "v0.32.0": "manager_ids", "v0.33.0": "manager_ids"}


def compute(tmp_path, capsys, vllm: str, runner: str, rank: int, *extra) -> tuple[int, dict]:
    p = tmp_path / f"b{rank}.json"
    p.write_text(json.dumps({**BATCH, "dcp_rank": rank}))
    rc = main(["compute", str(p), "--vllm", vllm, "--runner", runner, *extra])
    out = capsys.readouterr().out
    return rc, json.loads(out) if rc == 0 else {}


def era_slots(era: str, out: dict, rank: int) -> list[int]:
    """The slots ``kvviz.core.slots_v2`` gives under ``era`` for the CLI's own state rows and
    idx_mapping (each token reads the state row of its batch row)."""
    state = np.asarray(out["state_block_table"])
    qsl = np.asarray(out["query_start_loc"])
    n = len(out["idx_mapping"])
    per_token = np.repeat(out["idx_mapping"], np.diff(qsl[:n + 1]))
    pos = np.asarray(out["positions"])[:len(per_token)]
    slots = mrv2_token_slots(era, state, per_token, pos, block_size=32, kernel_block_size=16, cp_size=2,
                             cp_rank=rank, interleave=32)
    return slots.tolist() + [-1] * (len(out["slot_mapping"]) - len(slots))


@pytest.mark.parametrize("rank", [0, 1])
@pytest.mark.parametrize("vllm", list(ERAS))
def test_v2_slots_follow_the_release_era(tmp_path, capsys, vllm, rank):
    era = ERAS[vllm]
    assert rules_for(vllm).mrv2_dcp_slots == era
    rc, v2 = compute(tmp_path, capsys, vllm, "v2", rank)
    rc1, v1 = compute(tmp_path, capsys, vllm, "v1", rank)
    assert rc == rc1 == 0 and v2["runner"] == "v2" and v2["idx_mapping"] == [2, 1]
    assert v2["slot_mapping"] == era_slots(era, v2, rank)
    # the batch tells the eras apart: the kernel-block era gives other slots than V1 and the later eras
    assert (era_slots("kernel_block", v2, rank) != v1["slot_mapping"]) is True
    if era == "kernel_block":
        assert v2["slot_mapping"] != v1["slot_mapping"]
    else:
        assert v2["slot_mapping"] == v1["slot_mapping"]
    # nothing else moves: the tables, the CSR
    for key in ("block_table", "positions", "query_start_loc", "paged_kv_indptr", "paged_kv_indices"):
        assert v2.get(key) == v1.get(key), key


def test_v2_kernel_block_era_numbers(tmp_path, capsys):
    """v0.28.0, rank 0, worked by hand: the virtual block is 16 x 2 = 32 positions and with I = 32
    every one of them is rank 0's (``(voff // 32) % 2 == 0``); position p reads column p // 32 of the
    kernel-id row [10, 11, 18, 19] at offset p % 32 — past the 16-slot kernel block (positions 32..47
    write 176..191 again). V1 deals positions 32..63 to rank 1 (PAD here)."""
    rc, v2 = compute(tmp_path, capsys, "v0.28.0", "v2", 0)
    rc1, v1 = compute(tmp_path, capsys, "v0.28.0", "v1", 0)
    assert rc == rc1 == 0
    assert v2["slot_mapping"][:70] == [*range(160, 192), *range(176, 208), *range(288, 294)]
    assert v1["slot_mapping"][:70] == [*range(160, 192), *[-1] * 32, *range(288, 294)]
    # request 1's decode at 39: column 1 (kernel block 7) offset 7 in MRV2; rank 1's in V1
    assert (v2["slot_mapping"][70], v1["slot_mapping"][70]) == (7 * 16 + 7, -1)
    assert v2["slot_mapping"][71] == v1["slot_mapping"][71] == -1          # the padded tail


@pytest.mark.parametrize("vllm", ["v0.28.0", "v0.32.0"])
def test_v2_triton_checks_the_mrv2_slot_kernel(tmp_path, capsys, vllm):
    """--backend triton runs MRV2's slot kernel (kernels/mrv2_tables.py) in the release's era; it
    agrees with the reference (exit 0) where V1's kernels would not."""
    rc, v2 = compute(tmp_path, capsys, vllm, "v2", 0, "--backend", "triton")
    assert rc == 0 and v2["backend"].startswith("triton")
    assert v2["slot_mapping"] == era_slots(ERAS[vllm], v2, 0)
