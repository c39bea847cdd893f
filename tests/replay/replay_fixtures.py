"""Runs for the replay tests: real captured runs kept whole as ``tests/replay/runs/NAME.tar.xz`` (a run's
npz files compress well together: three runs in 32 KB), unpacked into a test's folder to be read or
edited, and synthetic runs written in the captured format from kvviz's own engine (Model
Runner V2 never runs on this CPU: its runs are kvviz's, so they test the replay's V2 plumbing, not
kvviz against vLLM)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np

from kvviz.core.engine import Engine
from kvviz.core.scenario import parse_scenario
from kvviz.dumps.capture import dump_from_step
from kvviz.dumps.format import save_dump

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RUNS = HERE / "runs"


def kvviz(*args):
    return subprocess.run([sys.executable, "-m", "kvviz", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def unpack(name: str, folder: Path) -> Path:
    """A committed run (``runs/NAME.tar.xz``, holding the folder NAME) unpacked into ``folder/NAME``."""
    with tarfile.open(RUNS / f"{name}.tar.xz") as tf:
        tf.extractall(folder, filter="data")
    return folder / name


def zip_run(run: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w") as zf:
        for path in sorted(run.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(run))
    return out


def edit_npz(run: Path, step: int, key: str, edit, group: int = 0) -> None:
    path = run / "steps" / f"{step:08d}.g{group}.npz"
    with np.load(path) as z:
        arrays = dict(z)
    edit(arrays[key])
    np.savez(path, **arrays)


def edit_json(path: Path, edit) -> None:
    obj = json.loads(path.read_text())
    edit(obj)
    path.write_text(json.dumps(obj))


SCENARIO = {"config": {"num_blocks": 20, "block_size": 4, "max_num_reqs": 4, "max_num_batched_tokens": 16,
                       "max_model_len": 64, "enable_prefix_caching": True},
            "requests": [{"id": "A", "prompt_len": 10, "prefix_group": "p", "prefix_len": 8, "max_tokens": 9},
                         {"id": "B", "prompt_len": 13, "prefix_group": "p", "prefix_len": 8, "max_tokens": 6},
                         {"id": "C", "arrival": 2, "prompt_len": 7, "max_tokens": 12},
                         {"id": "D", "arrival": 3, "prompt_len": 21, "prefix_group": "p", "prefix_len": 8,
                          "max_tokens": 5}],
            "actions": []}


def _manifest(cfg, vllm: str, runner: str) -> dict:
    kbs = cfg.kernel_block_size or cfg.block_size
    return {"kvviz_run_version": 1, "pid": 1, "vllm": vllm, "vllm_version": vllm.lstrip("v"), "runner": runner,
            "attn_backend": "FLASH_ATTN", "block_size": cfg.block_size, "kernel_block_size": kbs,
            "num_blocks": cfg.num_blocks,
            "groups": [{"kind": "attention", "block_size": cfg.block_size, "kernel_block_size": kbs,
                        "attn_backend": "FLASH_ATTN", "sliding_window": None}],
            "scheduler": {"max_num_seqs": cfg.max_num_reqs, "max_num_batched_tokens": cfg.max_num_batched_tokens,
                          "max_model_len": cfg.max_model_len, "enable_chunked_prefill": True,
                          "long_prefill_token_threshold": 0, "policy": "fcfs", "async_scheduling": False},
            "cache": {"block_size": cfg.block_size, "enable_prefix_caching": cfg.enable_prefix_caching},
            "parallel": {"tensor_parallel_size": 1, "pipeline_parallel_size": 1, "data_parallel_size": 1,
                         "decode_context_parallel_size": 1, "cp_kv_cache_interleave_size": 1},
            "speculative": False, "dropped_steps": 0, "finished": True}


def write_synthetic_run(folder: Path, *, vllm: str = "v0.34.0", runner: str = "v2", kernel_block_size=None) -> Path:
    """kvviz's own run of SCENARIO in the captured format (no scheduler side: the tables only)."""
    data = json.loads(json.dumps(SCENARIO))
    data["config"].update(vllm=vllm, runner=runner, kernel_block_size=kernel_block_size)
    scenario = parse_scenario(data)
    engine = Engine(scenario)
    history = engine.run(1000)
    folder.mkdir(parents=True)
    (folder / "steps").mkdir()
    (folder / "manifest.json").write_text(json.dumps(_manifest(scenario.config, vllm, runner)))
    finished = {}
    for rec in history:
        meta = {"step": rec.index, "runner": runner, "num_reqs": rec.num_reqs, "num_reqs_padded": rec.num_reqs_padded,
                "num_tokens": rec.num_tokens, "num_tokens_padded": rec.num_tokens_padded,
                "req_ids": [s.req_id for s in rec.scheduled],
                "num_scheduled_tokens": [s.num_tokens for s in rec.scheduled], "scheduler": None,
                "groups": [f"{rec.index:08d}.g0.npz"]}
        if runner == "v2":
            meta["state_rows"] = [s.state_index for s in rec.scheduled]
        save_dump(dump_from_step(rec, scenario.config), str(folder / "steps" / f"{rec.index:08d}.g0.npz"))
        (folder / "steps" / f"{rec.index:08d}.json").write_text(json.dumps(meta))
        for s in rec.scheduled:
            if rec.requests[s.req_id]["state"] == "finished":
                finished.setdefault(s.req_id, rec.index)
    reqs = [{"req_id": r.req_id, "prompt_token_ids": engine.requests[r.req_id].prompt,
             "output_token_ids": engine.requests[r.req_id].output, "max_tokens": r.max_tokens,
             "arrival_step": r.arrival, "finished_step": finished.get(r.req_id), "finish_reason": "length"}
            for r in scenario.requests]
    (folder / "requests.json").write_text(json.dumps({"kvviz_run_version": 1, "pid": 1, "requests": reqs}))
    return folder


def remove_steps(run: Path, steps) -> None:
    for s in steps:
        for name in (f"{s:08d}.json", f"{s:08d}.g0.npz"):
            os.unlink(run / "steps" / name)
