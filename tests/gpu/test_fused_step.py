"""The fused step kernels (kernels/fused_step.py) against the plain references and the separate kernels.

V1: every group's slot mapping against ``kvviz.reference.slot_mapping`` on that group's own table,
the CSR of the attention group against ``kvviz.reference.flashinfer_csr`` (this DCP rank's share of
each request, padding rows as empty requests). V2: the gather against a loop over the definition,
and the slot mappings and CSR against the same references run over the *gathered* tables (what
gather-then-separate-kernels gives). Random batches: 1-4 groups of different block and kernel
block sizes, DCP 1/2/4 with interleave, padding rows and tokens, empty requests, requests that
schedule nothing. Every output buffer is poisoned and longer than needed: an entry the kernel
forgot, or one it wrote past its range, fails. Each test draws a fresh seed (printed, in every
failure message; ``KVVIZ_SEED=N`` replays one).

Without CUDA the kernels run in Triton's CPU interpreter: sizes stay small (the file runs in well
under a minute on two cores). The ``gpu``-marked tests run larger random steps compiled, against
the vectorised numpy core, and replay both launches from a CUDA graph.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
import torch

import kvviz_kernels as kernels  # noqa: F401  (TRITON_INTERPRET before any kernel module)
import triton
import triton.language as tl
from kvviz_kernels.fused_step import csr_config, fused_step_v1, fused_step_v2
from kvviz_kernels.mrv2_tables import compute_slot_mappings, gather_block_tables
from kvviz_kernels.page_indices import flashinfer_csr
from kvviz_kernels.slot_mapping import PAD_SLOT_ID, request_of, search_steps, slot_mapping_flat
from kvviz import reference
from tests.support import fresh_seed

DEV = "cuda" if torch.cuda.is_available() else "cpu"
P32 = 0x5A5A5A5A          # poison of the int32 outputs
P64 = -7777               # poison of the slot mappings
PAST_WIDTH = 0x0BADBAD0   # stacked entries past a group's width: reading one shows
EXTRA = 7                 # every output buffer is this much longer than needed


def cdiv(a, b):
    return -(-a // b)


def local_len(s: int, world: int, rank: int, il: int) -> int:
    """Tokens of a request of ``s`` tokens that DCP rank ``rank`` stores (a loop, not Geometry)."""
    return sum(1 for p in range(s) if (p % (world * il)) // il == rank) if world > 1 else s


# --- random steps ---------------------------------------------------------------------------------

GROUP_SIZES = [(16, 16), (32, 16), (64, 32), (8, 8), (16, 4), (32, 32)]   # (block size, kernel block size)


@dataclass
class Step:
    tables: np.ndarray            # [G, rows, Wmax] stacked (V1: committed tables; V2: state tables)
    widths: list
    bss: list
    kbss: list
    num_reqs: int
    num_reqs_padded: int
    qsl: np.ndarray               # int32 [num_reqs + 1]
    positions: np.ndarray         # int64 [num_tokens_padded]
    seq_lens: np.ndarray          # int32 [num_reqs] (batch rows)
    num_tokens_padded: int
    world: int = 1
    rank: int = 0
    il: int = 1
    csr_group: int = 0
    idx: np.ndarray | None = None         # V2
    num_blocks: np.ndarray | None = None  # V2 [G, rows]
    flags: list = field(default_factory=list)


def make_step(rng, *, groups=None, n_groups=2, num_reqs=5, pad_reqs=2, pad_tokens=9, max_seq=60,
              world=1, il=1, v2=False, rows=None, csr_group=None, state_groups=(), decodes=0) -> Step:
    """A random step; ``decodes``: that many leading requests schedule exactly one token (a decode
    batch: token t is request t's, the slot programs' guess) and no request is empty."""
    if groups is None:
        groups = [GROUP_SIZES[i] for i in rng.choice(len(GROUP_SIZES), n_groups, replace=False)]
    if world > 1:   # the interleave must divide every block size
        groups = [(max(b, il), min(k, max(b, il))) if b % il else (b, k) for b, k in groups]
    G = len(groups)
    seq = rng.integers(1, max_seq + 1, num_reqs)
    q = np.array([int(rng.integers(1, s + 1)) if rng.random() < 0.5 else 1 for s in seq], dtype=np.int64)
    q[:decodes] = 1
    if num_reqs >= 3 and not decodes:
        seq[1], q[1] = 0, 0            # an empty request
        q[2] = 0                       # has context, scheduled nothing
    T = int(q.sum())
    qsl = np.concatenate([[0], np.cumsum(q)]).astype(np.int32)
    positions = np.zeros(T + pad_tokens, dtype=np.int64)
    for r in range(num_reqs):
        positions[qsl[r]:qsl[r + 1]] = seq[r] - q[r] + np.arange(q[r])
    widths = [cdiv(max(int(seq.max(initial=1)), 1), b * world) * (b // k) + int(rng.integers(0, 3))
              for b, k in groups]
    r_pad = num_reqs + pad_reqs
    nrows = (rows or r_pad + 3) if v2 else r_pad + int(rng.integers(0, 3))
    wmax = max(widths)
    tables = np.full((G, nrows, wmax), PAST_WIDTH, dtype=np.int32)
    for g, w in enumerate(widths):
        tables[g, :, :w] = rng.integers(1, 1 << 22, (nrows, w))
    st = Step(tables, widths, [b for b, _ in groups], [k for _, k in groups], num_reqs, r_pad, qsl, positions,
              seq.astype(np.int32), T + pad_tokens, world, int(rng.integers(0, world)), il,
              int(rng.integers(0, G)) if csr_group is None else csr_group,
              flags=[g not in state_groups for g in range(G)])
    if v2:
        st.idx = rng.permutation(nrows)[:num_reqs].astype(np.int32)
        lens = rng.integers(0, max_seq + 1, nrows)
        lens[st.idx] = seq
        # the state rows hold the blocks of their lengths (and sometimes a few more)
        st.num_blocks = np.stack([np.minimum(cdiv(lens, b * world) * (b // k) + rng.integers(0, 2, nrows), w)
                                  for (b, k), w in zip(groups, widths)]).astype(np.int32)
    return st


# --- references -----------------------------------------------------------------------------------

def ref_gather(st: Step, before):
    out = before.copy()
    for g, w in enumerate(st.widths):
        for b in range(st.num_reqs):
            s = int(st.idx[b])
            n = min(max(int(st.num_blocks[g, s]), 0), w)
            out[g, b, :n] = st.tables[g, s, :n]
        out[g, st.num_reqs:st.num_reqs_padded, :w] = 0
    return out


def ref_outputs(st: Step, tables, *, empty_is_zero=True, padded_lpl=None):
    """(slot mappings [G, T_pad], indptr, indices, last_page_len) of the step over ``tables``
    (batch row r = request r): the loop references."""
    slots = []
    for g, (w, b, k) in enumerate(zip(st.widths, st.bss, st.kbss)):
        slots.append(reference.slot_mapping(st.qsl, st.positions, tables[g, :, :w], block_size=b,
                                            kernel_block_size=k, num_reqs=st.num_reqs,
                                            num_tokens_padded=st.num_tokens_padded, dcp_world_size=st.world,
                                            dcp_rank=st.rank, interleave=st.il))
    c = st.csr_group
    seq = np.zeros(st.num_reqs_padded, dtype=np.int64)
    seq[:st.num_reqs] = [local_len(int(s), st.world, st.rank, st.il) for s in st.seq_lens]
    ip, ix, lp = reference.flashinfer_csr(tables[c, :st.num_reqs_padded, :st.widths[c]], seq, st.kbss[c],
                                          empty_last_page_len_is_zero=empty_is_zero)
    if padded_lpl is not None:
        lp[st.num_reqs:] = padded_lpl
    return np.stack(slots) if slots else np.zeros((0, st.num_tokens_padded), np.int64), ip, ix, lp


# --- running the kernels -------------------------------------------------------------------------

def t(a, dtype=None):
    x = torch.from_numpy(np.ascontiguousarray(a))
    return (x if dtype is None else x.to(dtype)).to(DEV)


def buffers(st: Step, device=DEV):
    G = st.tables.shape[0]
    return dict(slot_mappings=torch.full((G, st.num_tokens_padded + EXTRA), P64, dtype=torch.int64, device=device),
                indptr=torch.full((st.num_reqs_padded + 1 + EXTRA,), P32, dtype=torch.int32, device=device),
                indices=torch.full((st.num_reqs_padded * st.widths[st.csr_group] + EXTRA,), P32, dtype=torch.int32,
                                   device=device),
                last_page_len=torch.full((st.num_reqs_padded + EXTRA,), P32, dtype=torch.int32, device=device))


def per_group_args(st: Step, as_tensors: bool, device=DEV):
    if as_tensors:
        mk = lambda v: torch.tensor(v, dtype=torch.int32, device=device)  # noqa: E731
        return dict(widths=mk(st.widths), block_sizes=mk(st.bss), kernel_block_sizes=mk(st.kbss))
    return dict(widths=st.widths, block_sizes=st.bss, kernel_block_sizes=st.kbss)


def run_v1(st: Step, *, as_tensors=False, device=DEV, **kw):
    bufs = buffers(st, device)
    fused_step_v1(t(st.qsl).to(device), t(st.positions).to(device), t(st.seq_lens).to(device),
                  t(st.tables).to(device), num_reqs=st.num_reqs, num_reqs_padded=st.num_reqs_padded,
                  num_tokens_padded=st.num_tokens_padded, csr_group=st.csr_group, dcp_world_size=st.world,
                  dcp_rank=st.rank, interleave=st.il, has_slot_mapping=st.flags,
                  **per_group_args(st, as_tensors, device), **bufs, **kw)
    return {k: v.cpu().numpy() for k, v in bufs.items()}


def run_v2(st: Step, *, as_tensors=False, device=DEV, **kw):
    bufs = buffers(st, device)
    inp = torch.full(st.tables.shape, P32, dtype=torch.int32, device=device)
    fused_step_v2(t(st.idx).to(device), t(st.qsl).to(device), t(st.positions).to(device),
                  t(st.seq_lens).to(device), t(st.tables).to(device), t(st.num_blocks).to(device), inp,
                  num_reqs_padded=st.num_reqs_padded, num_tokens_padded=st.num_tokens_padded,
                  csr_group=st.csr_group, dcp_world_size=st.world, dcp_rank=st.rank, interleave=st.il,
                  has_slot_mapping=st.flags, **per_group_args(st, as_tensors, device), **bufs, **kw)
    out = {k: v.cpu().numpy() for k, v in bufs.items()}
    out["input_tables"] = inp.cpu().numpy()
    return out


def first_diffs(got, want):
    bad = np.argwhere(np.asarray(got) != np.asarray(want))
    return f"{len(bad)} wrong, first {bad[:4].tolist()}"


def check_outputs(st: Step, got: dict, want, seed, what=""):
    slots, ip, ix, lp = want
    T, R = st.num_tokens_padded, st.num_reqs_padded
    for g, f in enumerate(st.flags):
        if f:
            assert np.array_equal(got["slot_mappings"][g, :T], slots[g]), \
                f"seed {seed}{what}: g{g} slots {first_diffs(got['slot_mappings'][g, :T], slots[g])}"
            assert (got["slot_mappings"][g, int(st.qsl[st.num_reqs]):T] == PAD_SLOT_ID).all()
            assert (got["slot_mappings"][g, T:] == P64).all(), f"seed {seed}{what}: g{g} wrote past the tail"
        else:
            assert (got["slot_mappings"][g] == P64).all(), f"seed {seed}{what}: state group g{g} written"
    assert np.array_equal(got["indptr"][:R + 1], ip), f"seed {seed}{what}: indptr {got['indptr'][:R + 1]} != {ip}"
    assert (got["indptr"][R + 1:] == P32).all(), f"seed {seed}{what}: indptr written past num_reqs_padded + 1"
    n = int(ip[-1])
    assert np.array_equal(got["indices"][:n], ix), f"seed {seed}{what}: indices {first_diffs(got['indices'][:n], ix)}"
    assert (got["indices"][n:] == P32).all(), f"seed {seed}{what}: indices written past indptr[-1]"
    assert np.array_equal(got["last_page_len"][:R], lp), \
        f"seed {seed}{what}: last_page_len {got['last_page_len'][:R]} != {lp}"
    assert (got["last_page_len"][R:] == P32).all()


# --- V1 -------------------------------------------------------------------------------------------

V1_CASES = {
    "one group": dict(n_groups=1),
    "two groups": dict(n_groups=2),
    "four groups, kernel-block splits": dict(groups=[(16, 4), (32, 16), (64, 32), (8, 8)]),
    "padding only (no requests)": dict(num_reqs=0, pad_reqs=4, pad_tokens=20),
    "no padding": dict(n_groups=3, pad_reqs=0, pad_tokens=0),
    "dcp 2, interleave 1": dict(n_groups=2, world=2),
    "dcp 2, interleave 4, kernel blocks": dict(groups=[(16, 8), (32, 32), (16, 4)], world=2, il=4),
    "dcp 4, interleave 2": dict(n_groups=3, world=4, il=2),
    "many requests (several CSR tiles)": dict(n_groups=2, num_reqs=37, max_seq=24, pad_reqs=5),
    "long requests (several chunks a row)": dict(groups=[(8, 8), (16, 4)], num_reqs=3, max_seq=700, csr_group=1),
    "a state group": dict(n_groups=3, state_groups=(1,)),
    "decodes only (token t is request t's)": dict(n_groups=2, num_reqs=40, decodes=40, max_seq=90),
    "one prefill (request 0)": dict(groups=[(16, 4), (32, 32)], num_reqs=1, max_seq=400, pad_reqs=0),
    "decodes, then prefills (the guess misses in later tiles)": dict(n_groups=3, num_reqs=30, decodes=20,
                                                                     max_seq=200),
    "six groups (past the four compiled in)": dict(n_groups=6, num_reqs=4),
}


@pytest.mark.parametrize("case", V1_CASES, ids=list(V1_CASES))
def test_v1_matches_the_references(case):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    for rep in range(2):
        st = make_step(rng, **V1_CASES[case])
        check_outputs(st, run_v1(st, as_tensors=bool(rep)), ref_outputs(st, st.tables), seed, f" rep {rep}")


@pytest.mark.parametrize("empty_is_zero,padded", [(False, None), (True, 1), (False, 1)])
def test_v1_last_page_len_rules(empty_is_zero, padded):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    st = make_step(rng, n_groups=2, pad_reqs=3)
    got = run_v1(st, empty_last_page_len_is_zero=empty_is_zero, padded_last_page_len=padded)
    check_outputs(st, got, ref_outputs(st, st.tables, empty_is_zero=empty_is_zero, padded_lpl=padded), seed)


def test_tiles_of_decodes_and_tiles_of_prefills_in_one_launch():
    """16-token tiles over 40 decodes then 3 prefills: the first tiles take the guessed requests,
    the later ones search; V1 and V2 both, host-known and loaded sizes."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    for rep in range(2):
        st = make_step(rng, n_groups=2, num_reqs=43, decodes=40, max_seq=80, pad_tokens=20)
        check_outputs(st, run_v1(st, tile=16, as_tensors=bool(rep)), ref_outputs(st, st.tables), seed, " v1")
        st = make_step(rng, n_groups=2, num_reqs=43, decodes=40, max_seq=80, pad_tokens=20, v2=True, rows=50)
        got = run_v2(st, tile=16, as_tensors=bool(rep))
        gathered = ref_gather(st, np.full(st.tables.shape, P32, dtype=np.int32))
        assert np.array_equal(got["input_tables"], gathered), f"seed {seed}: gather"
        check_outputs(st, got, ref_outputs(st, gathered), seed, " v2")


