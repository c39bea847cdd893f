"""DeepInfer: the interval form of the first design document. Fixed 128-token blocks, and
per request a list of ``(start_page, length)`` runs of physically consecutive pages (CSR over
runs: ``desc_indptr``). A run breaks wherever the next logical page is not the next physical
page (a page from elsewhere in the free queue, the end of a shared prefix, a copy-on-write
page). A batch is expressible only if every 128-token logical page of every request sits in
one aligned 128-token physical page; otherwise the converter raises ``NotRepresentable`` with
the first offending token.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kvviz.errors import BadInput
from kvviz.notations.canonical import (
    CanonicalBatch, DEEPINFER_PAGE, Mark, canonical_by_address, check_index, new_slots_of,
    query_lens_of, run_blocks, seq_lens_of, token_index)


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
        check_index(self, i, pos)
        _, page = self._find(i, pos)
        return page * self.page_size + pos % self.page_size

    def locate(self, i: int, pos: int) -> list[Mark]:
        check_index(self, i, pos)
        d, _ = self._find(i, pos)
        out = [Mark("desc_start", (d,), int(self.desc_start[d])),
               Mark("desc_len", (d,), int(self.desc_len[d]))]
        t = token_index(self, i, pos)
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
    """The batch as DeepInfer's runs of consecutive pages."""
    runs = [page_runs(run_blocks(c, i, page_size, "DeepInfer")) for i in range(len(c.requests))]
    indptr = np.zeros(len(runs) + 1, dtype=np.int32)
    np.cumsum([len(r) for r in runs], out=indptr[1:])
    return DeepInferForm([r.req_id for r in c.requests], page_size, indptr,
                         np.array([s for r in runs for s, _ in r], dtype=np.int32),
                         np.array([n for r in runs for _, n in r], dtype=np.int32),
                         seq_lens_of(c), query_lens_of(c).astype(np.int32), new_slots_of(c), c.num_slots)


def from_deepinfer(f: DeepInferForm) -> CanonicalBatch:
    """DeepInfer's runs back to the canonical batch (asking it each token's slot)."""
    return canonical_by_address(f)
