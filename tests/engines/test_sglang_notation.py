"""SGLang's own bookkeeping (sglang.srt.mem_cache 0.5.23, in its venv) against kvviz's model of it.

Every run goes through one driver call (SGLang is imported once: about 6 s), on kvviz schedules:
the Notations page's batch (and its recording), random scenarios with fresh seeds (shared prefixes,
chunked prefills, finishes, preemptions, evictions, pools that run out) at page sizes 1, 4 and 16,
and a fault put into SGLang's own allocator, which the comparison must catch.
"""
from __future__ import annotations

import os
import random

import pytest

from kvviz.errors import BadInput
from kvviz.notations import engine_examples as ex
from kvviz.notations.engine_runs import EngineUnavailable, run_driver, wait_for_engine
from kvviz.notations.engine_schedule import schedule_from_scenario
from kvviz.notations.sglang_model import compare_sglang, driver_request, model_answer

pytestmark = pytest.mark.timeout(600)


def _sglang_or_skip():
    try:
        wait_for_engine("sglang")
    except EngineUnavailable as e:
        if os.environ.get("KVVIZ_REQUIRE_ENGINES"):
            pytest.fail(str(e))
        pytest.skip(str(e))


def random_scenario(rng: random.Random, *, blocks=(8, 40), prompt=60) -> dict:
    n = rng.randint(3, 7)
    reqs = []
    for i in range(n):
        r = {"id": f"r{i}", "arrival": rng.randint(0, 6), "prompt_len": rng.randint(3, prompt),
             "max_tokens": rng.randint(1, 12)}
        if rng.random() < 0.6:
            r["prefix_group"] = rng.choice("ab")
            r["prefix_len"] = rng.randint(1, r["prompt_len"])
        reqs.append(r)
    return {"name": "random", "config": {
        "num_blocks": rng.randint(*blocks), "block_size": rng.choice([4, 8, 16]),
        "max_num_reqs": rng.randint(2, 6), "max_num_batched_tokens": rng.choice([16, 32, 64, 128]),
        "max_model_len": 96}, "requests": reqs}


def _random_runs(seed: int, count: int) -> list[tuple[str, dict, dict]]:
    """(label, schedule, driver request) for ``count`` scenarios that kvviz can run."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        small = rng.random() < 0.5          # small pools: preemptions in kvviz, evictions in SGLang
        sc = random_scenario(rng, blocks=(8, 14) if small else (12, 40), prompt=20 if small else 60)
        try:
            s = schedule_from_scenario(sc)
        except BadInput:                   # a request that can never fit kvviz's pool
            continue
        ps = rng.choice([1, 4, 16])
        pool = rng.choice([96, 160, 256, 512]) // ps * ps
        out.append((f"seed {seed} #{len(out)} page {ps} pool {pool}", s,
                    driver_request(s, page_size=ps, pool_tokens=pool)))
    return out


@pytest.fixture(scope="module")
def answers():
    """One driver call (one SGLang import) for everything this module checks: the random runs, the
    page's batch, the page's batch again with a fault in SGLang's allocator for that run alone, and
    once more without it (the fault must not outlive its run)."""
    _sglang_or_skip()
    seed = int.from_bytes(os.urandom(4), "little")
    runs = _random_runs(seed, 24)
    example = ex.sglang_requests()
    fault_s = schedule_from_scenario(ex.example_scenario())
    clean = driver_request(fault_s, page_size=16, pool_tokens=ex.example_pool_tokens())
    got = run_driver("sglang", {"runs": [r for _, _, r in runs] + example
                                + [dict(clean, fault="paged_free_at_tail"), clean]})["runs"]
    n = len(runs)
    return {"seed": seed, "runs": runs, "random": got[:n], "example": got[n:n + len(example)],
            "fault": (fault_s, got[-2], got[-1])}


def test_random_scenarios_equal_sglang(answers):
    runs, got = answers["runs"], answers["random"]
    bad = []
    for (label, s, req), real in zip(runs, got):
        assert real["version"] == "0.5.23"
        diff = compare_sglang(real, model_answer(s, page_size=req["page_size"],
                                                 pool_tokens=req["pool_tokens"]))
        if diff:
            bad.append(f"{label}: {diff[0]}")
    assert not bad, f"seed {answers['seed']}: " + "; ".join(bad)
    # the runs exercised what they are for: prefix matches, and decodes at several page sizes
    assert any(v for real in got if "steps" in real for st in real["steps"]
               for v in st["extend"]["matched"].values()), "no prefix match in any run"
    assert len({req["page_size"] for _, _, req in runs}) >= 2


def test_page_example_recording_is_sglangs_answer(answers):
    rec = ex.recorded("sglang")
    assert rec["version"] == "0.5.23"
    assert rec["runs"] == answers["example"], "the recording is stale: scripts/record_engine_notations.py sglang"
    for real, model in zip(answers["example"], ex.sglang_model_answers()):
        assert compare_sglang(real, model) == []
    first = answers["example"][0]["steps"][0]["extend"]["out_cache_loc"]
    assert first[0] == 1 and 0 not in first                # page 1: slot 0 is held back
    assert answers["example"][1]["steps"][0]["extend"]["out_cache_loc"][0] == 16   # page 16: page 0 too


def test_fault_in_sglangs_allocator_is_caught(answers):
    s, faulty, after = answers["fault"]
    model = model_answer(s, page_size=16, pool_tokens=ex.example_pool_tokens())
    assert compare_sglang(faulty, model), "freed pages put at the tail went unnoticed"
    assert compare_sglang(after, model) == []      # the next run had SGLang's own rule back


def test_command_runs_sglang_and_agrees(tmp_path):
    """What a user types: `kvviz engine-notation sglang` (the page's batch, page 16) runs SGLang."""
    import json
    import subprocess
    import sys

    _sglang_or_skip()
    done = subprocess.run([sys.executable, "-m", "kvviz", "engine-notation", "sglang", "--step", "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    d = json.loads(done.stdout)
    assert d["ran_engine"] and d["equal"] and d["version"] == "0.5.23"
    assert d["steps"][0]["engine"] == d["steps"][0]["kvviz"]
