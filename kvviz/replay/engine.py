"""kvviz's step engine, fed what a captured run decided outside the bookkeeping.

Three things differ from ``kvviz.core.engine.Engine``, none of them a rule of the simulation:
  - the generated token ids are the run's own (requests.json), so prefix-cache hashes over generated
    text are those vLLM computed (a request preempted and recomputed hits its own blocks);
  - the CUDA-graph padding of a captured step is the step's own (``num_reqs_padded``,
    ``num_tokens_padded``): the capture sizes are not in the manifest; a step the capture lacks is not
    padded;
  - only the newest step record is kept (a long run never fills the history), with the scheduler's
    side of the step (running requests, their blocks and computed tokens) taken at its end.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kvviz.core.engine import Engine
from kvviz.core.scenario import sampled_token

MAX_PADDING = 1 << 20


@dataclass
class SchedulerSide:
    """The scheduler after a step's schedule(), as the capture records it: the running requests in
    order with their blocks per group and computed tokens (after scheduling), and the requests this
    step preempted, admitted fresh, and the ones it reports finished (since the previous step)."""
    running: list[str] = field(default_factory=list)
    block_ids: dict[str, list[list[int]]] = field(default_factory=dict)
    num_computed_tokens: dict[str, int] = field(default_factory=dict)
    preempted: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)


class ReplayEngine(Engine):
    """``Engine`` with the run's generated tokens and padding; ``record`` and ``side`` are the newest
    step's."""

    def __init__(self, scenario, outputs: dict[str, list[int]], padding: dict[int, tuple[int, int]]):
        super().__init__(scenario)
        self._outputs = outputs
        self._given_padding = padding
        self.invented: dict[str, int] = {}        # request -> generated tokens the run did not record
        self.record = None
        self.side = SchedulerSide()
        self._finished_since: list[str] = []      # finished or aborted since the last schedule()
        self._fresh: set[str] = set()

    def _execute(self, sched_list) -> None:
        for s in sched_list:
            req = self.requests[s.req_id]
            req.num_computed_tokens += s.num_tokens
            if req.num_computed_tokens >= req.num_tokens:
                given = self._outputs.get(s.req_id, [])
                if len(req.output) < len(given):
                    req.output.append(given[len(req.output)])
                else:
                    self.invented[s.req_id] = self.invented.get(s.req_id, 0) + 1
                    req.output.append(sampled_token(s.req_id, req.num_tokens))

    def _padding(self, num_reqs: int, num_tokens: int, sched) -> tuple[int, int]:
        given = self._given_padding.get(self.step_index)
        if given is None:
            return num_reqs, num_tokens
        r_pad, t_pad = given
        return max(num_reqs, min(r_pad, MAX_PADDING)), max(num_tokens, min(t_pad, MAX_PADDING))

    def _finish(self, rid: str, why: str) -> None:
        super()._finish(rid, why)
        self._finished_since.append(rid)

    def _schedule(self):
        before = set(self.running)
        was_waiting = {rid for rid in self.waiting if self.state.get(rid) == "waiting"}
        preempted_before = {e.get("req") for e in self.events if e.get("kind") == "preempt"}
        scheduled = super()._schedule()
        side = SchedulerSide(finished=self._finished_since)
        self._finished_since = []
        side.preempted = sorted({e["req"] for e in self.events if e.get("kind") == "preempt"} - preempted_before)
        side.new = [rid for rid in scheduled if rid in was_waiting and rid not in before]
        self.side = side
        return scheduled

    def _finish_completed(self, sched_list, record) -> None:
        side = self.side
        side.running = list(self.running)
        for rid in self.running:
            side.block_ids[rid] = self.manager.block_ids(rid)
            side.num_computed_tokens[rid] = self.requests[rid].num_computed_tokens
        super()._finish_completed(sched_list, record)

    def _keep(self, record) -> None:
        self.record = record
        self.step_index += 1
