"""The MRV2 kernels release by release against plain loops written here from each release's rule
(vllm/v1/worker/gpu/block_table.py of the 0.28.0 .. 0.33.0 wheels): ``_compute_slot_mappings_kernel``'s
three DCP eras (0.28.0: virtual block = kernel block x CP; 0.29.0: KV block x CP then split by the
kernel block; 0.32.0: rows of manager ids, slots in KV blocks), ``slot_mapping_enabled`` (0.29.0),
``dcp_sharded`` and idx_mapping -1 (0.31.0), and ``_gather_block_tables_kernel``'s sliding-window
nulling and dirty rows (0.33.0). Random inputs from a fresh seed (printed; KVVIZ_SEED=N replays),
poisoned outputs; the simulator's ``kvviz.core.slots_v2`` is held to the same loops."""
from __future__ import annotations


import numpy as np
import pytest
import torch

import kvviz_kernels as kernels  # noqa: F401  (TRITON_INTERPRET before any kernel module)
from kvviz_kernels.mrv2_tables import compute_slot_mappings, gather_block_tables
from kvviz.core.slots_v2 import mrv2_token_slots
from tests.support import fresh_seed

DEV = "cuda" if torch.cuda.is_available() else "cpu"
POISON = -7777


def loop_slot(era, row, pos, kbs, bs, cp, rank, il, enabled, sharded, real, pad_unmapped):
    """One token's slot, written from the rule of each release."""
    if not enabled or (pad_unmapped and not real):
        return -1

    def read(col):
        return int(row[col]) if real and 0 <= col < len(row) else 0
    if cp == 1 or not sharded:
        t = bs if era == "manager_ids" else kbs
        return read(pos // t) * t + pos % t
    unit = kbs if era == "kernel_block" else bs
    vblock, voff = pos // (unit * cp), pos % (unit * cp)
    if (voff // il) % cp != rank:
        return -1
    loff = (voff // (il * cp)) * il + voff % il
    if era == "kernel_block":
        return read(vblock) * kbs + loff
    lp = vblock * bs + loff
    t = bs if era == "manager_ids" else kbs
    return read(lp // t) * t + lp % t


CASES = [("kernel_block", 8, 4, 2, 8), ("kernel_block", 16, 4, 4, 2), ("kv_block", 8, 4, 2, 8),
         ("kv_block", 16, 4, 2, 16), ("manager_ids", 8, 4, 2, 8), ("manager_ids", 16, 16, 3, 4),
         ("kv_block", 16, 8, 1, 1)]


@pytest.mark.parametrize("era,bs,kbs,cp,il", CASES, ids=[f"{c[0]}-bs{c[1]}-kbs{c[2]}-cp{c[3]}-il{c[4]}" for c in CASES])
def test_slot_eras_match_loops(era, bs, kbs, cp, il):
    rng = np.random.default_rng(fresh_seed())
    groups, rows, width = 3, 6, 12
    state = rng.integers(1, 500, size=(groups, rows, width)).astype(np.int32)
    n = 4
    idx = rng.permutation(rows)[:n].astype(np.int32)
    idx[rng.integers(0, n)] = -1                    # a row that owns no block
    q = rng.integers(1, 9, size=n)
    qsl = np.concatenate([[0], np.cumsum(q)]).astype(np.int32)
    pos = np.concatenate([rng.integers(0, 40) + np.arange(k) for k in q]).astype(np.int64)
    enabled = [True, False, True]
    sharded = [True, True, False]
    rank = int(rng.integers(0, cp))
    t_pad = int(qsl[-1]) + 5
    for pad_unmapped in (False, True):
        out = torch.full((groups, t_pad), POISON, dtype=torch.int64, device=DEV)
        compute_slot_mappings(torch.as_tensor(state).to(DEV), torch.as_tensor(idx).to(DEV),
                              torch.as_tensor(qsl).to(DEV), torch.as_tensor(pos).to(DEV), [kbs] * groups, out,
                              cp_size=cp, cp_rank=rank, cp_interleave=il, dcp_era=era,
                              kv_block_sizes=[bs] * groups, slot_mapping_enabled=enabled, dcp_sharded=sharded,
                              pad_unmapped_rows=pad_unmapped)
        for g in range(groups):
            want = [-1] * t_pad
            for b in range(n):
                s = int(idx[b])
                for i in range(qsl[b], qsl[b + 1]):
                    want[i] = loop_slot(era, state[g, s] if s >= 0 else [], int(pos[i]), kbs, bs, cp, rank, il,
                                        enabled[g], sharded[g], s >= 0, pad_unmapped)
            assert out[g].cpu().tolist() == want, f"group {g} pad_unmapped={pad_unmapped}"
            # the simulator's arithmetic, token by token
            sim = mrv2_token_slots(era, state[g], np.repeat(idx, q), pos, block_size=bs, kernel_block_size=kbs,
                                   cp_size=cp, cp_rank=rank, interleave=il, enabled=enabled[g],
                                   sharded=sharded[g], pad_unmapped=pad_unmapped)
            assert sim.tolist() == want[:int(qsl[-1])], f"simulator, group {g}"


def test_eras_agree_without_dcp_and_when_the_interleave_divides_the_kernel_block():
    """Non-DCP slots are the same in every release (0.28.0, 0.29.0, 0.32.0 kernels); under DCP the
    first two eras differ only when the interleave exceeds the kernel block."""
    row_k = np.array([10, 11, 20, 21, 30, 31], np.int32)      # kernel ids of manager blocks 5, 10, 15
    row_m = np.array([5, 10, 15], np.int32)
    pos = np.arange(24)
    for cp, il, same in ((1, 1, True), (2, 1, True), (2, 2, True), (2, 4, True), (2, 8, False)):
        kw = dict(block_size=8, kernel_block_size=4, cp_size=cp, cp_rank=0, interleave=il)
        a = mrv2_token_slots("kernel_block", row_k[None], np.zeros(24, int), pos, **kw)
        b = mrv2_token_slots("kv_block", row_k[None], np.zeros(24, int), pos, **kw)
        c = mrv2_token_slots("manager_ids", row_m[None], np.zeros(24, int), pos, **kw)
        assert (b == c).all()
        assert (a == b).all() == same, (cp, il)


def loop_gather(state, nb, idx, r_pad, before, num_computed, reach, ebs, dirty):
    out = before.copy()
    for g in range(state.shape[0]):
        for b in range(max(r_pad, dirty)):
            if b >= len(idx):
                out[g, b, :] = 0
                continue
            s = idx[b]
            n = min(int(nb[g, s]), state.shape[2])
            null = max(int(num_computed[s]) - reach[g], 0) // ebs[g] if reach[g] > 0 else 0
            for c in range(n):
                out[g, b, c] = 0 if c < null else state[g, s, c]
    return out


def test_gather_nulls_the_window_and_dirty_rows_as_v033():
    """0.33.0 _gather_block_tables_kernel: columns < max(num_computed - reach, 0) // block_size get
    0 for a group with a reach; rows [num_reqs, max(num_reqs_padded, previous num_reqs)) zeroed."""
    rng = np.random.default_rng(fresh_seed())
    groups, rows, width = 3, 8, 10
    state = rng.integers(1, 99, size=(groups, rows, width)).astype(np.int32)
    nb = rng.integers(0, width + 1, size=(groups, rows)).astype(np.int32)
    nc = rng.integers(0, 80, size=rows).astype(np.int32)
    reach, ebs = [0, 7, 15], [4, 4, 8]
    before = rng.integers(100, 200, size=(groups, rows, width)).astype(np.int32)
    idx = rng.permutation(rows)[:3].astype(np.int32)
    for dirty in (0, 6):
        got = torch.as_tensor(before.copy()).to(DEV)
        gather_block_tables(torch.as_tensor(state).to(DEV), torch.as_tensor(nb).to(DEV), torch.as_tensor(idx).to(DEV),
                            4, got, num_computed=torch.as_tensor(nc).to(DEV), sliding_window_reach=reach,
                            block_sizes=ebs, dirty_rows=dirty)
        want = loop_gather(state, nb, idx, 4, before, nc, reach, ebs, dirty)
        np.testing.assert_array_equal(got.cpu().numpy(), want)
