"""Requests finishing in the same step are freed in scheduling order (the running queue's), not in row
order: vLLM's ``Scheduler.update_from_output`` walks ``scheduler_output.num_scheduled_tokens`` and frees
each finished request as it meets it (v0.32.0 ``v1/core/sched/scheduler.py`` L2077 / L2230; the same
loop in the v0.11.0 .. v0.34.0 wheels). Seen in vLLM 0.32.0 on the CPU through ``kvviz replay``: two
requests finishing together put their partial last blocks at the free queue's front in that order
(tests/replay/runs/two-finish-032)."""
import pytest

from kvviz.core.engine import Engine
from kvviz.core.scenario import parse_scenario


def scenario(runner):
    # A finishes first, so condense moves D into A's row: rows D, B, C while the running queue is B, C, D;
    # then B and D finish in the same step
    return parse_scenario({
        "config": {"num_blocks": 32, "block_size": 4, "max_num_reqs": 4, "max_num_batched_tokens": 64,
                   "max_model_len": 64, "vllm": "v0.32.0", "runner": runner},
        "requests": [{"id": "A", "prompt_len": 6, "max_tokens": 2}, {"id": "B", "prompt_len": 6, "max_tokens": 5},
                     {"id": "C", "prompt_len": 6, "max_tokens": 9}, {"id": "D", "prompt_len": 6, "max_tokens": 5}],
        "actions": []})


@pytest.mark.parametrize("runner", ["v1", "v2"])
def test_requests_finishing_together_are_freed_in_scheduling_order(runner):
    engine = Engine(scenario(runner))
    history = engine.run(100)
    step = next(r for r in history if sum(e["kind"] == "finish" for e in r.events) == 2)
    assert [e["req"] for e in step.events if e["kind"] == "finish"] == ["B", "D"]
    if runner == "v1":
        assert step.rows[:3] == ["D", "B", "C"]        # row order would have freed D first
    # each one's partial last block went to the front: D's (freed last) is the queue's first
    front = {e["req"]: e["to_front"] for e in step.events if e["kind"] == "free"}
    assert step.free_queue_after[:2] == [*front["D"], *front["B"]]
