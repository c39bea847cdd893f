"""What a step holds under vLLM's Model Runner V2 (``vllm/v1/worker/gpu/model_runner.py``).

MRV2 keeps rows by request state and gathers them each step. The step's tables are final when
``GPUModelRunner.prepare_attn(input_batch)`` returns inside ``execute_model`` (v0.28.0 .. v0.34.0):
it returns the gathered input tables (one ``[num_reqs_padded, W]`` tensor per group) and the slot
mappings (``[groups, num_tokens_padded]``); ``input_batch`` holds ``idx_mapping``, ``query_start_loc``,
``seq_lens`` and ``positions``; ``self.block_tables`` the request-state rows and their block counts.
Dummy runs go through ``prepare_dummy_attn`` and are never captured.

From v0.32.0 the state rows hold KV-manager ids, and a backend with smaller kernel blocks reads the
attention group's ``b * r + j`` table; the dump's ``block_table`` is then that kernel-block table
(``kvviz.core.slots_v2.expand_kernel_blocks``), as ``kvviz.dumps.capture.capture_v2`` writes it.
"""
from __future__ import annotations

import numpy as np

from kvviz.capture.worker_v1 import _buffer, group_spec
from kvviz.capture.host import KERNEL_RATIO, snapshot
from kvviz.dumps.capture import to_numpy
from kvviz.dumps.fields import DUMP_VERSION


def _kernel_ratio(runner, g: int, block_size: int) -> int:
    groups = getattr(runner, "attn_groups", None) or ()
    attn = groups[g][0] if g < len(groups) and groups[g] else None
    kbs = getattr(attn, "kernel_block_size", None)
    if not isinstance(kbs, int) or not 0 < kbs < block_size:
        return 1
    from kvviz.core.geometry import Geometry

    return Geometry(block_size, kbs).blocks_per_kv_block


def step_groups(runner, input_batch, gathered, slot_mappings, *, release: str, side: dict | None) -> list[dict]:
    tables = runner.block_tables
    n, n_pad = int(input_batch.num_reqs), int(input_batch.num_reqs_after_padding)
    t_pad = int(input_batch.num_tokens_after_padding)
    counts = to_numpy(_buffer(tables.num_blocks, ("np", "cpu", "gpu")))

    common = {"kvviz_dump_version": DUMP_VERSION, "num_blocks": int(runner.kv_cache_config.num_blocks),
              "num_reqs": n, "num_reqs_padded": n_pad, "vllm": release, "runner": "v2",
              "idx_mapping": np.asarray(input_batch.idx_mapping_np[:n], dtype=np.int64),
              "seq_lens": snapshot(input_batch.seq_lens[:n_pad]),
              "query_start_loc": snapshot(input_batch.query_start_loc[: n_pad + 1]),
              "positions": snapshot(input_batch.positions[:t_pad])}
    if side and "free_block_ids" in side:
        common["free_block_ids"] = side["free_block_ids"]
        if len(tables.block_sizes) == 1:
            common["ref_cnt"] = side["ref_cnt"]
    out = []
    for g, bs in enumerate(tables.block_sizes):
        r = _kernel_ratio(runner, g, int(bs))
        m = {**common, "block_size": int(bs), "state_block_table": snapshot(_buffer(tables.block_tables[g])),
             "state_num_blocks": np.array(counts[g] if counts.ndim == 2 else counts, copy=True)}
        m["block_table"] = snapshot(gathered[g][:n_pad])
        if r > 1:                        # expanded on the writer's thread (kvviz.capture.host.resolve)
            m[KERNEL_RATIO] = r
            m["kernel_block_size"] = int(getattr(runner.attn_groups[g][0], "kernel_block_size"))
        spec = group_spec(runner, g)
        enabled = getattr(tables, "_slot_mapping_enabled", None)
        if enabled is not None and g < len(enabled) and not enabled[g]:
            m["group_kind"] = "state"
        elif slot_mappings is not None:
            m["slot_mapping"] = snapshot(slot_mappings[g][:t_pad])
        window = getattr(spec, "sliding_window", None)
        if isinstance(window, int) and m.get("group_kind") != "state":
            m["sliding_window"] = window
        for key, attr in (("dcp_world_size", "cp_size"), ("dcp_rank", "cp_rank"),
                          ("cp_kv_cache_interleave_size", "cp_interleave")):
            v = getattr(tables, attr, None)
            if isinstance(v, int) and not isinstance(v, bool) and v != (0 if key == "dcp_rank" else 1):
                m[key] = v
        out.append(m)
    return out


def step_meta(runner, input_batch, scheduler_output) -> dict:
    req_ids = [str(r) for r in input_batch.req_ids[: int(input_batch.num_reqs)]]
    sched = dict(getattr(scheduler_output, "num_scheduled_tokens", {}) or {})
    index = getattr(getattr(runner, "req_states", None), "req_id_to_index", {}) or {}
    return {"runner": "v2", "num_reqs": int(input_batch.num_reqs),
            "num_reqs_padded": int(input_batch.num_reqs_after_padding),
            "num_tokens": int(input_batch.num_tokens), "num_tokens_padded": int(input_batch.num_tokens_after_padding),
            "req_ids": req_ids, "num_scheduled_tokens": [int(sched.get(r, 0)) for r in req_ids],
            "state_rows": [int(index[r]) if r in index else None for r in req_ids]}
