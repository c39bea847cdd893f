"""Build dumps from live objects: vLLM's InputBatch / BlockTable, or a kvviz simulator step.

``capture`` works by duck typing, so it needs neither vLLM nor torch to import:
anything with ``.num_blocks_per_row`` and ``.block_table.cpu`` / ``.gpu`` (or
``.np``) is a block table; anything whose ``.block_table`` is one (or a
group list of them) is a batch. Tensors are read with ``.detach().cpu().numpy()``.

A state group (Mamba-like: vLLM's ``SlotMappingMode.NONE``, kvviz's ``has_slot_mapping=False``)
holds one state block per request, not pages; its dump says ``group_kind: "state"`` so the
checker applies the state rules. With several KV-cache groups the pool's ref counts count every
group's holders, so ``ref_cnt`` is left out of the dump (the free queue is kept).
"""
from __future__ import annotations

import numpy as np

from kvviz.core.geometry import Geometry
from kvviz.core.versions import get_profile
from kvviz.dumps.format import DUMP_VERSION, Dump, dump_from_mapping
from kvviz.errors import BadInput


def to_numpy(x) -> np.ndarray | None:
    """A copy of a torch tensor, numpy array or list as numpy (None stays None)."""
    if x is None:
        return None
    if hasattr(x, "detach"):
        x = x.detach()
    if hasattr(x, "cpu") and callable(x.cpu):
        x = x.cpu()
    if hasattr(x, "numpy") and callable(x.numpy):
        x = x.numpy()
    return np.array(x, copy=True)


def _group_table(obj, group: int):
    """(block table object, num_reqs or None, number of KV-cache groups or None when a bare table
    does not tell) from an InputBatch, MultiGroupBlockTable or BlockTable."""
    num_reqs = getattr(obj, "num_reqs", None)
    bt = obj
    num_groups = None
    if hasattr(bt, "block_table") and not hasattr(bt, "num_blocks_per_row"):
        bt = bt.block_table                          # InputBatch -> MultiGroupBlockTable
    if not hasattr(bt, "num_blocks_per_row"):
        groups = getattr(bt, "block_tables", None)
        try:
            bt = groups[group] if groups is not None else bt[group]
        except (TypeError, IndexError, KeyError):
            raise BadInput(f"cannot find KV-cache group {group}'s block table in {type(obj).__name__}") from None
        try:
            num_groups = len(groups if groups is not None else obj.block_table)
        except TypeError:
            num_groups = None
    if not hasattr(bt, "num_blocks_per_row") or not hasattr(bt, "block_table"):
        raise BadInput(f"{type(obj).__name__} does not look like a vLLM InputBatch or BlockTable")
    return bt, num_reqs if isinstance(num_reqs, int) else None, num_groups


def is_state_table(bt) -> bool:
    """Whether a block table holds state indices (Mamba-like) rather than pages: vLLM's
    ``slot_mapping_mode`` is ``SlotMappingMode.NONE``, or kvviz's ``has_slot_mapping`` is False."""
    mode = getattr(bt, "slot_mapping_mode", None)
    if mode is not None:
        name = getattr(mode, "value", None) or getattr(mode, "name", None) or mode
        return str(name).lower() == "none"
    return getattr(bt, "has_slot_mapping", True) is False


def _pool_state(block_pool):
    """(num_blocks, ref_cnt, free ids in queue order) from a vLLM-like BlockPool."""
    blocks = getattr(block_pool, "blocks", None)
    if blocks is None:
        raise BadInput("block_pool has no .blocks list")
    ref = np.array([int(b.ref_cnt) for b in blocks], dtype=np.int32)
    queue = getattr(block_pool, "free_block_queue", None)
    free = None
    if queue is not None and hasattr(queue, "get_all_free_blocks"):
        free = np.array([int(b.block_id) for b in queue.get_all_free_blocks()], dtype=np.int32)
    return len(blocks), ref, free


