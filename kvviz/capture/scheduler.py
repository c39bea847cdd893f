"""The scheduler's side of a captured run, recorded in the scheduler's own process.

vLLM's block pool and requests live in the engine core's scheduler, which may be another process
than the one that started vLLM. The wrappers here (``plugin`` installs them on vLLM's ``Scheduler``)
number the steps, write ``requests.json`` from this process (arrivals, aborts, preemptions, generated
tokens, finishes) and hand each captured step's pool state to the worker *on the step's own
SchedulerOutput* (attributes ``kvviz_step`` and ``kvviz_scheduler``): the worker that runs that output
writes it with the step's tables, so the two sides are paired by construction, never by a clock.

A step is a ``schedule()`` call that scheduled at least one token; steps are numbered from 0.
"""
from __future__ import annotations

import numpy as np

from kvviz.capture.writer import RunWriter, log
from kvviz.dumps.capture import _pool_state as read_pool
from kvviz.errors import BadInput


def _ints(xs) -> list[int]:
    return [int(x) for x in xs]


def _sampling(request) -> dict:
    sp = getattr(request, "sampling_params", None)
    out = {}
    for key in ("max_tokens", "min_tokens", "ignore_eos"):
        v = getattr(sp, key, None)
        if v is not None:
            out[key] = v if isinstance(v, bool) else int(v)
    return out


def pool_state(block_pool) -> tuple[np.ndarray, np.ndarray] | None:
    """(ref counts by block id, free queue front first) of vLLM's BlockPool (read as
    ``kvviz.dumps.capture`` reads it for a dump), or None when its shape is not the known one."""
    try:
        _, ref, free = read_pool(block_pool)
    except BadInput:
        return None
    return None if free is None else (ref, free)


class SchedulerSide:
    """One scheduler's side of one run (``directory``: where its engine's run goes)."""

    def __init__(self, session, directory: str):
        self.session, self.config, self.directory = session, session.config, directory
        self.step = 0
        self.aborts = 0                      # aborts seen: their order within a step decides the free queue
        self.writer: RunWriter | None = None
        self.pool_skipped = False

    def _emit(self, events: list[dict]) -> None:
        if self.writer is None:
            self.writer = self.session.writer(None, self.directory)
        self.writer.submit_requests(events)

    # --- wrappers' bodies: each runs after (or before) vLLM's own method ---------------------
    def on_add_request(self, request) -> None:
        self._emit([{"kind": "arrive", "req_id": str(request.request_id), "step": self.step,
                     "prompt_token_ids": _ints(getattr(request, "prompt_token_ids", None) or ()),
                     "priority": int(getattr(request, "priority", 0) or 0), **_sampling(request)}])

    def on_finish_requests(self, request_ids, finished_status, finished) -> None:
        if "ABORT" not in str(getattr(finished_status, "name", finished_status)).upper():
            return
        if finished is None:              # releases whose finish_requests returns nothing
            finished = [request_ids] if isinstance(request_ids, str) else list(request_ids or ())
        events = []
        for r in finished:
            events.append({"kind": "abort", "req_id": str(getattr(r, "request_id", r)), "step": self.step,
                           "order": self.aborts})
            self.aborts += 1
        self._emit(events)

    def on_schedule(self, scheduler, out) -> None:
        if int(getattr(out, "total_num_scheduled_tokens", 0) or 0) <= 0:
            return
        n = self.step
        self.step += 1
        out.kvviz_step = n
        out.kvviz_dir = self.writer.directory if self.writer is not None else self.directory
        preempted = sorted(str(r) for r in (getattr(out, "preempted_req_ids", None) or ()))
        if preempted:
            self._emit([{"kind": "preempt", "req_id": r, "step": n} for r in preempted])
        if self.config.wants(n):
            out.kvviz_scheduler = self.snapshot(scheduler, out, preempted)

    def on_update_from_output(self, result) -> None:
        events = []
        for outs in (result or {}).values():
            for o in getattr(outs, "outputs", None) or ():
                rid = str(o.request_id)
                if o.new_token_ids:
                    events.append({"kind": "output", "req_id": rid, "tokens": _ints(o.new_token_ids)})
                if getattr(o, "finish_reason", None) is not None:
                    reason = getattr(o.finish_reason, "name", str(o.finish_reason)).lower()
                    events.append({"kind": "finish", "req_id": rid, "step": self.step - 1, "reason": reason})
        if events:
            self._emit(events)

    # --- the pool and the requests' blocks after schedule() -------------------------------------
    def snapshot(self, scheduler, out, preempted: list[str]) -> dict:
        mgr = getattr(scheduler, "kv_cache_manager", None)
        side = {"preempted": preempted,
                "finished": sorted(str(r) for r in (getattr(out, "finished_req_ids", None) or ())),
                "new": [str(r.req_id) for r in getattr(out, "scheduled_new_reqs", ()) or ()],
                "block_ids": {}, "num_computed_tokens": {}}
        for req in list(getattr(scheduler, "running", ()) or ()):
            rid = str(req.request_id)
            side["num_computed_tokens"][rid] = int(req.num_computed_tokens)
            if mgr is not None:
                side["block_ids"][rid] = [_ints(g) for g in mgr.get_block_ids(rid)]
        pool = getattr(mgr, "block_pool", None)
        if self.config.pool and pool is not None:
            n_blocks = len(getattr(pool, "blocks", ()) or ())
            if n_blocks > self.config.pool_max_blocks:
                if not self.pool_skipped:
                    log.warning("kvviz capture: %d blocks is over KVVIZ_CAPTURE_POOL_MAX (%d): the pool's "
                                "ref counts and free queue are left out", n_blocks, self.config.pool_max_blocks)
                    self.pool_skipped = True
            else:
                state = pool_state(pool)
                if state is not None:
                    side["ref_cnt"], side["free_block_ids"] = state
        return side
