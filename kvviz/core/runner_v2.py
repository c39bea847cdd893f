"""Model Runner V2's tables (vLLM ``vllm/v1/worker/gpu/``: ``states.py``, ``block_table.py``).

V2 keeps no persistent batch of rows that move. A request gets a *request-state index* from a LIFO
free list when it is added (``free_indices = list(range(max_num_reqs))``, ``pop()`` on add,
``append`` on removal) and keeps it until it finishes or is preempted; a running request that is not
scheduled in a step keeps its state. Block ids are staged on the host (``stage_write``) and written
into the device's *state* tables by ``apply_staged_writes``; nothing is cleared on removal, and a new
request overwrites from column 0. Each step the scheduled requests are put in batch order (fewest
scheduled tokens first, stable), ``idx_mapping[b]`` is the state index of batch position ``b``, and
``gather`` copies the first ``num_blocks`` entries of each scheduled state row into the persistent
*input* tables (the attention's block tables), zeroing the padded rows; entries past ``num_blocks``
keep whatever an earlier step left (the stale tail). Slot mappings read the *state* rows through
``idx_mapping``, every group in one launch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kvviz.core.block_table import row_width
from kvviz.core.geometry import Geometry
from kvviz.core.slots_v2 import mrv2_slot_mapping, swa_null_columns, swa_reach

FAULTS_V2 = ("skip_apply_staged_writes", "skip_gather")
ENTRY_BYTES = 4           # one staged id, one num_blocks count: int32
WRITE_HEADER_BYTES = 8    # a staged write's (state row, start column)


def staged_ids(geometry: Geometry, manager_ids: bool, block_ids) -> list[int]:
    """The ids a staged write carries for ``block_ids`` (manager blocks): their kernel blocks when
    blocks are split and the rows hold kernel ids, else the ids themselves (v0.32.0+: manager ids)."""
    split = geometry.blocks_per_kv_block > 1 and not manager_ids
    return geometry.kernel_blocks(block_ids) if split else [int(b) for b in block_ids]


def staged_write_bytes(num_ids: int) -> int:
    """The host → device bytes of one staged write: its ids and its (row, start)."""
    return ENTRY_BYTES * num_ids + WRITE_HEADER_BYTES


def num_blocks_bytes(num_groups: int, max_num_reqs: int) -> int:
    """The host → device bytes of publishing the counts: num_blocks is [groups, max_num_reqs] int32."""
    return ENTRY_BYTES * num_groups * max_num_reqs


class RowOverflow(ValueError, RuntimeError):
    """A staged write past a state row's width (v0.29.0 on: ``BlockTables.append_block_ids``
    raises RuntimeError; kvviz raised ValueError before, so both catch it)."""


@dataclass
class StagedWrite:
    state_index: int
    start: int
    block_ids: list[int]      # the ids as written: kernel block ids, manager ids from v0.32.0


@dataclass
class GroupTables:
    """One KV-cache group's V2 tables: state rows by state index, input rows by batch position."""
    geometry: Geometry
    width: int
    state: np.ndarray = field(init=False)
    input: np.ndarray = field(init=False)
    num_blocks: np.ndarray = field(init=False)
    max_num_reqs: int = 0
    manager_ids: bool = False   # rows hold KV-manager ids (v0.32.0 on), else kernel block ids
    reach: int = 0              # sliding-window reach of the v0.33.0 gather (0: none)
    slot_mapping_enabled: bool = True
    dcp_sharded: bool = True

    def __post_init__(self):
        self.state = np.zeros((self.max_num_reqs, self.width), dtype=np.int32)
        self.input = np.zeros((self.max_num_reqs, self.width), dtype=np.int32)
        self.num_blocks = np.zeros(self.max_num_reqs, dtype=np.int32)