def capture(obj, *, num_reqs: int | None = None, num_reqs_padded: int | None = None, group: int = 0,
            num_blocks: int | None = None, block_pool=None, include_device: bool = True,
            seq_lens=None, query_start_loc=None, positions=None, slot_mapping=None,
            paged_kv_indptr=None, paged_kv_indices=None, paged_kv_last_page_len=None,
            sliding_window: int | None = None, profile: str | None = None,
            group_kind: str | None = None, kernel_block_table=None) -> Dump:
    """A validated dump of one KV-cache group of a vLLM InputBatch (or MultiGroupBlockTable /
    BlockTable). ``num_reqs`` defaults to the batch's; ``num_blocks`` comes from ``block_pool``
    (with its ref counts and free queue) when given. Per-step arrays (seq_lens, positions, ...)
    are the runner's CPU buffers, sliced to the step; pass them to enable the checks that need them.

    ``ref_cnt`` is taken from ``block_pool`` only when the batch has a single KV-cache group: with
    several (a hybrid model) one pool serves every group and a block's ref count counts the holders
    in all of them, which one group's table cannot match. (A bare BlockTable does not say how many
    groups there are: pass the InputBatch or MultiGroupBlockTable.)

    ``group_kind`` is "state" for a state group (Mamba-like: one state block per request); by
    default it is read from the table (vLLM's ``slot_mapping_mode`` NONE). ``profile`` names the
    kvviz profile of the vLLM version that ran (``kvviz.core.versions``), recorded in the dump so that
    ``kvviz check`` applies that version's rules.

    ``kernel_block_table`` (vLLM v0.32.0+, where the table holds KV-manager ids): the attention
    group's table the backend read (``AttentionGroup.kernel_block_table[ubatch, :num_reqs_padded]``);
    its width over the table's gives the kernel block size (``kvviz.dumps.kernel_table``).
    """
    bt, batch_reqs, num_groups = _group_table(obj, group)
    n = num_reqs if num_reqs is not None else batch_reqs
    if n is None:
        raise BadInput("num_reqs is needed when capturing a bare block table")
    buf = bt.block_table
    cpu = getattr(buf, "np", None)
    cpu = to_numpy(cpu if cpu is not None else getattr(buf, "cpu", buf))
    device = to_numpy(getattr(buf, "gpu", None)) if include_device else None
    kbs = int(bt.block_size)
    bs = int(getattr(bt, "kv_cache_block_size", kbs) or kbs)
    ref = free = None
    if block_pool is not None:
        nb, ref, free = _pool_state(block_pool)
        num_blocks = num_blocks or nb
        if num_groups is not None and num_groups > 1:
            ref = None          # counts every group's holders: not comparable with one group's rows
    if group_kind is None and is_state_table(bt):
        group_kind = "state"
    if num_blocks is None:
        raise BadInput("num_blocks is needed (pass it, or pass block_pool)")
    m = {"kvviz_dump_version": DUMP_VERSION, "block_size": bs, "num_blocks": int(num_blocks),
         "num_reqs": int(n), "block_table": cpu, "num_blocks_per_row": to_numpy(bt.num_blocks_per_row)}
    if kbs != bs:
        m["kernel_block_size"] = kbs
    for key in ("dcp_world_size", "dcp_rank", "cp_kv_cache_interleave_size"):
        v = getattr(bt, key, None)
        if isinstance(v, (int, np.integer)):
            m[key] = int(v)
    optional = {"block_table_device": device, "num_reqs_padded": num_reqs_padded,
                "seq_lens": seq_lens, "query_start_loc": query_start_loc, "positions": positions,
                "slot_mapping": slot_mapping, "paged_kv_indptr": paged_kv_indptr,
                "paged_kv_indices": paged_kv_indices, "paged_kv_last_page_len": paged_kv_last_page_len,
                "ref_cnt": ref, "free_block_ids": free, "sliding_window": sliding_window}
    for k, v in optional.items():
        if v is not None:
            m[k] = v if isinstance(v, int) else to_numpy(v)
    kbt = to_numpy(kernel_block_table)
    if kbt is not None:
        r = kbt.shape[1] // cpu.shape[1] if kbt.ndim == 2 and cpu.ndim == 2 and cpu.shape[1] else 0
        if kbs == bs and r > 1 and bs % r == 0:
            m["kernel_block_size"] = bs // r
        m["kernel_block_table"] = kbt
    if profile is not None:
        m["profile"] = profile
    if group_kind is not None:
        m["group_kind"] = group_kind
    return dump_from_mapping(m)


# --- kvviz's own simulator --------------------------------------------------------------

