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

from dataclasses import dataclass, field

import numpy as np

from kvviz.errors import BadInput
from kvviz.notations.canonical import (
    CanonicalBatch, CanonicalRequest, Mark, NotRepresentable, check_index, new_slots_of, query_lens_of,
    seq_lens_of, token_index)

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
    # SGLang's own placement (sglang_placement): per request, the canonical (vLLM) slot of each
    # position, kvviz's bookkeeping next to SGLang's slots; and the (request, position) of each
    # out_cache_loc entry, in SGLang's order (its extend batch, then its decode batch)
    slot_of: tuple | None = None
    out_order: list | None = field(default=None, repr=False)

    @property
    def query_lens(self):
        return self.extend_seq_lens

    @property
    def follows_sglang(self) -> bool:
        """True when the arrays hold SGLang's own slots, not vLLM's."""
        return self.slot_of is not None

    def sglang_slot(self, i: int, pos: int) -> int:
        """What ``req_to_token`` holds for the token."""
        check_index(self, i, pos)
        return int(self.req_to_token[int(self.req_pool_indices[i]), pos])

    def address(self, i: int, pos: int) -> int:
        """The canonical slot: ``req_to_token``'s own value, or, when the arrays hold SGLang's own
        placement, the vLLM slot kvviz keeps for the same token."""
        s = self.sglang_slot(i, pos)
        return int(self.slot_of[i][pos]) if self.slot_of is not None else s

    def _token_index(self, i: int, pos: int) -> int | None:
        if self.out_order is None:
            return token_index(self, i, pos)
        try:
            return self.out_order.index((i, pos))
        except ValueError:
            return None

    def locate(self, i: int, pos: int) -> list[Mark]:
        check_index(self, i, pos)
        row = int(self.req_pool_indices[i])
        out = [Mark("req_pool_indices", (i,), row),
               Mark("req_to_token", (row, pos), int(self.req_to_token[row, pos]))]
        t = self._token_index(i, pos)
        if t is not None:
            out.append(Mark("out_cache_loc", (t,), int(self.out_cache_loc[t])))
        return out

    def coords(self, i: int, pos: int) -> dict:
        return {"pool_row": int(self.req_pool_indices[i]), "slot": self.address(i, pos),
                "sglang_slot": self.sglang_slot(i, pos)}


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
        reqs.append(CanonicalRequest(rid, tuple(f.address(i, p) for p in range(s)),
                                     int(f.extend_seq_lens[i])))
    return CanonicalBatch(tuple(reqs), f.num_slots)


def sglang_placement(c: CanonicalBatch, step: dict) -> SGLangForm:
    """The batch as SGLang itself placed it: ``step`` is one step of an SGLang answer (SGLang's
    own, from ``kvviz.notations.sglang_driver``, or kvviz's model of it) for the same requests.
    ``req_to_token`` then holds SGLang's slots in SGLang's rows, ``out_cache_loc`` its extend
    batch's slots then its decode batch's, and each request's tokens computed this step are
    SGLang's (its prefix match may differ from vLLM's); ``address`` still answers the canonical
    slot, from kvviz's bookkeeping ``slot_of``."""
    ids = [r.req_id for r in c.requests]
    rows, rtt_rows = step.get("req_pool_indices", {}), step.get("req_to_token", {})
    missing = [rid for rid in ids if rid not in rows]
    if missing:
        raise NotRepresentable(f"SGLang's step holds no row for {', '.join(missing)}")
    for r in c.requests:
        if len(rtt_rows[r.req_id]) != r.seq_len:
            raise NotRepresentable(f"{r.req_id}: SGLang holds {len(rtt_rows[r.req_id])} tokens, "
                                   f"the batch {r.seq_len}")
    width = max((r.seq_len for r in c.requests), default=1) or 1
    rtt = np.zeros((max(rows.values(), default=0) + 1, width), dtype=np.int32)
    for rid in ids:
        rtt[rows[rid], :len(rtt_rows[rid])] = rtt_rows[rid]
    ext, dec = step["extend"], step["decode"]
    order = [(ids.index(rid), p) for rid, pre in zip(ext["reqs"], ext["prefix_lens"])
             for p in range(pre, len(rtt_rows[rid]))]
    order += [(ids.index(rid), len(rtt_rows[rid]) - 1) for rid in dec["reqs"]]
    q = np.zeros(len(ids), dtype=np.int64)
    for i, _ in order:
        q[i] += 1
    return SGLangForm(ids, rtt, np.array([rows[rid] for rid in ids], dtype=np.int64),
                      seq_lens_of(c).astype(np.int64), q,
                      np.array(ext["out_cache_loc"] + dec["out_cache_loc"], dtype=np.int64), c.num_slots,
                      slot_of=tuple(r.slots for r in c.requests), out_order=order)