class RequestStates:
    """The request-state indices, staged writes and both tables of every group."""

    def __init__(self, max_num_reqs: int, groups: list[GroupTables], events: list | None = None,
                 *, faults: set[str] | None = None, rules=None):
        from kvviz.core.versions import rules_for
        self.rules = rules if rules is not None else rules_for(None)
        self.num_dirty_rows = 0     # the previous gather's num_reqs (v0.33.0's _num_dirty_rows)
        self.max_num_reqs = max_num_reqs
        self.groups = groups
        self.events = events if events is not None else []
        self.faults = set(faults or ())
        self.free_indices = list(range(max_num_reqs))
        self.req_id_to_index: dict[str, int] = {}
        self.index_to_req_id: dict[int, str] = {}
        self.staged: list[list[StagedWrite]] = [[] for _ in groups]
        # num_blocks is host-side truth (a UVA tensor in vLLM); state rows change only when applied
        self.host_num_blocks = np.zeros((len(groups), max_num_reqs), dtype=np.int32)

    @property
    def num_reqs(self) -> int:
        return len(self.req_id_to_index)

    # --- request states ------------------------------------------------------------------------
    def add_request(self, req_id: str, block_ids_per_group) -> int:
        """A new (or resumed) request: the last free index, its blocks staged from column 0."""
        if req_id in self.req_id_to_index:
            raise ValueError(f"request {req_id} already has state index {self.req_id_to_index[req_id]}")
        if not self.free_indices:
            raise ValueError(f"no free request state: at most {self.max_num_reqs} requests")
        idx = self.free_indices.pop()
        self.req_id_to_index[req_id] = idx
        self.index_to_req_id[idx] = req_id
        self.events.append({"kind": "add_state", "req": req_id, "state": idx})
        self.append_block_ids(req_id, block_ids_per_group, overwrite=True)
        return idx

    def remove_request(self, req_id: str) -> int:
        """A finished or preempted request gives its index back (to the end of the free list: the
        next add takes it again). Its state rows are left as they are."""
        idx = self.req_id_to_index.pop(req_id)
        self.index_to_req_id.pop(idx, None)
        self.free_indices.append(idx)
        self.events.append({"kind": "free_state", "req": req_id, "state": idx})
        return idx

    def append_block_ids(self, req_id: str, block_ids_per_group, *, overwrite: bool) -> None:
        idx = self.req_id_to_index[req_id]
        for gid, (g, ids) in enumerate(zip(self.groups, block_ids_per_group)):
            start = 0 if overwrite else int(self.host_num_blocks[gid, idx])
            kernel_ids = staged_ids(g.geometry, g.manager_ids, ids)
            end = start + len(kernel_ids)
            if end > g.width:
                self._overflow(idx, gid, end, g.width)
            self.host_num_blocks[gid, idx] = end
            if kernel_ids or overwrite:
                self.staged[gid].append(StagedWrite(idx, start, [int(b) for b in kernel_ids]))
        if any(len(g) for g in block_ids_per_group):
            self.events.append({"kind": "stage_write", "req": req_id, "state": idx,
                                "overwrite": overwrite,
                                "blocks": [list(map(int, g)) for g in block_ids_per_group]})

    def _overflow(self, idx: int, gid: int, end: int, width: int) -> None:
        """A write past the row: v0.29.0 on raises; before, vLLM's apply kernel wrote on into the
        next state rows (row-major, no bound check); kvviz does that too and drops what would
        fall past the table, with an event."""
        if self.rules.mrv2_row_overflow_error:
            raise RowOverflow(f"state {idx} of group {gid} would hold {end} blocks; the table is "
                              f"{width} wide")
        self.events.append({"kind": "row_overflow", "state": idx, "group": gid, "end": int(end),
                            "width": int(width)})

    def apply_staged_writes(self) -> int:
        """Write the staged ids into the state tables (one fused launch in vLLM) and publish the
        counts; returns the bytes copied to the device (ids, their (row, start) and the counts)."""
        nbytes = 0
        writes = 0
        lost = "skip_apply_staged_writes" in self.faults
        for gid, g in enumerate(self.groups):
            for w in self.staged[gid]:
                if not lost:
                    flat = g.state.reshape(-1)      # a view: a write past the row runs on
                    at = w.state_index * g.width + w.start
                    k = max(min(len(w.block_ids), flat.size - at), 0)
                    flat[at:at + k] = w.block_ids[:k]
                nbytes += staged_write_bytes(len(w.block_ids))
                writes += 1
            self.staged[gid] = []
            if not lost:
                g.num_blocks[:] = self.host_num_blocks[gid]
        nbytes += num_blocks_bytes(*self.host_num_blocks.shape)
        self.events.append({"kind": "apply_staged_writes", "writes": writes, "bytes": nbytes,
                            **({"fault": "skip_apply_staged_writes"} if lost else {})})
        return nbytes

    # --- one step's inputs ---------------------------------------------------------------------
    def batch_order(self, num_scheduled: dict[str, int]) -> list[str]:
        """The scheduled requests in batch order: fewest scheduled tokens first, the scheduler's
        order among equals (decodes lead; vLLM's ``sort_batch_req_ids`` without speculation)."""
        return sorted(num_scheduled, key=lambda rid: num_scheduled[rid])

    def idx_mapping(self, order: list[str]) -> np.ndarray:
        return np.array([self.req_id_to_index[rid] for rid in order], dtype=np.int32)

    def gather(self, idx_mapping: np.ndarray, num_reqs_padded: int, num_computed=None) -> None:
        """Each group's input table: row b <- the first num_blocks entries of state row
        idx_mapping[b]; rows [num_reqs, num_reqs_padded) zeroed; the rest left as it was.
        v0.33.0 (``gather_block_tables``): a sliding-window group's columns below
        ``max(num_computed[b] - reach, 0) // block_size`` get 0, and rows up to the previous
        gather's num_reqs are zeroed too (``_num_dirty_rows``)."""
        if "skip_gather" in self.faults:
            self.events.append({"kind": "gather", "rows": 0, "fault": "skip_gather"})
            return
        n = len(idx_mapping)
        rows = num_reqs_padded
        if self.rules.mrv2_zero_dirty_rows:
            rows = max(rows, self.num_dirty_rows)
            self.num_dirty_rows = n
        nulled = 0
        for g in self.groups:
            entry = g.geometry.block_size if g.manager_ids else g.geometry.kernel_block_size
            for b, s in enumerate(idx_mapping):
                cnt = min(int(g.num_blocks[s]), g.width)
                g.input[b, :cnt] = g.state[s, :cnt]
                if self.rules.mrv2_swa_gather_zero and num_computed is not None:
                    k = min(swa_null_columns(g.reach, num_computed[b], entry), cnt)
                    g.input[b, :k] = 0
                    nulled += k
            g.input[n:rows] = 0
        self.events.append({"kind": "gather", "rows": n, "padded_rows": num_reqs_padded - n,
                            "idx_mapping": [int(x) for x in idx_mapping],
                            **({"dirty_rows": rows - num_reqs_padded} if rows > num_reqs_padded else {}),
                            **({"swa_nulled": nulled} if nulled else {})})

    def state_rows_view(self, gid: int, idx_mapping: np.ndarray, num_reqs_padded: int) -> np.ndarray:
        """The state rows the slot-mapping kernel reads, in batch order (padded rows: zeros)."""
        g = self.groups[gid]
        view = np.zeros((num_reqs_padded, g.width), dtype=np.int32)
        view[:len(idx_mapping)] = g.state[idx_mapping]
        return view

    def input_view(self, gid: int, num_reqs_padded: int) -> np.ndarray:
        return self.groups[gid].input[:num_reqs_padded].copy()

    def rows_by_state(self) -> list[str | None]:
        return [self.index_to_req_id.get(i) for i in range(self.max_num_reqs)]