def dump_from_step(record, config, group: int = 0) -> Dump:
    """The dump of one engine step (``kvviz.core.records.StepRecord``) for one KV-cache group.

    ``block_table_device`` is what the kernel read: the mirror after the commit, with the padded
    rows as the attention metadata saw them (zero-filled, as vLLM does before the kernel runs).
    ``ref_cnt`` is left out when several groups share the pool (a ref counts every group). The
    dump records the run's profile, and ``group_kind: "state"`` for a state group (whose table
    holds state indices: never split into kernel blocks)."""
    n, r_pad = record.num_reqs, record.num_reqs_padded
    inp = record.inputs[group]
    rules = get_profile(getattr(config, "profile", None))
    m = {"kvviz_dump_version": DUMP_VERSION, "block_size": config.block_size,
         "num_blocks": config.num_blocks, "num_reqs": n, "num_reqs_padded": r_pad,
         "free_block_ids": np.array(record.free_queue, dtype=np.int32),
         "profile": rules.label, "vllm": rules.name, "runner": getattr(record, "runner", "v1")}
    if m["runner"] == "v2":
        # the gathered input table (batch order) and the request-state rows it came from; from
        # v0.32.0 the state rows hold manager ids and the attention reads the kernel-block table
        # b * r + j of every gathered row (kvviz.core.slots_v2.expand_kernel_blocks)
        table = record.device_tables[group]
        if rules.mrv2_dcp_slots == "manager_ids" and config.groups[group].kind != "state":
            from kvviz.core.slots_v2 import expand_kernel_blocks

            table = expand_kernel_blocks(table, config.geometry.blocks_per_kv_block)
        gathers = [e for e in getattr(record, "events", ()) if e.get("kind") == "gather" and "dirty_rows" in e]
        if gathers and table is record.device_tables[group]:
            m["previous_num_reqs"] = r_pad + int(gathers[-1]["dirty_rows"])   # v0.33.0's dirty rows
        m.update(block_table=table.copy(),
                 idx_mapping=np.array(record.idx_mapping, dtype=np.int32),
                 state_block_table=record.cpu_tables[group].copy(),
                 state_num_blocks=record.num_blocks_per_row[group].copy())
    else:
        dev = record.device_tables[group].copy()
        # v0.32.0+ with split blocks: the tables hold manager ids, the backend read the group's table
        view = None if inp is None else inp.block_table if inp.manager_block_table is None else inp.manager_block_table
        dev[n:r_pad] = view[n:r_pad] if view is not None else 0
        m.update(block_table=record.cpu_tables[group].copy(),
                 num_blocks_per_row=record.num_blocks_per_row[group].copy(), block_table_device=dev)
        if inp is not None and inp.manager_block_table is not None:
            m["kernel_block_table"] = inp.block_table
    g = config.groups[group]
    if len(config.groups) == 1:
        m["ref_cnt"] = np.array(record.ref_counts, dtype=np.int32)
    if g.kind == "state":
        m["group_kind"] = "state"
    elif config.kbs != config.block_size:
        m["kernel_block_size"] = config.kbs
    if config.dcp_world_size != 1:
        m.update(dcp_world_size=config.dcp_world_size, dcp_rank=config.dcp_rank,
                 cp_kv_cache_interleave_size=config.cp_kv_cache_interleave_size)
    if g.kind == "sliding_window":
        m["sliding_window"] = g.sliding_window
    if inp is not None:
        m.update(seq_lens=inp.seq_lens, query_start_loc=inp.query_start_loc, positions=inp.positions)
        for k in ("slot_mapping", "paged_kv_indptr", "paged_kv_indices", "paged_kv_last_page_len"):
            if getattr(inp, k) is not None:
                m[k] = getattr(inp, k)
    return dump_from_mapping({k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
                              for k, v in m.items()})


# --- Model Runner V2 -------------------------------------------------------------------------------

def _device_or_host(x):
    """A staged tensor's device side (what the gather reads), else its host side, else itself."""
    for name in ("gpu", "np", "cpu"):
        v = getattr(x, name, None)
        if v is not None and not callable(v):
            return v
    return x


