"""The per-step checks: the slot mapping recomputed from the CPU table (DCP included), CUDA-graph
padding (tokens and rows), and FlashInfer's CSR page table."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID
from kvviz.core.step import compute_slot_mapping
from kvviz.dumps.arrays import Segments, first_per_row
from kvviz.dumps.catalogue import Msg, more_clause
from kvviz.dumps.context import CheckRun, clears_vacated_rows

# --- slots ------------------------------------------------------------------------------------

def _real_tokens(run: CheckRun) -> tuple[np.ndarray, int] | None:
    """(query_start_loc of the live rows, number of real tokens), or None when the dump has no
    slots to check."""
    d = run.d
    if d.slot_mapping is None or d.query_start_loc is None or run.state:
        return None
    qsl = d.query_start_loc[: run.n + 1].astype(np.int64)
    return qsl, int(qsl[-1]) if run.n else 0


def pad_slot(run: CheckRun) -> None:
    """pad-slot: a slot after the last real token is not -1."""
    tokens = _real_tokens(run)
    if tokens is None:
        return
    T, sm = tokens[1], run.d.slot_mapping
    tail = np.flatnonzero(sm[T:] != PAD_SLOT_ID)
    if tail.size:
        i = T + int(tail[0])
        run.add_one("pad-slot", i, Msg("pad-slot", {
            "i": i, "t": T, "v": int(sm[i]),
            "more": Msg("pad-slot.more", {"n": tail.size - 1}) if tail.size > 1 else ""}))


def slot_mismatch(run: CheckRun) -> None:
    """slot-mismatch: a real token's slot differs from the one its row and position give."""
    d, tokens = run.d, _real_tokens(run)
    if tokens is None or d.positions is None or tokens[1] == 0:
        return
    qsl, T = tokens
    pos = d.positions[:T].astype(np.int64)
    # the kernel's column for each token, to spot positions the table cannot hold
    cols = run.geo.locate(pos)[1]
    outside = (cols < 0) | (cols >= run.W)
    exp = compute_slot_mapping(qsl, np.where(outside, 0, pos), run.bt, num_reqs=run.n, num_tokens_padded=T,
                               block_size=d.block_size, geometry=run.geo)
    got = d.slot_mapping[:T]
    bad = np.flatnonzero((got != exp) | outside)
    if not bad.size:
        return
    rows = np.searchsorted(qsl[1:], bad, side="right")

    def msg(r, i, k):
        p, g, e = int(pos[i]), int(got[i]), int(exp[i])
        head = {"i": i, "r": r, "p": p, "g": g, "more": more_clause(k, "tokens")}
        if outside[i]:
            return Msg("slot-mismatch.outside", {**head, "col": int(cols[i]), "w": run.W})
        if e == PAD_SLOT_ID:
            return Msg("slot-mismatch.other_rank", head)
        blk, off = run.geo.split_slot(e)
        return Msg("slot-mismatch", {**head, "blk": blk, "off": off, "e": e})
    run.add("slot-mismatch", *first_per_row(rows, bad), msg)


# --- padded rows ------------------------------------------------------------------------------

def _padded_rows_read(run: CheckRun) -> dict:
    """row -> (column, message) for the padded rows the kernel reads that are not all null: the
    device table when captured, else the CPU table (under a 2025 profile the CPU rows of vacated
    requests legitimately keep their ids: not looked at)."""
    d = run.d
    lo, hi = run.n, d.padded_reqs
    if hi <= lo or (d.block_table_device is None and not clears_vacated_rows(run.profile)):
        return {}
    fill = run.profile.padded_row_fill
    if d.block_table_device is not None and fill is None:
        return {}     # v0.11.x never wrote padded device rows: whatever an earlier commit left is legitimate
    table = d.block_table_device if d.block_table_device is not None else run.bt
    which = "device" if d.block_table_device is not None else "cpu"
    want = NULL_BLOCK_ID if which == "cpu" or fill is None else fill
    pad = table[lo:hi]
    nz = pad != want
    first = nz.argmax(axis=1)
    bad = nz[np.arange(hi - lo), first]
    found = {}
    key = f"pad-row.nonzero_{which}" if want == NULL_BLOCK_ID else "pad-row.fill_device"
    for j in np.flatnonzero(bad).tolist():
        r, c = lo + j, int(first[j])
        found[r] = (c, Msg(key, {"r": r, "b": int(pad[j, c]), "c": c, "f": want, "profile": run.profile.name}))
    return found


