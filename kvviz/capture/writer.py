"""The capture's writer: a daemon thread that validates and writes steps off the engine's path.

The engine thread only copies the step's arrays and puts them on a bounded queue
(``RunWriter.submit``, never blocking: a full queue drops the step and counts it). The thread turns
each group into a kvviz dump (validated by ``kvviz.dumps.format``), writes it and then the step's
``.json`` atomically, trims the ring (``KVVIZ_CAPTURE_STEPS`` / ``KVVIZ_CAPTURE_MB``) oldest first, and
rewrites ``requests.json`` from the scheduler's request events at most once a second and at close
(it holds every generated token: rewriting it every step cost ~2 ms a step here). Any error in the thread is
logged once and ends the capture; the engine never sees it.
"""
from __future__ import annotations

import atexit
import json
import logging
import os
import queue
import shutil
import threading
import time
from collections import deque

from kvviz.capture import MANIFEST, REQUESTS, RUN_VERSION, STEPS, step_stem
from kvviz.capture.config import CaptureConfig
from kvviz.files import atomic_write_bytes as _atomic


def atomic_write_bytes(path: str, data: bytes) -> None:
    _atomic(path, data, fsync=False)      # atomic rename, no flush to disk: see kvviz.files

log = logging.getLogger("kvviz.capture")
_CLOSE = object()
REQUESTS_EVERY_S = 1.0


def _json_bytes(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":"), default=int).encode()


def _pid_alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError, TypeError):
        return False
    return True


def claim_directory(directory: str, owned: tuple[str, ...]) -> str:
    """The directory this process's part of a run goes to; ``owned[0]`` is the file that names the
    process writing it (``"pid"``). A previous run's files (its process gone) are replaced, with one
    log line; files of a process still alive (another engine writing to the same place) are left
    alone and this run goes to ``DIR/run-PID``: two runs never mix. Only ``owned`` files are touched
    (the scheduler's process owns requests.json, the worker's the manifest and the steps)."""
    os.makedirs(directory, exist_ok=True)
    marker = os.path.join(directory, owned[0])
    if os.path.isfile(marker):
        try:
            with open(marker, "rb") as f:
                old = json.loads(f.read(1 << 20))
            pid = old.get("pid") if isinstance(old, dict) else None
        except (OSError, ValueError):
            pid = None
        if pid is not None and int(pid) != os.getpid() and _pid_alive(pid):
            mine = os.path.join(directory, f"run-{os.getpid()}")
            log.warning("kvviz capture: %s belongs to a running process (%s); this run goes to %s",
                        directory, pid, mine)
            return claim_directory(mine, owned)
        log.warning("kvviz capture: replacing the previous run's %s in %s", owned[0], directory)
    for name in owned:
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.isfile(path):
            os.unlink(path)
    if STEPS in owned:
        os.makedirs(os.path.join(directory, STEPS), exist_ok=True)
    return directory