def test_pack_sizes_compiles_in_only_what_fits():
    from kvviz_kernels.fused_step import pack_sizes

    assert pack_sizes(None) == 0
    assert pack_sizes([16, 32]) == 16 | 32 << 15
    assert pack_sizes([16, 40000, 8, 4, 2]) == 16 | 8 << 30 | 4 << 45   # 40000 loaded; past 4 groups loaded
    assert all((pack_sizes([b]) & 32767) == b for b in (1, 7, 528, 32767))


def test_roles_launch_only_their_programs():
    """The bench's breakdown: a role-only launch writes that role's outputs and nothing else."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    st = make_step(rng, n_groups=2)
    want = ref_outputs(st, st.tables)
    got = run_v1(st, roles=("slot",))
    assert np.array_equal(got["slot_mappings"][:, :st.num_tokens_padded], want[0]), f"seed {seed}"
    assert (got["indptr"] == P32).all() and (got["indices"] == P32).all()
    got = run_v1(st, roles=("csr",))
    assert (got["slot_mappings"] == P64).all() and np.array_equal(got["indptr"][:st.num_reqs_padded + 1], want[1])
    with pytest.raises(ValueError, match="roles"):
        run_v1(st, roles=("everything",))


@pytest.mark.parametrize("launch", [dict(tile=16), dict(num_warps=1), dict(max_seq_len=100000)],
                         ids=["tile 16", "1 warp", "page split"])
def test_v1_launch_config_never_changes_the_result(launch):
    """Many slot programs (tile 16), one warp, and a long max_seq_len that splits each request's
    page copy over several CSR programs."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    st = make_step(rng, groups=[(8, 8), (16, 4)], num_reqs=3, max_seq=300, world=2, il=2)
    check_outputs(st, run_v1(st, **launch), ref_outputs(st, st.tables), seed)


