"""Starting the DCP ranks, or joining torchrun's, and taking the whole group down when one fails.

``spawn``: ``world`` processes from ``torch.multiprocessing`` (spawn context), a TCP rendezvous on
127.0.0.1, one pipe per rank back to the parent. The parent waits on the pipes and the processes'
sentinels together: a rank that reports an error, exits non-zero or is killed makes the parent
terminate (then kill) every other rank and raise ``RankFailed`` (one line, exit 2); so does the
``--timeout``. A rank also dies with the parent (``PR_SET_PDEATHSIG`` where Linux has it, and a
watcher thread), so no rank outlives the command. Rank output goes to /dev/null (``KVVIZ_DEBUG=1``
keeps it), so the command's stderr stays one line.

``join``: under torchrun (``RANK`` and ``WORLD_SIZE`` in the environment) this process is one rank;
``init_process_group`` uses ``env://`` and torchrun's own supervision takes the group down.

gloo ranks run on the CPU with the Triton interpreter (their GPUs hidden); NCCL ranks use GPU
``local_rank``, compiled.
"""
from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time

from kvviz.dist import plan
from kvviz.errors import BadInput

GRACE_S = 5.0


class RankFailed(BadInput):
    """A rank failed, died or the group timed out; every rank has been taken down."""


def choose_backend(requested: str, ranks: int) -> tuple[str, int]:
    """(backend, visible GPUs): auto = NCCL when every rank can have its own GPU, else gloo."""
    import torch
    import torch.distributed as dist

    if not dist.is_available():
        raise BadInput("this torch build has no torch.distributed")
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    nccl = dist.is_nccl_available() and gpus > 0
    if requested == "auto":
        return ("nccl" if nccl and gpus >= ranks else "gloo"), gpus
    if requested == "nccl" and not nccl:
        raise BadInput("--backend nccl needs CUDA GPUs and a torch build with NCCL")
    if requested == "gloo" and not dist.is_gloo_available():
        raise BadInput("this torch build has no gloo backend")
    return requested, gpus


def torchrun_env() -> tuple[int, int, int] | None:
    """(rank, world size, local rank) when launched by torchrun, else None."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return None
    try:
        rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local = int(os.environ.get("LOCAL_RANK", rank))
    except ValueError:
        raise BadInput("RANK, WORLD_SIZE and LOCAL_RANK must be integers") from None
    if not 0 <= rank < size:
        raise BadInput(f"RANK {rank} is outside WORLD_SIZE {size}")
    return rank, size, local


def _prepare_env(cfg: plan.DcpConfig) -> None:
    """Before torch or a kernel is imported in a rank: gloo ranks compute on the CPU (GPUs hidden,
    the Triton interpreter), one share of the cores each."""
    if cfg.backend == "gloo":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        os.environ["TRITON_INTERPRET"] = "1"


def _in_group(cfg: plan.DcpConfig, norm: dict, rank: int, local_rank: int, init_method: str):
    """init_process_group, the rank's work, destroy (on success)."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    from kvviz.dist.rank import run_rank

    kw = {}
    if cfg.backend == "nccl":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        kw["device_id"] = device
    else:
        device = torch.device("cpu")
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(cfg.world, 1)))
    dist.init_process_group(cfg.backend, init_method=init_method, rank=rank, world_size=cfg.world,
                            timeout=timedelta(seconds=cfg.timeout_s), **kw)
    report = run_rank(cfg, norm, rank, device)
    dist.destroy_process_group()
    return report


def join(cfg: plan.DcpConfig, norm: dict, env: tuple[int, int, int]):
    """This process is rank ``env[0]`` of torchrun's group; rank 0 returns the report."""
    rank, size, local = env
    if size != cfg.world:
        raise BadInput(f"--world {cfg.world} does not match torchrun's WORLD_SIZE {size}")
    if "MASTER_ADDR" not in os.environ or "MASTER_PORT" not in os.environ:
        raise BadInput("RANK and WORLD_SIZE are set but MASTER_ADDR/MASTER_PORT are not (launch with torchrun)")
    _prepare_env(cfg)
    return _in_group(cfg, norm, rank, local, "env://")


# --- spawn mode: the ranks ------------------------------------------------------------------------

def _quiet() -> None:
    if os.environ.get("KVVIZ_DEBUG"):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)


def _die_with_parent(parent_pid: int) -> None:
    try:   # Linux: SIGKILL when the parent goes, whatever the rank is blocked in
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

    def watch():
        while True:
            if os.getppid() != parent_pid:
                os._exit(2)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


