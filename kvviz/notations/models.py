"""One batch, six ways to write it down.

Every engine answers the same question (where does token ``pos`` of request ``i`` keep
its K and V?) with a different set of arrays. This module keeps one *canonical* answer,
converts it into each engine's arrays and back, and can ask each set of arrays the
question directly, so tests can prove they all give the same KV address.

The address is a **slot**: the index of one token-sized cell in a flat per-layer KV
buffer (``block * block_size + offset`` in vLLM). All six notations below describe the
same buffer, so a slot means the same bytes in all of them (``kvviz.core.layout`` turns it
into a byte offset).

Notations (``NOTATIONS``), each a dataclass with ``address(i, pos)`` and ``locate(i, pos)``:

``vllm``
    ``block_table[row, j]`` (int32, one row per request, ``j`` = logical block) with
    ``seq_lens``, ``query_start_loc``, ``positions`` and ``slot_mapping`` (int64, one per
    new token). ``slot = block_table[i, pos // B] * B + pos % B``.
``flashinfer``
    CSR: ``kv_indptr`` (prefix sum of pages), ``kv_indices`` (the pages, request after
    request), ``kv_last_page_len`` (1..P, 0 for an empty request), plus ``qo_indptr``.
    ``slot = kv_indices[kv_indptr[i] + pos // P] * P + pos % P``.
``sglang``
    Page size 1: ``req_to_token[req_pool_indices[i], pos]`` *is* the slot. Row 0 of
    ``req_to_token`` is a dummy (as in 2026 SGLang), so request ``i`` uses pool row
    ``i + 1``. ``out_cache_loc`` lists the slots written this step, and slot 0 is never a
    real token's (SGLang reserves it for padded tokens; here it lies in vLLM's null block).
``trtllm``
    ``kv_cache_block_offsets[pool, i * beam + b, kv, j]`` (int32, ``kv`` 0 = K, 1 = V).
    An entry is a flat index ``(block * num_layers + layer) * 2 + kv`` into a pool laid
    out as ``[blocks, layers, 2, tokens_per_block * ...]``; we show one pool (pool 0),
    beam width 1 and layer 0, so with one layer K = ``2 * block`` and V = ``2 * block + 1``.
    ``slot = (offsets[0, i, 0, pos // T] // (2 * L)) * T + pos % T``.
``llamacpp``
    No pages: the cache is an array of cells, one per slot, each tagged with the token
    position it holds and the set of sequence ids that see it. A shared prefix is one
    cell carrying several sequence ids. Request ``i`` is sequence ``i``.
    ``slot`` = the cell whose ``pos == pos`` and whose seq set contains ``i``.
``deepinfer``
    The interval form of the first design document: fixed 128-token blocks, and per
    request a list of ``(start_page, length)`` runs of physically consecutive pages
    (CSR over runs: ``desc_indptr``). A run breaks wherever the next logical page is not
    the next physical page (a page from elsewhere in the free queue, the end of a shared
    prefix, a copy-on-write page). A batch is expressible only if every 128-token
    logical page of every request sits in one aligned 128-token physical page; otherwise
    the converter raises ``NotRepresentable`` with the first offending token.

Scope: one KV-cache group, one layer, no decode context parallelism (DCP shards a
request's tokens across ranks, so one rank's arrays do not hold every token).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kvviz.core.block_table import cdiv, get_block_table_width
from kvviz.constants import NULL_BLOCK_ID
from kvviz.errors import BadInput

DEEPINFER_PAGE = 128
SGLANG_DUMMY_ROW = 0
TRT_UNUSED = 0
"""Entries of ``kv_cache_block_offsets`` past a request's last block: TRT-LLM allocates the
tensor with ``torch.empty`` (garbage); we show 0. Kernels never read past ``seq_len``."""
LLAMA_EMPTY_POS = -1


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

    def same_as(self, other: "CanonicalBatch") -> bool:
        return ([(r.slots, r.query_len) for r in self.requests]
                == [(r.slots, r.query_len) for r in other.requests])


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


def _run_blocks(c: CanonicalBatch, i: int, page: int, who: str) -> list[int]:
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


def _new_slots(c: CanonicalBatch) -> np.ndarray:
    return np.array([c.requests[i].slots[p] for i, p in c.new_tokens()], dtype=np.int64)


def _query_lens(c: CanonicalBatch) -> np.ndarray:
    return np.array([r.query_len for r in c.requests], dtype=np.int64)


def _seq_lens(c: CanonicalBatch) -> np.ndarray:
    return np.array([r.seq_len for r in c.requests], dtype=np.int32)


def _check(form, i: int, pos: int) -> None:
    if not 0 <= i < len(form.req_ids):
        raise BadInput(f"request index {i} outside [0, {len(form.req_ids)})")
    if not 0 <= pos < int(form.seq_lens[i]):
        raise BadInput(f"position {pos} outside [0, {int(form.seq_lens[i])}) of {form.req_ids[i]}")


def _token_index(form, i: int, pos: int) -> int | None:
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


# --- vLLM -----------------------------------------------------------------------------------

@dataclass
class VllmForm:
    req_ids: list[str]
    block_size: int
    block_table: np.ndarray      # int32 [R, width]
    seq_lens: np.ndarray         # int32 [R]
    query_start_loc: np.ndarray  # int32 [R + 1]
    positions: np.ndarray        # int64 [T]
    slot_mapping: np.ndarray     # int64 [T]
    num_slots: int

    @property
    def query_lens(self):
        return np.diff(self.query_start_loc)

    def address(self, i: int, pos: int) -> int:
        _check(self, i, pos)
        return int(self.block_table[i, pos // self.block_size]) * self.block_size + pos % self.block_size

    def locate(self, i: int, pos: int) -> list[Mark]:
        _check(self, i, pos)
        j = pos // self.block_size
        out = [Mark("block_table", (i, j), int(self.block_table[i, j]))]
        t = _token_index(self, i, pos)
        if t is not None:
            out += [Mark("positions", (t,), int(self.positions[t])),
                    Mark("slot_mapping", (t,), int(self.slot_mapping[t]))]
        return out

    def coords(self, i: int, pos: int) -> dict:
        return {"block": int(self.block_table[i, pos // self.block_size]),
                "offset": pos % self.block_size, "slot": self.address(i, pos)}


def to_vllm(c: CanonicalBatch, block_size: int = 16) -> VllmForm:
    rows = [_run_blocks(c, i, block_size, "vLLM") for i in range(len(c.requests))]
    width = get_block_table_width(max((len(r) for r in rows), default=1) or 1, block_size)
    bt = np.full((len(rows), width), NULL_BLOCK_ID, dtype=np.int32)
    for i, r in enumerate(rows):
        bt[i, : len(r)] = r
    q = _query_lens(c)
    qsl = np.zeros(len(rows) + 1, dtype=np.int32)
    np.cumsum(q, out=qsl[1:])
    pos = np.array([p for _, p in c.new_tokens()], dtype=np.int64)
    return VllmForm([r.req_id for r in c.requests], block_size, bt, _seq_lens(c), qsl, pos,
                    _new_slots(c), c.num_slots)


def from_vllm(f: VllmForm) -> CanonicalBatch:
    return canonical_from_block_table(f.block_table, f.seq_lens, f.query_lens, f.block_size,
                                      req_ids=f.req_ids, num_slots=f.num_slots)


def _canonical_by_address(f) -> CanonicalBatch:
    """Back to the canonical form by asking the notation where each token of each request is."""
    reqs = []
    for i, rid in enumerate(f.req_ids):
        s = int(f.seq_lens[i])
        reqs.append(CanonicalRequest(rid, tuple(f.address(i, p) for p in range(s)),
                                     int(f.query_lens[i])))
    return CanonicalBatch(tuple(reqs), f.num_slots)


# --- FlashInfer -----------------------------------------------------------------------------

@dataclass
class FlashInferForm:
    req_ids: list[str]
    page_size: int
    kv_indptr: np.ndarray        # int32 [R + 1]
    kv_indices: np.ndarray       # int32 [pages]
    kv_last_page_len: np.ndarray  # int32 [R]
    qo_indptr: np.ndarray        # int32 [R + 1]
    num_slots: int

    @property
    def seq_lens(self):
        npages = np.diff(self.kv_indptr).astype(np.int64)
        return np.where(npages > 0, (npages - 1) * self.page_size + self.kv_last_page_len, 0)

    @property
    def query_lens(self):
        return np.diff(self.qo_indptr)

    def _k(self, i, pos):
        return int(self.kv_indptr[i]) + pos // self.page_size

    def address(self, i: int, pos: int) -> int:
        _check(self, i, pos)
        return int(self.kv_indices[self._k(i, pos)]) * self.page_size + pos % self.page_size

    def locate(self, i: int, pos: int) -> list[Mark]:
        _check(self, i, pos)
        k = self._k(i, pos)
        out = [Mark("kv_indptr", (i,), int(self.kv_indptr[i])),
               Mark("kv_indices", (k,), int(self.kv_indices[k]))]
        if pos // self.page_size == int(self.kv_indptr[i + 1]) - int(self.kv_indptr[i]) - 1:
            out.append(Mark("kv_last_page_len", (i,), int(self.kv_last_page_len[i])))
        return out

    def coords(self, i: int, pos: int) -> dict:
        return {"page": int(self.kv_indices[self._k(i, pos)]), "entry": pos % self.page_size,
                "slot": self.address(i, pos)}


def to_flashinfer(c: CanonicalBatch, page_size: int = 16) -> FlashInferForm:
    rows = [_run_blocks(c, i, page_size, "FlashInfer") for i in range(len(c.requests))]
    indptr = np.zeros(len(rows) + 1, dtype=np.int32)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    indices = np.array([b for r in rows for b in r], dtype=np.int32)
    seq = _seq_lens(c).astype(np.int64)
    rem = seq % page_size
    last = np.where(seq == 0, 0, np.where(rem == 0, page_size, rem)).astype(np.int32)
    qo = np.zeros(len(rows) + 1, dtype=np.int32)
    np.cumsum(_query_lens(c), out=qo[1:])
    return FlashInferForm([r.req_id for r in c.requests], page_size, indptr, indices, last, qo,
                          c.num_slots)


def from_flashinfer(f: FlashInferForm) -> CanonicalBatch:
    return _canonical_by_address(f)


# --- SGLang (page size 1) -------------------------------------------------------------------

@dataclass
class SGLangForm:
    req_ids: list[str]
    req_to_token: np.ndarray      # int32 [R + 1, max_context_len]; row 0 is the dummy row
    req_pool_indices: np.ndarray  # int64 [R]
    seq_lens: np.ndarray          # int64 [R]
    extend_seq_lens: np.ndarray   # int64 [R]: tokens computed this step
    out_cache_loc: np.ndarray     # int64 [T]: slot of each token computed this step
    num_slots: int

    @property
    def query_lens(self):
        return self.extend_seq_lens

    def address(self, i: int, pos: int) -> int:
        _check(self, i, pos)
        return int(self.req_to_token[int(self.req_pool_indices[i]), pos])

    def locate(self, i: int, pos: int) -> list[Mark]:
        _check(self, i, pos)
        row = int(self.req_pool_indices[i])
        out = [Mark("req_pool_indices", (i,), row),
               Mark("req_to_token", (row, pos), int(self.req_to_token[row, pos]))]
        t = _token_index(self, i, pos)
        if t is not None:
            out.append(Mark("out_cache_loc", (t,), int(self.out_cache_loc[t])))
        return out

    def coords(self, i: int, pos: int) -> dict:
        return {"pool_row": int(self.req_pool_indices[i]), "slot": self.address(i, pos)}


def to_sglang(c: CanonicalBatch) -> SGLangForm:
    n = len(c.requests)
    width = max((r.seq_len for r in c.requests), default=1) or 1
    rtt = np.zeros((n + 1, width), dtype=np.int32)
    for i, r in enumerate(c.requests):
        rtt[i + 1, : r.seq_len] = r.slots
    return SGLangForm([r.req_id for r in c.requests], rtt,
                      np.arange(1, n + 1, dtype=np.int64), _seq_lens(c).astype(np.int64),
                      _query_lens(c), _new_slots(c), c.num_slots)


def from_sglang(f: SGLangForm) -> CanonicalBatch:
    reqs = []
    for i, rid in enumerate(f.req_ids):
        row = int(f.req_pool_indices[i])
        if row == SGLANG_DUMMY_ROW:
            raise BadInput(f"{rid} points at the dummy row 0 of req_to_token")
        s = int(f.seq_lens[i])
        reqs.append(CanonicalRequest(rid, tuple(int(x) for x in f.req_to_token[row, :s]),
                                     int(f.extend_seq_lens[i])))
    return CanonicalBatch(tuple(reqs), f.num_slots)


# --- TensorRT-LLM -----------------------------------------------------------------------------

@dataclass
class TrtLlmForm:
    req_ids: list[str]
    tokens_per_block: int
    num_layers: int               # layers sharing the pool; we show layer 0
    kv_cache_block_offsets: np.ndarray  # int32 [pools=1, R * beam, 2, max_blocks_per_seq]
    seq_lens: np.ndarray          # int32 [R] (sequence_length)
    query_lens: np.ndarray        # int32 [R] (tokens computed this step)
    num_slots: int
    layer: int = 0

    def _block(self, i, pos):
        j = pos // self.tokens_per_block
        return j, int(self.kv_cache_block_offsets[0, i, 0, j]) // (2 * self.num_layers)

    def address(self, i: int, pos: int) -> int:
        _check(self, i, pos)
        _, b = self._block(i, pos)
        return b * self.tokens_per_block + pos % self.tokens_per_block

    def locate(self, i: int, pos: int) -> list[Mark]:
        _check(self, i, pos)
        j = pos // self.tokens_per_block
        o = self.kv_cache_block_offsets
        return [Mark("kv_cache_block_offsets", (0, i, 0, j), int(o[0, i, 0, j])),
                Mark("kv_cache_block_offsets", (0, i, 1, j), int(o[0, i, 1, j]))]

    def coords(self, i: int, pos: int) -> dict:
        j, b = self._block(i, pos)
        o = self.kv_cache_block_offsets
        return {"k_index": int(o[0, i, 0, j]), "v_index": int(o[0, i, 1, j]), "block": b,
                "offset": pos % self.tokens_per_block, "slot": self.address(i, pos)}


def trt_index(block: int, kv: int, num_layers: int = 1, layer: int = 0) -> int:
    """Flat index of (block, layer, K|V) in a pool laid out as [blocks, layers, 2, ...]."""
    return (block * num_layers + layer) * 2 + kv


def to_trtllm(c: CanonicalBatch, tokens_per_block: int = 16, num_layers: int = 1) -> TrtLlmForm:
    rows = [_run_blocks(c, i, tokens_per_block, "TensorRT-LLM") for i in range(len(c.requests))]
    width = max((len(r) for r in rows), default=1) or 1
    off = np.full((1, len(rows), 2, width), TRT_UNUSED, dtype=np.int32)
    for i, r in enumerate(rows):
        for j, b in enumerate(r):
            off[0, i, 0, j] = trt_index(b, 0, num_layers)
            off[0, i, 1, j] = trt_index(b, 1, num_layers)
    return TrtLlmForm([r.req_id for r in c.requests], tokens_per_block, num_layers, off,
                      _seq_lens(c), _query_lens(c).astype(np.int32), c.num_slots)


def from_trtllm(f: TrtLlmForm) -> CanonicalBatch:
    for i, rid in enumerate(f.req_ids):
        for j in range(cdiv(int(f.seq_lens[i]), f.tokens_per_block)):
            k, v = int(f.kv_cache_block_offsets[0, i, 0, j]), int(f.kv_cache_block_offsets[0, i, 1, j])
            if v != k + 1 or k % 2:
                raise BadInput(f"{rid} block {j}: K index {k} and V index {v} are not a K/V pair")
    return _canonical_by_address(f)


# --- llama.cpp ------------------------------------------------------------------------------

@dataclass
class LlamaCppForm:
    req_ids: list[str]            # request i is sequence id i
    cell_pos: np.ndarray          # int64 [num_cells]; -1 = empty
    cell_seqs: list[frozenset]    # [num_cells]: sequence ids that see the cell
    ubatch_cells: np.ndarray      # int64 [T]: cells written this step, in batch order
    ubatch_seq: np.ndarray        # int64 [T]: sequence id of each of those tokens
    num_slots: int
    _index: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        idx = {}
        for cell, (p, seqs) in enumerate(zip(self.cell_pos, self.cell_seqs)):
            for s in seqs:
                if (s, int(p)) in idx:
                    raise BadInput(f"sequence {s} has two cells for position {int(p)}")
                idx[(s, int(p))] = cell
        self._index = idx

    @property
    def seq_lens(self):
        n = np.zeros(len(self.req_ids), dtype=np.int64)
        for s, _ in self._index:
            if 0 <= s < len(n):
                n[s] += 1
        return n

    @property
    def query_lens(self):
        return np.bincount(self.ubatch_seq, minlength=len(self.req_ids)).astype(np.int64)

    def address(self, i: int, pos: int) -> int:
        _check(self, i, pos)
        return self._index[(i, pos)]

    def locate(self, i: int, pos: int) -> list[Mark]:
        cell = self.address(i, pos)
        out = [Mark("cells", (cell,), int(self.cell_pos[cell]))]
        t = _token_index(self, i, pos)
        if t is not None:
            out.append(Mark("ubatch_cells", (t,), int(self.ubatch_cells[t])))
        return out

    def coords(self, i: int, pos: int) -> dict:
        cell = self.address(i, pos)
        return {"cell": cell, "pos": int(self.cell_pos[cell]),
                "seq_ids": sorted(self.cell_seqs[cell]), "slot": cell}


def to_llamacpp(c: CanonicalBatch) -> LlamaCppForm:
    pos = np.full(c.num_slots, LLAMA_EMPTY_POS, dtype=np.int64)
    seqs: list[set] = [set() for _ in range(c.num_slots)]
    for i, r in enumerate(c.requests):
        for p, s in enumerate(r.slots):
            pos[s] = p
            seqs[s].add(i)
    new = c.new_tokens()
    return LlamaCppForm([r.req_id for r in c.requests], pos, [frozenset(s) for s in seqs],
                        _new_slots(c), np.array([i for i, _ in new], dtype=np.int64), c.num_slots)


def from_llamacpp(f: LlamaCppForm) -> CanonicalBatch:
    reqs = []
    q = f.query_lens
    for i, rid in enumerate(f.req_ids):
        s = int(f.seq_lens[i])
        try:
            slots = tuple(f._index[(i, p)] for p in range(s))
        except KeyError as e:
            raise BadInput(f"sequence {i} has a gap at position {e.args[0][1]}") from None
        reqs.append(CanonicalRequest(rid, slots, int(q[i])))
    return CanonicalBatch(tuple(reqs), f.num_slots)


# --- DeepInfer interval form ------------------------------------------------------------------

@dataclass
class DeepInferForm:
    req_ids: list[str]
    page_size: int                # fixed at 128 tokens in DeepInfer
    desc_indptr: np.ndarray       # int32 [R + 1]: request i owns runs [indptr[i], indptr[i+1])
    desc_start: np.ndarray        # int32 [D]: first physical page of each run
    desc_len: np.ndarray          # int32 [D]: pages in each run
    seq_lens: np.ndarray          # int32 [R]
    query_lens: np.ndarray        # int32 [R]
    slot_mapping: np.ndarray      # int64 [T]
    num_slots: int

    def _find(self, i: int, pos: int) -> tuple[int, int]:
        lp = pos // self.page_size
        seen = 0
        for d in range(int(self.desc_indptr[i]), int(self.desc_indptr[i + 1])):
            n = int(self.desc_len[d])
            if lp < seen + n:
                return d, int(self.desc_start[d]) + lp - seen
            seen += n
        raise BadInput(f"position {pos} of {self.req_ids[i]} is past its last run")

    def address(self, i: int, pos: int) -> int:
        _check(self, i, pos)
        _, page = self._find(i, pos)
        return page * self.page_size + pos % self.page_size

    def locate(self, i: int, pos: int) -> list[Mark]:
        _check(self, i, pos)
        d, _ = self._find(i, pos)
        out = [Mark("desc_start", (d,), int(self.desc_start[d])),
               Mark("desc_len", (d,), int(self.desc_len[d]))]
        t = _token_index(self, i, pos)
        if t is not None:
            out.append(Mark("slot_mapping", (t,), int(self.slot_mapping[t])))
        return out

    def coords(self, i: int, pos: int) -> dict:
        d, page = self._find(i, pos)
        return {"run": d - int(self.desc_indptr[i]), "run_page": page - int(self.desc_start[d]),
                "start_page": int(self.desc_start[d]),
                "length": int(self.desc_len[d]), "page": page, "offset": pos % self.page_size,
                "slot": self.address(i, pos)}


def page_runs(pages: list[int]) -> list[tuple[int, int]]:
    """Collapse physical pages into (start, length) runs of consecutive pages."""
    runs: list[list[int]] = []
    for p in pages:
        if runs and runs[-1][0] + runs[-1][1] == p:
            runs[-1][1] += 1
        else:
            runs.append([p, 1])
    return [(s, n) for s, n in runs]


def to_deepinfer(c: CanonicalBatch, page_size: int = DEEPINFER_PAGE) -> DeepInferForm:
    runs = [page_runs(_run_blocks(c, i, page_size, "DeepInfer")) for i in range(len(c.requests))]
    indptr = np.zeros(len(runs) + 1, dtype=np.int32)
    np.cumsum([len(r) for r in runs], out=indptr[1:])
    return DeepInferForm([r.req_id for r in c.requests], page_size, indptr,
                         np.array([s for r in runs for s, _ in r], dtype=np.int32),
                         np.array([n for r in runs for _, n in r], dtype=np.int32),
                         _seq_lens(c), _query_lens(c).astype(np.int32), _new_slots(c), c.num_slots)


def from_deepinfer(f: DeepInferForm) -> CanonicalBatch:
    return _canonical_by_address(f)


# --- registry ---------------------------------------------------------------------------------

NOTATIONS = {
    "vllm": ("vLLM", to_vllm, from_vllm),
    "flashinfer": ("FlashInfer", to_flashinfer, from_flashinfer),
    "sglang": ("SGLang", to_sglang, from_sglang),
    "trtllm": ("TensorRT-LLM", to_trtllm, from_trtllm),
    "llamacpp": ("llama.cpp", to_llamacpp, from_llamacpp),
    "deepinfer": ("DeepInfer", to_deepinfer, from_deepinfer),
}


def convert(c: CanonicalBatch, name: str, page_size: int = 16):
    """The batch in notation ``name``; ``page_size`` is the block/page size where the
    notation has a free one (vLLM, FlashInfer, TensorRT-LLM); DeepInfer's is fixed."""
    if name not in NOTATIONS:
        raise BadInput(f"unknown notation {name!r}; choose one of {sorted(NOTATIONS)}")
    to = NOTATIONS[name][1]
    if name in ("vllm", "flashinfer", "trtllm"):
        return to(c, page_size)
    return to(c)


