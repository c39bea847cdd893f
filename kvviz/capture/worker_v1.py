"""What a step holds under vLLM's V1 model runner (``GPUModelRunner`` and its CPU subclass).

The step's tables are final when ``GPUModelRunner._build_attention_metadata`` returns inside
``execute_model`` (vLLM v0.28.0 .. v0.33.x: the block table is committed, the padded device rows are
NULL-filled, ``slot_mappings`` is the argument it was given, and ``seq_lens``, ``query_start_loc``,
``positions`` and ``input_batch`` hold the step). The plugin calls ``step_groups`` there; host arrays are
copied here, device tensors copied without a stall (``kvviz.capture.host``), and everything is
validated and written by the writer's thread.

Rows kept: the table rows up to ``max(num_reqs_padded, last row that counts a block + 1)``, so
vacated rows that still count blocks (the ``pad-row`` check) stay in the dump.
"""
from __future__ import annotations

import numpy as np

from kvviz.capture.host import snapshot
from kvviz.dumps.capture import is_state_table, to_numpy
from kvviz.dumps.fields import DUMP_VERSION


def _rows_to_keep(counts: np.ndarray, num_reqs_padded: int) -> int:
    used = np.flatnonzero(counts)
    return max(num_reqs_padded, int(used[-1]) + 1 if used.size else 0, 1)


def _buffer(obj, sides=("gpu", "cpu", "np")):
    """A CpuGpuBuffer's side the kernel read (``.gpu``), else its host side, else the object."""
    for side in sides:
        v = getattr(obj, side, None)
        if v is not None and not callable(v):
            return v
    return obj


def csr_arrays(builder, num_reqs_padded: int) -> dict:
    """FlashInfer's page index from a metadata builder that keeps it (``paged_kv_indptr``,
    ``paged_kv_indices``, ``paged_kv_last_page_len`` buffers), sliced to the step; {} otherwise."""
    names = ("paged_kv_indptr", "paged_kv_indices", "paged_kv_last_page_len")
    if builder is None or not all(hasattr(builder, n) for n in names):
        return {}
    host = ("np", "cpu", "gpu")          # indptr and last_page_len are computed on the host, then copied
    indptr = to_numpy(_buffer(getattr(builder, names[0]), host))[: num_reqs_padded + 1]
    if indptr.size == 0:
        return {}
    return {"paged_kv_indptr": indptr,       # the indices are written by a kernel: the device side
            "paged_kv_indices": snapshot(_buffer(getattr(builder, names[1]))[: int(indptr[-1])]),
            "paged_kv_last_page_len": to_numpy(_buffer(getattr(builder, names[2]), host))[:num_reqs_padded]}


def _group_extras(runner, g: int, num_reqs_padded: int) -> dict:
    """The kernel-block table (v0.32.0+, when the backend's blocks are smaller) and the CSR."""
    out = {}
    groups = getattr(runner, "attn_groups", None) or ()
    attn = groups[g][0] if g < len(groups) and groups[g] else None
    kbt = getattr(attn, "kernel_block_table", None)
    if kbt is not None:
        out["kernel_block_table"] = snapshot(kbt[0, :num_reqs_padded])
    builder = None
    if attn is not None and hasattr(attn, "get_metadata_builder"):
        builder = attn.get_metadata_builder(0)
    out.update(csr_arrays(builder, num_reqs_padded))
    return out


def group_spec(runner, g: int):
    groups = runner.kv_cache_config.kv_cache_groups
    return groups[g].kv_cache_spec if g < len(groups) else None


def step_groups(runner, *, release: str, num_reqs: int, num_reqs_padded: int, num_tokens_padded: int,
                slot_mappings: dict | None, side: dict | None) -> list[dict]:
    """One dump mapping per KV-cache group (raw arrays; the writer validates them)."""
    batch = runner.input_batch
    tables = batch.block_table
    num_groups = len(getattr(tables, "block_tables", ()) or ()) or 1
    n_pad = num_reqs_padded
    common = {"kvviz_dump_version": DUMP_VERSION, "num_blocks": int(runner.kv_cache_config.num_blocks),
              "num_reqs": int(num_reqs), "num_reqs_padded": int(n_pad), "vllm": release, "runner": "v1",
              "seq_lens": snapshot(runner.seq_lens[:n_pad]),
              "query_start_loc": to_numpy(runner.query_start_loc.cpu[: n_pad + 1]),
              "positions": snapshot(runner.positions[:num_tokens_padded])}
    if side and "free_block_ids" in side:
        common["free_block_ids"] = side["free_block_ids"]
        if num_groups == 1:
            common["ref_cnt"] = side["ref_cnt"]       # with several groups a ref counts every group
    out = []
    for g in range(num_groups):
        bt = tables[g]
        counts = np.array(bt.num_blocks_per_row, copy=True)
        rows = _rows_to_keep(counts, n_pad)
        kbs = int(bt.block_size)
        bs = getattr(bt, "kv_cache_block_size", None)     # before v0.32.0 the table held kernel blocks
        bs = int(bs) if isinstance(bs, (int, np.integer)) and bs else kbs
        m = {**common, "block_size": bs, **({"kernel_block_size": kbs} if kbs != bs else {}),
             "block_table": np.array(bt.block_table.np[:rows], copy=True),
             "num_blocks_per_row": counts[:rows],
             "block_table_device": snapshot(bt.get_device_tensor(n_pad))}
        if slot_mappings is not None and g in slot_mappings and not is_state_table(bt):
            m["slot_mapping"] = snapshot(slot_mappings[g])
        spec = group_spec(runner, g)
        window = getattr(spec, "sliding_window", None)
        if is_state_table(bt):
            m["group_kind"] = "state"
        elif isinstance(window, int):
            m["sliding_window"] = window
        m.update(_group_extras(runner, g, n_pad))
        for key in ("dcp_world_size", "dcp_rank", "cp_kv_cache_interleave_size"):
            v = getattr(bt, key, None)
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and (key, int(v)) not in (
                    ("dcp_world_size", 1), ("dcp_rank", 0), ("cp_kv_cache_interleave_size", 1)):
                m[key] = int(v)
        out.append(m)
    return out


def step_meta(runner, *, num_reqs: int, num_reqs_padded: int, num_tokens: int, num_tokens_padded: int,
              scheduler_output) -> dict:
    """The step's ``.json`` fields from the worker: each row's request and its token count."""
    req_ids = [None if r is None else str(r) for r in runner.input_batch.req_ids[:num_reqs]]
    sched = dict(getattr(scheduler_output, "num_scheduled_tokens", {}) or {})
    return {"runner": "v1", "num_reqs": int(num_reqs), "num_reqs_padded": int(num_reqs_padded),
            "num_tokens": int(num_tokens), "num_tokens_padded": int(num_tokens_padded),
            "req_ids": req_ids, "num_scheduled_tokens": [int(sched.get(r, 0)) for r in req_ids]}