def capture_v2(block_tables, *, idx_mapping, num_reqs: int | None = None, num_reqs_padded: int | None = None,
               group: int = 0, num_blocks: int | None = None, block_pool=None, seq_lens=None,
               query_start_loc=None, positions=None, slot_mapping=None, paged_kv_indptr=None,
               paged_kv_indices=None, paged_kv_last_page_len=None, sliding_window: int | None = None,
               vllm: str | None = None, group_kind: str | None = None,
               kernel_block_size: int | None = None) -> Dump:
    """A validated Model Runner V2 dump (``runner: "v2"``) of one KV-cache group, from an MRV2-shaped
    ``BlockTables`` (duck-typed, as ``vllm/v1/worker/gpu/block_table.py`` lays it out): per group a
    staged state table ``block_tables[g]`` (its ``.gpu`` side is read), the counts ``num_blocks``
    ([groups, max_num_reqs], its ``.np`` or ``.gpu``) and the gathered ``input_block_tables[g]``;
    ``block_sizes`` / ``kernel_block_sizes`` give the geometry. ``idx_mapping`` is the step's
    batch position -> request-state index ([num_reqs]); ``num_reqs`` defaults to its length.

    From vLLM v0.32.0 the BlockTables has no ``kernel_block_sizes``: its rows hold KV-manager ids, and
    an attention backend with smaller kernel blocks reads ``b * r + j`` (``AttentionGroup.
    map_to_kernel_block_table``); pass that ``kernel_block_size`` and the dump's ``block_table`` is
    that kernel-block table of the gathered rows (the state table stays in manager ids)."""
    try:
        state_obj = block_tables.block_tables[group]
        gathered = block_tables.input_block_tables[group]
        counts_obj = block_tables.num_blocks
    except (AttributeError, TypeError, IndexError, KeyError):
        raise BadInput(f"{type(block_tables).__name__} does not look like Model Runner V2's BlockTables "
                       f"(block_tables, num_blocks, input_block_tables for group {group})") from None
    state = to_numpy(_device_or_host(state_obj))
    counts = to_numpy(getattr(counts_obj, "np", None) if getattr(counts_obj, "np", None) is not None
                      else _device_or_host(counts_obj))
    counts = counts[group] if counts.ndim == 2 else counts
    idx = to_numpy(idx_mapping)
    n = int(idx.shape[0]) if num_reqs is None else int(num_reqs)
    sizes = getattr(block_tables, "block_sizes", None)
    kernel_sizes = getattr(block_tables, "kernel_block_sizes", None)
    bs = int(sizes[group]) if sizes is not None else None
    kbs = int(kernel_sizes[group]) if kernel_sizes is not None else bs
    if bs is None:
        raise BadInput("the block size is unknown: the BlockTables has no block_sizes")
    gathered = to_numpy(gathered)
    if kernel_block_size is not None and kernel_sizes is None and int(kernel_block_size) != bs:
        kbs = int(kernel_block_size)
        if kbs < 1 or bs % kbs:
            raise BadInput(f"kernel_block_size {kbs} does not divide block_size {bs}")
        from kvviz.core.slots_v2 import expand_kernel_blocks

        gathered = expand_kernel_blocks(gathered, Geometry(bs, kbs).blocks_per_kv_block)
    ref = free = None
    if block_pool is not None:
        nb, ref, free = _pool_state(block_pool)
        num_blocks = num_blocks or nb
        if len(sizes or ()) > 1:
            ref = None
    if num_blocks is None:
        raise BadInput("num_blocks is needed (pass it, or pass block_pool)")
    m = {"kvviz_dump_version": DUMP_VERSION, "block_size": bs, "num_blocks": int(num_blocks), "num_reqs": n,
         "runner": "v2", "block_table": gathered, "idx_mapping": idx, "state_block_table": state,
         "state_num_blocks": counts}
    if kbs != bs:
        m["kernel_block_size"] = kbs
    for key, attr in (("dcp_world_size", "cp_size"), ("dcp_rank", "cp_rank"),
                      ("cp_kv_cache_interleave_size", "cp_interleave")):
        v = getattr(block_tables, attr, None)
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            m[key] = int(v)
    optional = {"num_reqs_padded": num_reqs_padded, "seq_lens": seq_lens, "query_start_loc": query_start_loc,
                "positions": positions, "slot_mapping": slot_mapping, "paged_kv_indptr": paged_kv_indptr,
                "paged_kv_indices": paged_kv_indices, "paged_kv_last_page_len": paged_kv_last_page_len,
                "ref_cnt": ref, "free_block_ids": free, "sliding_window": sliding_window,
                "vllm": vllm, "group_kind": group_kind}
    for k, v in optional.items():
        if v is not None:
            m[k] = v if isinstance(v, (int, str)) else to_numpy(v)
    if (m.get("dcp_world_size"), m.get("dcp_rank"), m.get("cp_kv_cache_interleave_size")) == (1, 0, 1):
        for k in ("dcp_world_size", "dcp_rank", "cp_kv_cache_interleave_size"):
            m.pop(k)
    return dump_from_mapping(m)
