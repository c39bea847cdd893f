"""llama.cpp: no pages. The cache is an array of cells, one per slot, each tagged with the
token position it holds and the set of sequence ids that see it. A shared prefix is one cell
carrying several sequence ids. Request ``i`` is sequence ``i``.
``slot`` = the cell whose ``pos == pos`` and whose seq set contains ``i``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kvviz.errors import BadInput
from kvviz.notations.canonical import (
    CanonicalBatch, CanonicalRequest, Mark, check_index, new_slots_of, token_index)

LLAMA_EMPTY_POS = -1


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
        check_index(self, i, pos)
        return self._index[(i, pos)]

    def locate(self, i: int, pos: int) -> list[Mark]:
        cell = self.address(i, pos)
        out = [Mark("cells", (cell,), int(self.cell_pos[cell]))]
        t = token_index(self, i, pos)
        if t is not None:
            out.append(Mark("ubatch_cells", (t,), int(self.ubatch_cells[t])))
        return out

    def coords(self, i: int, pos: int) -> dict:
        cell = self.address(i, pos)
        return {"cell": cell, "pos": int(self.cell_pos[cell]),
                "seq_ids": sorted(self.cell_seqs[cell]), "slot": cell}


def to_llamacpp(c: CanonicalBatch) -> LlamaCppForm:
    """The batch as llama.cpp's cells (one per slot; shared cells carry several ids)."""
    pos = np.full(c.num_slots, LLAMA_EMPTY_POS, dtype=np.int64)
    seqs: list[set] = [set() for _ in range(c.num_slots)]
    for i, r in enumerate(c.requests):
        for p, s in enumerate(r.slots):
            pos[s] = p
            seqs[s].add(i)
    new = c.new_tokens()
    return LlamaCppForm([r.req_id for r in c.requests], pos, [frozenset(s) for s in seqs],
                        new_slots_of(c), np.array([i for i, _ in new], dtype=np.int64), c.num_slots)


def from_llamacpp(f: LlamaCppForm) -> CanonicalBatch:
    """llama.cpp's cells back to the canonical batch; BadInput on a gap in a sequence."""
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
