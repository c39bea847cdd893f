"""The canonical batch every notation converts to and from, and what the notations share.

The canonical answer to "where does token ``pos`` of request ``i`` keep its K and V?" is a
**slot**: the index of one token-sized cell in a flat per-layer KV buffer (``block *
block_size + offset`` in vLLM). Every notation describes the same buffer, so a slot means the
same bytes in all of them (``kvviz.core.layout`` turns it into a byte offset).

Scope: one KV-cache group, one layer, no decode context parallelism (DCP shards a
request's tokens across ranks, so one rank's arrays do not hold every token).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kvviz.core.block_table import cdiv
from kvviz.errors import BadInput

DEEPINFER_PAGE = 128
"""DeepInfer's fixed page; the canonical buffer is rounded up to whole pages of it."""


class NotRepresentable(BadInput):
    """The batch cannot be written in this notation (with a reason naming a token)."""


# --- the canonical form -------------------------------------------------------------------

@dataclass(frozen=True)
class CanonicalRequest:
    req_id: str
    slots: tuple[int, ...]   # slot of position p, for p in [0, seq_len)
    query_len: int = 0       # the last query_len positions are computed (written) this step

    @property
    def seq_len(self) -> int:
        return len(self.slots)


@dataclass(frozen=True)
class CanonicalBatch:
    requests: tuple[CanonicalRequest, ...]
    num_slots: int           # size of the flat buffer (cells) the slots index into

    def __post_init__(self):
        for r in self.requests:
            if not 0 <= r.query_len <= r.seq_len:
                raise BadInput(f"{r.req_id}: query_len {r.query_len} outside [0, {r.seq_len}]")
            if r.slots and (min(r.slots) < 0 or max(r.slots) >= self.num_slots):
                raise BadInput(f"{r.req_id}: a slot lies outside [0, {self.num_slots})")
            if len(set(r.slots)) != len(r.slots):
                raise BadInput(f"{r.req_id}: two positions share one slot")
        owner: dict[int, int] = {}
        for r in self.requests:  # a slot shared by two requests must hold the same position
            for p, s in enumerate(r.slots):
                if owner.setdefault(s, p) != p:
                    raise BadInput(f"slot {s} holds position {owner[s]} of one request and {p} of "
                                   f"{r.req_id}: no engine shares a cell across positions")

    def address(self, i: int, pos: int) -> int:
        return self.requests[i].slots[pos]

    def new_tokens(self) -> list[tuple[int, int]]:
        """(request index, position) of every token written this step, in batch order."""
        return [(i, p) for i, r in enumerate(self.requests)
                for p in range(r.seq_len - r.query_len, r.seq_len)]


def canonical_from_block_table(block_table, seq_lens, query_lens, block_size: int, *,
                               req_ids=None, num_slots: int | None = None) -> CanonicalBatch:
    """Slots from a vLLM-style table (kernel-block ids) and lengths."""
    bt = np.asarray(block_table)
    reqs = []
    for i, (s, q) in enumerate(zip(seq_lens, query_lens)):
        s, q = int(s), int(q)
        pos = np.arange(s)
        slots = bt[i, pos // block_size].astype(np.int64) * block_size + pos % block_size
        reqs.append(CanonicalRequest(str(req_ids[i]) if req_ids is not None else f"r{i}",
                                     tuple(int(x) for x in slots), q))
    top = max((max(r.slots) for r in reqs if r.slots), default=0) + 1
    if num_slots is None:
        num_slots = cdiv(top, DEEPINFER_PAGE) * DEEPINFER_PAGE
    return CanonicalBatch(tuple(reqs), max(num_slots, top))


def canonical_from_step(step, *, req_ids=None, num_slots: int | None = None) -> CanonicalBatch:
    """From a ``StepInputs`` (its real rows only; padding rows carry no tokens)."""
    if step.dcp_world_size != 1:
        raise NotRepresentable("with decode context parallelism each rank holds only part of a "
                               "request's tokens; pick a batch without DCP")
    n = step.num_reqs
    q = np.diff(step.query_start_loc[: n + 1])
    return canonical_from_block_table(step.block_table[:n], step.seq_lens[:n], q,
                                      step.kernel_block_size, req_ids=req_ids, num_slots=num_slots)


def canonical_from_record(record, config, gid: int = 0) -> CanonicalBatch:
    """From an engine ``StepRecord`` (the group ``gid`` inputs)."""
    step = record.inputs[gid]
    if step is None or step.slot_mapping is None:
        raise NotRepresentable("this KV-cache group holds recurrent state, not per-token KV")
    ids = [s.req_id for s in record.scheduled]
    return canonical_from_step(step, req_ids=ids,
                               num_slots=config.num_blocks * config.block_size)



# --- what the notations share ------------------------------------------------------------

def run_blocks(c: CanonicalBatch, i: int, page: int, who: str) -> list[int]:
    """Physical page of each logical page of request i, if every page is aligned and whole."""
    r = c.requests[i]
    pages = []
    for j in range(cdiv(r.seq_len, page)):
        first = r.slots[j * page]
        phys, off = divmod(first, page)
        if off:
            raise NotRepresentable(f"{who}: token {j * page} of {r.req_id} sits at slot {first}, "
                                   f"offset {off} inside a {page}-token page (needs 0)")
        for p in range(j * page, min((j + 1) * page, r.seq_len)):
            if r.slots[p] != phys * page + p % page:
                raise NotRepresentable(
                    f"{who}: token {p} of {r.req_id} sits at slot {r.slots[p]}, outside page "
                    f"{phys} that holds token {j * page}; a {page}-token page must be contiguous")
        pages.append(phys)
    return pages


def new_slots_of(c: CanonicalBatch) -> np.ndarray:
    """Slot of every token written this step, in batch order."""
    return np.array([c.requests[i].slots[p] for i, p in c.new_tokens()], dtype=np.int64)


def query_lens_of(c: CanonicalBatch) -> np.ndarray:
    """Tokens each request computes this step."""
    return np.array([r.query_len for r in c.requests], dtype=np.int64)


def seq_lens_of(c: CanonicalBatch) -> np.ndarray:
    """Each request's sequence length."""
    return np.array([r.seq_len for r in c.requests], dtype=np.int32)


def check_index(form, i: int, pos: int) -> None:
    """BadInput unless request ``i`` of ``form`` exists and holds position ``pos``."""
    if not 0 <= i < len(form.req_ids):
        raise BadInput(f"request index {i} outside [0, {len(form.req_ids)})")
    if not 0 <= pos < int(form.seq_lens[i]):
        raise BadInput(f"position {pos} outside [0, {int(form.seq_lens[i])}) of {form.req_ids[i]}")


def token_index(form, i: int, pos: int) -> int | None:
    """Index of (i, pos) among this step's new tokens, or None if it was written earlier."""
    q = form.query_lens
    start = int(form.seq_lens[i]) - int(q[i])
    if pos < start:
        return None
    return int(q[:i].sum()) + pos - start


@dataclass(frozen=True)
class Mark:
    """One array element a token is found through: ``array[index]`` (index is a tuple)."""
    array: str
    index: tuple
    value: int


def canonical_by_address(f) -> CanonicalBatch:
    """Back to the canonical form by asking the notation where each token of each request is."""
    reqs = []
    for i, rid in enumerate(f.req_ids):
        s = int(f.seq_lens[i])
        reqs.append(CanonicalRequest(rid, tuple(f.address(i, p) for p in range(s)),
                                     int(f.query_lens[i])))
    return CanonicalBatch(tuple(reqs), f.num_slots)
