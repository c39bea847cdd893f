"""The fused step's Model Runner V2 part release by release, against plain loops written here from
each release's rule (vllm/v1/worker/gpu/block_table.py of the wheels: 0.28.0's
``_compute_slot_mappings_kernel`` with the virtual block = kernel block x CP, 0.29.0's KV block x CP
and ``slot_mapping_enabled``, 0.31.0's ``dcp_sharded`` and PAD for idx_mapping -1, 0.32.0's
manager-id rows (the attention's table ``b * r + j``, ``AttentionGroup.map_to_kernel_block_table``),
0.33.0's ``_gather_block_tables_kernel`` with MASK_SLIDING_WINDOW and ``_num_dirty_rows``), and
against the separate kernels of ``kernels.mrv2_tables`` fed the same arguments. Fresh seeds
(printed; KVVIZ_SEED=N replays), poisoned outputs."""
from __future__ import annotations


import numpy as np
import pytest
import torch

import kvviz_kernels as kernels  # noqa: F401  (TRITON_INTERPRET before any kernel module)
from kvviz_kernels.fused_step import fused_step_v2
from kvviz_kernels.mrv2_tables import compute_slot_mappings, gather_block_tables
from tests.support import fresh_seed

DEV = "cuda" if torch.cuda.is_available() else "cpu"
P32, P64 = -5555, -6666