def _vacated_rows(run: CheckRun, found: dict) -> None:
    """Add to ``found`` the rows past num_reqs that still count blocks. Current vLLM clears every row
    it vacates (remove_request's clear_row, condense's move_row), so such a row reaches the kernel at
    the next commit that copies it (a dummy run commits its num_reqs_padded rows)."""
    d = run.d
    lo, hi = run.n, d.padded_reqs
    cnt_all = d.num_blocks_per_row[lo:].astype(np.int64)
    vac = np.flatnonzero(cnt_all > 0)
    if not vac.size:
        return
    rows_v = lo + vac
    cnt = cnt_all[vac]
    seg = Segments(run.W, np.zeros(vac.size, np.int64), cnt)
    v = seg.take(run.bt[rows_v])
    rows, cols = seg.locate(np.flatnonzero(v != NULL_BLOCK_ID))
    first_c = dict(zip(*(x.tolist() for x in first_per_row(rows, cols)[:2])))
    for j, r in enumerate(rows_v.tolist()):
        if r in found:
            continue
        n = int(cnt[j])
        if j not in first_c:
            found[r] = (None, Msg("pad-row.count_only", {"r": r, "n": n, "live": lo}))
            continue
        c = int(first_c[j])
        key = "pad-row.not_cleared" if r < hi else "pad-row.vacated"
        found[r] = (c, Msg(key, {"r": r, "n": n, "b": int(run.bt[r, c]), "c": c, "live": lo}))


def pad_row(run: CheckRun) -> None:
    """pad-row: a padded row the kernel reads is not all block 0, or (current vLLM) a row past
    num_reqs still counts blocks."""
    if run.d.is_v2:
        return      # Model Runner V2's padded rows are v2-pad-row's; its state rows are never cleared
    found = _padded_rows_read(run)
    if clears_vacated_rows(run.profile):
        _vacated_rows(run, found)
    keys = sorted(found)
    run.add("pad-row", keys, np.array([found[r][0] for r in keys], dtype=object), np.ones(len(keys)),
            lambda r, c, k: found[r][1])


# --- FlashInfer CSR ----------------------------------------------------------------------------

def _checks_csr(run: CheckRun) -> bool:
    """Whether the CSR page table can be checked: seq_lens known, no DCP, not a state group."""
    return run.d.seq_lens is not None and run.d.dcp_world_size == 1 and not run.state


def _seq_lens(run: CheckRun, n: int) -> np.ndarray:
    """The first ``n`` sequence lengths, 0 for rows past the dump's seq_lens."""
    s = np.zeros(n, dtype=np.int64)
    m = min(n, run.d.seq_lens.shape[0])
    s[:m] = run.d.seq_lens[:m]
    return s


class Indptr(NamedTuple):
    """paged_kv_indptr against the pages each row needs."""
    ip: np.ndarray         # the indptr, int64
    seq: np.ndarray        # each row's sequence length
    pages: np.ndarray      # the pages each row needs
    got: np.ndarray        # the pages the indptr gives each row
    bad_rows: np.ndarray   # rows whose slice is wrong or runs past the indices
    n_indices: int | None  # len(paged_kv_indices), None when not captured


def _indptr(run: CheckRun) -> Indptr:
    ip = run.d.paged_kv_indptr.astype(np.int64)
    n = ip.size - 1
    s = _seq_lens(run, n)
    pages = run.geo.page_count(s)
    if run.d.cascade_prefix_blocks:
        # cascade attention: the shared prefix's pages go to the shared-prefix pass, not to each row
        pages = np.maximum(pages - run.d.cascade_prefix_blocks, 0)
    got = np.diff(ip)
    n_idx = None if run.d.paged_kv_indices is None else run.d.paged_kv_indices.size
    past = (ip[1:] > n_idx) if n_idx is not None else np.zeros(n, bool)
    return Indptr(ip, s, pages, got, np.flatnonzero((got != pages) | past | (ip[:-1] < 0)), n_idx)