def test_csr_config_splits_only_few_long_requests():
    assert csr_config(1, 8192) == (1, 1024, 4)
    assert csr_config(3, 100) == (4, 256, 1)
    assert csr_config(4096, 8192) == (4, 256, 1)      # 1024 request tiles: enough programs, no split
    assert csr_config(64, 8192) == (4, 256, 4)        # 16 tiles of long requests: split 4 ways
    assert csr_config(0, 0) == (1, 1024, 1)


def test_v1_agrees_with_the_separate_kernels():
    """The fused launch equals slot_mapping_flat per group + flashinfer_csr (host indptr)."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    st = make_step(rng, groups=[(16, 8), (32, 32), (8, 8)], world=2, il=2, num_reqs=6)
    got = run_v1(st)
    for g, (w, b, k) in enumerate(zip(st.widths, st.bss, st.kbss)):
        sep = slot_mapping_flat(t(st.qsl), t(st.positions), t(np.ascontiguousarray(st.tables[g, :, :w])),
                                num_reqs=st.num_reqs, block_size=b, kernel_block_size=k,
                                num_tokens_padded=st.num_tokens_padded, dcp_world_size=st.world,
                                dcp_rank=st.rank, interleave=st.il)
        assert np.array_equal(got["slot_mappings"][g, :st.num_tokens_padded], sep.cpu().numpy()), f"seed {seed}"
    c = st.csr_group
    seq = np.zeros(st.num_reqs_padded, np.int32)
    seq[:st.num_reqs] = [local_len(int(s), st.world, st.rank, st.il) for s in st.seq_lens]
    bt = t(np.ascontiguousarray(st.tables[c, :st.num_reqs_padded, :st.widths[c]]))
    ip, ix, lp = flashinfer_csr(bt, t(seq), seq, st.kbss[c])
    assert np.array_equal(got["indptr"][:st.num_reqs_padded + 1], ip.cpu().numpy()), f"seed {seed}"
    assert np.array_equal(got["indices"][:int(ip[-1])], ix.cpu().numpy()), f"seed {seed}"
    assert np.array_equal(got["last_page_len"][:st.num_reqs_padded], lp.cpu().numpy()), f"seed {seed}"


def test_v1_column_past_the_width_reads_the_null_block():
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    st = make_step(rng, groups=[(16, 16), (8, 8)], num_reqs=3, pad_reqs=0, pad_tokens=0)
    st.positions[:] = 10_000 + np.arange(len(st.positions))       # past every group's width
    got = run_v1(st)
    for g, k in enumerate(st.kbss):
        want = np.where(np.arange(st.num_tokens_padded) < st.qsl[st.num_reqs], st.positions % k, PAD_SLOT_ID)
        assert np.array_equal(got["slot_mappings"][g, :st.num_tokens_padded], want), f"seed {seed}"


def test_v1_every_dcp_rank_maps_each_token_once_and_the_csr_shares_add_up():
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    st = make_step(rng, groups=[(16, 16), (32, 8)], world=4, il=2, pad_tokens=0, pad_reqs=0)
    outs, pages = [], []
    for rank in range(4):
        st.rank = rank
        got = run_v1(st)
        check_outputs(st, got, ref_outputs(st, st.tables), seed, f" rank {rank}")
        outs.append(got["slot_mappings"][:, :st.num_tokens_padded])
        pages.append(np.diff(got["indptr"][:st.num_reqs + 1]))
    real = np.stack(outs) != PAD_SLOT_ID
    assert (real.sum(axis=0) == 1).all(), f"seed {seed}"
    k = st.kbss[st.csr_group]
    assert (np.stack(pages).sum(axis=0) >= -(-st.seq_lens.astype(np.int64) // k)).all()


def test_launchers_refuse_bad_arguments():
    rng = np.random.default_rng(0)
    st = make_step(rng, n_groups=2)
    base = dict(num_reqs=st.num_reqs, num_reqs_padded=st.num_reqs_padded, widths=st.widths, block_sizes=st.bss,
                kernel_block_sizes=st.kbss)
    args = (t(st.qsl), t(st.positions), t(st.seq_lens), t(st.tables))
    bad = [dict(block_sizes=[16]), dict(kernel_block_sizes=[st.bss[0] * 2, st.kbss[1]]), dict(csr_group=2),
           dict(dcp_world_size=2, dcp_rank=2), dict(num_reqs_padded=st.num_reqs - 1),
           dict(num_tokens_padded=len(st.positions) + 1), dict(widths=[1, 10_000]), dict(tile=48),
           dict(indptr=torch.zeros(2, dtype=torch.int32, device=DEV)), dict(has_slot_mapping=[True])]
    for b in bad:
        with pytest.raises(ValueError):
            fused_step_v1(*args, **(base | b))
    with pytest.raises(ValueError):
        fused_step_v1(t(st.qsl), t(st.positions).to(torch.int32), t(st.seq_lens), t(st.tables), **base)


# --- V2 -------------------------------------------------------------------------------------------

V2_CASES = {
    "one group": dict(n_groups=1),
    "three groups": dict(groups=[(16, 16), (32, 32), (64, 64)]),
    "four groups, kernel-block splits": dict(groups=[(16, 4), (32, 16), (64, 32), (8, 8)]),
    "padding only (no requests)": dict(num_reqs=0, pad_reqs=3, pad_tokens=12),
    "no padding": dict(n_groups=2, pad_reqs=0, pad_tokens=0),
    "dcp 2, interleave 8": dict(groups=[(16, 16), (32, 32)], world=2, il=8),
    "dcp 4, interleave 1, a state group": dict(n_groups=3, world=4, state_groups=(0,)),
    "many requests": dict(n_groups=2, num_reqs=21, max_seq=20, pad_reqs=3, rows=40),
    "decodes only": dict(n_groups=2, num_reqs=24, decodes=24, max_seq=70, rows=30),
    "six groups": dict(n_groups=6, num_reqs=4),
}


@pytest.mark.parametrize("case", V2_CASES, ids=list(V2_CASES))
def test_v2_matches_gather_then_the_references(case):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    for rep in range(2):
        st = make_step(rng, v2=True, **V2_CASES[case])
        got = run_v2(st, as_tensors=bool(rep))
        before = np.full(st.tables.shape, P32, dtype=np.int32)
        gathered = ref_gather(st, before)
        assert np.array_equal(got["input_tables"], gathered), \
            f"seed {seed} rep {rep}: gather {first_diffs(got['input_tables'], gathered)}"
        check_outputs(st, got, ref_outputs(st, gathered), seed, f" rep {rep}")


def test_v2_agrees_with_the_separate_kernels():
    """gather_block_tables + compute_slot_mappings + flashinfer_csr on the gathered table."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    st = make_step(rng, v2=True, groups=[(16, 16), (32, 32), (8, 8)], world=2, il=2, num_reqs=6)
    got = run_v2(st)
    inp = torch.full(st.tables.shape, P32, dtype=torch.int32, device=DEV)
    gather_block_tables(t(st.tables), t(st.num_blocks), t(st.idx), st.num_reqs_padded, inp, widths=st.widths)
    assert np.array_equal(got["input_tables"], inp.cpu().numpy()), f"seed {seed}"
    sm = torch.full((3, st.num_tokens_padded), P64, dtype=torch.int64, device=DEV)
    compute_slot_mappings(t(st.tables), t(st.idx), t(st.qsl), t(st.positions), st.bss, sm, widths=st.widths,
                          cp_size=st.world, cp_rank=st.rank, cp_interleave=st.il)
    assert np.array_equal(got["slot_mappings"][:, :st.num_tokens_padded], sm.cpu().numpy()), f"seed {seed}"
    c = st.csr_group
    seq = np.zeros(st.num_reqs_padded, np.int32)
    seq[:st.num_reqs] = [local_len(int(s), st.world, st.rank, st.il) for s in st.seq_lens]
    ip, ix, lp = flashinfer_csr(inp[c, :st.num_reqs_padded, :st.widths[c]], t(seq), seq, st.kbss[c])
    assert np.array_equal(got["indptr"][:st.num_reqs_padded + 1], ip.cpu().numpy()), f"seed {seed}"
    assert np.array_equal(got["indices"][:int(ip[-1])], ix.cpu().numpy()), f"seed {seed}"
    assert np.array_equal(got["last_page_len"][:st.num_reqs_padded], lp.cpu().numpy()), f"seed {seed}"