class RunWriter:
    """With a ``manifest``: the worker's writer (manifest and steps). Without: the scheduler's
    (requests.json). Each process writes only its own files."""

    def __init__(self, config: CaptureConfig, manifest: dict | None = None, directory: str | None = None):
        self.config = config
        owned = (MANIFEST, STEPS) if manifest is not None else (REQUESTS,)
        self.directory = claim_directory(directory or config.directory, owned)
        self.manifest = None if manifest is None else {
            "kvviz_run_version": RUN_VERSION, "pid": os.getpid(), **manifest,
            "capture": config.describe(), "dropped_steps": 0}
        self.requests: dict[str, dict] = {}
        self.ring: deque[tuple[int, list[str], int]] = deque()
        self.ring_bytes = 0
        self.dropped = 0
        self.failed = False
        self._queue: queue.Queue = queue.Queue(maxsize=config.queue)
        self._events: deque[dict] = deque()
        if self.manifest is not None:
            self._write_manifest()
        else:
            self._write_requests()
        self._thread = threading.Thread(target=self._loop, name="kvviz-capture-writer", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    # --- engine side: never blocks, never raises ----------------------------------------------
    def submit(self, item) -> bool:
        if self.failed:
            return False
        try:
            self._queue.put_nowait(item)
            return True
        except queue.Full:
            self.dropped += 1
            return False

    def submit_step(self, step: int, meta: dict, groups: list[dict]) -> bool:
        return self.submit(("step", step, meta, groups))

    def submit_requests(self, events: list[dict]) -> None:
        """Request events are never dropped (they are small, and a lost arrival breaks replay): they
        wait in their own deque, which the thread drains with every item it handles."""
        if events and not self.failed:
            self._events.extend(events)        # no wake-up: the thread drains them on its own clock

    def flush(self, timeout: float = 30.0) -> bool:
        """Waits until everything submitted so far is written (requests.json included)."""
        if self.failed or not self._thread.is_alive():
            return False
        done = threading.Event()
        try:
            self._queue.put(("flush", done), timeout=timeout)
        except queue.Full:
            return False
        return done.wait(timeout)

    def close(self, timeout: float = 10.0) -> None:
        if self._thread.is_alive():
            try:
                self._queue.put(_CLOSE, timeout=timeout)
            except queue.Full:
                return
            self._thread.join(timeout)

    # --- writer thread ------------------------------------------------------------------------
    def _loop(self) -> None:
        try:
            dirty, last = False, 0.0
            while True:
                try:
                    item = self._queue.get(timeout=REQUESTS_EVERY_S)
                except queue.Empty:
                    item = ("requests",)             # the clock: drain the request events
                if item is _CLOSE:
                    self._finish()
                    return
                if item is not None:
                    dirty = self._handle(item) or dirty
                if dirty and self.manifest is None and time.monotonic() - last >= REQUESTS_EVERY_S:
                    self._write_requests()           # O(every token so far): at most once a second
                    dirty, last = False, time.monotonic()
        except Exception as e:  # noqa: BLE001 - the engine must not see it: one line, capture off
            self.failed = True
            log.warning("kvviz capture: the writer stopped (%s: %s); capture is off", type(e).__name__, e)

    def _handle(self, item) -> bool:
        """Handles one queue item; True when requests.json needs rewriting."""
        dirty = False
        while self._events:
            self._apply_request_event(self._events.popleft())
            dirty = True
        if item[0] == "step":
            _, step, meta, groups = item
            self._write_step(step, meta, groups)
        elif item[0] == "flush":
            if self.manifest is None:
                self._write_requests()
            else:
                self._write_manifest()
            item[1].set()
            return False
        return dirty

    def _write_step(self, step: int, meta: dict, groups: list[dict]) -> None:
        from kvviz.dumps.format import dump_from_mapping, dump_to_npz_bytes
        from kvviz.errors import BadInput

        stem = step_stem(step)
        steps_dir = os.path.join(self.directory, STEPS)
        paths, names, errors, total = [], [], [], 0
        from kvviz.capture.host import resolve

        for g, mapping in enumerate(groups):
            try:
                data = dump_to_npz_bytes(dump_from_mapping(resolve(mapping)))
            except BadInput as e:
                errors.append(f"group {g}: {e}")
                names.append(None)
                continue
            name = f"{stem}.g{g}.npz"
            atomic_write_bytes(os.path.join(steps_dir, name), data)
            paths.append(os.path.join(steps_dir, name))
            names.append(name)
            total += len(data)
        meta = {**meta, "step": step, "groups": names, **({"errors": errors} if errors else {})}
        raw = _json_bytes(meta)
        path = os.path.join(steps_dir, f"{stem}.json")
        atomic_write_bytes(path, raw)
        self.ring.append((step, [path, *paths], total + len(raw)))
        self.ring_bytes += total + len(raw)
        self._trim()

    def _trim(self) -> None:
        cap_n, cap_b = self.config.max_steps, self.config.max_bytes
        while len(self.ring) > 1 and ((cap_n and len(self.ring) > cap_n) or (cap_b and self.ring_bytes > cap_b)):
            _, paths, size = self.ring.popleft()
            for p in paths:                 # the .json first: the step disappears before its dumps
                try:
                    os.unlink(p)
                except OSError:
                    pass
            self.ring_bytes -= size

    def _apply_request_event(self, ev: dict) -> None:
        rid = str(ev.get("req_id"))
        rec = self.requests.setdefault(rid, {"req_id": rid, "output_token_ids": []})
        kind = ev.get("kind")
        if kind == "arrive":
            rec.update({k: v for k, v in ev.items() if k not in ("kind", "step")})
            rec["arrival_step"] = ev.get("step")
        elif kind == "output":
            rec["output_token_ids"].extend(int(t) for t in ev.get("tokens", ()))
        elif kind == "abort":
            rec["aborted_step"] = ev.get("step")
            rec["aborted_order"] = ev.get("order")
        elif kind == "finish":
            rec["finished_step"] = ev.get("step")
            rec["finish_reason"] = ev.get("reason")
        elif kind == "preempt":
            rec.setdefault("preempted_steps", []).append(ev.get("step"))

    def _write_requests(self) -> None:
        body = {"kvviz_run_version": RUN_VERSION, "pid": os.getpid(), "requests": list(self.requests.values())}
        atomic_write_bytes(os.path.join(self.directory, REQUESTS), _json_bytes(body))

    def _write_manifest(self) -> None:
        self.manifest["dropped_steps"] = self.dropped
        atomic_write_bytes(os.path.join(self.directory, MANIFEST), _json_bytes(self.manifest))

    def _finish(self) -> None:
        if self.manifest is None:
            while self._events:
                self._apply_request_event(self._events.popleft())
            self._write_requests()
            return
        self.manifest["finished"] = True
        self._write_manifest()
