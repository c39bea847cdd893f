"""The lecture hall: kvviz as N Streamlit replicas behind HAProxy (``make serve REPLICAS=N PORT=P``).

    .venv/bin/python scripts/serve.py [--replicas N] [--port P] [--bind ADDR] [--run-dir DIR] [--no-warm]

One Streamlit server is one Python interpreter: its script runs share one core (the GIL), so on a
machine of C cores a hall is served by C replicas (default: the number of cores). Replica i listens on
127.0.0.1:P+i with ``make run``'s options (and .streamlit/config.toml); HAProxy (Debian's package)
listens on ADDR:P and balances them (``deploy/haproxy.cfg.in``: a cookie keeps a browser on its
replica, health checks on /_stcore/health, websockets pass as tunnels).

Start-up: every replica is started, warmed (``scripts/warm.py``: each page opened once, so no student
pays the first visit's imports, worker starts and figure builds), then the balancer starts. The run
directory (default: a new temp folder) holds the generated haproxy.cfg, the balancer's admin socket,
each process's log and ``state.json`` (ports and pids, rewritten on every change).

While it runs: a replica that exits (a crash, a kill) is restarted on its port; the balancer keeps it
out (maint, over the admin socket) until it is healthy and warm again, and meanwhile sends its
students' tabs to the other replicas, where their URLs rebuild their views. A balancer that exits is
restarted too. Ctrl-C / SIGTERM / SIGHUP stops the balancer and every replica; each child also gets
SIGTERM if this launcher dies (PR_SET_PDEATHSIG).
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
TEMPLATE = ROOT / "deploy" / "haproxy.cfg.in"
BACKEND = "replicas"


def _die_with_parent():
    """In the child, before exec: SIGTERM when the launcher's thread that started it dies (so every
    child is started from the main thread)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _reap_group(proc: subprocess.Popen) -> None:
    """SIGKILL what is left of ``proc``'s process group once ``proc`` has exited: a replica killed
    outright leaves its worker processes (the dump parser, the kernel checker, ~300 MB each) behind."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def haproxy_config(port: int, bind: str, ports: list[int], run_dir: Path) -> str:
    """deploy/haproxy.cfg.in with the hall's port, bind address, run directory and one server per replica."""
    servers = "\n".join(f"    server r{i} 127.0.0.1:{p} check cookie r{i} on-marked-down shutdown-sessions"
                        for i, p in enumerate(ports, 1))
    return (TEMPLATE.read_text().replace("@RUNDIR@", str(run_dir)).replace("@BIND@", bind)
            .replace("@PORT@", str(port)).replace("@SERVERS@", servers))


