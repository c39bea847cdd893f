"""The servers a load bench measures, and the lecture hall it can start (issue 33).

``Sampler``: the RSS of several pids and all their descendants (a hall: the launcher, every replica,
their worker processes, the balancer), each process counted once. ``cpu_by_pid`` / ``cpu_by_kind``:
the CPU they used, by kind (a replica by its port, the workers, haproxy). ``start_hall``:
``scripts/serve.py --replicas N`` on free ports, once it serves. Used by ``scripts/bench_load_ws.py``.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_load import _free_port, cpu_seconds, tree

ROOT = Path(__file__).resolve().parents[1]


class Sampler(threading.Thread):
    """RSS of the given pids and all their descendants (each process counted once), every 0.5 s."""

    def __init__(self, pids, every: float = 0.5):
        super().__init__(daemon=True)
        self.pids, self.every, self.samples, self.stop = list(pids), every, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            procs = {p for r in self.pids for p in tree(r)}
            self.samples.append((time.time(), sum(rss_bytes_one(p) for p in procs)))
            self.stop.wait(self.every)


def rss_bytes_one(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:")), 0)
    except OSError:
        return 0


def kind_of(pid: int) -> str:
    """What a measured process is: the balancer, a replica (by port), a worker process, the launcher."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().decode(errors="replace").split("\0")
    except OSError:
        return "gone"
    if any(a.endswith("haproxy") for a in argv[:1]):
        return "haproxy"
    if "--server.port" in argv:
        return "streamlit:" + argv[argv.index("--server.port") + 1]
    if any("multiprocessing" in a for a in argv):
        return "workers"
    if any(a.endswith("serve.py") for a in argv):
        return "launcher"
    return "other"


def cpu_by_pid(roots) -> dict[int, tuple[float, str]]:
    """{pid: (CPU seconds so far, kind)} of every process under ``roots``."""
    return {p: (cpu_seconds([p]), kind_of(p)) for p in sorted({q for r in roots for q in tree(r)})}


def cpu_by_kind(before: dict, after: dict, cpu_wall: float) -> dict[str, float]:
    """Each kind's share of the machine (%) between two ``cpu_by_pid`` marks."""
    out: dict[str, float] = {}
    for p, (c, kind) in after.items():
        out[kind] = out.get(kind, 0.0) + c - before.get(p, (0.0, ""))[0]
    return {k: round(100 * v / cpu_wall, 1) for k, v in sorted(out.items())}


def _free_run(n: int) -> int:
    """A port P with P .. P+n-1 all free (the balancer, then one port per replica)."""
    import socket

    for _ in range(100):
        p = _free_port()
        try:
            for q in range(p, p + n):
                with socket.socket() as sk:
                    sk.bind(("127.0.0.1", q))
            return p
        except OSError:
            continue
    raise SystemExit(f"no {n} consecutive free ports")


def start_hall(replicas: int, opts=()) -> tuple[subprocess.Popen, str]:
    """``scripts/serve.py --replicas N`` on free ports (every page warmed): (launcher, balancer url) once
    it serves. ``opts`` (OPTION=VALUE) go to every replica's streamlit."""
    port = _free_run(replicas + 1)
    run_dir = tempfile.mkdtemp(prefix="kvviz-bench-hall-")
    cmd = [sys.executable, str(ROOT / "scripts" / "serve.py"), "--replicas", str(replicas), "--port", str(port),
           "--bind", "127.0.0.1", "--run-dir", run_dir]
    cmd += [f"--streamlit-opt=--{o}" for o in opts]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = Path(run_dir) / "state.json"
    for _ in range(1800):
        try:
            if json.loads(state.read_text()).get("serving"):
                print(f"  hall: {replicas} replicas behind HAProxy on port {port} ({run_dir})", file=sys.stderr)
                return proc, f"http://127.0.0.1:{port}"
        except (OSError, ValueError):
            pass
        if proc.poll() is not None:
            raise SystemExit(f"scripts/serve.py exited with {proc.returncode}; logs in {run_dir}")
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    raise SystemExit(f"the hall did not start in 6 min; logs in {run_dir}")
