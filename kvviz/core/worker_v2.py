"""The worker side of a step under Model Runner V2 (``--runner v2``), as a mixin of ``Engine``.

vLLM's order (``vllm/v1/worker/gpu/model_runner.py``, ``execute_model``): finished and preempted
requests give their state back (``finish_requests``), new and resumed requests get a state and have
their blocks staged from column 0 (``add_requests``), running ones have their new blocks staged
after their count (``update_requests``), the staged writes are applied, then the scheduled requests
are sorted into batch order, ``idx_mapping`` is built, the block tables are gathered (padded rows
zeroed) and the slot mappings are computed from the state rows through ``idx_mapping``.
"""
from __future__ import annotations

import numpy as np

from kvviz.core.records import StepRecord
from kvviz.core.slots_v2 import expand_kernel_blocks, mrv2_slot_mapping
from kvviz.core.step import build_step


class V2Worker:
    """Mixin: ``Engine`` with ``self.states`` (a ``RequestStates``) runs its steps through here."""

    def _v2_update(self, scheduled: dict) -> int:
        """States released, added and appended, then the staged writes applied; returns the bytes
        the application copied to the device."""
        st = self.states
        for rid in self._to_remove:
            if rid in st.req_id_to_index:
                st.remove_request(rid)
        self._to_remove = []
        added = self._runner_add_order([rid for rid in scheduled if rid not in st.req_id_to_index])
        for rid in added:
            st.add_request(rid, self.manager.block_ids(rid))
        added_set = set(added)
        for rid, (_, _, ids) in scheduled.items():
            if rid not in added_set:
                st.append_block_ids(rid, ids, overwrite=False)
        return st.apply_staged_writes()

    def _v2_order(self, scheduled: dict):
        """The scheduled requests in batch order, with their lengths, and idx_mapping."""
        st = self.states
        order = st.batch_order({rid: v[0] for rid, v in scheduled.items()})
        idx = st.idx_mapping(order)
        sched_list, seq_lens, q_lens = [], [], []
        for b, rid in enumerate(order):
            n, done, _ = scheduled[rid]
            sched_list.append(self._scheduled_entry(rid, b, n, done, state_index=int(idx[b])))
            seq_lens.append(done + n)
            q_lens.append(n)
        return sched_list, seq_lens, q_lens, idx

    def _v2_inputs(self, idx: np.ndarray, r_pad: int, t_pad: int, seq_lens, q_lens) -> list:
        """Each group's attention inputs: the page index from the gathered input table (from
        v0.32.0 the kernel-block table the attention group writes from its manager ids, every
        column of the rows passed in), the slot mapping from the state rows read through
        idx_mapping with the release's arithmetic (``kvviz.core.slots_v2``)."""
        st = self.states
        inputs = []
        for gid, (g, tables) in enumerate(zip(self.config.groups, st.groups)):
            kw = dict(geometry=tables.geometry, num_reqs_padded=r_pad, num_tokens_padded=t_pad,
                      has_slot_mapping=g.kind != "state",
                      empty_last_page_len_is_zero=self.profile.empty_last_page_len_is_zero)
            view = st.input_view(gid, r_pad)
            if tables.manager_ids:
                view = expand_kernel_blocks(view, tables.geometry.blocks_per_kv_block)
                kw["padded_row_fill"] = None      # padded rows: the kernel blocks of block 0
            step_in = build_step(view, seq_lens, q_lens, **kw)
            if step_in.slot_mapping is not None:
                step_in.slot_mapping = mrv2_slot_mapping(
                    st.rules, tables.state, idx, step_in.query_start_loc, step_in.positions, t_pad,
                    geometry=tables.geometry, enabled=tables.slot_mapping_enabled, sharded=tables.dcp_sharded)
            inputs.append(step_in)
        return inputs

    def _step_v2(self, scheduled: dict):
        st = self.states
        nbytes = self._v2_update(scheduled)
        written = sorted({e["state"] for e in self.events if e["kind"] == "stage_write"})
        sched_list, seq_lens, q_lens, idx = self._v2_order(scheduled)
        num_reqs = len(sched_list)
        r_pad, t_pad = self._padding(num_reqs, sum(q_lens), sched_list)
        before = [g.input.copy() for g in st.groups]
        st.gather(idx, r_pad, num_computed=[s.num_computed for s in sched_list])
        inputs = self._v2_inputs(idx, r_pad, t_pad, seq_lens, q_lens)
        self._execute(sched_list)
        record = self._v2_snapshot(sched_list, before, written, nbytes, idx, r_pad, t_pad, inputs)
        self._finish_completed(sched_list, record)
        self._keep(record)
        return record

    def _v2_snapshot(self, sched, before, written, nbytes, idx, r_pad, t_pad, inputs):
        st = self.states
        pool = self.manager.pool
        cached = {b.block_id: b.block_hash[:4].hex() for b in pool.blocks if b.block_hash is not None}
        order = [s.req_id for s in sched]
        return StepRecord(
            index=self.step_index, scheduled=sched, events=[], inputs=inputs,
            cpu_tables=[g.state.copy() for g in st.groups], device_before_commit=before,
            device_tables=[g.input.copy() for g in st.groups],
            num_blocks_per_row=[g.num_blocks.copy() for g in st.groups],
            commit_rows=len(written), commit_bytes=nbytes, free_queue=pool.free_block_ids(),
            ref_counts=pool.ref_counts(), cached_blocks=cached, requests=self._request_states(),
            rows=order + [None] * (self.config.max_num_reqs - len(order)), num_reqs=len(order),
            num_reqs_padded=r_pad, num_tokens_padded=t_pad, dirty_rows=written, runner="v2",
            idx_mapping=[int(x) for x in idx], state_rows=st.rows_by_state())