def d_padded(run: CheckRun) -> int:
    return int(run.d.padded_reqs)


def csr_last_page_len(run: CheckRun) -> None:
    """csr-last-page-len: a row's last_page_len is not the fill of its last page."""
    if not _checks_csr(run) or run.d.paged_kv_last_page_len is None:
        return
    lpl = run.d.paged_kv_last_page_len.astype(np.int64)
    s = _seq_lens(run, lpl.size)
    empty_zero = run.profile.empty_last_page_len_is_zero
    exp = run.geo.last_page_len(s, empty_zero)
    if run.profile.padded_last_page_len_one and d_padded(run) > run.n:   # v0.10.1 to v0.11.x
        exp[run.n:d_padded(run)] = 1
    rows = np.flatnonzero(lpl != exp)
    key = "csr-last-page-len" if empty_zero else "csr-last-page-len.empty_full"
    padded_one = run.profile.padded_last_page_len_one

    def msg(r, c, k):
        if padded_one and run.n <= r < d_padded(run):
            return Msg("csr-last-page-len.padded_one", {"r": r, "got": int(lpl[r]), "profile": run.profile.name})
        return Msg(key, {"r": r, "s": int(s[r]), "exp": int(exp[r]), "p": run.kbs, "got": int(lpl[r]),
                         "profile": run.profile.name})
    run.add("csr-last-page-len", rows, rows * 0, np.ones(rows.size), msg)


def csr_indptr(run: CheckRun) -> None:
    """csr-indptr: paged_kv_indptr does not start at 0, or a row's slice is not its page count."""
    if not _checks_csr(run) or run.d.paged_kv_indptr is None:
        return
    x = _indptr(run)
    if x.ip[0] != 0:
        run.add_one("csr-indptr", 0, Msg("csr-indptr.start", {"v": int(x.ip[0])}))

    def msg(r, c, k):
        if x.got[r] == x.pages[r]:
            return Msg("csr-indptr.past", {"r": r, "a": int(x.ip[r]), "b": int(x.ip[r + 1]), "n": x.n_indices})
        return Msg("csr-indptr", {"r": r, "got": int(x.got[r]), "s": int(x.seq[r]), "p": run.kbs,
                                  "need": int(x.pages[r])})
    run.add("csr-indptr", x.bad_rows, x.bad_rows + 1, np.ones(x.bad_rows.size), msg)


def csr_indices(run: CheckRun) -> None:
    """csr-indices: a row's slice of paged_kv_indices is not the first pages of its table row (rows
    whose indptr slice is wrong are left to csr-indptr)."""
    d = run.d
    if not _checks_csr(run) or d.paged_kv_indptr is None or d.paged_kv_indices is None:
        return
    x = _indptr(run)
    good = np.ones(x.pages.size, dtype=bool)
    good[x.bad_rows] = False
    first = min(run.d.cascade_prefix_blocks or 0, run.W)     # cascade: each row's pages after the shared ones
    seg = Segments(run.W, np.full(x.pages.size, first, np.int64),
                   np.where(good, np.minimum(x.pages, run.W - first), 0))
    if seg.total == 0:
        return
    exp = seg.take(run.bt)
    ind = d.paged_kv_indices
    if seg.total <= ind.size and bool((x.ip[:-1] == seg.off[:-1]).all()) and good.all():
        got_v = ind[: seg.total]
    else:
        got_v = ind[seg.index(np.where(good, x.ip[:-1], 0))]
    bad = np.flatnonzero(got_v != exp)
    if not bad.size:
        return

    def msg(r, c, k):
        i = int(x.ip[r] + c - first)
        return Msg("csr-indices", {"i": i, "r": r, "c": c, "v": int(ind[i]), "b": int(run.bt[r, c]),
                                   "more": more_clause(k, "pages")})
    run.add("csr-indices", *first_per_row(*seg.locate(bad)), msg)
