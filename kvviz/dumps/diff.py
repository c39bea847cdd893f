"""Diff two dumps: for every table both carry, the rows that differ and each row's first
differing column; plus each dump's stale rows (CPU table vs device mirror).

A 2-D table is compared row by row (each differing row with its first differing column). A 1-D
array is compared entry by entry and each differing entry is named as the array is indexed: a
per-request array by its request ``row``, a per-token array by ``token`` (and the ``row`` holding
it), ``ref_cnt`` by ``block``, any other by ``index``. Scalars (block_size, num_reqs, ...) that
differ are reported with row and col null. Where shapes differ, the common part is compared
first and the missing side of the rest is null. Two dumps are equal only when they hold the
same keys with the same values: a table only one of them carries makes them different.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kvviz.dumps.format import Dump

MAX_ROWS_PER_TABLE = 200
SCALARS = ("block_size", "num_blocks", "num_reqs", "num_reqs_padded", "sliding_window",
           "kernel_block_size", "dcp_world_size", "dcp_rank", "cp_kv_cache_interleave_size", "profile",
           "group_kind", "vllm", "runner", "mamba_cache_mode", "attention_chunk_size", "cascade_prefix_blocks",
           "previous_num_reqs")
TABLES = ("block_table", "block_table_device", "num_blocks_per_row", "seq_lens", "query_start_loc",
          "positions", "slot_mapping", "paged_kv_indptr", "paged_kv_indices",
          "paged_kv_last_page_len", "ref_cnt", "free_block_ids", "idx_mapping", "state_block_table",
          "state_num_blocks")


# How a 1-D array is indexed, so a difference names what a reader looks for: the request row, the
# token, the block, or (anything else) the entry.
PER_REQUEST = ("num_blocks_per_row", "seq_lens", "paged_kv_last_page_len", "state_num_blocks", "idx_mapping")
PER_TOKEN = ("positions", "slot_mapping")
PER_BLOCK = ("ref_cnt",)


@dataclass
class Difference:
    """One difference. A 2-D table: ``row`` and ``col``. A per-request array: ``row`` (the request
    row). A per-token array: ``token`` and, when query_start_loc tells, the ``row`` it belongs to. A
    per-block array: ``block``. Any other 1-D array: ``index``. A scalar: neither."""
    table: str
    row: int | None
    col: int | None
    a: object
    b: object
    token: int | None = None
    block: int | None = None
    index: int | None = None

    def to_json(self) -> dict:
        out = {"table": self.table, "row": self.row, "col": self.col, "a": self.a, "b": self.b}
        for k in ("token", "block", "index"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        return out

    def where(self) -> str:
        """" row 3 col 1", " token 19 (row 3)", " block 7", " index 2", or "" (a scalar)."""
        if self.token is not None:
            return f" token {self.token}" + (f" (row {self.row})" if self.row is not None else "")
        if self.block is not None:
            return f" block {self.block}"
        if self.index is not None:
            return f" index {self.index}"
        if self.row is None:
            return ""
        return f" row {self.row}" + (f" col {self.col}" if self.col is not None else "")


@dataclass
class DiffResult:
    differences: list[Difference]
    stale_rows: dict = field(default_factory=dict)   # "a"/"b" -> list of {row, col, cpu, device, live}
    truncated: dict = field(default_factory=dict)    # table -> rows left out
    only_in: dict = field(default_factory=dict)      # "a"/"b" -> tables only that dump has

    @property
    def equal(self) -> bool:
        """Same keys with the same values (a table only one dump carries is a difference)."""
        return not self.differences and not self.only_in

    def to_json(self) -> dict:
        out = {"differences": [d.to_json() for d in self.differences], "stale_rows": self.stale_rows,
               "equal": self.equal}
        if self.truncated:
            out["truncated"] = self.truncated
        if self.only_in:
            out["only_in"] = self.only_in
        return out


def _differing_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows where two same-shape tables differ. Contiguous 4-byte tables of even width are
    compared 8 bytes at a time (half the comparisons on 1024 x 65536 tables)."""
    if (a.dtype == b.dtype and a.dtype.itemsize == 4 and a.shape[1] % 2 == 0
            and a.flags.c_contiguous and b.flags.c_contiguous):
        a, b = a.view(np.int64), b.view(np.int64)
    # in slabs of ~4 MiB: no table-sized temporary to allocate and fault in
    step = max(1, (4 << 20) // max(1, a.shape[1] * a.itemsize))
    hits = [i + np.flatnonzero((a[i:i + step] != b[i:i + step]).any(axis=1))
            for i in range(0, a.shape[0], step)]
    return np.concatenate(hits) if hits else np.zeros(0, np.int64)


def _first_col(x: np.ndarray, y: np.ndarray, step: int = 1 << 16) -> int:
    """First index where two 1-D arrays known to differ do, searched a slab at a time."""
    for j in range(0, len(x), step):
        ne = x[j:j + step] != y[j:j + step]
        if ne.any():
            return j + int(ne.argmax())
    raise ValueError("the rows do not differ")


def _row_diffs(a: np.ndarray, b: np.ndarray):
    """(rows, first col, a value, b value) of differing rows of two 2-D arrays; None values
    where one side has no such row or column."""
    ra, wa = a.shape
    rb, wb = b.shape
    r, w = min(ra, rb), min(wa, wb)
    if r and w:
        rows = _differing_rows(a[:r, :w], b[:r, :w])
        first = np.array([_first_col(a[i, :w], b[i, :w]) for i in rows.tolist()], dtype=np.int64)
    else:
        rows = first = np.zeros(0, np.int64)
    out = [(int(i), int(c), int(a[i, c]), int(b[i, c])) for i, c in zip(rows.tolist(), first.tolist())]
    if wa != wb:  # rows equal on the common columns differ at the first extra column
        seen = set(rows.tolist())
        for i in range(r):
            if i not in seen:
                out.append((i, w, int(a[i, w]) if wa > w else None, int(b[i, w]) if wb > w else None))
        out.sort()
    for i in range(r, max(ra, rb)):
        out.append((i, 0, int(a[i, 0]) if i < ra and wa else None, int(b[i, 0]) if i < rb and wb else None))
    return out


def _expected_past_live(d: Dump, rules, row: int) -> bool:
    """Whether a row past num_reqs may legitimately differ on the device under ``rules``: padded rows
    never written (v0.11.x) or filled with -1 (v0.12 .. v0.19) or 0 (v0.20 on) every step; rows past
    the padded ones are never read."""
    if row >= d.padded_reqs:
        return True
    fill = rules.padded_row_fill
    return fill is None or bool((d.block_table_device[row] == fill).all())


def _v2_stale(d: Dump, limit: int) -> list[dict]:
    """Model Runner V2: live gathered rows that differ from their state row inside its count ("cpu" is
    the state row's entry, "device" the gathered one; "state" names the state row)."""
    from kvviz.dumps.checks_v2 import expected_rows, gather_mismatches

    rows, states, first, _ = gather_mismatches(d)
    want = expected_rows(d, states[:limit])      # manager-id rows: b * r + j (v0.32.0 on)
    return [{"row": int(r), "col": int(c), "cpu": int(w[c]),
             "device": int(d.block_table[r, c]), "live": True, "state": int(s)}
            for r, s, c, w in zip(rows[:limit], states[:limit], first[:limit], want)]


def stale_view(d: Dump, limit: int = MAX_ROWS_PER_TABLE, rules=None) -> list[dict]:
    """Rows whose device mirror differs from the CPU table anywhere (full width), first column. With
    ``rules`` (a release's), each row past num_reqs says whether that release leaves it so
    (``expected``). A Model Runner V2 dump: the live gathered rows that differ from their state rows."""
    if d.is_v2:
        return _v2_stale(d, limit)
    if d.block_table_device is None:
        return []
    dev = d.block_table_device
    rows = _row_diffs(d.block_table[: dev.shape[0]], dev)
    out = [{"row": r, "col": c, "cpu": x, "device": y, "live": r < d.num_reqs} for r, c, x, y in rows[:limit]]
    if rules is not None:
        for s in out:
            if not s["live"]:
                s["expected"] = _expected_past_live(d, rules, s["row"])
    return out


def _vector_diffs(key: str, va: np.ndarray, vb: np.ndarray, a: Dump) -> list[Difference]:
    """Every differing entry of two 1-D arrays (past the shorter one: None on the missing side),
    named by request row, token, block or index as the array is indexed."""
    n = min(va.size, vb.size)
    idx = np.flatnonzero(va[:n] != vb[:n]).tolist() + list(range(n, max(va.size, vb.size)))
    qsl = a.query_start_loc
    out = []
    for i in idx:
        x = int(va[i]) if i < va.size else None
        y = int(vb[i]) if i < vb.size else None
        if key in PER_REQUEST:
            out.append(Difference(key, i, None, x, y))
        elif key in PER_TOKEN:
            row = None
            if qsl is not None and i < int(qsl[a.num_reqs]):
                row = int(np.searchsorted(qsl[: a.num_reqs + 1], i, side="right") - 1)
            out.append(Difference(key, row, None, x, y, token=i))
        elif key in PER_BLOCK:
            out.append(Difference(key, None, None, x, y, block=i))
        else:
            out.append(Difference(key, None, None, x, y, index=i))
    return out


def diff_dumps(a: Dump, b: Dump, *, limit: int = MAX_ROWS_PER_TABLE, rules_a=None, rules_b=None) -> DiffResult:
    """Every difference between ``a`` and ``b``; with ``rules_a``/``rules_b`` (the releases the dumps
    come from) the non-live stale rows say whether their release leaves them so."""
    diffs: list[Difference] = []
    truncated = {}
    for k in SCALARS:
        va, vb = getattr(a, k), getattr(b, k)
        if va != vb:
            diffs.append(Difference(k, None, None, va, vb))
    only = {"a": [], "b": []}
    for k in TABLES:
        va, vb = getattr(a, k), getattr(b, k)
        if va is None or vb is None:
            if va is not None:
                only["a"].append(k)
            elif vb is not None:
                only["b"].append(k)
            continue
        if va.ndim == 1:
            found = _vector_diffs(k, va, vb, a)
            if len(found) > limit:
                truncated[k] = len(found) - limit
            diffs.extend(found[:limit])
            continue
        rows = _row_diffs(va, vb)
        if len(rows) > limit:
            truncated[k] = len(rows) - limit
        diffs.extend(Difference(k, r, c, x, y) for r, c, x, y in rows[:limit])
    return DiffResult(diffs, {"a": stale_view(a, limit, rules_a), "b": stale_view(b, limit, rules_b)}, truncated,
                      {k: v for k, v in only.items() if v})