def admin(run_dir: Path, command: str, timeout: float = 5.0) -> str:
    """One command on the balancer's admin socket (e.g. ``show stat``); its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(run_dir / "haproxy.sock"))
        s.sendall(command.encode() + b"\n")
        chunks = []
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks).decode(errors="replace")


def server_states(run_dir: Path) -> dict[str, dict]:
    """{replica name: {status, scur (current connections), stot (total)}} from ``show stat``."""
    lines = admin(run_dir, "show stat").splitlines()
    head = lines[0].lstrip("# ").split(",")
    out = {}
    for line in lines[1:]:
        row = dict(zip(head, line.split(",")))
        if row.get("pxname") == BACKEND and row.get("svname", "").startswith("r"):
            out[row["svname"]] = {"status": row["status"], "scur": int(row["scur"] or 0),
                                  "stot": int(row["stot"] or 0)}
    return out


class Hall:
    """The replicas, the balancer and their supervision. Every process is started from the main
    thread (see ``_die_with_parent``); helper threads only wait and warm."""

    def __init__(self, args):
        self.args = args
        self.run_dir = Path(args.run_dir or tempfile.mkdtemp(prefix="kvviz-serve-")).resolve()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.ports = [args.port + i for i in range(1, args.replicas + 1)]
        self.procs: dict[str, subprocess.Popen] = {}
        self.restarts = {f"r{i}": 0 for i in range(1, args.replicas + 1)}
        self.ready = {name: False for name in self.restarts}
        self.haproxy: subprocess.Popen | None = None
        self.serving = False          # the balancer answers: state.json says so
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.env = {**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32)}

    def log(self, msg: str) -> None:
        print(f"[serve {time.strftime('%H:%M:%S')}] {msg}", flush=True)

    def _spawn(self, cmd: list[str], log_name: str) -> subprocess.Popen:
        """``cmd`` in its own process group (so a replica's worker processes can be reaped with it)."""
        out = open(self.run_dir / log_name, "ab")
        try:
            return subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent, start_new_session=True)
        finally:
            out.close()

    def start_replica(self, name: str) -> None:
        port = self.ports[int(name[1:]) - 1]
        cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1",
               "--browser.gatherUsageStats", "false", *self.args.streamlit_opt]
        self.procs[name] = self._spawn(cmd, f"{name}.log")
        self.ready[name] = False
        self.log(f"replica {name} started on 127.0.0.1:{port} (pid {self.procs[name].pid})")

    def start_haproxy(self) -> None:
        cfg = self.run_dir / "haproxy.cfg"
        cfg.write_text(haproxy_config(self.args.port, self.args.bind, self.ports, self.run_dir))
        check = subprocess.run([self.args.haproxy, "-c", "-q", "-f", str(cfg)], capture_output=True, text=True)
        if check.returncode:
            raise SystemExit(f"haproxy rejects {cfg}:\n{check.stdout}{check.stderr}")
        self.haproxy = self._spawn([self.args.haproxy, "-f", str(cfg), "-db"], "haproxy.log")
        self.log(f"balancer on {self.args.bind}:{self.args.port} (haproxy pid {self.haproxy.pid})")

    def bring_up(self, name: str) -> None:
        """Wait until replica ``name`` is healthy, warm it, then let the balancer send it students."""
        from warm import wait_healthy, warm

        url = f"http://127.0.0.1:{self.ports[int(name[1:]) - 1]}"
        t0 = time.time()
        if not wait_healthy(url, 180):
            self.log(f"replica {name} not healthy after 180 s (its log: {self.run_dir / (name + '.log')})")
            return
        if not self.args.no_warm:
            recs = warm(url, self.args.warm_pages, self.args.warm_langs)
            bad = [f"{r['page']}: {r.get('error') or r['exceptions']}" for r in recs
                   if "error" in r or r["exceptions"]]
            slow = max(recs, key=lambda r: r["s"])
            self.log(f"replica {name} warm: {len(recs)} page visits, slowest {slow['page']} {slow['s']:.1f} s"
                     + (f"; failed: {bad}" if bad else ""))
        self.ready[name] = True
        if self.haproxy is not None and self.haproxy.poll() is None:
            try:
                admin(self.run_dir, f"set server {BACKEND}/{name} state ready")
            except OSError as e:
                self.log(f"could not set {name} ready on the balancer: {e}")
        self.log(f"replica {name} ready in {time.time() - t0:.1f} s")
        self.write_state()

    def write_state(self) -> None:
        with self.lock:
            state = {"url": f"http://127.0.0.1:{self.args.port}", "port": self.args.port, "serving": self.serving,
                     "launcher_pid": os.getpid(),
                     "haproxy_pid": self.haproxy.pid if self.haproxy else None, "run_dir": str(self.run_dir),
                     "replicas": [{"name": n, "port": self.ports[int(n[1:]) - 1], "pid": p.pid,
                                   "restarts": self.restarts[n], "ready": self.ready[n]}
                                  for n, p in sorted(self.procs.items())]}
            tmp = self.run_dir / "state.json.tmp"
            tmp.write_text(json.dumps(state, indent=1))
            os.replace(tmp, self.run_dir / "state.json")

    def start(self) -> None:
        for name in self.restarts:
            self.start_replica(name)
        threads = [threading.Thread(target=self.bring_up, args=(n,), daemon=True) for n in self.restarts]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive() and not self.stopping.is_set():
                t.join(0.2)
        if self.stopping.is_set():
            return
        self.start_haproxy()
        from warm import wait_healthy

        local = "127.0.0.1" if self.args.bind in ("0.0.0.0", "::", "") else self.args.bind
        if not wait_healthy(f"http://{local}:{self.args.port}", 30):
            raise SystemExit(f"the balancer does not answer on port {self.args.port} (its log: {self.run_dir}/haproxy.log)")
        self.serving = True
        self.write_state()
        self.log(f"serving http://{self.args.bind}:{self.args.port} with {len(self.ports)} replicas "
                 f"(ports {self.ports[0]}-{self.ports[-1]}); run dir {self.run_dir}")

    def supervise(self) -> None:
        recent: list[float] = []
        while not self.stopping.wait(0.5):
            for name, proc in list(self.procs.items()):
                if proc.poll() is None:
                    continue
                self.log(f"replica {name} (pid {proc.pid}) exited with {proc.returncode}: restarting it")
                _reap_group(proc)
                try:
                    admin(self.run_dir, f"set server {BACKEND}/{name} state maint")
                except OSError as e:
                    self.log(f"could not take {name} out of the balancer: {e}")
                recent = [t for t in recent if t > time.time() - 60] + [time.time()]
                if len(recent) > 3 * len(self.procs):      # a crash loop: do not spin the CPU
                    self.stopping.wait(5)
                self.restarts[name] += 1
                self.start_replica(name)
                self.write_state()
                threading.Thread(target=self.bring_up, args=(name,), daemon=True).start()
            if self.haproxy is not None and self.haproxy.poll() is not None and not self.stopping.is_set():
                self.log(f"balancer exited with {self.haproxy.returncode}: restarting it")
                self.start_haproxy()
                self.write_state()

    def stop(self) -> None:
        self.stopping.set()
        procs = [p for p in [self.haproxy, *self.procs.values()] if p is not None]
        for p in procs:
            if p.poll() is None:
                p.terminate()
        end = time.time() + 8
        for p in procs:
            try:
                p.wait(timeout=max(0.1, end - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
            _reap_group(p)
        self.log("stopped: balancer and replicas")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replicas", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--port", type=int, default=8501, help="the balancer's port; replicas use the next N ports")
    ap.add_argument("--bind", default="0.0.0.0", help="the balancer's address (0.0.0.0: every interface)")
    ap.add_argument("--run-dir", default=None, help="config, logs, admin socket, state.json (default: a temp dir)")
    ap.add_argument("--no-warm", action="store_true", help="do not open each page once before serving")
    ap.add_argument("--warm-langs", default="en", type=lambda s: s.split(","))
    ap.add_argument("--warm-pages", default=None, type=lambda s: [("" if p == "home" else p) for p in s.split(",")],
                    help="comma-separated pages to warm (default: all)")
    ap.add_argument("--streamlit-opt", action="append", default=[], metavar="--OPTION=VALUE",
                    help="one more option for every replica's `streamlit run` (repeatable)")
    ap.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    args = ap.parse_args()
    if args.replicas < 1:
        ap.error("--replicas must be at least 1")
    if not os.path.exists(args.haproxy):
        print("serve: haproxy is missing: apt-get install haproxy (make serve installs it when it can)",
              file=sys.stderr)
        return 2
    hall = Hall(args)

    def on_signal(signum, frame):
        hall.stopping.set()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        hall.start()
        hall.supervise()
    finally:
        hall.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
