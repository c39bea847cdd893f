"""``kvviz.dist.jobs``: a DCP run in the background (what the app's "run on W ranks" starts).

Real gloo ranks on the CPU (the Triton interpreter), so the batches are tiny. Checked: the handle
comes back at once and reports the ranks' stages while they run; the report is the CLI's (merged
error within tolerance, every position once) plus each rank's LSE and merge weight, checked here
against the LSE merge recomputed from those LSEs; a killed rank and ``cancel`` end with one line and
no rank left; ``MAX_ACTIVE`` bounds the runs of one process.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest

from kvviz.dist import jobs, plan
from kvviz.dist.rank import STAGES

RUN_TIMEOUT = 240
BATCH = {"block_size": 4, "cp_kv_cache_interleave_size": 2,
         "requests": [{"block_ids": [3, 5], "seq_len": 12, "query_len": 12}, {"block_ids": [7], "seq_len": 3}]}


def _cfg(world=2, **kw) -> tuple[plan.DcpConfig, dict]:
    norm, _ = plan.dcp_batch(dict(BATCH), world)
    return plan.DcpConfig(world=world, interleave=2, backend="gloo", num_kv_heads=1, num_q_heads=2, head_dim=8,
                          timeout_s=kw.pop("timeout_s", RUN_TIMEOUT), **kw), norm


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_pids(job, timeout=RUN_TIMEOUT) -> list[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end and not job.rank_pids and not job.done:
        time.sleep(0.02)
    return job.rank_pids


def test_a_run_in_the_background_reports_stages_then_the_merge():
    cfg, norm = _cfg()
    t0 = time.monotonic()
    job = jobs.start(cfg, norm)
    assert time.monotonic() - t0 < 1.0, "start() must not wait for the ranks"
    first = job.poll()
    assert first.running and first.report is None and first.error is None and first.fraction < 1
    seen = set()
    end = time.monotonic() + RUN_TIMEOUT
    while not job.done and time.monotonic() < end:
        seen |= set(job.poll().stages)
        time.sleep(0.05)
    p = job.poll()
    assert p.state == "done", p.error
    assert seen & set(STAGES), "no stage was reported while the ranks ran"
    assert p.stages == ["check", "check"] and p.fraction == 1.0
    rep = p.report
    assert rep["passed"] and rep["merged_max_error"] <= rep["tolerance"]
    assert sum(r["tokens_held"] for r in rep["ranks"]) == 15 == rep["positions"]
    # interleave 2 over 2 ranks: request 0 (12 positions) 6 + 6; request 1 (3) gives rank 0 positions 0, 1
    assert [r["tokens_held"] for r in rep["ranks"]] == [6 + 2, 6 + 1]
    d = rep["lse_head0"]
    lses = np.array(d["rank_lse"], dtype=np.float64)          # [W, R]
    merged = np.logaddexp.reduce(lses, axis=0)
    assert np.allclose(np.array(d["merged_lse"], dtype=np.float64), merged, atol=1e-5)
    w = np.array(d["rank_weight"], dtype=np.float64)
    assert np.allclose(w, np.exp(lses - merged), atol=1e-5) and np.allclose(w.sum(axis=0), 1.0, atol=1e-5)
    assert jobs.active_runs() == 0
    assert not [pid for pid in job.rank_pids if _alive(pid)]


def test_an_empty_shard_has_lse_minus_inf_and_weight_zero():
    """A 1-position request over 2 ranks: rank 1 holds none of it."""
    norm, _ = plan.dcp_batch({"block_size": 4, "requests": [{"block_ids": [1], "seq_len": 1}]}, 2)
    cfg = plan.DcpConfig(world=2, interleave=1, backend="gloo", num_kv_heads=1, num_q_heads=1, head_dim=8,
                         timeout_s=RUN_TIMEOUT)
    p = jobs.start(cfg, norm).wait(RUN_TIMEOUT)
    assert p.state == "done", p.error
    d = p.report["lse_head0"]
    assert d["rank_lse"][1] == ["-inf"] and d["rank_weight"][1] == [0]
    assert d["rank_weight"][0] == [1] and math.isfinite(d["merged_lse"][0])
    assert p.report["ranks"][1]["empty_shards"] == 1 and p.report["passed"]


def test_a_killed_rank_ends_the_job_with_one_line_and_no_rank_left(monkeypatch):
    monkeypatch.setenv("KVVIZ_DCP_FAULT", "kill:1:all_gather")
    cfg, norm = _cfg()
    job = jobs.start(cfg, norm)
    pids = _wait_pids(job)
    p = job.wait(RUN_TIMEOUT)
    assert p.state == "failed" and p.report is None
    assert "rank 1 was killed by SIGKILL" in p.error and "\n" not in p.error and "Traceback" not in p.error
    assert len(pids) == 2 and not [pid for pid in pids if _alive(pid)]
    assert jobs.active_runs() == 0


def test_cancel_stops_every_rank():
    cfg, norm = _cfg()
    job = jobs.start(cfg, norm)
    pids = _wait_pids(job)
    assert len(pids) == 2
    t0 = time.monotonic()
    job.cancel()
    p = job.wait(30)
    assert p.state == "failed" and "stopped" in p.error
    assert time.monotonic() - t0 < 15
    assert not [pid for pid in pids if _alive(pid)]


def test_a_timeout_ends_the_job(monkeypatch):
    cfg, norm = _cfg(timeout_s=0.5)
    p = jobs.start(cfg, norm).wait(60)
    assert p.state == "failed" and "did not finish within" in p.error


def test_runs_past_max_active_are_refused(monkeypatch):
    monkeypatch.setattr(jobs, "MAX_ACTIVE", 0)
    cfg, norm = _cfg()
    with pytest.raises(jobs.Busy, match="under way"):
        jobs.start(cfg, norm)
    assert jobs.active_runs() == 0



@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available() or __import__("torch").cuda.device_count() < 2,
                    reason="needs 2 CUDA GPUs")
def test_a_background_run_on_two_gpus_with_nccl():
    """The app's path on a machine with GPUs: ``choose_backend('auto')`` gives NCCL, the job runs
    two GPU ranks in the background and reports the merge."""
    from kvviz.dist import launch

    backend, gpus = launch.choose_backend("auto", 2)
    assert backend == "nccl" and gpus >= 2
    norm, _ = plan.dcp_batch({"block_size": 16, "requests": [{"block_ids": list(range(1, 33)), "seq_len": 1000},
                                                             {"block_ids": [40], "seq_len": 5}]}, 2)
    cfg = plan.DcpConfig(world=2, interleave=1, backend="nccl", num_kv_heads=8, num_q_heads=32, head_dim=128,
                         repeat=20, timeout_s=RUN_TIMEOUT)
    job = jobs.start(cfg, norm)
    assert job.poll().running
    p = job.wait(RUN_TIMEOUT)
    assert p.state == "done", p.error
    rep = p.report
    assert rep["passed"] and rep["backend"] == "nccl" and rep["merged_max_error"] <= rep["tolerance"]
    assert [r["tokens_held"] for r in rep["ranks"]] == [500 + 3, 500 + 2]
    assert not [pid for pid in job.rank_pids if _alive(pid)]
