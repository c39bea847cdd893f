"""Faults injected into vLLM's OWN classes, in this process, before the engine is built (the driver runs
with ``VLLM_ENABLE_V1_MULTIPROCESSING=0`` so the worker is in this process too). Run by the engine venv's
python: vLLM, the standard library and numpy only.

``install("NAME[:N]")`` patches, and returns a report dict that the patch fills in as it fires (the driver
prints it in its summary); ``uninstall()`` takes the patches out again (a batch of engines in one process).
``N`` is the 1-based count of the call that goes wrong (default 1), counted over calls that would change
something. Placed against vLLM 0.32.0's V1 model runner (the CPU runner is a
subclass of ``GPUModelRunner`` and shares its ``InputBatch`` / ``BlockTable``):

- ``drop_append_row:N``: the N-th ``BlockTable.append_row`` with block ids (``add_row`` goes through it
  too) does nothing: the row's count and ids stay short, and the slot mapping reads what the columns held.
- ``move_row_keeps_tail``: rows are not zeroed when their request leaves (``clear_row`` only resets the
  count; ``move_row`` copies the first ``num_blocks`` ids and leaves both the target's old tail and the
  source's ids): a row reused by ``condense`` or ``add_row`` keeps its old occupant's ids past its count
  (vllm#39589). vLLM's own consumers mask by the count, so on the CPU it shows only to a reader of the
  WHOLE row (the captured block table beyond ``num_blocks_per_row``; on other backends, a kernel that reads
  a fixed width).
- ``free_while_held:N``: when the N-th request's blocks are freed, the last block of another live request
  (held by it alone, not cached; the holder with the fewest blocks first) is freed with them: it goes to the front of the free queue, so a later
  allocation hands it to a second row while the holder's row still names it.
- ``wrong_slot:N``: after the N-th ``BlockTable.compute_slot_mapping`` with tokens, the first token's slot
  is one higher than the block table says (the KV write lands beside its place).
- ``preempt_not_from_zero``: when a preempted request is resumed, its new block ids are appended after its
  stale pre-preemption ones instead of replacing them (vllm#23316): the row holds freed blocks first, and
  positions 0.. map into them. Needs a scenario that preempts (a tight pool).
"""
from __future__ import annotations

FAULTS = ("drop_append_row", "move_row_keeps_tail", "free_while_held", "wrong_slot", "preempt_not_from_zero")


def parse(spec: str) -> tuple[str, int]:
    name, _, n = spec.partition(":")
    if name not in FAULTS:
        raise ValueError(f"unknown fault {name!r}; one of {', '.join(FAULTS)}")
    try:
        nth = int(n) if n else 1
    except ValueError:
        raise ValueError(f"fault {spec!r}: N must be an integer") from None
    if nth < 1:
        raise ValueError(f"fault {spec!r}: N counts from 1")
    return name, nth


_MISSING = object()
_PATCHED: list = []   # (class, attribute, what it held before): uninstall() puts them back, newest first


def _set(cls, attr: str, fn) -> None:
    _PATCHED.append((cls, attr, cls.__dict__.get(attr, _MISSING)))
    setattr(cls, attr, fn)


def uninstall() -> None:
    """Undo every patch install() made in this process (a driver running several engines in turn)."""
    while _PATCHED:
        cls, attr, before = _PATCHED.pop()
        if before is _MISSING:
            delattr(cls, attr)
        else:
            setattr(cls, attr, before)


def install(spec: str) -> dict:
    name, nth = parse(spec)
    report = {"name": name, "n": nth, "calls": 0, "fired": []}
    {"drop_append_row": _drop_append_row, "move_row_keeps_tail": _move_row_keeps_tail,
     "free_while_held": _free_while_held, "wrong_slot": _wrong_slot,
     "preempt_not_from_zero": _preempt_not_from_zero}[name](report)
    return report


def _drop_append_row(report: dict) -> None:
    from vllm.v1.worker.block_table import BlockTable

    original = BlockTable.append_row

    def append_row(self, block_ids, row_idx):
        if len(block_ids):
            report["calls"] += 1
            if report["calls"] == report["n"]:
                report["fired"].append({"row": int(row_idx), "dropped": [int(b) for b in block_ids]})
                return None
        return original(self, block_ids, row_idx)

    _set(BlockTable, "append_row", append_row)


def _move_row_keeps_tail(report: dict) -> None:
    from vllm.v1.worker.block_table import BlockTable

    def clear_row(self, row_idx):
        report["calls"] += 1
        self.num_blocks_per_row[row_idx] = 0

    def move_row(self, src, tgt):
        n = int(self.num_blocks_per_row[src])
        table = self.block_table.np
        tail = [int(b) for b in table[tgt, n:] if b]
        table[tgt, :n] = table[src, :n]
        self.num_blocks_per_row[tgt] = n
        self.num_blocks_per_row[src] = 0
        if tail:
            report["fired"].append({"src": int(src), "tgt": int(tgt), "count": n, "stale_tail": tail})

    original_add = BlockTable.add_row

    def add_row(self, block_ids, row_idx):
        original_add(self, block_ids, row_idx)
        n = int(self.num_blocks_per_row[row_idx])
        tail = [int(b) for b in self.block_table.np[row_idx, n:] if b]
        if tail:
            report["fired"].append({"add_row": int(row_idx), "count": n, "stale_tail": tail})

    _set(BlockTable, "clear_row", clear_row)
    _set(BlockTable, "move_row", move_row)
    _set(BlockTable, "add_row", add_row)


