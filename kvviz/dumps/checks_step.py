"""The per-step checks: the slot mapping recomputed from the CPU table (DCP included) and FlashInfer's
CSR page table."""
from __future__ import annotations

import numpy as np

from kvviz.constants import PAD_SLOT_ID
from kvviz.dumps.arrays import Segments, first_per_row, more_clause
from kvviz.dumps.catalogue import Finding, Msg
from kvviz.dumps.context import CheckRun
from kvviz.core.step import compute_slot_mapping


def check_slots(run: CheckRun) -> None:
    d = run.d
    if d.slot_mapping is None or d.query_start_loc is None or run.state:
        return
    qsl = d.query_start_loc[: run.n + 1].astype(np.int64)
    T = int(qsl[-1]) if run.n else 0
    sm = d.slot_mapping
    tail = np.flatnonzero(sm[T:] != PAD_SLOT_ID)
    if tail.size:
        i = T + int(tail[0])
        run.out.append(Finding.of("pad-slot", None, i, Msg("pad-slot", {
            "i": i, "t": T, "v": int(sm[i]),
            "more": Msg("pad-slot.more", {"n": tail.size - 1}) if tail.size > 1 else ""})))
    if d.positions is None or T == 0:
        return
    pos = d.positions[:T].astype(np.int64)
    # the kernel's column for each token, to spot positions the table cannot hold
    world, inter = d.dcp_world_size, d.cp_kv_cache_interleave_size
    vidx, voff = np.divmod(pos, d.block_size * world)
    loff = (voff // (world * inter)) * inter + voff % inter
    cols = vidx * run.bpk + loff // run.kbs
    outside = (cols < 0) | (cols >= run.W)
    safe = np.where(outside, 0, pos)
    exp = compute_slot_mapping(qsl, safe, run.bt, num_reqs=run.n, num_tokens_padded=T,
                               block_size=d.block_size, kernel_block_size=run.kbs,
                               dcp_world_size=world, dcp_rank=d.dcp_rank, interleave=inter)
    got = sm[:T]
    bad = np.flatnonzero((got != exp) | outside)
    if not bad.size:
        return
    rows = np.searchsorted(qsl[1:], bad, side="right")
    rr, first, k = first_per_row(rows, bad)

    def msg(r, i, k):
        p, g, e = int(pos[i]), int(got[i]), int(exp[i])
        head = {"i": i, "r": r, "p": p, "g": g, "more": more_clause(k, "tokens")}
        if outside[i]:
            return Msg("slot-mismatch.outside", {**head, "col": int(cols[i]), "w": run.W})
        if e == PAD_SLOT_ID:
            return Msg("slot-mismatch.other_rank", head)
        return Msg("slot-mismatch", {**head, "blk": e // run.kbs, "off": e % run.kbs, "e": e})
    run.add("slot-mismatch", rr, first, k, msg)


def check_csr(run: CheckRun) -> None:
    d = run.d
    if d.seq_lens is None or d.dcp_world_size != 1 or run.state:
        return
    P = run.kbs

    def seq_for(n):
        s = np.zeros(n, dtype=np.int64)
        m = min(n, d.seq_lens.shape[0])
        s[:m] = d.seq_lens[:m]
        return s

    if d.paged_kv_last_page_len is not None:
        lpl = d.paged_kv_last_page_len.astype(np.int64)
        s = seq_for(lpl.size)
        rem = s % P
        empty_zero = run.profile.empty_last_page_len_is_zero
        exp = np.where(s == 0, 0 if empty_zero else P, np.where(rem == 0, P, rem))
        rows = np.flatnonzero(lpl != exp)
        key = "csr-last-page-len" if empty_zero else "csr-last-page-len.empty_full"
        run.add("csr-last-page-len", rows, rows * 0, np.ones(rows.size), lambda r, c, k: Msg(key, {
            "r": r, "s": int(s[r]), "exp": int(exp[r]), "p": P, "got": int(lpl[r]),
            "profile": run.profile.name}))

    if d.paged_kv_indptr is None:
        return
    ip = d.paged_kv_indptr.astype(np.int64)
    n = ip.size - 1
    s = seq_for(n)
    pages = -(-s // P)
    if ip[0] != 0:
        run.out.append(Finding.of("csr-indptr", None, 0, Msg("csr-indptr.start", {"v": int(ip[0])})))
    got = np.diff(ip)
    n_idx = None if d.paged_kv_indices is None else d.paged_kv_indices.size
    past = (ip[1:] > n_idx) if n_idx is not None else np.zeros(n, bool)
    rows = np.flatnonzero((got != pages) | past | (ip[:-1] < 0))

    def msg(r, c, k):
        if got[r] == pages[r]:
            return Msg("csr-indptr.past", {"r": r, "a": int(ip[r]), "b": int(ip[r + 1]), "n": n_idx})
        return Msg("csr-indptr", {"r": r, "got": int(got[r]), "s": int(s[r]), "p": P,
                                  "need": int(pages[r])})
    run.add("csr-indptr", rows, rows + 1, np.ones(rows.size), msg)

    if d.paged_kv_indices is None:
        return
    good = np.ones(n, dtype=bool)
    good[rows] = False
    take = np.where(good, np.minimum(pages, run.W), 0)
    seg = Segments(run.W, np.zeros(n, np.int64), take)
    if seg.total == 0:
        return
    exp = seg.take(run.bt)
    ind = d.paged_kv_indices
    if seg.total <= ind.size and bool((ip[:-1] == seg.off[:-1]).all()) and good.all():
        got_v = ind[: seg.total]
    else:
        got_v = ind[seg.index(np.where(good, ip[:-1], 0))]
    bad = np.flatnonzero(got_v != exp)
    if not bad.size:
        return
    r_, c_ = seg.locate(bad)
    rr, cc, kk = first_per_row(r_, c_)

    def msg2(r, c, k):
        i = int(ip[r] + c)
        return Msg("csr-indices", {"i": i, "r": r, "c": c, "v": int(ind[i]), "b": int(run.bt[r, c]),
                                   "more": more_clause(k, "pages")})
    run.add("csr-indices", rr, cc, kk, msg2)
