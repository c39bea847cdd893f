"""Benchmark: check and diff two dumps of 1024 x 65536 block tables (issue 5).

    .venv/bin/python scripts/bench_dumps.py [--case realistic|dense|all] [--repeat 3] [--load]

Two cases, each a pair of dumps A (healthy) and B (A with three stale device rows, one
wrong slot and one wrong ref count), with every optional table present:
  realistic  1024 live rows, 2^20 + 1 blocks; rows hold 64 shared prefix blocks plus ~960
             private ones (about 1.05 M counted entries of the 67 M-entry table);
  dense      every one of the 67 M entries is counted (2^26 + 1 blocks, one per entry):
             the worst case for the per-entry checks.
Prints one JSON line per case with the best-of-N seconds of check(A), check(B), diff(A, B)
and their sum; --load also times loading A from an uncompressed .npz.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kvviz.dumps.check import run_checks  # noqa: E402
from kvviz.dumps.diff import diff_dumps  # noqa: E402
from kvviz.dumps.format import Dump, load_dump, save_dump  # noqa: E402
from kvviz.core.step import compute_csr, compute_slot_mapping  # noqa: E402

R, W, B = 1024, 65536, 16


def _step_arrays(bt, cnt, seq, num_blocks, held_counts):
    n = len(seq)
    q = np.ones(n, dtype=np.int64)
    q[0] = 8192                                   # row 0 prefills a chunk, the rest decode
    qsl = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(q, out=qsl[1:])
    T = int(qsl[-1])
    starts = np.repeat(seq - q, q)
    positions = (starts + np.arange(T) - np.repeat(qsl[:-1].astype(np.int64), q)).astype(np.int64)
    t_pad = T + 64
    pos_pad = np.zeros(t_pad, dtype=np.int64)
    pos_pad[:T] = positions
    slots = compute_slot_mapping(qsl, pos_pad, bt, num_reqs=n, num_tokens_padded=t_pad, block_size=B)
    indptr, indices, last = compute_csr(bt, seq, B)
    ref = held_counts.astype(np.int32)
    free = np.flatnonzero(ref == 0)[1:].astype(np.int32)[::-1].copy()   # block 0 never free
    return dict(query_start_loc=qsl, positions=pos_pad, slot_mapping=slots, paged_kv_indptr=indptr,
                paged_kv_indices=indices, paged_kv_last_page_len=last, ref_cnt=ref, free_block_ids=free)


def realistic() -> Dump:
    rng = np.random.default_rng(5)
    shared = 64
    cnt = (shared + rng.integers(700, 1220, size=R)).astype(np.int32)
    num_blocks = (1 << 20) + 1
    private = cnt - shared
    assert shared + int(private.sum()) < num_blocks
    bt = np.zeros((R, W), dtype=np.int32)
    bt[:, :shared] = np.arange(1, shared + 1, dtype=np.int32)
    nxt = shared + 1
    for r in range(R):
        bt[r, shared:cnt[r]] = np.arange(nxt, nxt + private[r], dtype=np.int32)
        nxt += int(private[r])
    seq = cnt.astype(np.int64) * B - rng.integers(0, B, size=R)
    held = np.zeros(num_blocks, dtype=np.int64)
    held[1:shared + 1] = R
    held[shared + 1:nxt] = 1
    extra = _step_arrays(bt, cnt, seq, num_blocks, held)
    return Dump(block_size=B, num_blocks=num_blocks, num_reqs=R, block_table=bt, num_blocks_per_row=cnt,
                block_table_device=bt.copy(), num_reqs_padded=R, seq_lens=seq.astype(np.int32), **extra)


def dense() -> Dump:
    num_blocks = R * W + 1
    bt = np.arange(1, R * W + 1, dtype=np.int32).reshape(R, W)
    cnt = np.full(R, W, dtype=np.int32)
    seq = np.full(R, W * B, dtype=np.int64)
    held = np.ones(num_blocks, dtype=np.int64)
    held[0] = 0
    extra = _step_arrays(bt, cnt, seq, num_blocks, held)
    return Dump(block_size=B, num_blocks=num_blocks, num_reqs=R, block_table=bt, num_blocks_per_row=cnt,
                block_table_device=bt.copy(), num_reqs_padded=R, seq_lens=seq.astype(np.int32), **extra)


def broken_copy(a: Dump) -> Dump:
    import dataclasses
    dev = a.block_table_device.copy()
    dev[[3, 500, 1000], 0] += 1                   # three stale rows
    slots = a.slot_mapping.copy()
    slots[9000] += 1                              # one wrong slot
    ref = a.ref_cnt.copy()
    ref[int(a.block_table[7, 0])] += 1            # one leaked reference
    return dataclasses.replace(a, block_table_device=dev, slot_mapping=slots, ref_cnt=ref)


def best(f, repeat):
    t = []
    for _ in range(repeat):
        s = time.perf_counter()
        out = f()
        t.append(time.perf_counter() - s)
    return min(t), out


def bench(name, make, repeat, load):
    a = make()
    b = broken_copy(a)
    ta, fa = best(lambda: run_checks(a), repeat)
    tb, fb = best(lambda: run_checks(b), repeat)
    td, dd = best(lambda: diff_dumps(a, b), repeat)
    assert fa == [], [f.message for f in fa[:3]]
    assert {f.check for f in fb} == {"mirror-stale", "slot-mismatch", "refcount-mismatch"}, fb
    res = {"case": name, "rows": R, "width": W, "counted_entries": int(a.num_blocks_per_row.sum()),
           "num_blocks": a.num_blocks, "check_a_s": round(ta, 3), "check_b_s": round(tb, 3),
           "diff_s": round(td, 3), "total_s": round(ta + tb + td, 3),
           "findings_b": len(fb), "differences": len(dd.differences)}
    if load:
        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, "a.npz")
            save_dump(a, p)
            res["npz_mib"] = round(os.path.getsize(p) / 2**20)
            res["load_s"] = round(best(lambda: load_dump(p), repeat)[0], 3)
    print(json.dumps(res), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="all", choices=["realistic", "dense", "all"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--load", action="store_true")
    args = ap.parse_args()
    for name, make in (("realistic", realistic), ("dense", dense)):
        if args.case in (name, "all"):
            bench(name, make, args.repeat, args.load)


if __name__ == "__main__":
    main()
