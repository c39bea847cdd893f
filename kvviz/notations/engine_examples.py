"""The Notations page's batch, run through the other engines' own code, and kept.

The app's venv has neither SGLang nor llama.cpp, so what their own code did with the page's
scenario (``kvviz.notations.models.EXAMPLE_SCENARIO``) is recorded in ``recorded/ENGINE.json``
(``scripts/record_engine_notations.py`` writes it from the engines' venvs). The tests run the
engines again and check that the recording still equals their answer and kvviz's model.
"""
from __future__ import annotations

import json
from pathlib import Path

from kvviz.errors import BadInput
from kvviz.files import atomic_write_bytes, read_bounded
from kvviz.notations.engine_schedule import schedule_from_scenario

RECORDED = Path(__file__).resolve().parent / "recorded"
SGLANG_PAGE_SIZES = (1, 16)
MAX_RECORDED_BYTES = 4 << 20


def example_scenario() -> dict:
    from kvviz.notations.models import EXAMPLE_SCENARIO
    return EXAMPLE_SCENARIO


def example_schedule() -> dict:
    return schedule_from_scenario(example_scenario())


def example_pool_tokens() -> int:
    cfg = example_scenario()["config"]
    return cfg["num_blocks"] * cfg["block_size"]   # the same pool as vLLM's, in tokens


def sglang_requests(schedule: dict | None = None) -> list[dict]:
    from kvviz.notations.sglang_model import driver_request
    s = schedule or example_schedule()
    return [driver_request(s, page_size=ps, pool_tokens=example_pool_tokens()) for ps in SGLANG_PAGE_SIZES]


def sglang_model_answers(schedule: dict | None = None) -> list[dict]:
    from kvviz.notations.sglang_model import model_answer
    s = schedule or example_schedule()
    return [model_answer(s, page_size=ps, pool_tokens=example_pool_tokens()) for ps in SGLANG_PAGE_SIZES]


def recorded(key: str) -> dict:
    """The recording of engine ``key`` (``{"engine", "version", "runs": [...]}``)."""
    path = RECORDED / f"{key}.json"
    if not path.is_file():
        raise BadInput(f"no recording of {key} in {RECORDED}")
    return json.loads(read_bounded(str(path), MAX_RECORDED_BYTES))


def write_recording(key: str, answer: dict) -> Path:
    RECORDED.mkdir(exist_ok=True)
    path = RECORDED / f"{key}.json"
    atomic_write_bytes(str(path), (json.dumps(answer, separators=(",", ":")) + "\n").encode())
    return path
