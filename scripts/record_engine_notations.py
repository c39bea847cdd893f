"""Record what the other engines' own code does with the Notations page's batch.

    .venv/bin/python scripts/record_engine_notations.py sglang [llamacpp]

Runs each engine's driver in its venv (scripts/engines.sh builds them) and writes
kvviz/notations/recorded/ENGINE.json atomically; tests/engines/ checks the recording against a
fresh run of the engine and against kvviz's model.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kvviz.notations import engine_examples as ex  # noqa: E402
from kvviz.notations.engine_runs import run_driver  # noqa: E402


def record_sglang() -> Path:
    runs = run_driver("sglang", {"runs": ex.sglang_requests()})["runs"]
    return ex.write_recording("sglang", {"engine": "sglang", "version": runs[0]["version"],
                                         "scenario": ex.example_scenario()["name"], "runs": runs})


def record_llamacpp() -> Path:
    from kvviz.notations import llamacpp_cells
    return ex.write_recording("llamacpp", llamacpp_cells.record_example())


if __name__ == "__main__":
    for key in sys.argv[1:] or ["sglang", "llamacpp"]:
        print(globals()[f"record_{key}"]())
