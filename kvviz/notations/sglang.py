"""SGLang's arrays, holding vLLM's slots: page size 1, ``req_to_token[req_pool_indices[i], pos]``
*is* the slot. Row 0 of ``req_to_token`` is never handed out, so here request ``i`` uses pool row
``i + 1``; ``out_cache_loc`` lists the slots written this step. This form writes kvviz's (vLLM's)
placement in SGLang's notation, so every notation lands on the same slot.

SGLang places the same tokens elsewhere: slot 0 (or page 0) held back, rows taken from the tail
of its free list, page-aligned prefix matches, prefills before decodes. kvviz's model of that
placement is ``kvviz.notations.sglang_model`` (held against SGLang 0.5.23's own code in
``tests/engines/test_sglang_notation.py``); the Notations page shows both.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kvviz.errors import BadInput
from kvviz.notations.canonical import (
    CanonicalBatch, CanonicalRequest, Mark, check_index, new_slots_of, query_lens_of, seq_lens_of,
    token_index)

SGLANG_DUMMY_ROW = 0


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
        check_index(self, i, pos)
        return int(self.req_to_token[int(self.req_pool_indices[i]), pos])

    def locate(self, i: int, pos: int) -> list[Mark]:
        check_index(self, i, pos)
        row = int(self.req_pool_indices[i])
        out = [Mark("req_pool_indices", (i,), row),
               Mark("req_to_token", (row, pos), int(self.req_to_token[row, pos]))]
        t = token_index(self, i, pos)
        if t is not None:
            out.append(Mark("out_cache_loc", (t,), int(self.out_cache_loc[t])))
        return out

    def coords(self, i: int, pos: int) -> dict:
        return {"pool_row": int(self.req_pool_indices[i]), "slot": self.address(i, pos)}


def to_sglang(c: CanonicalBatch) -> SGLangForm:
    """The batch as SGLang's ``req_to_token`` (row 0 the dummy row)."""
    n = len(c.requests)
    width = max((r.seq_len for r in c.requests), default=1) or 1
    rtt = np.zeros((n + 1, width), dtype=np.int32)
    for i, r in enumerate(c.requests):
        rtt[i + 1, : r.seq_len] = r.slots
    return SGLangForm([r.req_id for r in c.requests], rtt,
                      np.arange(1, n + 1, dtype=np.int64), seq_lens_of(c).astype(np.int64),
                      query_lens_of(c), new_slots_of(c), c.num_slots)


def from_sglang(f: SGLangForm) -> CanonicalBatch:
    """SGLang's arrays back to the canonical batch; BadInput on a request in the dummy row."""
    reqs = []
    for i, rid in enumerate(f.req_ids):
        row = int(f.req_pool_indices[i])
        if row == SGLANG_DUMMY_ROW:
            raise BadInput(f"{rid} points at the dummy row 0 of req_to_token")
        s = int(f.seq_lens[i])
        reqs.append(CanonicalRequest(rid, tuple(int(x) for x in f.req_to_token[row, :s]),
                                     int(f.extend_seq_lens[i])))
    return CanonicalBatch(tuple(reqs), f.num_slots)
