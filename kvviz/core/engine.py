"""The step engine: a small vLLM-V1-like scheduler + worker replaying a scenario.

Each step: apply the scenario's actions, admit arrivals, schedule (running
requests first, then waiting ones, within the token budget, preempting the
newest running request when the pool is short), update the persistent batch
(remove, append, add, condense), commit the block tables, and build the step's
attention inputs from the device mirror. Every change is recorded as an event,
and every step as a snapshot that can be replayed forward and back.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kvviz.core.batch import PersistentBatch
from kvviz.core.capacity import capacity_check
from kvviz.core.block_table import MultiGroupBlockTable, v1_tables
from kvviz.errors import BadInput
from kvviz.core.manager import KVCacheManager, Request
from kvviz.core.runner_v2 import FAULTS_V2, make_states
from kvviz.core.scheduler import Scheduler
from kvviz.core.versions import get_profile, resolve_runner
from kvviz.core.scenario import EngineConfig, Scenario, sampled_token
from kvviz.core.records import ScheduledRequest, StepRecord
from kvviz.core.step import StepInputs, build_step
from kvviz.core.worker_v2 import V2Worker

FAULTS_V1 = ("skip_commit", "commit_too_few_rows", "move_row_no_clear")
FAULTS = (*FAULTS_V1, *FAULTS_V2)
QUIET_STATES = ("waiting", "finished")   # states in which a request's record entry only changes with its counters
MAX_HISTORY_BYTES = 256 << 20   # step records kept for replaying back and forth (per replay; the app caches a few)


@dataclass
class _Commit:
    """What one commit saw and did: the tables before it, the rows it copied and their bytes."""
    cpu_tables: list[np.ndarray]
    device_before: list[np.ndarray]
    dirty_rows: list[int]
    rows: int
    bytes: int


class Engine(Scheduler, V2Worker):
    """Replays a scenario step by step; ``history`` keeps every step's record. The worker side is
    the V1 model runner's persistent batch or Model Runner V2's request states (``runner``)."""

    def __init__(self, scenario: Scenario, *, faults: set[str] | None = None):
        self.scenario = scenario
        self.config: EngineConfig = scenario.config
        self.profile = get_profile(self.config.profile)
        c = self.config
        self.faults = set(faults or ())
        runner = c.runner
        if runner is None and self.faults:
            # a fault names the runner it breaks: a V1 operation (move_row, commit) runs V1, a V2 one V2
            runner = "v1" if self.faults <= set(FAULTS_V1) else "v2" if self.faults <= set(FAULTS_V2) else None
        self.runner = resolve_runner(self.profile, runner, state_groups=any(g.kind == "state" for g in c.groups),
                                     hybrid=len(c.groups) > 1)
        known = FAULTS_V2 if self.runner == "v2" else FAULTS_V1
        bad = self.faults - set(known)
        if bad:
            raise ValueError(f"unknown fault(s) {sorted(bad)} for runner {self.runner}; known: {known}")
        self.reserve_full_prompt = (self.profile.reserve_full_prompt if c.scheduler_reserve_full_isl is None
                                    else c.scheduler_reserve_full_isl)
        self.geometry = c.geometry
        self.capacity = capacity_check(c, self.profile)   # vLLM's start-up check (noted, not enforced)
        self.events: list[dict] = []
        self.manager = KVCacheManager(c.num_blocks, groups=c.groups, geometry=self.geometry,
                                      enable_caching=c.enable_prefix_caching, profile=self.profile,
                                      events=self.events)
        clears = self.profile.move_row_clears_source and "move_row_no_clear" not in self.faults
        tables = v1_tables(c, self.profile, move_row_clears_source=clears)
        self.batch = PersistentBatch(MultiGroupBlockTable(tables), events=self.events,
                                     remove_clears_row=self.profile.remove_clears_row)
        self.states = make_states(c, self.profile, tables, self.events, self.faults)
        self.requests: dict[str, Request] = {}
        self.waiting: list[str] = []
        self.running: list[str] = []
        self.state: dict[str, str] = {}
        self._to_remove: list[str] = []      # finished/preempted since the last worker update
        self._resumed_now: set[str] = set()  # admitted this step after a preemption (the scheduler's)
        self._runner_seen: set[str] = set()  # requests the worker has had a row / state for
        self.step_index = 0
        self.history: list[StepRecord] = []
        self._history_bytes = 0
        self._last_states: dict[str, dict] = {}   # the last record's request entries, shared while unchanged
        self._pending = sorted(scenario.requests, key=lambda r: r.arrival)

    # --- scenario actions -------------------------------------------------------------
    def _finish(self, rid: str, why: str) -> None:
        req = self.requests[rid]
        self.manager.free(req)
        if rid in self.running:
            self.running.remove(rid)
        if rid in self.waiting:
            self.waiting.remove(rid)
        self.state[rid] = "finished"
        self._to_remove.append(rid)
        self.events.append({"kind": "finish", "req": rid, "why": why})

    def _preempt(self, rid: str, why: str) -> None:
        req = self.requests[rid]
        self.manager.free(req)
        req.num_computed_tokens = 0
        req.num_preemptions += 1
        self.running.remove(rid)
        self.waiting.insert(0, rid)
        self.state[rid] = "preempted"
        self._to_remove.append(rid)
        self.events.append({"kind": "preempt", "req": rid, "why": why,
                            "recompute_tokens": req.num_tokens})

    def _fork(self, rid: str, n: int) -> None:
        parent = self.requests[rid]
        for k in range(1, n + 1):
            cid = f"{rid}.{k}"
            while cid in self.requests:
                cid += "'"
            child = Request(cid, list(parent.prompt), parent.max_tokens, list(parent.output),
                            parent.num_computed_tokens, parent.extra_keys, parent=rid)
            if len(self.running) >= self.config.max_num_reqs:
                self.events.append({"kind": "fork_failed", "req": rid, "child": cid,
                                    "why": "no free row in the batch"})
                return
            cause = len(self.events)     # the fork is logged before the alloc / share / cow it causes
            ids = self.manager.fork(parent, child)
            if ids is None:
                self.events.append({"kind": "fork_failed", "req": rid, "child": cid,
                                    "why": "no free block for the copy-on-write"})
                return
            self.requests[cid] = child
            self.running.append(cid)
            self.state[cid] = "running"
            self.events.insert(cause, {"kind": "fork", "req": rid, "child": cid})

    def _apply_actions(self) -> None:
        for a in self.scenario.actions:
            if a.step != self.step_index or a.req not in self.requests:
                continue
            st = self.state.get(a.req)
            if a.kind == "finish" and st != "finished":
                self._finish(a.req, "scenario")
            elif a.kind == "preempt" and st == "running":
                self._preempt(a.req, "scenario")
            elif a.kind == "fork" and st == "running" and self._row_of(a.req) is not None:
                self._fork(a.req, a.n)

    # --- one step -----------------------------------------------------------------------
    def done(self) -> bool:
        return not self._pending and not self.waiting and not self.running

    def unfinished_count(self) -> int:
        """Requests not finished yet: not arrived, waiting, or running."""
        return len(self._pending) + len(self.waiting) + len(self.running)

    def step(self) -> StepRecord:
        """One scheduler + worker step, in vLLM's order; returns its record (kept in ``history``)."""
        self.events.clear()
        self._admit_arrivals()
        self._apply_actions()
        scheduled = self._schedule()
        if self.runner == "v2":
            return self._step_v2(scheduled)
        self._update_batch(scheduled)
        commit = self._commit()
        sched_list, seq_lens, q_lens = self._in_row_order(scheduled)
        num_reqs = self.batch.num_reqs
        r_pad, t_pad = self._padding(num_reqs, sum(q_lens), sched_list)
        inputs = self._build_inputs(num_reqs, r_pad, t_pad, seq_lens, q_lens)
        self._execute(sched_list)
        # the pool as the kernels of this step see it (rows and blocks agree) ...
        record = self._snapshot(sched_list, commit, r_pad, t_pad, inputs)
        # ... and after the requests that finished this step released their blocks
        self._finish_completed(sched_list, record)
        self._keep(record)
        return record

    # --- worker side ----------------------------------------------------------------------
    def _update_batch(self, scheduled: dict) -> None:
        """The persistent batch: remove, append, add, condense (and reorder, if configured)."""
        for rid in self._to_remove:
            if rid in self.batch.req_id_to_index:
                self.batch.remove_request(rid)
        self._to_remove = []
        for rid in list(self.batch.req_id_to_index):  # running but not scheduled: leaves the batch
            if rid not in scheduled:
                self.batch.remove_request(rid)
        added = []
        for rid, (_, _, ids) in scheduled.items():
            if rid in self.batch.req_id_to_index:
                self.batch.append_blocks(rid, ids)
            else:
                added.append(rid)
        for rid in self._runner_add_order(added):
            self.batch.add_request(rid, self.manager.block_ids(rid), scheduled[rid][1])
        self.batch.condense()
        for rid, (_, done, _) in scheduled.items():   # vLLM's num_computed_tokens_cpu, refreshed each step
            self.batch.num_computed_tokens[self.batch.req_id_to_index[rid]] = done
        if self.config.reorder_decodes_first:
            self._reorder({rid: v[0] for rid, v in scheduled.items()})

    def _runner_add_order(self, added: list[str]) -> list[str]:
        """The order in which the worker gives rows (V1: the lowest hole first) or request states
        (V2: the last free index) to the scheduled requests it does not hold, in vLLM's order: the
        scheduler's ``scheduled_new_reqs`` first, then ``scheduled_cached_reqs`` (running requests,
        then those resumed from preemption), each in scheduling order. A request resumed from
        preemption thus comes after a fresh one admitted behind it in the waiting queue.
        V1 (v0.32.0): ``v1/worker/gpu_model_runner.py`` ``_update_states`` fills ``reqs_to_add``
        from ``scheduled_new_reqs`` (L1246), then with the ``scheduled_cached_reqs`` not in the
        batch (L1331, L1441) and adds them in that order (L1487); ``v1/core/sched/scheduler.py`` puts
        a PREEMPTED request in ``scheduled_resumed_reqs`` (L1355) and ``_make_cached_request_data``
        chains running before resumed (L1710). V2: ``Scheduler.schedule`` appends the resumed ones
        to ``scheduled_new_reqs`` (L1418-1420; ``add_requests`` takes them in that order). The same
        code in the v0.11.0, v0.12.0 (V2's first), v0.20.0 and v0.33.0 wheels: not a release rule.
        A kvviz fork child the worker never held counts as new."""
        def rank(rid: str) -> int:
            if rid in self._resumed_now:
                return 2
            return 1 if rid in self._runner_seen else 0
        order = sorted(added, key=rank)   # stable: scheduling order within each kind
        self._runner_seen.update(order)
        return order

    def _reorder(self, num_scheduled: dict[str, int]) -> None:
        """The decode-first reorder of the release: pairwise swaps before v0.11.1, regions after."""
        if self.profile.reorder == "pairs":
            self.batch.reorder_decodes_first(num_scheduled)
        else:
            prompt = {rid: len(self.requests[rid].prompt) for rid in num_scheduled}
            self.batch.reorder_regions(num_scheduled, prompt, four=self.profile.reorder == "regions4")

    def _commit(self) -> _Commit:
        """Copy the batch's rows to the device mirror (or, under a fault, too few or none)."""
        num_reqs = self.batch.num_reqs
        tables = self.batch.tables
        cpu_tables = [t.cpu.copy() for t in tables.tables]
        before = [t.device.copy() for t in tables.tables]
        dirty = sorted(set(np.nonzero(tables[0].dirty[:max(num_reqs, 1)])[0].tolist()))
        rows = num_reqs
        if "commit_too_few_rows" in self.faults:
            rows = max(0, num_reqs - 1)
        nbytes = 0
        if "skip_commit" not in self.faults:
            nbytes = tables.commit(rows)
        else:
            rows = 0
        self.events.append({"kind": "commit", "rows": rows, "bytes": nbytes})
        return _Commit(cpu_tables, before, dirty, rows, nbytes)

    def _in_row_order(self, scheduled: dict) -> tuple[list[ScheduledRequest], list[int], list[int]]:
        """The scheduled requests in batch-row order, with their sequence and query lengths."""
        sched_list, seq_lens, q_lens = [], [], []
        for row, rid in self.batch.rows():
            n, done, _ = scheduled[rid]
            sched_list.append(self._scheduled_entry(rid, row, n, done))
            seq_lens.append(done + n)
            q_lens.append(n)
        return sched_list, seq_lens, q_lens

    def _scheduled_entry(self, rid: str, row: int, n: int, done: int, **kw) -> ScheduledRequest:
        prompt_len = len(self.requests[rid].prompt)
        if done >= prompt_len:
            kind = "decode"
        else:  # a chunk leaves part of the prompt for later steps
            kind = "prefill" if done + n >= prompt_len else "chunk"
        return ScheduledRequest(rid, row, n, done, done + n, kind, **kw)

    def _build_inputs(self, num_reqs: int, r_pad: int, t_pad: int, seq_lens, q_lens) -> list[StepInputs]:
        """Each group's attention inputs, from the device mirror (the profile may take the slot
        mapping from the CPU table instead)."""
        inputs = []
        for g, t in zip(self.config.groups, self.batch.tables.tables):
            kw = dict(geometry=t.geometry, num_reqs_padded=r_pad, num_tokens_padded=t_pad,
                      has_slot_mapping=g.kind != "state",
                      empty_last_page_len_is_zero=self.profile.empty_last_page_len_is_zero,
                      padded_row_fill=self.profile.padded_row_fill,
                      padded_last_page_len_one=self.profile.padded_last_page_len_one,
                      kernel_block_table_per_group=t.manager_ids)
            step_in = build_step(t.device_view(num_reqs, r_pad, fill=self.profile.padded_row_fill),
                                 seq_lens, q_lens, **kw)
            if not self.profile.slot_mapping_from_device_table and step_in.slot_mapping is not None:
                # the 2025 rule: slots from the CPU table (numpy), attention from the device mirror
                step_in.slot_mapping = build_step(t.cpu_view(num_reqs, r_pad), seq_lens, q_lens,
                                                  **kw).slot_mapping
            inputs.append(step_in)
        return inputs

    def _execute(self, sched_list: list[ScheduledRequest]) -> None:
        """"Run" the step: tokens computed, one sampled when a request reaches its end."""
        for s in sched_list:
            req = self.requests[s.req_id]
            req.num_computed_tokens += s.num_tokens
            if req.num_computed_tokens >= req.num_tokens:
                req.output.append(sampled_token(s.req_id, req.num_tokens))

    def _finish_completed(self, sched_list: list[ScheduledRequest], record: StepRecord) -> None:
        """Requests that produced their last token finish; the record gets the pool after their
        blocks were released, and the step's events. They are freed in scheduling order (the running
        queue's), not row order: vLLM's ``Scheduler.update_from_output`` walks
        ``scheduler_output.num_scheduled_tokens`` (filled running-queue first, then the admitted
        ones) and frees each finished request there (v0.32.0 ``v1/core/sched/scheduler.py`` L2077,
        ``_free_request`` L2230; the same loop in the v0.11.0 .. v0.34.0 wheels: not a release rule),
        so the free queue's order follows it (seen in vLLM 0.32.0 on the CPU: kvviz replay)."""
        done = {s.req_id for s in sched_list}
        for rid in [r for r in self.running if r in done]:
            if self.requests[rid].finished and self.state[rid] == "running":
                self._finish(rid, "max_tokens")
                record.requests[rid] = {**record.requests[rid], "state": "finished"}  # entries are shared
        record.free_queue_after = self.manager.pool.free_block_ids()
        record.ref_counts_after = self.manager.pool.ref_counts()
        record.events = list(self.events)

    def _keep(self, record: StepRecord) -> None:
        """Append the record to the history, within MAX_HISTORY_BYTES."""
        # the tables, and the pool's free queue and ref counts (Python lists, kept twice per step:
        # at kernel time and after the finishes; ~36 bytes an entry: a pointer and an int object)
        pool_entries = sum(len(x) for x in (record.free_queue, record.ref_counts, record.free_queue_after,
                                            record.ref_counts_after))
        self._history_bytes += sum(a.nbytes for a in (*record.cpu_tables, *record.device_tables,
                                                      *record.device_before_commit)) + 36 * pool_entries
        if self._history_bytes > MAX_HISTORY_BYTES:
            raise BadInput(f"the replay's step records passed {MAX_HISTORY_BYTES >> 20} MiB at step "
                           f"{self.step_index}; use fewer steps or smaller tables")
        self.history.append(record)
        self.step_index += 1

    def _padding(self, num_reqs: int, num_tokens: int, sched: list[ScheduledRequest]) -> tuple[int, int]:
        sizes = self.config.cudagraph_capture_sizes
        uniform_decode = bool(sched) and all(s.num_tokens == 1 for s in sched)
        if not sizes or num_tokens == 0 or num_tokens > sizes[-1]:
            return num_reqs, num_tokens
        t_pad = next(s for s in sizes if s >= num_tokens)
        r_pad = min(t_pad, self.config.max_num_reqs) if uniform_decode else num_reqs
        return max(r_pad, num_reqs), t_pad

    def _row_of(self, rid: str) -> int | None:
        """A request's row: its batch row (V1) or its request-state index (V2)."""
        if self.runner == "v2":
            return self.states.req_id_to_index.get(rid)
        return self.batch.req_id_to_index.get(rid)

    def _request_states(self) -> dict[str, dict]:
        """Every request's state for the record. An entry equal to the previous step's is that same
        (read-only) dict, so a step costs memory for what changed, not for every request ever seen
        (4096 queued requests over 544 steps: 1.1 GB of copies before)."""
        out = {}
        last = self._last_states
        for rid, req in self.requests.items():
            prev = last.get(rid)
            state = self.state[rid]
            if (prev is not None and state in QUIET_STATES and prev["state"] == state
                    and rid not in self.manager.req_blocks and not any(prev["blocks"])
                    and prev["row"] == self._row_of(rid)
                    and prev["num_computed_tokens"] == req.num_computed_tokens
                    and prev["output_len"] == len(req.output) and prev["preemptions"] == req.num_preemptions):
                out[rid] = prev   # a waiting or finished request holding no block, unchanged: cheap
                continue
            blocks = self.manager.block_ids(rid)
            entry = {"state": state, "row": self._row_of(rid),
                     "prompt_len": len(req.prompt), "output_len": len(req.output),
                     "num_computed_tokens": req.num_computed_tokens, "num_tokens": req.num_tokens,
                     "blocks": blocks, "parent": req.parent, "preemptions": req.num_preemptions}
            out[rid] = prev if prev == entry else entry
        self._last_states = out
        return out

    def _snapshot(self, sched, commit: _Commit, r_pad: int, t_pad: int, inputs) -> StepRecord:
        """The step as the kernels see it: tables, pool, and every request's state."""
        pool = self.manager.pool
        reqs = self._request_states()
        cached = {b.block_id: b.block_hash[:4].hex() for b in pool.blocks if b.block_hash is not None}
        return StepRecord(
            index=self.step_index, scheduled=sched, events=[], inputs=inputs,
            cpu_tables=commit.cpu_tables, device_before_commit=commit.device_before,
            device_tables=[t.device.copy() for t in self.batch.tables.tables],
            num_blocks_per_row=[t.num_blocks_per_row.copy() for t in self.batch.tables.tables],
            commit_rows=commit.rows, commit_bytes=commit.bytes, free_queue=pool.free_block_ids(),
            ref_counts=pool.ref_counts(), cached_blocks=cached, requests=reqs,
            rows=list(self.batch.req_ids), num_reqs=self.batch.num_reqs, num_reqs_padded=r_pad,
            num_tokens_padded=t_pad, dirty_rows=commit.dirty_rows)

    def run(self, max_steps: int = 10000) -> list[StepRecord]:
        while not self.done() and self.step_index < max_steps:
            self.step()
        return self.history


def run_scenario(scenario: Scenario, *, max_steps: int = 10000, faults=None) -> list[StepRecord]:
    return Engine(scenario, faults=faults).run(max_steps)
