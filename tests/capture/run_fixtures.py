"""Captured runs for tests, written by the capture's own writer from kvviz's simulator (no vLLM)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from kvviz.capture.config import CaptureConfig
from kvviz.capture.writer import RunWriter
from kvviz.core.engine import Engine
from kvviz.core.scenario import parse_scenario
from kvviz.dumps.capture import dump_from_step
from kvviz.dumps.format import Dump

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "scenarios" / "four_requests.json"


def simulated(faults=()):
    scenario = parse_scenario(json.loads(SCENARIO.read_text()))
    scenario.config.profile = "v0.32.0"
    engine = Engine(scenario, faults=set(faults))
    return scenario, engine.run(1000)


def _mapping(dump: Dump) -> dict:
    return {k: v for k, v in dump.__dict__.items() if v is not None} | {"kvviz_dump_version": 1}


def write_run(directory, faults=(), env=None) -> str:
    """A run directory of the four-request scenario, through RunWriter (ring knobs from ``env``)."""
    scenario, history = simulated(faults)
    config = CaptureConfig.from_env({"KVVIZ_CAPTURE_DIR": str(directory), **(env or {})})
    writer = RunWriter(config, {"vllm": "v0.32.0", "vllm_version": "0.32.0", "runner": "v1",
                                "block_size": scenario.config.block_size, "num_blocks": scenario.config.num_blocks,
                                "groups": [{"kind": "attention"}]})
    for rec in history:
        if not config.wants(rec.index):
            continue
        meta = {"runner": "v1", "num_reqs": rec.num_reqs, "num_reqs_padded": rec.num_reqs_padded,
                "req_ids": [f"{r}-0123abcd" if r is not None else None for r in rec.rows[: rec.num_reqs]],
                "scheduler": None}
        writer.submit_step(rec.index, meta, [_mapping(dump_from_step(rec, scenario.config))])
    writer.close()
    return str(directory)


def zip_dir(directory, prefix: str = "") -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for root, _, files in os.walk(directory):
            for f in files:
                path = os.path.join(root, f)
                zf.write(path, prefix + os.path.relpath(path, directory))
    return buf.getvalue()
