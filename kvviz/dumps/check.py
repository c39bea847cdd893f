"""The checker: every invariant a dump can be tested against, vectorised.

``run_checks(dump)`` returns findings ordered by row (the first wrong row comes
first; findings about blocks or the free list, which belong to no row, come
last). Each check reports at most one finding per row: the first wrong entry
in it, with how many more there are. Expected values are recomputed from the
CPU table, which is the truth; the device mirror is only compared with it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID
from kvviz.dumps.format import Dump
from kvviz.core.versions import CURRENT, PROFILES, Profile, get_profile
from kvviz.core.step import compute_slot_mapping
from kvviz.texts.findings import STRINGS as _TEXTS

MAX_ROWS_PER_CHECK = 50


@dataclass(frozen=True)
class CheckInfo:
    id: str
    title: str
    concept: str          # key of the concept the check guards (for the UI's links)
    needs: tuple          # dump keys beyond the required ones
    explanation: str      # what the invariant is and why it matters, for a student


CONCEPTS = {
    "mirror": "CPU table and device mirror: rows are edited on the CPU and copied to the GPU by one "
              "commit per step, of the first num_reqs rows.",
    "slot-mapping": "Slot mapping: token at position p of row r goes to slot "
                    "block_table[r, p // B] * B + p % B; padding tokens get -1.",
    "padding": "CUDA-graph padding: padded tokens get slot -1 (never written) and padded request "
               "rows are all block 0 (always safe to read).",
    "block-pool": "The block pool: blocks 1..N-1 are handed out, block 0 is the null block, each "
                  "block's ref count is the number of requests holding it, free blocks sit in the "
                  "free queue.",
    "allocation": "Allocation: a request of S tokens holds ceil(S / B) blocks, each listed once, in "
                  "the first num_blocks_per_row entries of its row.",
    "prefix-sharing": "Prefix sharing and copy-on-write: only full blocks may be shared; a forked "
                      "request gets its own copy of the partially filled last block.",
    "flashinfer-csr": "FlashInfer's CSR page table: indptr is the running total of pages, indices "
                      "the rows' block prefixes, last_page_len the fill of each last page.",
}

_CHECK_LIST = [
    CheckInfo("mirror-stale", "Device mirror is stale", "mirror", ("block_table_device",),
              "The device copy of a live row differs from the CPU table inside the row's counted "
              "blocks: the row was changed after the last commit, or the commit copied too few rows, "
              "so the attention kernel reads an old version of the row."),
    CheckInfo("block-out-of-range", "Block id outside the pool", "block-pool", (),
              "A counted entry (or a free-list entry) is negative or not below num_blocks: the kernel "
              "would read or write memory that belongs to no block."),
    CheckInfo("null-in-live-row", "Null block in a live row", "block-pool", (),
              "Block 0 is the null block used for padding. A live request must not have it among its "
              "counted blocks (sliding-window rows may, for blocks that fell out of the window)."),
    CheckInfo("duplicate-block-in-row", "Block listed twice in one row", "allocation", (),
              "Each of a request's blocks holds a different range of its tokens, so a block id may "
              "appear only once in a row's counted prefix."),
    CheckInfo("too-few-blocks", "Row holds too few blocks", "allocation", ("seq_lens",),
              "A request with S tokens needs ceil(S / B) blocks; with fewer, its last tokens have "
              "nowhere to live and the kernel reads past the row's counted prefix. (A state group "
              "holds one state block per request instead.)"),
    CheckInfo("freed-block-in-use", "Freed block still in use", "block-pool",
              ("ref_cnt", "free_block_ids"),
              "A block a live row counts is on the free list or has ref count 0, so the pool may hand "
              "it to another request, which would overwrite this one's keys and values."),
    CheckInfo("shared-partial-block", "Partially filled block is shared", "prefix-sharing", ("seq_lens",),
              "Two live rows hold the same block and it is the partially filled last block of one of "
              "them: the next token of one request overwrites the other's. It needs copy-on-write."),
    CheckInfo("slot-mismatch", "Slot does not match the table", "slot-mapping",
              ("slot_mapping", "positions", "query_start_loc"),
              "A real token's slot differs from block_table[row, pos // B] * B + pos % B computed from "
              "the CPU table, so its key and value are written to the wrong place."),
    CheckInfo("pad-slot", "Padding token has a real slot", "padding", ("slot_mapping", "query_start_loc"),
              "Slots after the last real token must be -1 so the KV write skips them; any other value "
              "makes a padding token overwrite a real slot."),
    CheckInfo("pad-row", "Padded row is not all 0", "padding", (),
              "Rows from num_reqs to num_reqs_padded are read by CUDA-graph replays and must point only "
              "at the null block 0; a stale id there lets a dummy request read or write a real block. "
              "In current vLLM every row past num_reqs must also count 0 blocks: remove_request and "
              "condense's move_row clear the row they vacate."),
    CheckInfo("csr-indptr", "FlashInfer indptr is wrong", "flashinfer-csr", ("paged_kv_indptr", "seq_lens"),
              "paged_kv_indptr must start at 0 and grow by ceil(seq_len / page_size) per row."),
    CheckInfo("csr-indices", "FlashInfer page indices are wrong", "flashinfer-csr",
              ("paged_kv_indices", "paged_kv_indptr", "seq_lens"),
              "Row r's slice of paged_kv_indices must equal the first ceil(seq_len / page_size) entries "
              "of row r of the block table."),
    CheckInfo("csr-last-page-len", "FlashInfer last_page_len is wrong", "flashinfer-csr",
              ("paged_kv_last_page_len", "seq_lens"),
              "The last page holds seq_len % page_size tokens, except that a full last page counts as "
              "page_size and an empty row as 0."),
    CheckInfo("refcount-mismatch", "Ref count differs from the holders", "block-pool", ("ref_cnt",),
              "A block's ref count must equal the number of live rows holding it (block 0's is not "
              "kept). Assumes every running request is in this batch."),
    CheckInfo("free-list-duplicate", "Free list repeats a block", "block-pool", ("free_block_ids",),
              "Each free block is in the free queue once, and the null block 0 never is; otherwise two "
              "requests can be handed the same block."),
]
CHECKS: dict[str, CheckInfo] = {c.id: c for c in _CHECK_LIST}
_ORDER = {c.id: i for i, c in enumerate(_CHECK_LIST)}


class Msg(NamedTuple):
    """A message template (a key of kvviz/texts/findings.py) and its parameters; a parameter may itself
    be a Msg (an optional clause, rendered in the same language) or "" (a clause left out)."""
    key: str
    params: dict


def render(key: str, params: dict, lang: str = "en") -> str:
    """The message ``key`` with ``params`` in ``lang`` (English where a translation is missing)."""
    entry = _TEXTS[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**{k: render(v.key, v.params, lang) if isinstance(v, Msg) else v
                          for k, v in params.items()})


@dataclass
class Finding:
    check: str
    row: int | None
    index: int | None
    message: str                 # English, as `kvviz check` prints it
    key: str | None = field(default=None, compare=False, repr=False)
    params: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, check: str, row: int | None, index: int | None, msg: Msg) -> "Finding":
        return cls(check, row, index, render(msg.key, msg.params), msg.key, msg.params)

    @property
    def info(self) -> CheckInfo:
        return CHECKS[self.check]

    def text(self, lang: str = "en") -> str:
        """The message in ``lang``; ``message`` is the English one."""
        return self.message if self.key is None else render(self.key, self.params, lang)

    def to_json(self) -> dict:
        out = {"check": self.check}
        if self.row is not None:
            out["row"] = self.row
        if self.index is not None:
            out["index"] = self.index
        out["message"] = self.message
        return out

    def sort_key(self):
        return (self.row is None, self.row if self.row is not None else 0, _ORDER[self.check],
                self.index if self.index is not None else -1)


def first_wrong_row(findings: list[Finding]) -> int | None:
    rows = [f.row for f in findings if f.row is not None]
    return min(rows) if rows else None


def resolve_profile(dump: Dump, profile: str | Profile | None = None) -> tuple[Profile, str]:
    """(the profile to check ``dump`` under, where it came from): ``profile`` when given (a
    ``--profile`` option; "option"), else the dump's own ``profile`` key ("dump"), else the current
    rules ("default"). ValueError for an unknown name."""
    if profile is not None:
        return get_profile(profile), "option"
    if dump.profile is not None:
        return get_profile(dump.profile), "dump"
    return CURRENT, "default"


def clears_vacated_rows(profile: Profile) -> bool:
    """Whether a row vacated by remove_request or condense's move_row is cleared (count 0, prefix
    zeroed) under ``profile``: true for current vLLM, false for the 2025 profiles."""
    return bool(profile.move_row_clears_source and getattr(profile, "remove_clears_row", True))


def applicable_checks(dump: Dump, profile: str | Profile | None = None) -> list[str]:
    """The checks this dump carries enough tables for (under ``profile``, default as resolve_profile)."""
    prof, _ = resolve_profile(dump, profile)
    have = set(dump.present())
    state = dump.is_state_group
    window_unknown = dump.sliding_window is not None and dump.seq_lens is None
    out = []
    for c in _CHECK_LIST:
        if c.id == "freed-block-in-use":
            ok = bool(have & {"ref_cnt", "free_block_ids"})
        elif c.id == "null-in-live-row":
            ok = dump.sliding_window is None
        elif c.id == "duplicate-block-in-row":
            ok = not window_unknown
        elif c.id == "pad-row":
            ok = clears_vacated_rows(prof) or ("num_reqs_padded" in have and "block_table_device" in have)
        elif c.id.startswith("csr-"):
            ok = set(c.needs) <= have and dump.dcp_world_size == 1 and not state
        elif c.id in ("slot-mismatch", "pad-slot", "shared-partial-block"):
            ok = set(c.needs) <= have and not state
        else:
            ok = set(c.needs) <= have
        if ok:
            out.append(c.id)
    return out


# --- vectorised helpers ----------------------------------------------------------------

class _Segments:
    """Row segments [start_r, start_r + len_r) of a [R, W] table, flattened: ``take`` gathers
    them, ``locate`` maps a flat position back to (row, column)."""

    def __init__(self, width: int, start: np.ndarray, length: np.ndarray):
        self.n = len(length)
        self.width = width
        self.start = start.astype(np.int64)
        self.len = np.maximum(length.astype(np.int64), 0)
        self.off = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(self.len, out=self.off[1:])
        self.total = int(self.off[-1])
        self.dense = self.n > 0 and bool((self.start == 0).all()) and bool((self.len == width).all())
        self._idx = None

    def index(self, base: np.ndarray | None = None) -> np.ndarray:
        """Flat positions ``base[r] + k`` for k < len_r (base defaults to r * W + start_r)."""
        if base is None:
            if self._idx is None:
                self._idx = _ranges(np.arange(self.n, dtype=np.int64) * self.width + self.start,
                                    self.len, self.total)
            return self._idx
        return _ranges(base.astype(np.int64), self.len, self.total)

    def take(self, table: np.ndarray) -> np.ndarray:
        if self.dense:
            return np.ascontiguousarray(table[: self.n]).reshape(-1)
        return np.ascontiguousarray(table).reshape(-1)[self.index()]

    def locate(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = np.searchsorted(self.off, pos, side="right") - 1
        return rows, self.start[rows] + (pos - self.off[rows])


def _ranges(base: np.ndarray, length: np.ndarray, total: int) -> np.ndarray:
    """Concatenation of arange(base[r], base[r] + length[r]) without np.repeat."""
    out = np.ones(total, dtype=np.int64)
    nz = np.flatnonzero(length > 0)
    if total == 0 or nz.size == 0:
        return out[:0]
    begin = np.zeros(len(length) + 1, dtype=np.int64)
    np.cumsum(length, out=begin[1:])
    b = base[nz]
    last_prev = b[:-1] + length[nz[:-1]] - 1
    out[begin[nz[0]]] = b[0]
    out[begin[nz[1:]]] = b[1:] - last_prev
    return np.cumsum(out, out=out)


def _first_per_row(rows: np.ndarray, cols: np.ndarray):
    """rows sorted ascending; returns (row, first col, count) for each distinct row."""
    if rows.size == 0:
        return rows, cols, rows
    starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
    counts = np.diff(np.append(starts, rows.size))
    return rows[starts], cols[starts], counts


def _more(k: int, what: str = "entries"):
    """The " (N more such <what> in this row)" clause, or "" when the row has one wrong entry."""
    return Msg(f"more.{what}", {"n": k - 1}) if k > 1 else ""


def _plural(n: int, key: str) -> Msg:
    return Msg(f"{key}.{'one' if n == 1 else 'many'}", {"n": n})


class _Counts:
    """How often each id occurs: a dense id-indexed array when the universe is small enough
    (bool when every id is distinct), else sorted distinct ids with their counts."""

    def __init__(self, ids: np.ndarray, universe: int):
        self.universe = universe
        self.dense = None
        self.per_entry = None          # occurrence count of each entry; None when all distinct
        if universe <= 8 * ids.size + (1 << 22):
            seen = np.zeros(universe, dtype=bool)
            seen[ids] = True
            if np.count_nonzero(seen) == ids.size:   # all distinct: no counting needed
                self.dense = seen
                return
            self.dense = np.bincount(ids, minlength=universe)
            self.per_entry = self.dense[ids]
        else:
            self.uniq, inv, self.counts = np.unique(ids, return_inverse=True, return_counts=True)
            if self.uniq.size != ids.size:
                self.per_entry = self.counts[inv]

    def at(self, ids: np.ndarray) -> np.ndarray:
        if self.dense is not None:
            return self.dense[ids].astype(np.int64)
        if self.uniq.size == 0:
            return np.zeros(len(ids), dtype=np.int64)
        i = np.minimum(np.searchsorted(self.uniq, ids), self.uniq.size - 1)
        return np.where(self.uniq[i] == ids, self.counts[i], 0)

    def set(self, ids: np.ndarray, counts: np.ndarray) -> None:
        if self.dense is not None:
            self.dense[ids] = counts
        else:
            self.counts = self.counts.copy()
            self.counts[np.searchsorted(self.uniq, ids)] = counts


def _isin(values: np.ndarray, members: np.ndarray, universe: int) -> np.ndarray:
    if values.size == 0 or members.size == 0:
        return np.zeros(values.shape, dtype=bool)
    if universe <= 8 * (values.size + members.size) + (1 << 22):
        mark = np.zeros(universe, dtype=bool)
        mark[members] = True
        return mark[values]
    return np.isin(values, members)


# --- the checker -----------------------------------------------------------------------

class _Run:
    def __init__(self, d: Dump, limit: int, profile: Profile = CURRENT):
        self.d = d
        self.limit = limit
        self.profile = profile
        self.state = d.is_state_group
        self.out: list[Finding] = []
        self.n = d.num_reqs
        self.W = d.width
        self.bt = d.block_table
        self.cnt = d.num_blocks_per_row[: self.n].astype(np.int64)
        self.bpk = d.blocks_per_kv_block
        self.kbs = d.kbs
        self.span = d.block_size * d.dcp_world_size     # tokens one block id stands for
        self.kernel_ids = d.num_blocks * self.bpk
        self.seq = None if d.seq_lens is None else d.seq_lens[: self.n].astype(np.int64)
        self.prefix = _Segments(self.W, np.zeros(self.n, np.int64), self.cnt)
        self.vals = self.prefix.take(self.bt)

    def add(self, check: str, rows, cols, counts, message) -> None:
        """One finding per row (rows ascending), capped at ``limit`` rows."""
        rows, cols, counts = (np.asarray(x) for x in (rows, cols, counts))
        for r, c, k in zip(rows[: self.limit].tolist(), cols[: self.limit].tolist(),
                           counts[: self.limit].tolist()):
            self.out.append(Finding.of(check, r, c, message(r, c, k)))
        self._truncated(check, rows.size, "rows")

    def _truncated(self, check: str, n: int, what: str) -> None:
        if n > self.limit:
            self.out.append(Finding.of(check, None, None, Msg(f"truncated.{what}",
                                                              {"n": n - self.limit, "limit": self.limit})))

    def add_flat(self, check: str, bad_pos: np.ndarray, message) -> None:
        rows, cols = self.prefix.locate(bad_pos)
        self.add(check, *_first_per_row(rows, cols), message)

    # --- per-row prefix checks -------------------------------------------------------------
    def mirror(self) -> None:
        dev = self.d.block_table_device
        if dev is None:
            return
        dv = self.prefix.take(dev)
        bad = np.flatnonzero(self.vals != dv)
        if not bad.size:
            return
        cpu_v, dev_v = self.vals, dv

        def msg(r, c, k):
            i = int(self.prefix.off[r] + c)
            return Msg("mirror-stale", {"r": r, "c": c, "dev": int(dev_v[i]), "cpu": int(cpu_v[i]),
                                        "more": _more(k)})
        self.add_flat("mirror-stale", bad, msg)

    def ranges(self) -> None:
        limit = min(self.kernel_ids, 1 << 31)
        u = self.vals.view(np.uint32)
        # one min/max pass settles the common all-valid case without per-entry masks
        lo, hi = (int(u.min()), int(u.max())) if u.size else (self.bpk, 0)
        self.all_held = hi < limit and lo >= self.bpk
        self.in_range = None if hi < limit else u < limit
        bad = np.flatnonzero(~self.in_range) if self.in_range is not None else np.zeros(0, np.int64)
        if bad.size:
            v = self.vals
            self.add_flat("block-out-of-range", bad, lambda r, c, k: Msg("block-out-of-range.row", {
                "r": r, "c": c, "b": int(v[self.prefix.off[r] + c]), "last": self.kernel_ids - 1,
                "more": _more(k)}))
        if self.d.sliding_window is None and lo < self.bpk:
            bad = np.flatnonzero(u < self.bpk)
            if bad.size:
                self.add_flat("null-in-live-row", bad, lambda r, c, k: Msg("null-in-live-row", {
                    "r": r, "c": c, "n": int(self.cnt[r]), "more": _more(k)}))

    def too_few(self) -> None:
        if self.seq is None:
            return
        if self.state:   # one state block per request that has tokens, whatever its length
            need = (self.seq > 0).astype(np.int64) * self.bpk
            rows = np.flatnonzero(self.cnt < need)
            self.add("too-few-blocks", rows, self.cnt[rows], np.ones(rows.size), lambda r, c, k: Msg(
                "too-few-blocks.state", {"r": r, "c": c, "s": int(self.seq[r])}))
            return
        need = -(-self.seq // self.span) * self.bpk
        rows = np.flatnonzero(self.cnt < need)
        if rows.size:
            self.add("too-few-blocks", rows, self.cnt[rows], np.ones(rows.size), lambda r, c, k: Msg(
                "too-few-blocks", {"r": r, "c": c, "s": int(self.seq[r]), "span": self.span,
                                   "need": int(need[r]) // self.bpk,
                                   "kernel": Msg("too-few-blocks.kernel", {"n": int(need[r])})
                                   if self.bpk > 1 else ""}))

    # --- block accounting -------------------------------------------------------------------
    def accounting(self) -> None:
        d = self.d
        # entries that hold a block: in range, not null, not fallen out of a sliding window
        if self.all_held:
            held = np.ones(self.vals.size, dtype=bool) if d.sliding_window is not None else None
        else:
            held = self.vals.view(np.uint32) >= self.bpk
            if self.in_range is not None:
                held &= self.in_range
        window_ok = True
        if d.sliding_window is not None:
            if self.seq is None:
                window_ok = False  # cannot tell which old ids the scheduler already freed
            else:
                skipped = np.maximum(self.seq - d.sliding_window + 1, 0) // self.span * self.bpk
                rows, cols = self.prefix.locate(np.arange(self.vals.size))
                held &= cols >= skipped[rows]
        pos = None if held is None or held.all() else np.flatnonzero(held)
        ids = self.vals if pos is None else self.vals[pos]
        self.pos_of = (lambda p: p) if pos is None else (lambda p: pos[p])
        mids = ids // self.bpk if self.bpk > 1 else ids

        # duplicate kernel ids inside one row; with a sliding window but no seq_lens the ids of
        # blocks that fell out of the window cannot be told apart, and a freed one may come back
        kcount = _Counts(ids, self.kernel_ids)
        if kcount.per_entry is not None and (d.sliding_window is None or self.seq is not None):
            self._duplicates(ids, np.flatnonzero(kcount.per_entry >= 2))

        # holders: distinct live rows per block
        holders = kcount if self.bpk == 1 else _Counts(mids, d.num_blocks)
        if holders.per_entry is not None:
            multi = np.flatnonzero(holders.per_entry >= 2)
            rows, _ = self.prefix.locate(self.pos_of(multi))
            m = mids[multi]
            order = np.lexsort((rows, m))
            m_s, r_s = m[order], rows[order]
            new = np.concatenate(([True], (m_s[1:] != m_s[:-1]) | (r_s[1:] != r_s[:-1])))
            pm, pc = np.unique(m_s[new], return_counts=True)
            holders.set(pm, pc)
        self.holders, self.mids = holders, mids

        if window_ok:
            self._freed(holders, mids)
            self._refcount(holders)
        if not self.state:   # state blocks are not filled token by token
            self._shared_partial()

    def _duplicates(self, ids, multi) -> None:
        rows, cols = self.prefix.locate(self.pos_of(multi))
        v = ids[multi]
        order = np.lexsort((cols, v, rows))
        r_s, v_s, c_s = rows[order], v[order], cols[order]
        same = np.concatenate(([False], (r_s[1:] == r_s[:-1]) & (v_s[1:] == v_s[:-1])))
        dup = np.flatnonzero(same)
        if not dup.size:
            return
        rr, idx = np.unique(r_s[dup], return_index=True)
        counts = np.diff(np.append(idx, dup.size))
        at = dup[idx]
        first_c = {}
        for r, i in zip(rr[: self.limit].tolist(), at[: self.limit].tolist()):
            j = i
            while j > 0 and r_s[j - 1] == r_s[i] and v_s[j - 1] == v_s[i]:
                j -= 1
            first_c[r] = (int(v_s[i]), int(c_s[j]), int(c_s[i]))
        self.add("duplicate-block-in-row", rr, c_s[at], counts, lambda r, c, k: Msg(
            "duplicate-block-in-row", {"r": r, "b": first_c[r][0], "c1": first_c[r][1], "c2": first_c[r][2],
                                       "more": _more(k, "repeats")}))

    def _freed(self, holders: _Counts, mids) -> None:
        d = self.d
        N = d.num_blocks
        free = None
        if d.free_block_ids is not None:
            f = d.free_block_ids.astype(np.int64)
            free = f[(f >= 0) & (f < N)]
        if holders.dense is not None:   # per block: held and (free or unreferenced)
            bad = np.zeros(N, dtype=bool)
            if free is not None and free.size:
                bad[free] = True
            if d.ref_cnt is not None:
                bad |= d.ref_cnt == 0
            bad &= holders.dense.astype(bool, copy=False)
            if not bad.any():
                return
            hit = np.flatnonzero(bad[mids])
        else:
            uniq = holders.uniq
            bad = np.zeros(uniq.size, dtype=bool)
            if free is not None:
                bad |= _isin(uniq, free, N)
            if d.ref_cnt is not None:
                bad |= d.ref_cnt[uniq] == 0
            if not bad.any():
                return
            hit = np.flatnonzero(_isin(mids, uniq[bad], N))
        rows, cols = self.prefix.locate(self.pos_of(hit))
        v = self.vals

        def msg(r, c, k):
            b = int(v[self.prefix.off[r] + c]) // self.bpk
            free_at = None
            if d.free_block_ids is not None:
                at = np.flatnonzero(d.free_block_ids == b)
                if at.size:
                    free_at = int(at[0])
            zero = d.ref_cnt is not None and int(d.ref_cnt[b]) == 0
            kind = ("free" if free_at is not None else "") + ("ref" if zero else "")
            why = Msg(f"freed-block-in-use.why_{kind}", {"pos": free_at}) if kind else ""
            return Msg("freed-block-in-use", {"r": r, "c": c, "b": b, "why": why, "more": _more(k)})
        self.add("freed-block-in-use", *_first_per_row(rows, cols), msg)

    def _refcount(self, holders: _Counts) -> None:
        d = self.d
        if d.ref_cnt is None:
            return
        ref = d.ref_cnt
        if holders.dense is not None:
            diff = ref != holders.dense
            diff[NULL_BLOCK_ID] = False
            bad = np.flatnonzero(diff)
        else:  # few held blocks in a huge pool: compare the held ones, then the rest must be 0
            uniq = holders.uniq
            bad_h = uniq[ref[uniq] != holders.counts]
            nonzero = np.flatnonzero(ref)
            bad = np.union1d(bad_h, nonzero[~np.isin(nonzero, uniq)])
            bad = bad[bad != NULL_BLOCK_ID]
        if not bad.size:
            return
        h_all = holders.at(bad[: self.limit])
        for b, h in zip(bad[: self.limit].tolist(), h_all.tolist()):
            rc = int(ref[b])
            key = "refcount-mismatch.leak" if rc > h else "refcount-mismatch.early"
            self.out.append(Finding.of("refcount-mismatch", None, b, Msg(key, {
                "b": b, "rc": rc, "holders": _plural(h, "live_rows_hold")})))
        self._truncated("refcount-mismatch", bad.size, "blocks")

    def _shared_partial(self) -> None:
        if self.seq is None:
            return
        s = self.seq
        last = (s - 1) // self.span * self.bpk          # column of the last block
        partial = (s > 0) & (s % self.span != 0) & (last < self.cnt)
        rows = np.flatnonzero(partial)
        if not rows.size:
            return
        blk = self.bt[rows, last[rows]].astype(np.int64)
        ok = (blk >= self.bpk) & (blk < self.kernel_ids)
        rows, blk = rows[ok], blk[ok] // self.bpk
        h = self.holders.at(blk)
        shared = h >= 2
        rows, blk, h = rows[shared], blk[shared], h[shared]
        if not rows.size:
            return
        info = {int(r): (int(b), int(k)) for r, b, k in zip(rows[: self.limit], blk[: self.limit],
                                                            h[: self.limit])}
        named = set(rows[:5].tolist())   # naming the other holders costs a pass over the table

        def msg(r, c, k):
            b, holders = info[r]
            fill = int(s[r] - (s[r] - 1) // self.span * self.span)
            others = ""
            if r in named:
                where = np.flatnonzero(self.mids == b)
                rows_b = sorted(set(self.prefix.locate(self.pos_of(where))[0].tolist()) - {r})[:3]
                others = Msg("shared-partial-block.named", {"rows": ", ".join(map(str, rows_b))})
            n = holders - 1
            return Msg("shared-partial-block", {
                "r": r, "b": b, "fill": fill, "span": self.span,
                "others": Msg(f"other_rows_hold.{'one' if n == 1 else 'many'}", {"n": n, "named": others})})
        self.add("shared-partial-block", rows, last[rows], np.ones(rows.size), msg)

    # --- slots ------------------------------------------------------------------------------
    def slots(self) -> None:
        d = self.d
        if d.slot_mapping is None or d.query_start_loc is None or self.state:
            return
        qsl = d.query_start_loc[: self.n + 1].astype(np.int64)
        T = int(qsl[-1]) if self.n else 0
        sm = d.slot_mapping
        tail = np.flatnonzero(sm[T:] != PAD_SLOT_ID)
        if tail.size:
            i = T + int(tail[0])
            self.out.append(Finding.of("pad-slot", None, i, Msg("pad-slot", {
                "i": i, "t": T, "v": int(sm[i]),
                "more": Msg("pad-slot.more", {"n": tail.size - 1}) if tail.size > 1 else ""})))
        if d.positions is None or T == 0:
            return
        pos = d.positions[:T].astype(np.int64)
        # the kernel's column for each token, to spot positions the table cannot hold
        world, inter = d.dcp_world_size, d.cp_kv_cache_interleave_size
        vidx, voff = np.divmod(pos, d.block_size * world)
        loff = (voff // (world * inter)) * inter + voff % inter
        cols = vidx * self.bpk + loff // self.kbs
        outside = (cols < 0) | (cols >= self.W)
        safe = np.where(outside, 0, pos)
        exp = compute_slot_mapping(qsl, safe, self.bt, num_reqs=self.n, num_tokens_padded=T,
                                   block_size=d.block_size, kernel_block_size=self.kbs,
                                   dcp_world_size=world, dcp_rank=d.dcp_rank, interleave=inter)
        got = sm[:T]
        bad = np.flatnonzero((got != exp) | outside)
        if not bad.size:
            return
        rows = np.searchsorted(qsl[1:], bad, side="right")
        rr, first, k = _first_per_row(rows, bad)

        def msg(r, i, k):
            p, g, e = int(pos[i]), int(got[i]), int(exp[i])
            head = {"i": i, "r": r, "p": p, "g": g, "more": _more(k, "tokens")}
            if outside[i]:
                return Msg("slot-mismatch.outside", {**head, "col": int(cols[i]), "w": self.W})
            if e == PAD_SLOT_ID:
                return Msg("slot-mismatch.other_rank", head)
            return Msg("slot-mismatch", {**head, "blk": e // self.kbs, "off": e % self.kbs, "e": e})
        self.add("slot-mismatch", rr, first, k, msg)

    # --- padding rows -------------------------------------------------------------------------
    def pad_rows(self) -> None:
        d = self.d
        lo, hi = self.n, d.padded_reqs
        clears = clears_vacated_rows(self.profile)
        found = {}
        # the padded rows the kernel reads: the device table when captured, else the CPU table (under
        # a 2025 profile the CPU rows of vacated requests legitimately keep their ids: not looked at)
        if hi > lo and (d.block_table_device is not None or clears):
            table = d.block_table_device if d.block_table_device is not None else self.bt
            which = "device" if d.block_table_device is not None else "cpu"
            pad = table[lo:hi]
            nz = pad != NULL_BLOCK_ID
            first = nz.argmax(axis=1)
            bad = nz[np.arange(hi - lo), first]
            for j in np.flatnonzero(bad).tolist():
                r, c = lo + j, int(first[j])
                found[r] = (c, Msg(f"pad-row.nonzero_{which}", {"r": r, "b": int(pad[j, c]), "c": c}))
        if clears:
            # current vLLM clears every row it vacates (remove_request's clear_row, condense's
            # move_row), so no row past num_reqs counts a block; one that does reaches the kernel at
            # the next commit that copies it (a dummy run commits its num_reqs_padded rows)
            cnt_all = d.num_blocks_per_row[lo:].astype(np.int64)
            vac = np.flatnonzero(cnt_all > 0)
            if vac.size:
                rows_v = lo + vac
                cnt = cnt_all[vac]
                seg = _Segments(self.W, np.zeros(vac.size, np.int64), cnt)
                v = seg.take(self.bt[rows_v])
                rows, cols = seg.locate(np.flatnonzero(v != NULL_BLOCK_ID))
                first_c = dict(zip(*(x.tolist() for x in _first_per_row(rows, cols)[:2])))
                for j, r in enumerate(rows_v.tolist()):
                    if r in found:
                        continue
                    n = int(cnt[j])
                    if j not in first_c:
                        found[r] = (None, Msg("pad-row.count_only", {"r": r, "n": n, "live": lo}))
                        continue
                    c = int(first_c[j])
                    key = "pad-row.not_cleared" if r < hi else "pad-row.vacated"
                    found[r] = (c, Msg(key, {"r": r, "n": n, "b": int(self.bt[r, c]), "c": c, "live": lo}))
        keys = sorted(found)
        self.add("pad-row", keys, np.array([found[r][0] for r in keys], dtype=object), np.ones(len(keys)),
                 lambda r, c, k: found[r][1])

    # --- FlashInfer CSR -----------------------------------------------------------------------
    def csr(self) -> None:
        d = self.d
        if d.seq_lens is None or d.dcp_world_size != 1 or self.state:
            return
        P = self.kbs

        def seq_for(n):
            s = np.zeros(n, dtype=np.int64)
            m = min(n, d.seq_lens.shape[0])
            s[:m] = d.seq_lens[:m]
            return s

        if d.paged_kv_last_page_len is not None:
            lpl = d.paged_kv_last_page_len.astype(np.int64)
            s = seq_for(lpl.size)
            rem = s % P
            empty_zero = self.profile.empty_last_page_len_is_zero
            exp = np.where(s == 0, 0 if empty_zero else P, np.where(rem == 0, P, rem))
            rows = np.flatnonzero(lpl != exp)
            key = "csr-last-page-len" if empty_zero else "csr-last-page-len.empty_full"
            self.add("csr-last-page-len", rows, rows * 0, np.ones(rows.size), lambda r, c, k: Msg(key, {
                "r": r, "s": int(s[r]), "exp": int(exp[r]), "p": P, "got": int(lpl[r]),
                "profile": self.profile.name}))

        if d.paged_kv_indptr is None:
            return
        ip = d.paged_kv_indptr.astype(np.int64)
        n = ip.size - 1
        s = seq_for(n)
        pages = -(-s // P)
        if ip[0] != 0:
            self.out.append(Finding.of("csr-indptr", None, 0, Msg("csr-indptr.start", {"v": int(ip[0])})))
        got = np.diff(ip)
        n_idx = None if d.paged_kv_indices is None else d.paged_kv_indices.size
        past = (ip[1:] > n_idx) if n_idx is not None else np.zeros(n, bool)
        rows = np.flatnonzero((got != pages) | past | (ip[:-1] < 0))

        def msg(r, c, k):
            if got[r] == pages[r]:
                return Msg("csr-indptr.past", {"r": r, "a": int(ip[r]), "b": int(ip[r + 1]), "n": n_idx})
            return Msg("csr-indptr", {"r": r, "got": int(got[r]), "s": int(s[r]), "p": P,
                                      "need": int(pages[r])})
        self.add("csr-indptr", rows, rows + 1, np.ones(rows.size), msg)

        if d.paged_kv_indices is None:
            return
        good = np.ones(n, dtype=bool)
        good[rows] = False
        take = np.where(good, np.minimum(pages, self.W), 0)
        seg = _Segments(self.W, np.zeros(n, np.int64), take)
        if seg.total == 0:
            return
        exp = seg.take(self.bt)
        ind = d.paged_kv_indices
        if seg.total <= ind.size and bool((ip[:-1] == seg.off[:-1]).all()) and good.all():
            got_v = ind[: seg.total]
        else:
            got_v = ind[seg.index(np.where(good, ip[:-1], 0))]
        bad = np.flatnonzero(got_v != exp)
        if not bad.size:
            return
        r_, c_ = seg.locate(bad)
        rr, cc, kk = _first_per_row(r_, c_)

        def msg2(r, c, k):
            i = int(ip[r] + c)
            return Msg("csr-indices", {"i": i, "r": r, "c": c, "v": int(ind[i]), "b": int(self.bt[r, c]),
                                       "more": _more(k, "pages")})
        self.add("csr-indices", rr, cc, kk, msg2)

    # --- free list ----------------------------------------------------------------------------
    def free_list(self) -> None:
        d = self.d
        if d.free_block_ids is None:
            return
        f = d.free_block_ids.astype(np.int64)
        N = d.num_blocks
        oor = np.flatnonzero((f < 0) | (f >= N))
        for i in oor[: self.limit].tolist():
            self.out.append(Finding.of("block-out-of-range", None, i, Msg("block-out-of-range.free", {
                "i": i, "b": int(f[i]), "last": N - 1})))
        self._truncated("block-out-of-range", oor.size, "free_entries")
        nulls = np.flatnonzero(f == NULL_BLOCK_ID)
        msgs = [(int(i), Msg("free-list-duplicate.null", {"i": int(i)})) for i in nulls[:1]]
        valid = np.flatnonzero((f > NULL_BLOCK_ID) & (f < N))
        occ = _Counts(f[valid], N).per_entry
        if occ is not None:
            multi = valid[occ >= 2]
            order = np.lexsort((multi, f[multi]))
            m_s, b_s = multi[order], f[multi][order]
            second = np.flatnonzero(np.concatenate(([False], b_s[1:] == b_s[:-1])))
            firsts = {}
            for j in second.tolist():
                b = int(b_s[j])
                if b not in firsts:
                    firsts[b] = (int(m_s[j - 1]), int(m_s[j]))
            for b, (i, j) in sorted(firsts.items(), key=lambda x: x[1][1]):
                msgs.append((j, Msg("free-list-duplicate", {"b": b, "i": i, "j": j})))
        msgs.sort(key=lambda x: x[0])      # positions are distinct
        for i, m in msgs[: self.limit]:
            self.out.append(Finding.of("free-list-duplicate", None, i, m))
        self._truncated("free-list-duplicate", len(msgs), "entries")


def run_checks(dump: Dump, *, limit: int = MAX_ROWS_PER_CHECK,
               profile: str | Profile | None = None) -> list[Finding]:
    """Every applicable check; findings ordered by row, then check, then index. The rules are those
    of ``profile`` (a name in kvviz.core.versions.PROFILES), else of the dump's ``profile`` key, else
    current vLLM's; ValueError for an unknown name."""
    prof, _ = resolve_profile(dump, profile)
    run = _Run(dump, limit, prof)
    run.mirror()
    run.ranges()
    run.too_few()
    run.accounting()
    run.slots()
    run.pad_rows()
    run.csr()
    run.free_list()
    return sorted(run.out, key=Finding.sort_key)


def findings_to_json(findings: list[Finding], profile: str | Profile | None = None) -> dict:
    """``{"findings": [...]}``, plus ``"profile"`` (the name the dump was checked under) when given."""
    out = {"findings": [f.to_json() for f in findings]}
    if profile is not None:
        out["profile"] = profile.name if isinstance(profile, Profile) else str(profile)
    return out


PROFILE_NAMES = tuple(PROFILES)
