"""llama.cpp: no pages. The KV cache is made of *cells*, one token each, tagged with the
position they hold and the sequence ids that see them. Request ``i`` is sequence ``i``.

llama.cpp has two layouts, picked by ``kv_unified`` in ``llama_context_params``:

* ``kv_unified = false`` (the default of ``llama_context_default_params()``):
  :class:`LlamaCppStreamsForm`. One *stream* of cells per sequence (``n_stream = n_seq_max``,
  ``seq_to_stream[s] = s``; each stream holds ``n_ctx / n_seq_max`` cells). A sequence's
  positions sit in its own stream, here in cells ``0 .. seq_len - 1``. A prefix shared by
  several sequences is stored once *per stream*: a copy in each (``seq_cp`` across streams
  copies the buffer data), so the cells in use are the sum of the sequence lengths.
* ``kv_unified = true`` (``--kv-unified`` / ``-kvu``; recent llama-server also turns it on when
  the number of slots is left on auto): :class:`LlamaCppForm`. One cell array for every
  sequence; a shared prefix is one cell carrying several ids.

Which cell. llama.cpp does not put a token where vLLM does: ``find_slot`` takes the empty cells
from its ``head`` on (``src/llama-kv-cache.cpp``; kvviz's model of it is
``kvviz.notations.llamacpp_rules``, checked against llama.cpp's own debug log). A batch alone
does not say what ran before it, so the forms here are llama.cpp's cells after the *shortest
history* that leads to it: each request in turn, in request order, takes the longest prefix of
its earlier tokens (those not computed this step) that an earlier request holds in the same
slots by ``seq_cp`` and has ``llama_decode`` write the rest; then one ``llama_decode`` writes
this step's tokens in batch order. In the unified cache that packs the earlier tokens from cell
0 (a shared prefix once) and puts this step's tokens after them; in a stream, cell ``p`` holds
position ``p``. For a scenario's real history, step by step, see
``kvviz.notations.llamacpp_cells.llamacpp_side_by_side``.

The canonical slot. A cell is not a slot: a token's cell and vLLM's slot for it differ, and a
copied prefix lives in other bytes in each stream. So both forms keep, next to llama.cpp's own
``pos`` and ``seq_id``, kvviz's bookkeeping (``cell_slot``, ``stream_slot``): the canonical slot
whose K and V each cell holds (a copy of, for a shared prefix). ``address`` answers with it, so
every notation can be checked against the same slot; it is not an array llama.cpp has.
(Sources: ``src/llama-kv-cache.cpp``, ``src/llama-context.cpp``, ``common/arg.cpp``,
``tools/server/server.cpp`` of llama.cpp.)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kvviz.errors import BadInput
from kvviz.notations.canonical import (
    CanonicalBatch, CanonicalRequest, Mark, check_index, new_slots_of, token_index)
from kvviz.notations.llamacpp_rules import LlamaCells

LLAMA_EMPTY_POS = -1
LLAMA_KV_UNIFIED_DEFAULT = False
"""``kv_unified`` in ``llama_context_default_params()``: one stream of cells per sequence."""


class _Cells:
    """What both layouts share: lengths from the (sequence, position) -> cell index."""

    _index: dict
    req_ids: list
    ubatch_seq: np.ndarray

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

    def _cell(self, i: int, pos: int) -> int:
        check_index(self, i, pos)
        return self._index[(i, pos)]

    def _slots(self, i: int) -> tuple[int, ...]:
        """Canonical slots of sequence i, position by position; BadInput on a gap."""
        s = int(self.seq_lens[i])
        try:
            return tuple(self.address(i, p) for p in range(s))
        except KeyError as e:
            raise BadInput(f"sequence {i} has a gap at position {e.args[0][1]}") from None


@dataclass
class LlamaCppForm(_Cells):
    """``kv_unified = true``: one cell array shared by every sequence. ``cell_slot[c]`` is the
    canonical slot whose K/V cell ``c`` holds (kvviz's bookkeeping, -1 empty)."""
    req_ids: list[str]            # request i is sequence id i
    cell_pos: np.ndarray          # int64 [num_cells]; -1 = empty
    cell_seqs: list[frozenset]    # [num_cells]: sequence ids that see the cell
    cell_slot: np.ndarray         # int64 [num_cells]: canonical slot held; -1 = empty
    ubatch_cells: np.ndarray      # int64 [T]: cells written this step, in batch order
    ubatch_seq: np.ndarray        # int64 [T]: sequence id of each of those tokens
    num_slots: int
    _index: dict = field(default_factory=dict, repr=False)

    kv_unified = True             # a class constant, not a field

    def __post_init__(self):
        if not len(self.cell_pos) == len(self.cell_seqs) == len(self.cell_slot):
            raise BadInput("cell_pos, cell_seqs and cell_slot must have one entry per cell")
        idx = {}
        for cell, (p, seqs) in enumerate(zip(self.cell_pos, self.cell_seqs)):
            for s in seqs:
                if (s, int(p)) in idx:
                    raise BadInput(f"sequence {s} has two cells for position {int(p)}")
                idx[(s, int(p))] = cell
        self._index = idx

    @property
    def cells_used(self) -> int:
        """Cells holding a token (a shared prefix counts once)."""
        return int(np.count_nonzero(self.cell_pos != LLAMA_EMPTY_POS))

    @property
    def shared_cells(self) -> int:
        """Cells that several sequences see."""
        return sum(1 for s in self.cell_seqs if len(s) > 1)

    @property
    def kv_size(self) -> int:
        """Cells in the cache (llama.cpp: ``n_ctx``, a multiple of 256)."""
        return len(self.cell_pos)

    def cell(self, i: int, pos: int) -> int:
        """The cell holding position ``pos`` of sequence ``i``."""
        return self._cell(i, pos)

    def address(self, i: int, pos: int) -> int:
        return int(self.cell_slot[self._cell(i, pos)])

    def locate(self, i: int, pos: int) -> list[Mark]:
        cell = self.cell(i, pos)
        out = [Mark("cells", (cell,), int(self.cell_pos[cell]))]
        t = token_index(self, i, pos)
        if t is not None:
            out.append(Mark("ubatch_cells", (t,), int(self.ubatch_cells[t])))
        return out

    def coords(self, i: int, pos: int) -> dict:
        cell = self.cell(i, pos)
        return {"cell": cell, "pos": int(self.cell_pos[cell]),
                "seq_ids": sorted(self.cell_seqs[cell]), "slot": int(self.cell_slot[cell])}


@dataclass
class LlamaCppStreamsForm(_Cells):
    """``kv_unified = false`` (llama.cpp's default): stream ``s`` holds sequence ``s`` only.

    ``stream_pos[s, c]`` is the position cell ``c`` of stream ``s`` holds (-1 empty) and
    ``stream_slot[s, c]`` the canonical slot whose K/V it holds (kvviz's bookkeeping). In the
    K and V tensors (``[n_embd, kv_size, n_stream]``) the cell is row ``s * kv_size + c``."""
    req_ids: list[str]            # request i is sequence id i, in stream i
    stream_pos: np.ndarray        # int64 [n_stream, kv_size]; -1 = empty
    stream_slot: np.ndarray       # int64 [n_stream, kv_size]; canonical slot held; -1 = empty
    ubatch_cells: np.ndarray      # int64 [T]: cell (inside its stream) written this step
    ubatch_seq: np.ndarray        # int64 [T]: sequence id = stream of each of those tokens
    num_slots: int                # size of the canonical buffer the slots index into
    _index: dict = field(default_factory=dict, repr=False)

    kv_unified = False            # a class constant, not a field

    def __post_init__(self):
        if self.stream_pos.shape != self.stream_slot.shape or self.stream_pos.ndim != 2:
            raise BadInput("stream_pos and stream_slot must both be [n_stream, kv_size]")
        if self.stream_pos.shape[0] != len(self.req_ids):
            raise BadInput(f"{self.stream_pos.shape[0]} streams for {len(self.req_ids)} sequences: "
                           "without kv_unified each sequence has one stream")
        idx = {}
        for s, c in zip(*np.nonzero(self.stream_pos != LLAMA_EMPTY_POS)):
            key = (int(s), int(self.stream_pos[s, c]))
            if key in idx:
                raise BadInput(f"sequence {key[0]} has two cells for position {key[1]}")
            idx[key] = int(c)
        self._index = idx

    @property
    def n_stream(self) -> int:
        return int(self.stream_pos.shape[0])

    @property
    def kv_size(self) -> int:
        """Cells per stream (llama.cpp: ``n_ctx_seq = n_ctx / n_seq_max``)."""
        return int(self.stream_pos.shape[1])

    @property
    def stream_used(self) -> np.ndarray:
        """Cells in use in each stream."""
        return np.count_nonzero(self.stream_pos != LLAMA_EMPTY_POS, axis=1).astype(np.int64)

    @property
    def cells_used(self) -> int:
        """Cells holding a token, over all streams: a shared prefix counts once per stream."""
        return int(self.stream_used.sum())

    @property
    def copied_cells(self) -> int:
        """Cells that hold a copy of a slot another stream also holds."""
        used = self.stream_slot[self.stream_pos != LLAMA_EMPTY_POS]
        return int(len(used) - len(np.unique(used)))

    def cell(self, i: int, pos: int) -> int:
        """The cell of stream ``i`` holding position ``pos`` of sequence ``i``."""
        return self._cell(i, pos)

    def cell_at(self, s: int, pos: int) -> int | None:
        """The cell of stream ``s`` holding position ``pos``, or None if it holds none."""
        return self._index.get((s, pos))

    def address(self, i: int, pos: int) -> int:
        return int(self.stream_slot[i, self._cell(i, pos)])

    def locate(self, i: int, pos: int) -> list[Mark]:
        c = self.cell(i, pos)
        out = [Mark("cells", (i, c), int(self.stream_pos[i, c]))]
        t = token_index(self, i, pos)
        if t is not None:
            out.append(Mark("ubatch_cells", (t,), int(self.ubatch_cells[t])))
        return out

    def coords(self, i: int, pos: int) -> dict:
        c = self.cell(i, pos)
        return {"stream": i, "cell": c, "pos": int(self.stream_pos[i, c]), "seq_ids": [i],
                "row": i * self.kv_size + c, "slot": int(self.stream_slot[i, c])}


def to_llamacpp(c: CanonicalBatch, kv_unified: bool = LLAMA_KV_UNIFIED_DEFAULT, *,
                kv_size: int | None = None):
    """The batch as llama.cpp's cells: one stream per sequence (``kv_unified`` false, llama.cpp's
    default), or one shared cell array (``kv_unified`` true). ``kv_size``: cells per stream
    (default: the longest sequence, the fewest that hold the batch), or of the unified cache
    (default: enough for the batch and at least ``num_slots``, padded to 256 as llama.cpp
    pads ``n_ctx``)."""
    if kv_unified:
        return _unified(c, kv_size)
    return _streams(c, kv_size)


def _shortest_history(c: CanonicalBatch, cells: LlamaCells) -> None:
    """The calls of the module's *shortest history*, then this step's ``llama_decode``."""
    held: dict[int, int] = {}
    for i, r in enumerate(c.requests):
        early = r.seq_len - r.query_len
        best, src = 0, -1
        for j, n in held.items():
            k = 0
            while k < min(early, n) and c.requests[j].slots[k] == r.slots[k]:
                k += 1
            if k > best:
                best, src = k, j
        if best:
            cells.share(src, i, best)
        if best < early and not cells.decode([(i, p) for p in range(best, early)]):
            raise BadInput(f"llama.cpp's cache of {cells.n_ctx} cells cannot hold the batch")
        if early:
            held[i] = early
    new = c.new_tokens()
    if new and not cells.decode(new):
        raise BadInput(f"llama.cpp's cache of {cells.n_ctx} cells cannot hold the batch")


def _unified(c: CanonicalBatch, kv_size: int | None) -> LlamaCppForm:
    n = len(c.requests)
    need = sum(r.seq_len for r in c.requests)
    cells = LlamaCells(max(n, 1), int(kv_size) if kv_size else max(c.num_slots, need, 1), True,
                       strict=False)
    _shortest_history(c, cells)
    st = cells.streams[0]
    slot = np.full(cells.size, LLAMA_EMPTY_POS, dtype=np.int64)
    where: dict = {}
    for cell, (p, seqs) in enumerate(zip(st.pos, st.seqs)):
        for s in seqs:
            slot[cell] = c.requests[s].slots[p]
            where[(s, p)] = cell
    new = c.new_tokens()
    return LlamaCppForm([r.req_id for r in c.requests], np.array(st.pos, dtype=np.int64),
                        [frozenset(s) for s in st.seqs], slot,
                        np.array([where[t] for t in new], dtype=np.int64),
                        np.array([i for i, _ in new], dtype=np.int64), c.num_slots)


def _streams(c: CanonicalBatch, kv_size: int | None) -> LlamaCppStreamsForm:
    longest = max((r.seq_len for r in c.requests), default=0)
    size = max(1, longest) if kv_size is None else int(kv_size)
    if size < longest:
        raise BadInput(f"kv_size {size} is smaller than the longest sequence ({longest} tokens)")
    n = len(c.requests)
    pos = np.full((n, size), LLAMA_EMPTY_POS, dtype=np.int64)
    slot = np.full((n, size), LLAMA_EMPTY_POS, dtype=np.int64)
    # the shortest history in a stream (llamacpp_rules): a copied prefix sits at the source's
    # cells 0..n-1, the rest follows from the head: cell p holds position p
    for i, r in enumerate(c.requests):
        pos[i, : r.seq_len] = np.arange(r.seq_len)
        slot[i, : r.seq_len] = r.slots
    new = c.new_tokens()
    return LlamaCppStreamsForm([r.req_id for r in c.requests], pos, slot,
                               np.array([p for _, p in new], dtype=np.int64),
                               np.array([i for i, _ in new], dtype=np.int64), c.num_slots)


def from_llamacpp(f) -> CanonicalBatch:
    """Either layout's cells back to the canonical batch; BadInput on a gap in a sequence."""
    q = f.query_lens
    reqs = [CanonicalRequest(rid, f._slots(i), int(q[i])) for i, rid in enumerate(f.req_ids)]
    return CanonicalBatch(tuple(reqs), f.num_slots)