def test_v2_keeps_the_stale_tail_and_rows_past_the_padding():
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    st = make_step(rng, v2=True, n_groups=2, rows=12)
    got = run_v2(st)
    for g, w in enumerate(st.widths):
        for b in range(st.num_reqs):
            n = int(st.num_blocks[g, st.idx[b]])
            assert (got["input_tables"][g, b, n:] == P32).all(), f"seed {seed}: stale tail of g{g} b{b} written"
        assert (got["input_tables"][g, st.num_reqs_padded:] == P32).all(), f"seed {seed}: rows past the padding"
        assert (got["input_tables"][g, :, w:] == P32).all(), f"seed {seed}: columns past the width"


# --- compiled, on the GPU ----------------------------------------------------------------------------

def big_reference(st: Step, tables):
    """The vectorised numpy core (the loop references are too slow at these sizes)."""
    from kvviz.core.geometry import Geometry
    from kvviz.core.step import compute_csr, compute_slot_mapping

    slots = np.stack([compute_slot_mapping(st.qsl, st.positions, tables[g, :, :w], num_reqs=st.num_reqs,
                                           num_tokens_padded=st.num_tokens_padded,
                                           geometry=Geometry(b, k, st.world, st.rank, st.il))
                      for g, (w, b, k) in enumerate(zip(st.widths, st.bss, st.kbss))])
    c = st.csr_group
    seq = np.zeros(st.num_reqs_padded, np.int64)
    seq[:st.num_reqs] = Geometry(st.bss[c], st.kbss[c], st.world, st.rank, st.il).local_seq_lens(st.seq_lens)
    ip, ix, lp = compute_csr(tables[c, :st.num_reqs_padded, :st.widths[c]], seq, st.kbss[c])
    return slots, ip, ix, lp


