"""The persistent batch: request rows that survive across steps.

A request keeps its row until it finishes or is preempted. ``add_request`` takes
the lowest hole left by a removal (or appends); ``condense`` fills holes by
moving the highest live rows into the lowest holes.
"""
from __future__ import annotations

import heapq

import numpy as np

from kvviz.core.block_table import MultiGroupBlockTable


class PersistentBatch:
    def __init__(self, tables: MultiGroupBlockTable, events: list | None = None, *,
                 remove_clears_row: bool = True):
        self.tables = tables
        self.remove_clears_row = remove_clears_row  # False: the 2025 rule (no clear_row yet)
        self.max_num_reqs = tables[0].max_num_reqs
        self.req_ids: list[str | None] = [None] * self.max_num_reqs
        self.req_id_to_index: dict[str, int] = {}
        self._removed: list[int] = []  # min-heap of holes
        self.num_computed_tokens = np.zeros(self.max_num_reqs, dtype=np.int64)
        self.events = events if events is not None else []

    @property
    def num_reqs(self) -> int:
        return len(self.req_id_to_index)

    @property
    def holes(self) -> list[int]:
        return sorted(self._removed)

    def add_request(self, req_id: str, block_ids_per_group, num_computed_tokens: int = 0) -> int:
        if req_id in self.req_id_to_index:
            raise ValueError(f"request {req_id} already has row {self.req_id_to_index[req_id]}")
        if self._removed:
            row = heapq.heappop(self._removed)
        else:
            row = self.num_reqs
        if row >= self.max_num_reqs:
            raise ValueError(f"no free row: the batch holds at most {self.max_num_reqs} requests")
        self.req_ids[row] = req_id
        self.req_id_to_index[req_id] = row
        self.num_computed_tokens[row] = num_computed_tokens
        self.tables.add_row(block_ids_per_group, row)
        self.events.append({"kind": "add_row", "req": req_id, "row": row,
                            "blocks": [list(map(int, g)) for g in block_ids_per_group]})
        return row

    def append_blocks(self, req_id: str, block_ids_per_group) -> None:
        row = self.req_id_to_index[req_id]
        if any(len(g) for g in block_ids_per_group):
            self.tables.append_row(block_ids_per_group, row)
            self.events.append({"kind": "append_row", "req": req_id, "row": row,
                                "blocks": [list(map(int, g)) for g in block_ids_per_group]})

    def remove_request(self, req_id: str) -> int:
        row = self.req_id_to_index.pop(req_id)
        self.req_ids[row] = None
        heapq.heappush(self._removed, row)
        if self.remove_clears_row:
            self.tables.clear_row(row)
            self.events.append({"kind": "clear_row", "req": req_id, "row": row})
        else:
            self.events.append({"kind": "remove_row", "req": req_id, "row": row})
        return row

    def swap_rows(self, a: int, b: int) -> None:
        ra, rb = self.req_ids[a], self.req_ids[b]
        self.req_ids[a], self.req_ids[b] = rb, ra
        if ra is not None:
            self.req_id_to_index[ra] = b
        if rb is not None:
            self.req_id_to_index[rb] = a
        self.num_computed_tokens[[a, b]] = self.num_computed_tokens[[b, a]]
        self.tables.swap_row(a, b)
        self.events.append({"kind": "swap_row", "rows": [a, b]})

    def reorder_decodes_first(self, num_scheduled: dict[str, int], decode_threshold: int = 1
                              ) -> list[tuple[int, int]]:
        """Put every decode row (at most ``decode_threshold`` scheduled tokens) before every
        prefill row, as attention backends that split decodes from prefills need. Rows are
        swapped in pairs: the leftmost prefill row with the rightmost decode row, until the
        decodes fill the front. Returns the swaps; the block tables move with their rows."""
        live = [r for r, _ in self.rows()]
        is_decode = {r: num_scheduled.get(self.req_ids[r], 0) <= decode_threshold for r in live}
        n_dec = sum(is_decode.values())
        prefills = [r for r in live if not is_decode[r]]          # left to right
        decodes = [r for r in reversed(live) if is_decode[r]]     # right to left
        swaps = []
        for p, d in zip(prefills, decodes):
            if p >= n_dec or d < n_dec:   # the front already holds only decodes
                break
            self.swap_rows(p, d)
            swaps.append((p, d))
        return swaps

    def reorder_regions(self, num_scheduled: dict[str, int], prompt_len: dict[str, int], *, four: bool,
                        decode_threshold: int = 1) -> list[tuple[int, int]]:
        """vLLM's region reorder (v0.11.1+, #27367): rows sorted by region, decode -> extend ->
        prefill, by following the cycles of a permutation of only the rows out of place. With
        ``four`` (v0.19.0+, #37303) a short chunk of a prompt still being prefilled is its own
        ``short_extend`` region after the decodes, and a decode needs context and a finished
        prompt. Returns the swaps (each an event ``swap_row``)."""
        live = [r for r, _ in self.rows()]
        region = np.array([self._region(r, num_scheduled, prompt_len, four, decode_threshold) for r in live],
                          dtype=np.int64)
        target = np.sort(region, kind="stable")
        out_of_place = np.nonzero(region != target)[0]
        if not out_of_place.size:
            return []
        order = out_of_place[np.argsort(region[out_of_place], kind="stable")]
        src_to_dst = {int(live[s]): int(live[d]) for s, d in zip(order, out_of_place)}
        swaps = []
        for src in list(src_to_dst):
            dst = src_to_dst[src]
            while src != dst:
                self.swap_rows(src, dst)
                swaps.append((src, dst))
                nxt = src_to_dst.get(dst, dst)
                src_to_dst[dst] = dst
                dst = nxt
        return swaps

    def _region(self, row: int, num_scheduled: dict[str, int], prompt_len: dict[str, int], four: bool,
                threshold: int) -> int:
        rid = self.req_ids[row]
        n = num_scheduled.get(rid, 0)
        computed = int(self.num_computed_tokens[row])
        small = n <= threshold
        if not four:
            return 0 if small else (1 if computed > 0 else 2)
        if computed == 0:
            return 3
        if not small:
            return 2
        return 0 if computed >= prompt_len.get(rid, 0) else 1

    def condense(self) -> list[tuple[int, int]]:
        """Move the highest live rows into the lowest holes; returns the (src, dst) moves."""
        moves = []
        if not self._removed:
            return moves
        holes = sorted(self._removed)
        last = self.num_reqs + len(holes) - 1
        removed = set(holes)
        hi = 0
        while hi < len(holes):
            while last in removed:
                last -= 1
            hole = holes[hi]
            if hole >= last:
                break
            hi += 1
            req_id = self.req_ids[last]
            self.req_ids[hole], self.req_ids[last] = req_id, None
            self.req_id_to_index[req_id] = hole
            self.num_computed_tokens[hole] = self.num_computed_tokens[last]
            self.tables.move_row(last, hole)
            self.events.append({"kind": "move_row", "req": req_id, "src": last, "dst": hole})
            moves.append((last, hole))
            removed.discard(hole)
            removed.add(last)
            last -= 1
        self._removed = []
        return moves

    def rows(self) -> list[tuple[int, str]]:
        return sorted((r, q) for q, r in self.req_id_to_index.items())
