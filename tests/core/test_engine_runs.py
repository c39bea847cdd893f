"""kvviz/notations/engine_runs.py without an engine: waiting for a build that holds the venv's lock
(make engines builds llama.cpp in the background), a venv that is missing or half-built, a driver
that fails or answers too much."""
import os
import subprocess
import sys
import time

import pytest

from kvviz.errors import BadInput
from kvviz.notations import engine_runs as er


def _venv(root, stamp=True):
    py = root / "llamacpp-0.3.36" / "bin" / "python"
    py.parent.mkdir(parents=True)
    py.symlink_to(sys.executable)
    if stamp:
        (root / "llamacpp-0.3.36" / ".kvviz-engine-ok").write_text("llamacpp==0.3.36\n")
    return py


def test_waits_for_a_build_holding_the_lock(tmp_path, monkeypatch):
    monkeypatch.setenv("KVVIZ_ENGINES_DIR", str(tmp_path))
    _venv(tmp_path, stamp=False)
    lock = tmp_path / "llamacpp-0.3.36.lock"
    lock.write_text("")
    stamp = tmp_path / "llamacpp-0.3.36" / ".kvviz-engine-ok"
    builder = subprocess.Popen(["flock", str(lock), "sh", "-c", f"sleep 1.5; echo ok > {stamp}"])
    time.sleep(0.3)                                   # the build holds the lock now
    t0 = time.monotonic()
    assert er.wait_for_engine("llamacpp", timeout=30).name == "python"
    assert time.monotonic() - t0 >= 0.8 and stamp.is_file()
    builder.wait()


def test_a_half_built_or_missing_venv_is_one_message(tmp_path, monkeypatch):
    monkeypatch.setenv("KVVIZ_ENGINES_DIR", str(tmp_path))
    with pytest.raises(er.EngineUnavailable, match="scripts/engines.sh llamacpp"):
        er.wait_for_engine("llamacpp", timeout=1)
    _venv(tmp_path, stamp=False)                      # no stamp: the build did not finish
    with pytest.raises(er.EngineUnavailable, match="not built"):
        er.wait_for_engine("llamacpp", timeout=1)


def test_a_failing_driver_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("KVVIZ_ENGINES_DIR", str(tmp_path))
    _venv(tmp_path)
    # this interpreter has no llama_cpp: the driver fails, and the error names the engine and its exit
    with pytest.raises(BadInput, match=r"llama.cpp .* failed \(exit [1-9]"):
        er.run_driver("llamacpp", {"schedule": {"requests": {}, "steps": []}, "kv_unified": True}, timeout=60)
    with pytest.raises(BadInput, match="unknown engine"):
        er.engine_python("tensorrt")
