"""A DCP run that does not block its caller: ``start()`` returns a handle at once, ``poll()`` says
how far the ranks are, and then the report or one line of error.

The ranks are processes (``launch.spawn``); the handle keeps one supervising thread in the caller's
process that waits on their pipes and exit sentinels (``multiprocessing.connection.wait``, which
sleeps without holding the GIL). The app calls ``start`` from a button and ``poll`` from a page
that reruns every second: the script thread never waits on a rank.

Bounds for a server: at most ``MAX_ACTIVE`` runs at once in this process (a further ``start`` is
refused with ``Busy``), a timeout per run (every rank taken down when it passes), and ``cancel()``
(the same take-down). A finished run frees its place at once; its handle keeps only the report.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from kvviz.dist import plan
from kvviz.errors import BadInput

MAX_ACTIVE = 2               # concurrent runs in one process (each is W processes of its own)
_active = 0
_active_lock = threading.Lock()


class Busy(BadInput):
    """Too many runs in this process already."""


@dataclass
class Progress:
    """What ``poll`` returns. ``state``: running | done | failed. ``stages[r]``: the last stage
    rank r entered (``rank.STAGES``; "" before it reported one). ``fraction``: 0..1 over every
    rank's stages. ``report``: the report when done; ``error``: one line when failed."""
    state: str
    world: int
    elapsed_s: float
    stages: list[str] = field(default_factory=list)
    report: dict | None = None
    error: str | None = None

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def fraction(self) -> float:
        from kvviz.dist.rank import STAGES

        if self.state != "running":
            return 1.0
        steps = len(STAGES) + 1
        done = sum(STAGES.index(s) + 1 if s in STAGES else 0 for s in self.stages)
        return min(done / (steps * max(self.world, 1)), 1.0)


def active_runs() -> int:
    with _active_lock:
        return _active


class DcpJob:
    """One run of ``cfg.world`` ranks on ``norm`` (a batch normalised by ``plan.dcp_batch``)."""

    def __init__(self, cfg: plan.DcpConfig, norm: dict):
        self.cfg, self.norm = cfg, norm
        self._lock = threading.Lock()
        self._stages = [""] * cfg.world
        self._pids: list[int] = []
        self._report: dict | None = None
        self._error: str | None = None
        self._done = threading.Event()
        self._abort = threading.Event()
        self._t0 = time.monotonic()
        self._t1: float | None = None
        self._thread = threading.Thread(target=self._run, name="kvviz-dcp-job", daemon=True)

    # --- the supervising thread ---------------------------------------------------------------
    def _on_stage(self, rank: int, stage: str) -> None:
        with self._lock:
            if 0 <= rank < len(self._stages):
                self._stages[rank] = stage

    def _on_start(self, pids: list[int]) -> None:
        with self._lock:
            self._pids = list(pids)

    def _run(self) -> None:
        from kvviz.dist import launch

        try:
            report = launch.spawn(self.cfg, self.norm, on_stage=self._on_stage, abort=self._abort,
                                  on_start=self._on_start)
            with self._lock:
                self._report = report
        except BadInput as e:
            with self._lock:
                self._error = one_line(e)
        except BaseException as e:  # noqa: BLE001 - the caller shows one line, never a traceback
            with self._lock:
                self._error = f"{type(e).__name__}: {one_line(e)}" if one_line(e) else type(e).__name__
        finally:
            self._t1 = time.monotonic()
            _release()
            self._done.set()

    # --- the caller's side ----------------------------------------------------------------------
    def poll(self) -> Progress:
        with self._lock:
            end = self._t1 if self._t1 is not None else time.monotonic()
            if not self._done.is_set():
                state = "running"
            else:
                state = "done" if self._report is not None else "failed"
            return Progress(state, self.cfg.world, end - self._t0, list(self._stages), self._report,
                            self._error if state == "failed" else None)

    def wait(self, timeout: float | None = None) -> Progress:
        """Block until the run ends (tests and scripts; the app polls instead)."""
        self._done.wait(timeout)
        return self.poll()

    def cancel(self) -> None:
        """Stop the run: every rank is taken down (within a second or two)."""
        self._abort.set()

    @property
    def rank_pids(self) -> list[int]:
        with self._lock:
            return list(self._pids)

    @property
    def done(self) -> bool:
        return self._done.is_set()


def one_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:300] if text else ""


def _release() -> None:
    global _active
    with _active_lock:
        _active = max(0, _active - 1)


def start(cfg: plan.DcpConfig, norm: dict) -> DcpJob:
    """Start a run in the background and return its handle; ``Busy`` when MAX_ACTIVE runs are
    under way in this process. Check the inputs first (``plan.dcp_batch``, ``check_sizes``,
    ``check_world``): what is wrong with them should be refused before anything starts."""
    global _active
    with _active_lock:
        if _active >= MAX_ACTIVE:
            raise Busy(f"{_active} DCP runs are under way on this server already; try again when one ends")
        _active += 1
    job = DcpJob(cfg, norm)
    try:
        job._thread.start()
    except BaseException:
        _release()
        raise
    return job
