"""What one engine step leaves behind: the requests it scheduled and its snapshot (``StepRecord``),
the record that every view, dump and replay reads. Built by ``kvviz.core.engine`` (V1) and
``kvviz.core.worker_v2`` (Model Runner V2)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kvviz.core.step import StepInputs


@dataclass
class ScheduledRequest:
    req_id: str
    row: int
    num_tokens: int       # scheduled this step
    num_computed: int     # before this step
    seq_len: int          # after this step
    kind: str             # prefill | chunk | decode
    state_index: int | None = None   # Model Runner V2: the request-state index (row is the batch position)


@dataclass
class StepRecord:
    index: int
    scheduled: list[ScheduledRequest]
    events: list[dict]
    inputs: list[StepInputs | None]          # per group, built from the device mirror
    cpu_tables: list[np.ndarray]             # per group, after the row operations
    device_before_commit: list[np.ndarray]
    device_tables: list[np.ndarray]          # mirror after commit
    num_blocks_per_row: list[np.ndarray]
    commit_rows: int
    commit_bytes: int
    free_queue: list[int]
    ref_counts: list[int]
    cached_blocks: dict[int, str]            # block id -> short hash
    requests: dict[str, dict]                # per request: state, row, tokens, blocks
    rows: list[str | None]
    num_reqs: int
    num_reqs_padded: int
    num_tokens_padded: int
    dirty_rows: list[int] = field(default_factory=list)
    free_queue_after: list[int] = field(default_factory=list)   # after this step's finishes
    ref_counts_after: list[int] = field(default_factory=list)
    # Model Runner V2: cpu_tables / num_blocks_per_row are the state tables and counts (rows by
    # request-state index), device_before_commit / device_tables the input tables before and after
    # the gather (rows by batch position); idx_mapping[b] is batch position b's state index
    runner: str = "v1"
    idx_mapping: list[int] = field(default_factory=list)
    state_rows: list[str | None] = field(default_factory=list)

    @property
    def num_tokens(self) -> int:
        return sum(s.num_tokens for s in self.scheduled)