@pytest.mark.gpu
@pytest.mark.parametrize("world,il", [(1, 1), (2, 1), (2, 16), (4, 2)])
def test_large_random_steps_on_cuda(world, il):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    for n_groups, num_reqs, max_seq in ((1, 2000, 3000), (3, 300, 20000), (4, 4, 131072), (2, 4096, 64)):
        st = make_step(rng, n_groups=n_groups, num_reqs=num_reqs, max_seq=max_seq, pad_reqs=13, pad_tokens=300,
                       world=world, il=il)
        check_outputs(st, run_v1(st, as_tensors=True, device="cuda"), big_reference(st, st.tables), seed,
                      f" v1 {n_groups}g {num_reqs}r")
        st = make_step(rng, v2=True, n_groups=n_groups, num_reqs=num_reqs, max_seq=max_seq, pad_reqs=13,
                       pad_tokens=300, world=world, il=il, rows=num_reqs + 40)
        got = run_v2(st, as_tensors=True, device="cuda")
        gathered = ref_gather(st, np.full(st.tables.shape, P32, dtype=np.int32))
        assert np.array_equal(got["input_tables"], gathered), f"seed {seed}: v2 gather"
        check_outputs(st, got, big_reference(st, gathered), seed, f" v2 {n_groups}g {num_reqs}r")