def _free_while_held(report: dict) -> None:
    """After the N-th request's blocks are popped for freeing, one block that another live request still
    holds (its last block, held by it alone, not a prefix-cache block) goes back to the pool as well. The
    manager then forgets that the holder had it, so the holder's own free later does not free it twice: the
    pool's counts stay consistent (no assertion), while the holder's row in the worker keeps the id."""
    from vllm.v1.core.single_type_kv_cache_manager import SingleTypeKVCacheManager

    original = SingleTypeKVCacheManager.pop_blocks_for_free
    stolen: dict = {}  # holder request id -> the block taken from it

    def pop_blocks_for_free(self, request_id):
        blocks = original(self, request_id)
        if request_id in stolen:
            victim = stolen.pop(request_id)
            blocks = [b for b in blocks if b is not victim]
        if not blocks:
            return blocks
        report["calls"] += 1
        if report["calls"] == report["n"]:
            _steal_one(self, request_id, stolen, report)
        return blocks

    _set(SingleTypeKVCacheManager, "pop_blocks_for_free", pop_blocks_for_free)


def _steal_one(manager, freed_request: str, stolen: dict, report: dict) -> None:
    # the youngest holder first (fewest blocks, then id): the likeliest to outlive the step that frees
    for holder, held in sorted(manager.req_to_blocks.items(), key=lambda kv: (len(kv[1]), kv[0])):
        if holder == freed_request or not held:
            continue
        victim = held[-1]
        if victim.ref_cnt == 1 and not victim.is_null and victim.block_hash is None:
            manager.block_pool.free_blocks([victim])
            stolen[holder] = victim
            report["fired"].append({"freed_request": freed_request, "holder": holder,
                                    "block": int(victim.block_id)})
            return
    report["fired"].append({"freed_request": freed_request, "block": None,
                            "why": "no live request holds an uncached block alone"})


def _wrong_slot(report: dict) -> None:
    from vllm.v1.worker.block_table import BlockTable

    original = BlockTable.compute_slot_mapping

    def compute_slot_mapping(self, num_reqs, query_start_loc, positions, *args, **kwargs):
        result = original(self, num_reqs, query_start_loc, positions, *args, **kwargs)
        if positions.shape[0] == 0 or getattr(self, "slot_mapping", None) is None:
            return result
        report["calls"] += 1
        if report["calls"] == report["n"]:
            slots = self.slot_mapping.gpu
            before = int(slots[0])
            if before >= 0:
                slots[0] = before + 1
                report["fired"].append({"token": 0, "slot": before, "now": before + 1})
        return result

    _set(BlockTable, "compute_slot_mapping", compute_slot_mapping)


def _preempt_not_from_zero(report: dict) -> None:
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner

    original = GPUModelRunner._update_states

    def _update_states(self, scheduler_output, *args, **kwargs):
        data = scheduler_output.scheduled_cached_reqs
        resumed = _resumed_ids(data)
        for i, req_id in enumerate(data.req_ids):
            state = self.requests.get(req_id)
            if req_id not in resumed or state is None or data.new_block_ids[i] is None:
                continue
            report["calls"] += 1
            merged = []
            for g, (old, new) in enumerate(zip(state.block_ids, data.new_block_ids[i])):
                width = self.input_batch.block_table[g].max_num_blocks_per_req
                merged.append((list(old) + list(new))[:width])
            report["fired"].append({"request": req_id, "stale": [list(o) for o in state.block_ids],
                                    "row": merged})
            data.new_block_ids[i] = tuple(merged)
        return original(self, scheduler_output, *args, **kwargs)

    _set(GPUModelRunner, "_update_states", _update_states)
    _clip_append_row(report)


def _clip_append_row(report: dict) -> None:
    """With stale ids in front, a growing row would run past the table's width (a numpy error that
    vLLM's bug would not have had on a wider table): ids past the width are dropped and counted."""
    from vllm.v1.worker.block_table import BlockTable

    original = BlockTable.append_row

    def append_row(self, block_ids, row_idx):
        room = self.max_num_blocks_per_req - int(self.num_blocks_per_row[row_idx])
        if len(block_ids) > room:
            report["clipped"] = report.get("clipped", 0) + len(block_ids) - max(room, 0)
            block_ids = list(block_ids)[: max(room, 0)]
        return original(self, block_ids, row_idx)

    _set(BlockTable, "append_row", append_row)


def _resumed_ids(data) -> set:
    """The requests resumed from preemption this step: a set in newer releases, a per-request flag list
    (``resumed_from_preemption``) in older ones."""
    if hasattr(data, "resumed_req_ids"):
        return set(data.resumed_req_ids)
    flags = getattr(data, "resumed_from_preemption", None) or []
    return {rid for rid, flag in zip(data.req_ids, flags) if flag}