def _rank_entry(rank: int, cfg: plan.DcpConfig, norm: dict, port: int, conn, parent_pid: int) -> None:
    _quiet()
    _die_with_parent(parent_pid)
    _prepare_env(cfg)
    from kvviz.dist import rank as rank_mod

    rank_mod.progress = lambda stage: conn.send(("stage", stage))
    try:
        report = _in_group(cfg, norm, rank, rank, f"tcp://127.0.0.1:{port}")
        if rank == 0:
            conn.send(("report", report))
        conn.close()
    except BaseException as e:  # noqa: BLE001 - one line to the parent, never a traceback on the terminal
        msg = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
        try:
            conn.send(("error", f"{type(e).__name__}{': ' + msg if msg else ''}"))
        except OSError:
            pass
        os._exit(3)
    sys.stdout.flush()
    os._exit(0)


# --- spawn mode: the parent ----------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _how_it_ended(code: int | None) -> str:
    if code is None:
        return "did not end"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _drain(conn) -> tuple[list, bool]:
    """Every message waiting in a rank's pipe (it may have ended before the parent read them), and
    whether the pipe is closed."""
    msgs = []
    try:
        while conn.poll(0):
            msgs.append(conn.recv())
    except (EOFError, OSError):
        return msgs, True
    return msgs, False


def take_down(procs) -> None:
    """SIGTERM every live rank, SIGKILL what is left after GRACE_S, reap them all."""
    for p in procs:
        if p.is_alive():
            p.terminate()
    end = time.monotonic() + GRACE_S
    for p in procs:
        p.join(max(0.0, end - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(GRACE_S)


class Stopped(RankFailed):
    """The run was stopped from outside (``abort``); every rank has been taken down."""


def _supervise(procs, conns, timeout_s: float, on_stage=None, abort=None) -> dict:
    from multiprocessing.connection import wait

    deadline = time.monotonic() + timeout_s
    report, live, reading = None, set(range(len(procs))), set(range(len(procs)))
    while live:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RankFailed(f"the ranks did not finish within --timeout {timeout_s:g} s; all were stopped")
        if abort is not None and abort.is_set():
            raise Stopped(f"the run was stopped; all {len(procs)} ranks were stopped")
        by_sentinel = {procs[r].sentinel: r for r in live}
        for obj in wait(list(by_sentinel) + [conns[r] for r in reading & live],
                        timeout=min(left, 1.0 if abort is None else 0.25)):
            r = by_sentinel.get(obj, next((i for i in live if conns[i] is obj), None))
            if r is None or r not in live:
                continue
            msgs, closed = _drain(conns[r])
            if closed:
                reading.discard(r)
            errors = [m[1] for m in msgs if m[0] == "error"]
            report = next((m[1] for m in msgs if m[0] == "report"), report)
            if on_stage is not None:
                for m in msgs:
                    if m[0] == "stage":
                        on_stage(r, m[1])
            if errors:
                raise RankFailed(f"rank {r} failed ({errors[0]}); all {len(procs)} ranks were stopped")
            if obj in by_sentinel:
                procs[r].join(1.0)
                live.discard(r)
                if procs[r].exitcode != 0:
                    raise RankFailed(f"rank {r} {_how_it_ended(procs[r].exitcode)}; all {len(procs)} ranks were stopped")
    if report is None:
        raise RankFailed("rank 0 ended without a report")
    return report


def spawn(cfg: plan.DcpConfig, norm: dict, *, on_stage=None, abort=None, on_start=None) -> dict:
    """Start ``cfg.world`` ranks and wait for rank 0's report; RankFailed (every rank stopped) if
    any rank fails, dies, or the group outlives ``cfg.timeout_s``. ``on_stage(rank, stage)`` is
    called (in this thread) as each rank enters a stage of ``rank.STAGES``; ``abort`` (a
    ``threading.Event``) set from another thread stops the run (``Stopped``); ``on_start(pids)``
    gets the ranks' process ids once they are all started."""
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    port = _free_port()
    procs, conns = [], []
    try:
        for r in range(cfg.world):
            recv, send = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_rank_entry, args=(r, cfg, norm, port, send, os.getpid()),
                            name=f"kvviz-dcp-rank{r}", daemon=True)
            p.start()
            send.close()
            procs.append(p)
            conns.append(recv)
        if on_start is not None:
            on_start([p.pid for p in procs])
        return _supervise(procs, conns, cfg.timeout_s, on_stage, abort)
    finally:
        take_down(procs)
        for c in conns:
            c.close()
