"""Run another engine's own bookkeeping in that engine's venv, on a kvviz schedule.

Each engine lives in a venv of its own (``scripts/engines.sh`` builds them under
``$KVVIZ_ENGINES_DIR``, default ``~/.cache/kvviz/engines``): SGLang needs triton and a torch,
llama.cpp a compiled library, and neither belongs in the app's venv. A *driver* module of this
package (``kvviz.notations.sglang_driver``, ``kvviz.notations.llamacpp_driver``) runs there as
``python -m MODULE``: it reads one JSON request on stdin (the schedule and the engine's knobs) and
writes one JSON answer on stdout. Only this package is put on the venv's path (a folder holding a
link to it), never the app's site-packages.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kvviz.errors import BadInput

MAX_ANSWER_BYTES = 32 << 20


@dataclass(frozen=True)
class RealEngine:
    key: str          # "sglang" | "llamacpp"
    label: str        # shown on the page: what was run
    version: str
    venv_name: str    # folder under the engines dir
    driver: str       # module run there


REAL_ENGINES = {
    "sglang": RealEngine("sglang", "SGLang", "0.5.23", "sglang-0.5.23",
                         "kvviz.notations.sglang_driver"),
    "llamacpp": RealEngine("llamacpp", "llama.cpp (llama-cpp-python)", "0.3.36",
                           "llamacpp-0.3.36", "kvviz.notations.llamacpp_driver"),
}


class EngineUnavailable(BadInput):
    """The engine's venv is not built here (``make engines`` builds it)."""


def engines_dir() -> Path:
    return Path(os.environ.get("KVVIZ_ENGINES_DIR") or Path.home() / ".cache" / "kvviz" / "engines")


def engine_python(key: str, python: str | None = None) -> Path:
    """The interpreter of engine ``key``'s venv (or ``python`` when given)."""
    eng = REAL_ENGINES.get(key)
    if eng is None:
        raise BadInput(f"unknown engine {key!r}; choose one of {sorted(REAL_ENGINES)}")
    py = Path(python) if python else engines_dir() / eng.venv_name / "bin" / "python"
    if not py.is_file():
        raise EngineUnavailable(f"{eng.label} {eng.version} is not installed here ({py} is missing); "
                                f"`scripts/engines.sh {key}` builds it")
    return py


def wait_for_engine(key: str, timeout: float = 900) -> Path:
    """The engine's python once its venv is whole: a build still running (``make engines`` starts
    llama.cpp's in the background) holds the venv's lock, so this waits for the lock, at most
    ``timeout`` seconds, then checks the stamp the build writes last."""
    import fcntl
    import time

    eng = REAL_ENGINES[key]
    venv = engines_dir() / eng.venv_name
    stamp, lock = venv / ".kvviz-engine-ok", engines_dir() / f"{eng.venv_name}.lock"
    if not stamp.is_file() and lock.is_file():
        end = time.monotonic() + timeout
        with open(lock) as fh:
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    break
                except OSError:
                    if time.monotonic() > end:
                        raise EngineUnavailable(f"{eng.label} {eng.version} is still building after "
                                                f"{timeout:.0f} s (see {venv}.log)") from None
                    time.sleep(2)
    if not stamp.is_file():
        raise EngineUnavailable(f"{eng.label} {eng.version} is not built in {venv} "
                                f"(`scripts/engines.sh {key} {eng.version}`; its log: {venv}.log)")
    return engine_python(key)


def run_driver(key: str, request: dict, *, python: str | None = None, timeout: float = 300) -> dict:
    """Run engine ``key``'s driver on ``request``; its JSON answer, or BadInput with the
    driver's last words (its stderr tail) when it fails."""
    eng = REAL_ENGINES[key] if key in REAL_ENGINES else None
    py = engine_python(key, python)
    pkg = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="kvviz-engine-") as tmp:
        os.symlink(pkg, Path(tmp) / "kvviz")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env.update(PYTHONPATH=tmp, OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "1"),
                   PYTHONDONTWRITEBYTECODE="1")
        try:
            done = subprocess.run([str(py), "-m", eng.driver], input=json.dumps(request).encode(),
                                  capture_output=True, timeout=timeout, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise BadInput(f"{eng.label} {eng.version} did not answer within {timeout:.0f} s") from None
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise BadInput(f"{eng.label} {eng.version} failed (exit {done.returncode}): " + " | ".join(tail))
    if len(done.stdout) > MAX_ANSWER_BYTES:
        raise BadInput(f"{eng.label}'s answer is {len(done.stdout)} bytes; at most {MAX_ANSWER_BYTES}")
    try:
        return json.loads(done.stdout)
    except ValueError as e:
        raise BadInput(f"{eng.label}'s answer is not JSON ({e})") from None