def v2_manager_ids(rules) -> bool:
    """Whether that release's MRV2 state rows hold KV-manager ids (v0.32.0 on), not kernel ids."""
    return rules.mrv2_dcp_slots == "manager_ids"


def make_states(config, rules, tables, events, faults) -> RequestStates:
    """The request states of an engine: per group the V2 width (manager ids from v0.32.0: the
    V1 width over blocks_per_kv_block), the sliding-window reach and the per-group flags."""
    groups = []
    manager_ids = v2_manager_ids(rules)
    max_blocks = config.geometry.blocks_for(config.max_model_len)
    for spec, t in zip(config.groups, tables):
        geo = t.geometry
        state = spec.kind == "state"
        width = row_width(geo, 1 if state else max_blocks, rules.width_alignment, has_slot_mapping=not state,
                          manager_ids=manager_ids)
        groups.append(GroupTables(geo, width, max_num_reqs=config.max_num_reqs, manager_ids=manager_ids,
                                  reach=swa_reach(spec.kind, spec.sliding_window, geo.dcp_world_size)))
    return RequestStates(config.max_num_reqs, groups, events, faults=faults, rules=rules)


def batch_v2_tables(step) -> dict:
    """Model Runner V2's tables for one user-defined batch (a ``StepInputs`` in batch order, as
    ``kvviz compute`` and the batch page build it): request ``i`` of the batch took request-state
    index R-1-i from the LIFO free list (R = ``num_reqs_padded`` state rows, every state free
    before), so ``idx_mapping[i]`` = R-1-i; ``state_block_table`` holds the rows by state index
    (never-used states all 0) and ``state_num_blocks`` their counts; the step's own ``block_table``
    is the gathered input table (batch order, padded rows 0): the same slots, other tables."""
    n, r = step.num_reqs, step.num_reqs_padded
    idx = [r - 1 - i for i in range(n)]
    # v0.32.0+ with split blocks the state rows hold KV-manager ids (the backend's table is mapped)
    manager = step.manager_block_table is not None
    bt = step.manager_block_table if manager else step.block_table
    per = step.geometry.blocks_per_kv_block if manager else 1
    state = [[0] * bt.shape[1] for _ in range(r)]
    counts = [0] * r
    for i, s in enumerate(idx):
        state[s] = bt[i].tolist()
        counts[s] = _batch_pages(step, i) // per
    return {"idx_mapping": idx, "state_block_table": state, "state_num_blocks": counts}