def to_canonical(form) -> CanonicalBatch:
    kind = {VllmForm: from_vllm, FlashInferForm: from_flashinfer, SGLangForm: from_sglang,
            TrtLlmForm: from_trtllm, LlamaCppForm: from_llamacpp, DeepInferForm: from_deepinfer}
    return kind[type(form)](form)


def address_of(form, i: int, pos: int) -> int:
    """The KV slot of token ``pos`` of request ``i``, asked of the notation itself."""
    return form.address(i, pos)


def all_forms(c: CanonicalBatch, page_size: int = 16) -> dict:
    """Every notation of ``c``: name -> form, or name -> NotRepresentable (with its reason)."""
    out = {}
    for name in NOTATIONS:
        try:
            out[name] = convert(c, name, page_size)
        except NotRepresentable as e:
            out[name] = e
    return out


EXAMPLE_SCENARIO = {
    "name": "notations example",
    "description": "A and B share a two-page system prompt; C is unrelated. Step 1: A decodes, "
                   "B prefills after a prefix hit, C prefills.",
    "config": {"num_blocks": 8, "block_size": 128, "kernel_block_size": 16, "max_num_reqs": 4,
               "max_num_batched_tokens": 512, "max_model_len": 1024},
    "requests": [
        {"id": "A", "arrival": 0, "prompt_len": 300, "prefix_group": "sys", "prefix_len": 256,
         "max_tokens": 4},
        {"id": "B", "arrival": 1, "prompt_len": 270, "prefix_group": "sys", "prefix_len": 256,
         "max_tokens": 4},
        {"id": "C", "arrival": 1, "prompt_len": 40, "max_tokens": 4},
    ],
}


def example_batch(step: int = 1) -> CanonicalBatch:
    """The notations page's batch: 128-token manager blocks (so DeepInfer can hold it too),
    16-token kernel blocks, a shared prefix, a decode, a prefill after a hit and a fresh one."""
    from kvviz.core.engine import Engine
    from kvviz.core.scenario import parse_scenario

    sc = parse_scenario(EXAMPLE_SCENARIO)
    eng = Engine(sc)
    rec = None
    for _ in range(step + 1):
        rec = eng.step()
    return canonical_from_record(rec, sc.config)
