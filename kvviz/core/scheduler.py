"""The scheduler side of the step engine (vLLM's v1/core/sched/scheduler.py ``Scheduler.schedule``).

Running requests first, oldest first, preempting the newest when the pool is short; then waiting
ones in order while rows, the admission cap and the token budget last. Release rules kept here:
  - ``long_prefill_token_threshold`` caps a step's tokens of a request (every release); from
    v0.31.0 (#57951) the cap is not applied when running + waiting <= 1 (nobody to starve);
  - ``max_num_active_seqs`` (v0.31.0, #56758; None = max_num_seqs): waiting admission stops once
    that many requests are running.
The scheduler's output lists the requests admitted from the waiting queue apart: fresh ones
(``scheduled_new_reqs``) and ones resumed from preemption (``scheduled_resumed_reqs``, sent with the
running ones as ``scheduled_cached_reqs``); ``_resumed_now`` keeps the latter, for the worker's add
order (``Engine._runner_add_order``).
vLLM v0.31.0 also splits skipped waiting requests into ``kv_holding_waiting`` and a deferred set
(#58947). A kvviz waiting request never holds blocks and is never skipped (no async KV loads,
LoRA, encoder or grammar limits), so that change leaves kvviz's order as it was and is not modelled.
"""
from __future__ import annotations

from kvviz.core.manager import Request
from kvviz.errors import BadInput


class Scheduler:
    """Mixin: ``Engine`` (``self.manager``, ``self.requests``, ``self.waiting``, ``self.running``,
    ``self.config``, ``self.profile``) schedules through here."""

    def _may_finish_later(self, rid: str) -> bool:
        return any(a.step > self.step_index and a.req == rid and a.kind == "finish" for a in self.scenario.actions)

    def _never_fits(self, rid: str, tokens: int) -> str:
        c = self.config
        return (f"the scenario can never finish: at step {self.step_index} request {rid} needs room for {tokens} "
                f"tokens, more than the whole pool holds with nothing else running ({c.num_blocks - 1} usable "
                f"blocks of {c.block_size} tokens, shared by {len(c.groups)} group(s)); give it fewer tokens "
                "or the pool more blocks")

    def _admit_arrivals(self) -> None:
        """Requests whose arrival step has come join the waiting queue, in arrival order."""
        while self._pending and self._pending[0].arrival <= self.step_index:
            spec = self._pending.pop(0)
            self.requests[spec.req_id] = Request(spec.req_id, list(spec.prompt), spec.max_tokens,
                                                 extra_keys=spec.extra_keys)
            self.waiting.append(spec.req_id)
            self.state[spec.req_id] = "waiting"
            self.events.append({"kind": "arrive", "req": spec.req_id, "prompt_len": len(spec.prompt)})

    def _long_prefill_cap(self) -> int:
        """This step's ``long_prefill_token_threshold`` (0: no cap). From v0.31.0 it is 0 when the
        running and waiting requests number at most one (``Scheduler.schedule``, #57951)."""
        cap = self.config.long_prefill_token_threshold
        if cap and self.profile.long_prefill_lone_request_exempt and len(self.running) + len(self.waiting) <= 1:
            self.events.append({"kind": "long_prefill_exempt", "threshold": cap})
            return 0
        return cap

    def _active_cap(self) -> int:
        """How many requests may be running before waiting admission stops: ``max_num_active_seqs``
        (v0.31.0; None = max_num_seqs), never more than the batch's rows (max_num_seqs)."""
        cap = self.config.max_num_active_seqs
        return self.config.max_num_reqs if cap is None else min(cap, self.config.max_num_reqs)

    def _schedule(self) -> dict[str, tuple[int, int, list[list[int]]]]:
        """Running requests first, then waiting ones, within the token budget. Returns
        rid -> (tokens scheduled, tokens computed before, block ids added per group)."""
        scheduled: dict[str, tuple[int, int, list[list[int]]]] = {}
        self._resumed_now = set()
        cap = self._long_prefill_cap()
        budget, preempted = self._schedule_running(scheduled, self.config.max_num_batched_tokens, cap)
        if not preempted:  # none after a preemption: the pool just ran short, as in vLLM's scheduler
            self._schedule_waiting(scheduled, budget, cap)
        return scheduled

    def _schedule_running(self, scheduled: dict, budget: int, cap: int = 0) -> tuple[int, bool]:
        """Running requests, oldest first, preempting the newest when the pool is short.
        Returns the budget left and whether anything was preempted."""
        i = 0
        preempted = False
        while i < len(self.running) and budget > 0:
            rid = self.running[i]
            req = self.requests[rid]
            n = min(req.num_tokens - req.num_computed_tokens, budget)
            if 0 < cap < n:
                n = cap
            if n <= 0:
                i += 1
                continue
            ids, preempted_now = self._allocate_or_preempt(rid, n, scheduled)
            preempted = preempted or preempted_now
            if ids is None:
                break
            scheduled[rid] = (n, req.num_computed_tokens, ids)
            budget -= n
            i += 1
        return budget, preempted

    def _allocate_or_preempt(self, rid: str, n: int, scheduled: dict) -> tuple[list[list[int]] | None, bool]:
        """Room for ``n`` more tokens of running request ``rid``, preempting the newest running
        request until it fits (None if ``rid`` itself was preempted); and whether one was."""
        req = self.requests[rid]
        preempted = False
        while True:
            ids = self.manager.allocate_slots(req, n)
            if ids is not None:
                return ids, preempted
            victim = self.running[-1]
            if victim == rid and len(self.running) == 1:
                # it holds every block in use and still does not fit: it would be preempted,
                # re-admitted and preempted again forever (vLLM refuses such a model length)
                raise BadInput(self._never_fits(rid, req.num_computed_tokens + n))
            self._preempt(victim, "pool exhausted")
            preempted = True
            scheduled.pop(victim, None)
            if victim == rid:
                return None, preempted

    def _schedule_waiting(self, scheduled: dict, budget: int, cap: int = 0) -> None:
        """Waiting requests, in order, while rows, the admission cap and budget last; a prefix-cache
        hit is counted as computed."""
        active = self._active_cap()
        while self.waiting and budget > 0 and len(self.running) < self.config.max_num_reqs:
            if len(self.running) >= active:
                self.events.append({"kind": "active_cap", "req": self.waiting[0], "cap": active})
                break
            rid = self.waiting[0]
            req = self.requests[rid]
            hits, n_hit = self.manager.get_computed_blocks(req)
            n = min(req.num_tokens - n_hit, budget)
            if 0 < cap < n:
                n = cap
            ids = self.manager.allocate_slots(req, n, hits, n_hit, full_sequence_must_fit=self.reserve_full_prompt)
            if ids is None:
                if not self.running and not scheduled and not self._may_finish_later(rid):
                    whole = req.num_tokens if self.reserve_full_prompt else n_hit + n
                    raise BadInput(self._never_fits(rid, max(whole, n_hit + n)))
                break
            self.waiting.pop(0)
            if self.state[rid] == "preempted":   # vLLM: status PREEMPTED -> scheduled_resumed_reqs
                self._resumed_now.add(rid)
            req.num_computed_tokens = n_hit
            self.running.append(rid)
            self.state[rid] = "running"
            scheduled[rid] = (n, n_hit, ids)
            budget -= n