def cdiv(a, b):
    return -(-a // b)


def local_len(s, cp, rank, il):
    if cp == 1:
        return s
    full, rem = divmod(s, cp * il)
    return full * il + min(max(rem - rank * il, 0), il)


def loop_slot(era, row, pos, kbs, bs, cp, rank, il, enabled, sharded, live, pad_unmapped):
    """One token's slot from the rule of its release (row: the state row; a dead row reads 0s)."""
    if not enabled or (pad_unmapped and not live):
        return -1
    entry = bs if era == "manager_ids" else kbs

    def read(col):
        return int(row[col]) if live and 0 <= col < len(row) else 0
    if cp == 1 or not sharded:
        return read(pos // entry) * entry + pos % entry
    unit = kbs if era == "kernel_block" else bs
    vb, vo = divmod(pos, unit * cp)
    if (vo // il) % cp != rank:
        return -1
    loff = (vo // (il * cp)) * il + vo % il
    if era == "kernel_block":
        return read(vb) * kbs + loff
    lp = vb * bs + loff
    return read(lp // entry) * entry + lp % entry


CASES = [  # era, groups [(bs, kbs)], cp, il
    ("kernel_block", [(16, 8), (8, 8), (32, 16)], 1, 1),
    ("kernel_block", [(16, 4), (8, 8), (16, 16)], 2, 8),
    ("kv_block", [(16, 8), (8, 8), (32, 16)], 1, 1),
    ("kv_block", [(16, 4), (8, 8), (16, 16)], 4, 2),
    ("manager_ids", [(16, 8), (8, 8), (32, 16)], 1, 1),
    ("manager_ids", [(32, 8), (16, 16), (16, 4)], 2, 4),
]


def make(rng, era, groups, cp, il):
    G, n, pad, rows = len(groups), 5, 2, 10
    entry = [b if era == "manager_ids" else k for b, k in groups]
    seq = rng.integers(1, 90, n)
    q = np.array([int(rng.integers(1, s + 1)) if rng.random() < 0.5 else 1 for s in seq])
    qsl = np.concatenate([[0], np.cumsum(q)]).astype(np.int32)
    T = int(qsl[-1])
    pos = np.zeros(T + 7, dtype=np.int64)
    for b in range(n):
        pos[qsl[b]:qsl[b + 1]] = seq[b] - q[b] + np.arange(q[b])
    widths = [cdiv(90, e * cp) + int(rng.integers(0, 3)) for e in entry]
    state = np.full((G, rows, max(widths)), P32, dtype=np.int32)
    for g, w in enumerate(widths):
        state[g, :, :w] = rng.integers(1, 1 << 20, (rows, w))
    idx = rng.permutation(rows)[:n].astype(np.int32)
    idx[rng.integers(0, n)] = -1                  # a batch row that owns no block
    nb = np.stack([np.minimum(rng.integers(0, w + 2, rows), w + 1) for w in widths]).astype(np.int32)
    nc = rng.integers(0, 90, rows).astype(np.int32)
    for b in range(n):
        if idx[b] >= 0:
            nc[idx[b]] = seq[b] - q[b]
    return dict(G=G, n=n, r_pad=n + pad, rows=rows, seq=seq.astype(np.int32), qsl=qsl, pos=pos, T=T + 7,
                widths=widths, state=state, idx=idx, nb=nb, nc=nc, entry=entry,
                bs=[b for b, _ in groups], kbs=[k for _, k in groups])


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a)).to(DEV)


@pytest.mark.parametrize("era,groups,cp,il", CASES, ids=[f"{c[0]}-cp{c[2]}-il{c[3]}" for c in CASES])
def test_fused_v2_follows_each_release(era, groups, cp, il):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    for rep in range(2):
        d = make(rng, era, groups, cp, il)
        G, n, r_pad = d["G"], d["n"], d["r_pad"]
        rank = int(rng.integers(0, cp))
        enabled = [True, bool(rng.random() < 0.5), True]
        sharded = [True, True, bool(rng.random() < 0.5)]
        pad_unmapped = bool(rep)
        reach = [int(rng.integers(8, 40)), 0, int(rng.integers(1, 20))] if rep == 0 else [0, 0, 0]
        mask_sw = any(reach) and cp == 1    # vLLM turns the masking off under DCP: the caller's part
        reach = reach if mask_sw else [0, 0, 0]
        dirty = r_pad + 2 if rep == 0 else 0
        csr = int(rng.integers(0, G))
        kw = dict(dcp_era=era, slot_mapping_enabled=enabled, dcp_sharded=sharded, pad_unmapped_rows=pad_unmapped)
        inp = torch.full(d["state"].shape, P32, dtype=torch.int32, device=DEV)
        sm = torch.full((G, d["T"] + 3), P64, dtype=torch.int64, device=DEV)
        indices = torch.full((r_pad * max(d["widths"]) * 8 + 5,), P32, dtype=torch.int32, device=DEV)
        out = fused_step_v2(
            t(d["idx"]), t(d["qsl"]), t(d["pos"]), t(d["seq"]), t(d["state"]), t(d["nb"]), inp,
            block_sizes=d["bs"], kernel_block_sizes=d["kbs"], widths=d["widths"], num_reqs_padded=r_pad,
            num_tokens_padded=d["T"], csr_group=csr, slot_mappings=sm, indices=indices,
            dcp_world_size=cp, dcp_rank=rank, interleave=il, num_computed=t(d["nc"]),
            sliding_window_reach=reach, dirty_rows=dirty, **kw)

        def nulls(g, s):
            if not mask_sw or reach[g] <= 0:
                return 0
            return max(int(d["nc"][s]) - reach[g], 0) // d["entry"][g]
        # the gather, by the loop
        want = np.full(d["state"].shape, P32, dtype=np.int32)
        for g, w in enumerate(d["widths"]):
            for b in range(n):
                s = int(d["idx"][b])
                if s < 0:
                    continue
                cnt = min(max(int(d["nb"][g, s]), 0), w)
                for c in range(cnt):
                    want[g, b, c] = 0 if c < nulls(g, s) else d["state"][g, s, c]
            want[g, n:max(r_pad, dirty), :w] = 0
        got_inp = inp.cpu().numpy()
        assert np.array_equal(got_inp, want), f"seed {seed} rep {rep}: gather"
        # the slot mappings, by the loop
        got_sm = sm.cpu().numpy()
        for g in range(G):
            w = [-1] * d["T"]
            for b in range(n):
                s = int(d["idx"][b])
                row = d["state"][g, s, :d["widths"][g]] if s >= 0 else []
                for i in range(d["qsl"][b], d["qsl"][b + 1]):
                    w[i] = loop_slot(era, row, int(d["pos"][i]), d["kbs"][g], d["bs"][g], cp, rank, il,
                                     enabled[g], sharded[g], s >= 0, pad_unmapped)
            assert got_sm[g, :d["T"]].tolist() == w, f"seed {seed} rep {rep}: slots of group {g}"
            assert (got_sm[g, d["T"]:] == P64).all(), f"seed {seed}: past num_tokens_padded"
        # the CSR: the attention's (kernel-block) table of the gathered rows, this rank's pages
        per = d["bs"][csr] // d["kbs"][csr] if era == "manager_ids" else 1
        ip, ix, lp = [0], [], []
        for b in range(r_pad):
            ln = local_len(int(d["seq"][b]), cp, rank, il) if b < n else 0
            s = int(d["idx"][b]) if b < n else -1
            for c in range(cdiv(ln, d["kbs"][csr])):
                tc = c // per
                live = s >= 0 and tc < d["widths"][csr] and tc >= nulls(csr, s)
                v = int(d["state"][csr, s, tc]) if live else 0
                ix.append(v * per + c % per)
            ip.append(len(ix))
            lp.append(0 if ln == 0 else (ln % d["kbs"][csr] or d["kbs"][csr]))
        assert out.indptr[:r_pad + 1].cpu().tolist() == ip, f"seed {seed} rep {rep}: indptr"
        assert out.indices[:ip[-1]].cpu().tolist() == ix, f"seed {seed} rep {rep}: indices"
        assert out.last_page_len[:r_pad].cpu().tolist() == lp, f"seed {seed} rep {rep}: last_page_len"
        # the separate kernels, the same arguments
        sep = torch.full_like(inp, P32)
        gather_block_tables(t(d["state"]), t(d["nb"]), t(d["idx"]), r_pad, sep, widths=d["widths"],
                            num_computed=t(d["nc"]), sliding_window_reach=reach, block_sizes=d["entry"],
                            dirty_rows=dirty)
        assert np.array_equal(sep.cpu().numpy(), got_inp), f"seed {seed} rep {rep}: vs gather_block_tables"
        sep_sm = torch.full((G, d["T"]), P64, dtype=torch.int64, device=DEV)
        compute_slot_mappings(t(d["state"]), t(d["idx"]), t(d["qsl"]), t(d["pos"]), d["kbs"], sep_sm,
                              widths=d["widths"], cp_size=cp, cp_rank=rank, cp_interleave=il,
                              kv_block_sizes=d["bs"], **kw)
        assert np.array_equal(sep_sm.cpu().numpy(), got_sm[:, :d["T"]]), \
            f"seed {seed} rep {rep}: vs compute_slot_mappings"


def test_fused_v2_default_is_the_kv_block_era_with_every_flag_on():
    """The defaults compute what the fused step always did: the explicit v0.29-v0.31 arguments of
    a step with every group enabled and sharded give the same bits."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    d = make(rng, "kv_block", [(16, 4), (8, 8), (16, 16)], 2, 2)
    d["idx"] = np.abs(d["idx"]) % d["rows"]
    outs = []
    for kw in ({}, dict(dcp_era="kv_block", slot_mapping_enabled=[True] * 3, dcp_sharded=[True] * 3,
                        sliding_window_reach=[0, 0, 0], num_computed=t(d["nc"]))):
        inp = torch.full(d["state"].shape, P32, dtype=torch.int32, device=DEV)
        o = fused_step_v2(t(d["idx"]), t(d["qsl"]), t(d["pos"]), t(d["seq"]), t(d["state"]), t(d["nb"]), inp,
                          block_sizes=d["bs"], kernel_block_sizes=d["kbs"], widths=d["widths"],
                          num_reqs_padded=d["r_pad"], dcp_world_size=2, dcp_rank=1, interleave=2, **kw)
        outs.append([x.cpu().numpy() for x in (o.slot_mappings, o.indptr, inp)]
                    + [o.indices[:int(o.indptr[-1])].cpu().numpy()])
    for a, b in zip(*outs):
        assert np.array_equal(a, b), f"seed {seed}"


def test_fused_v2_refuses_an_unknown_era():
    d = make(np.random.default_rng(0), "kv_block", [(16, 16)], 1, 1)
    with pytest.raises(ValueError, match="dcp_era"):
        fused_step_v2(t(d["idx"]), t(d["qsl"]), t(d["pos"]), t(d["seq"]), t(d["state"]), t(d["nb"]),
                      torch.zeros_like(t(d["state"])), block_sizes=d["bs"], num_reqs_padded=d["r_pad"],
                      dcp_era="v0.30")