def batch_v2_slot_mapping(step, rules, tables: dict | None = None) -> np.ndarray | None:
    """The slot mapping Model Runner V2 computes for a user-defined batch: each request's tokens
    read its state row (``batch_v2_tables``: row ``idx_mapping[i]``) with the DCP arithmetic of
    ``rules``' era (``Rules.mrv2_dcp_slots``, ``kvviz.core.slots_v2``), not V1's. Without DCP, or
    from v0.29.0, the same numbers as V1; up to v0.28.x with an interleave above the kernel block
    size, other ones (the virtual block is the kernel block x CP). None when the step has none."""
    if step.slot_mapping is None:
        return None
    t = batch_v2_tables(step) if tables is None else tables
    return mrv2_slot_mapping(rules, batch_v2_state_rows(step, t), t["idx_mapping"], step.query_start_loc,
                             step.positions, step.num_tokens_padded, geometry=step.geometry)


def batch_v2_state_rows(step, tables: dict) -> np.ndarray:
    """``batch_v2_tables``' ``state_block_table`` as an int32 array [state rows, width]."""
    rows = step.manager_block_table if step.manager_block_table is not None else step.block_table
    return np.asarray(tables["state_block_table"], dtype=np.int32).reshape(len(tables["state_num_blocks"]),
                                                                           rows.shape[1])


def _batch_pages(step, i: int) -> int:
    """Table entries (kernel blocks) of the manager blocks request ``i`` of a batch holds: its row's
    counted prefix, what MRV2's ``num_blocks`` counts."""
    geo = step.geometry
    return int(geo.kernel_block_count(geo.blocks_for(int(step.seq_lens[i]))))