@pytest.mark.gpu
@pytest.mark.parametrize("v2", [False, True], ids=["v1", "v2"])
def test_fused_launch_replays_in_a_cuda_graph(v2):
    """Captured once with tensor per-group arguments (no host copy, no sync), replayed over new
    steps' inputs copied into the same buffers."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    groups = [(16, 16), (32, 16), (64, 32)]
    steps = [make_step(rng, v2=v2, groups=groups, num_reqs=100, pad_reqs=28, pad_tokens=0, max_seq=3000, rows=200,
                       world=2, il=4) for _ in range(2)]
    T = max(s.num_tokens_padded for s in steps) + 64
    W = max(s.tables.shape[2] for s in steps)
    R = max(s.tables.shape[1] for s in steps)
    dev = "cuda"
    tab = torch.zeros((3, R, W), dtype=torch.int32, device=dev)
    qsl = torch.zeros(101, dtype=torch.int32, device=dev)
    pos = torch.zeros(T, dtype=torch.int64, device=dev)
    seq = torch.zeros(100, dtype=torch.int32, device=dev)
    idx = torch.zeros(100, dtype=torch.int32, device=dev)
    nb = torch.zeros((3, R), dtype=torch.int32, device=dev)
    inp = torch.zeros_like(tab)
    widths = torch.zeros(3, dtype=torch.int32, device=dev)
    per = dict(widths=widths, block_sizes=torch.tensor([b for b, _ in groups], dtype=torch.int32, device=dev),
               kernel_block_sizes=torch.tensor([k for _, k in groups], dtype=torch.int32, device=dev))
    sm = torch.zeros((3, T), dtype=torch.int64, device=dev)
    ip = torch.zeros(129, dtype=torch.int32, device=dev)
    ix = torch.zeros(128 * W, dtype=torch.int32, device=dev)
    lp = torch.zeros(128, dtype=torch.int32, device=dev)
    outs = dict(slot_mappings=sm, indptr=ip, indices=ix, last_page_len=lp)
    rank = steps[0].rank

    def launch():
        kw = dict(num_reqs_padded=128, num_tokens_padded=T, csr_group=1, dcp_world_size=2, dcp_rank=rank,
                  interleave=4, **per, **outs)
        if v2:
            fused_step_v2(idx, qsl, pos, seq, tab, nb, inp, num_reqs=100, **kw)
        else:
            fused_step_v1(qsl, pos, seq, tab, num_reqs=100, **kw)

    launch()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launch()
    for st in steps:
        st.rank, st.csr_group, st.num_reqs_padded, st.num_tokens_padded = rank, 1, 128, T
        st.positions = np.concatenate([st.positions, np.zeros(T - len(st.positions), np.int64)])
        full = np.zeros((3, R, W), np.int32)
        full[:, :st.tables.shape[1], :st.tables.shape[2]] = st.tables
        st.tables = full
        tab.copy_(torch.from_numpy(full))
        widths.copy_(torch.tensor(st.widths, dtype=torch.int32))
        qsl.copy_(torch.from_numpy(st.qsl))
        pos.copy_(torch.from_numpy(st.positions))
        seq.copy_(torch.from_numpy(st.seq_lens))
        if v2:
            idx.copy_(torch.from_numpy(st.idx))
            nbf = np.zeros((3, R), np.int32)
            nbf[:, :st.num_blocks.shape[1]] = st.num_blocks
            st.num_blocks = nbf
            nb.copy_(torch.from_numpy(nbf))
        for b in (*outs.values(), inp):
            b.fill_(-5)
        graph.replay()
        torch.cuda.synchronize()
        tables = st.tables
        if v2:
            tables = ref_gather(st, np.full(st.tables.shape, -5, dtype=np.int32))
            assert np.array_equal(inp.cpu().numpy(), tables), f"seed {seed}: gather"
        want = big_reference(st, tables)
        assert np.array_equal(sm.cpu().numpy(), want[0]), f"seed {seed}: slots"
        assert np.array_equal(ip.cpu().numpy(), want[1]), f"seed {seed}: indptr"
        assert np.array_equal(ix.cpu().numpy()[:int(want[1][-1])], want[2]), f"seed {seed}: indices"
        assert np.array_equal(lp.cpu().numpy(), want[3]), f"seed {seed}: last_page_len"


# --- the shared search and the one-load prefix (issue 13) -----------------------------------------


@triton.jit
def _request_of_probe(qsl_ptr, t_ptr, out_ptr, n_t, num_reqs, steps, FANOUT: tl.constexpr, TILE: tl.constexpr):
    i = tl.program_id(0) * TILE + tl.arange(0, TILE)
    m = i < n_t
    t = tl.load(t_ptr + i, mask=m, other=0)
    tl.store(out_ptr + i, request_of(qsl_ptr, t, m, num_reqs, steps, FANOUT), mask=m)


@pytest.mark.parametrize("fanout", [2, 4, 16])
def test_request_of_is_the_last_start_at_or_before_each_token(fanout):
    """``request_of`` against numpy's searchsorted (side="right" - 1) on sorted starts with repeats
    (empty requests), 1 to 700 requests, every token of the step and the first tail token."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    for num_reqs in (1, 2, 3, 15, 16, 17, 255, 256, 257, int(rng.integers(300, 700))):
        q = rng.integers(0, 4, num_reqs)
        q[rng.integers(0, num_reqs)] += 1                  # at least one token
        qsl = np.concatenate([[0], np.cumsum(q)]).astype(np.int32)
        tok = np.arange(int(qsl[-1]) + 1, dtype=np.int64)
        want = np.searchsorted(qsl[:num_reqs], tok, side="right") - 1
        steps = search_steps(num_reqs, fanout)
        assert fanout ** steps >= num_reqs and (steps == 0 or fanout ** (steps - 1) < num_reqs)
        out = torch.full((tok.size,), -5, dtype=torch.int32, device=DEV)
        _request_of_probe[(cdiv(tok.size, 64),)](t(qsl).to(DEV), t(tok).to(DEV), out, tok.size, num_reqs, steps,
                                                 FANOUT=fanout, TILE=64)
        got = out.cpu().numpy()
        assert np.array_equal(got, want), f"seed {seed}: {num_reqs} requests, fanout {fanout}: {first_diffs(got, want)}"


def test_v1_more_requests_than_one_prefix_load():
    """Past 4096 padded requests the CSR prefix sum loops over wide loads: the tiles after the first
    4096 requests must still start where the earlier ones end."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    st = make_step(rng, n_groups=1, num_reqs=4100, max_seq=20, pad_reqs=9, pad_tokens=3)
    check_outputs(st, run_v1(st), ref_outputs(st, st.tables), seed)
