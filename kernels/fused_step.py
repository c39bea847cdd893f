"""One launch per step for all the metadata the attention needs: every KV-cache group's slot
mapping and FlashInfer's CSR page table (indptr computed on the device), and for Model Runner V2
the gather of the input block tables as well.

Why: a step otherwise launches one slot-mapping kernel per group, a CSR repack whose ``indptr``
is a host prefix sum copied over (host work on the critical path, and an H2D copy a CUDA graph
captures as a stale host buffer), and for V2 a gather too. Each launch of these small kernels
costs about an empty launch; the fused one costs about one.

Layout (as in ``kernels.mrv2_tables``): the tables of all ``G`` groups live in one stacked int32
tensor ``[G, rows, Wmax]`` (``stack_tables`` builds it); group ``g`` owns columns ``[0, W_g)``.
Per-group ``widths`` (W_g), ``block_sizes`` (manager block size, tokens) and
``kernel_block_sizes`` (what table entries and slots count; divides the block size) are int32
device tensors ``[G]`` the kernel loads, or lists of ints the launcher copies over (pass
tensors under a CUDA graph). DCP world size, rank and interleave are constexprs.

Grid: ONE 1-D launch whose programs take one of three roles, by program id:

* ``[0, n_csr)``: the CSR programs. ``n_csr = cdiv(num_reqs_padded, REQ_TILE) * PAGE_SPLIT``;
  program ``(t, y)`` owns requests ``[t*REQ_TILE, (t+1)*REQ_TILE)``. Each sums the page counts
  of all earlier requests itself from ``seq_lens`` (ONE wide load up to ``PREFIX_ONE_MAX`` = 4096
  requests, else a loop of ``PREFIX_CHUNK`` = 1024; 32-bit divides by the page size, a constant
  when the host knows it; no host cumsum, no second launch), takes a cumsum over its
  tile and, for ``y == 0``, writes ``indptr[r + 1]`` and ``last_page_len[r]`` of its rows
  (``indptr[0] = 0`` by tile 0). Then it copies its requests' first ``pages`` table entries
  (a ``[REQ_TILE, PAGE_CHUNK]`` block at a time, chunks ``y, y + PAGE_SPLIT, ...``) to
  ``indices[indptr[r] + j]``. Rows ``[num_reqs, num_reqs_padded)`` are empty requests: indptr
  flat, last_page_len 0 (or the page size without ``empty_last_page_len_is_zero``, or
  ``padded_last_page_len`` when given); ``seq_lens`` is not read there.
* ``[n_csr, n_csr + n_slot)``: the slot-mapping programs, ``n_slot = cdiv(num_tokens_padded,
  TILE)``; each maps a tile of ``TILE`` tokens for EVERY group (the token's request found once: the
  guess "token t is request t's", checked against ``query_start_loc``, holds for every lane of a
  decode tile and of a lone prefill; a tile where it misses searches, ``kernels.slot_mapping.
  request_of``; its position read once): token ``i`` of request
  ``r`` at position ``pos`` goes to ``table[g, row(r), col] * kbs_g + offset`` (the arithmetic of
  ``kernels.slot_mapping``), PAD (-1) for another DCP rank's token and for the tail
  ``[query_start_loc[num_reqs], num_tokens_padded)``. A column at or past W_g reads block 0.
* V2 only, the last ``num_reqs_padded`` programs: the gather, one batch row per program, every
  group: ``input[g, b, :n] = state[g, idx_mapping[b], :n]`` with ``n = clamp(num_blocks[g,
  idx_mapping[b]], 0, W_g)`` (the rest of the row left as it was) for ``b < num_reqs``, zeros in
  ``[0, W_g)`` for the padding rows (and, v0.33.0, the rows up to ``dirty_rows``).

Release rules (``fused_step_v2``'s docstring): the slot arithmetic, the masks and the gather are
``kernels.mrv2_tables``' own ``@triton.jit`` helpers (``mrv2_slot``, ``row_count``, ``gather_row``,
``zero_row``, ``swa_num_null``); the era and the per-group flags are constexprs, so the default
(V1's "kv_block" arithmetic, every group enabled and sharded, no masking) compiles what it always did.

In V1 ``row(r) = r`` of the (committed) block tables; in V2 ``row(r) = idx_mapping[r]`` of the
*state* tables, for the slot mappings and the CSR indices alike: the gather's writes are not
visible to the other programs of the same launch, so nothing reads the input tables. (V2's CSR
reads the state row up to W_g and ignores ``num_blocks``, like the slot mapping; on a valid step
a request's pages never exceed its ``num_blocks``, so this equals the gathered row.)

DCP: the CSR is this rank's: a request's page count and last page come from the tokens this
rank stores (``Geometry.local_seq_lens``: ``seq_len // (W*I) * I + clamp(seq_len % (W*I) -
rank*I, 0, I)``), which is what FlashInfer is given under DCP; with W = 1 that is seq_len.

Sizes come from host ints only (num_reqs, num_reqs_padded, num_tokens_padded, the buffers'
shapes): nothing is read back, outputs go into caller-provided buffers, so a CUDA graph can
capture the launch. All offsets are int64. ``indices`` writes are bounded by its length (a
buffer of ``num_reqs_padded * W_csr`` entries always suffices for a valid step).
"""
from __future__ import annotations

from typing import NamedTuple

import triton
import triton.language as tl

from .contracts import check_int, check_tensor
from .mrv2_tables import DCP_ERAS, mrv2_slot, row_count, swa_num_null
from .slot_mapping import PAD_SLOT_ID, SEARCH_FANOUT, request_of, search_steps

MAX_GROUPS = 62                 # has_slot_mapping travels as the bits of a constexpr
TILE, WARPS = 128, 4            # tokens per slot-mapping program (one per thread), warps
PREFIX_CHUNK = 1024             # seq_lens entries a wide load of the prefix sum reads in its loop
PREFIX_ONE_MAX = 4096           # up to this many requests the prefix is ONE load (no loop)
CSR_MAX_REQ_TILE = 4            # requests per CSR program (fewer when the batch is smaller): 16 took
# 96-118 registers a thread (its [16, 64] copy block), which left room for 5 programs an SM and
# put a 1024 x 128 step's slot programs in two waves (ncu, H200, 2026-12-04); 4 takes 54-79
CSR_BLOCK = 1024                # entries of one [REQ_TILE, PAGE_CHUNK] copy block
CSR_MIN_PAGE_CHUNK = 64
CSR_PAGES_PER_PROGRAM = 2048    # a long request's pages are split over programs past this
CSR_MAX_SPLIT = 16
CSR_SPLIT_MAX_TILES = 64        # with more request tiles than this, no split (enough programs)
GATHER_MIN_BLOCK, GATHER_MAX_BLOCK = 16, 1024
GATHER_MAX_ELEMS = 4096         # entries of one [groups, columns] gather block
QSL_WIDE_MAX = 4096             # query_start_loc read whole by every slot program up to this many entries
HOST_SIZE_MAX = 32767           # block sizes the launcher compiles in (15 bits a group, 4 groups)
HOST_GROUPS = 4
ROLES = ("csr", "slot", "gather")   # the bench's role breakdown launches a subset


def pack_sizes(sizes) -> int:
    """The first ``HOST_GROUPS`` groups' block sizes as one constexpr (15 bits each) when the host
    knows them (lists, CPU tensors), else 0: the kernel then divides by constants instead of
    loading the sizes and running a division routine. A size past ``HOST_SIZE_MAX`` is loaded."""
    if sizes is None:
        return 0
    out = 0
    for g, v in enumerate(sizes[:HOST_GROUPS]):
        if 0 < int(v) <= HOST_SIZE_MAX:
            out |= int(v) << (15 * g)
    return out


@triton.jit
def _size(g: tl.constexpr, HOST: tl.constexpr, ptr):
    """Group ``g``'s block size: the launcher's constant when it packed one into ``HOST``
    (``pack_sizes``: a constant divisor is a shift or a multiply, a loaded one a division
    routine), else loaded from the per-group tensor."""
    c: tl.constexpr = (HOST >> (15 * g)) & 32767
    if c != 0:
        return c
    else:
        return tl.load(ptr + g).to(tl.int64)


@triton.jit
def _local_len(s, DCP_WORLD: tl.constexpr, DCP_RANK: tl.constexpr, INTERLEAVE: tl.constexpr):
    """Tokens of a request of length ``s`` this DCP rank stores."""
    if DCP_WORLD == 1:
        return s
    else:
        span = DCP_WORLD * INTERLEAVE
        full = s // span
        rem = s - full * span - DCP_RANK * INTERLEAVE
        return full * INTERLEAVE + tl.minimum(tl.maximum(rem, 0), INTERLEAVE)


@triton.jit
def _page_counts(sp, page, DCP_WORLD: tl.constexpr, DCP_RANK: tl.constexpr, INTERLEAVE: tl.constexpr):
    """int64 pages of each int32 length ``sp`` (this rank's share): 32-bit divides, which cannot
    overflow (a 64-bit divide is several times the work: ncu, H200, 2026-12-02)."""
    sp = _local_len(sp, DCP_WORLD, DCP_RANK, INTERLEAVE)
    q = sp // page
    return (q + (sp - q * page > 0).to(tl.int32)).to(tl.int64)


@triton.jit
def _csr_part(t, y, n_split, seq_ptr, tab_ptr, t_g, t_r, t_c, wmax, idx_ptr, widths_ptr, kbs_ptr, csr_group,
              indptr_ptr, indices_ptr, indices_cap, lpl_ptr, num_reqs, num_reqs_padded, bs_ptr, nc_ptr,
              reach_ptr, IDX: tl.constexpr, ERA: tl.constexpr, MASK_SW: tl.constexpr, DCP_WORLD: tl.constexpr,
              DCP_RANK: tl.constexpr, INTERLEAVE: tl.constexpr, EMPTY_IS_ZERO: tl.constexpr,
              PADDED_LPL: tl.constexpr, REQ_TILE: tl.constexpr, PAGE_CHUNK: tl.constexpr,
              PREFIX_CHUNK: tl.constexpr, ONE_PREFIX: tl.constexpr, HOST_PAGE: tl.constexpr,
              HOST_EBS: tl.constexpr):
    # Every load that needs no other is issued first (one round trip for all of them): this
    # tile's lengths, V2's row numbers, the width, the earlier requests' lengths (ONE load when
    # the batch fits PREFIX_CHUNK) and the first chunk of the table rows, read speculatively up
    # to the stacked tensor's width (always inside it) and masked once the lengths are in.
    r0 = t.to(tl.int64) * REQ_TILE
    rows = r0 + tl.arange(0, REQ_TILE)
    real = rows < num_reqs
    s32 = tl.load(seq_ptr + rows, mask=real, other=0)
    upto = tl.minimum(r0, num_reqs)
    if ONE_PREFIX:
        rr = tl.arange(0, PREFIX_CHUNK)
        sp0 = tl.load(seq_ptr + rr, mask=rr < upto, other=0)
    if HOST_PAGE > 0:
        page = HOST_PAGE
    else:
        page = tl.load(kbs_ptr + csr_group).to(tl.int64)
    width = tl.load(widths_ptr + csr_group).to(tl.int64)
    if IDX:
        trow = tl.load(idx_ptr + rows, mask=real, other=0).to(tl.int64)
        live = trow >= 0                              # idx_mapping -1: no row, the null block
        trow = tl.maximum(trow, 0)
    else:
        trow = rows
        live = real
    if ERA == 2:
        # v0.32.0 on: state rows hold manager ids; the page table is the attention group's
        # kernel-block table, manager id b at column c // r giving b * r + c % r
        if HOST_EBS > 0:
            ebs = HOST_EBS
        else:
            ebs = tl.load(bs_ptr + csr_group).to(tl.int64)
        per = ebs // page
    else:
        per = 1
        ebs = page
    cols0 = tl.arange(0, PAGE_CHUNK).to(tl.int64)
    src = tab_ptr + csr_group.to(tl.int64) * t_g + trow[:, None] * t_r
    first = y.to(tl.int64) * PAGE_CHUNK
    cols = first + cols0
    if ERA == 2:
        tcol = cols // per
    else:
        tcol = cols
    ids0 = tl.load(src + tcol[None, :] * t_c, mask=real[:, None] & (tcol[None, :] < wmax), other=0)
    num_null = tl.zeros([REQ_TILE], dtype=tl.int64)
    if MASK_SW:
        # v0.33.0: the gathered row's leading entries below the sliding window are block 0
        num_null = swa_num_null(nc_ptr, reach_ptr, csr_group, trow, ebs)
    # pages of every request before this tile, summed here from seq_lens
    if HOST_PAGE > 0:
        page32 = HOST_PAGE
    else:
        page32 = page.to(tl.int32)
    if ONE_PREFIX:
        begin = tl.sum(_page_counts(sp0, page32, DCP_WORLD, DCP_RANK, INTERLEAVE), axis=0)
    else:
        acc = tl.zeros([PREFIX_CHUNK], dtype=tl.int64)
        for c in range(0, upto, PREFIX_CHUNK):
            rr = c + tl.arange(0, PREFIX_CHUNK)
            sp = tl.load(seq_ptr + rr, mask=rr < upto, other=0)
            acc += _page_counts(sp, page32, DCP_WORLD, DCP_RANK, INTERLEAVE)
        begin = tl.sum(acc, axis=0)
    s = _local_len(s32.to(tl.int64), DCP_WORLD, DCP_RANK, INTERLEAVE)
    npg = (s + page - 1) // page
    incl = begin + tl.cumsum(npg, axis=0)
    if y == 0:
        inrows = rows < num_reqs_padded
        tl.store(indptr_ptr + rows + 1, incl.to(tl.int32), mask=inrows)
        rem = s % page
        last = tl.where(rem == 0, page, rem)
        if EMPTY_IS_ZERO:
            last = tl.where(s == 0, 0, last)
        if PADDED_LPL >= 0:
            last = tl.where(real, last, PADDED_LPL)
        tl.store(lpl_ptr + rows, last.to(tl.int32), mask=inrows)
        if t == 0:
            tl.store(indptr_ptr, 0)
    start = incl - npg
    top = tl.max(npg, axis=0)
    stride = n_split.to(tl.int64) * PAGE_CHUNK
    c = first
    ids = ids0
    while c < top:
        m = cols[None, :] < npg[:, None]
        ok = m & (tcol[None, :] < width) & live[:, None]
        if MASK_SW:
            ok = ok & (tcol[None, :] >= num_null[:, None])
        ids = tl.where(ok, ids, 0)
        if ERA == 2:
            ids = (ids.to(tl.int64) * per + (cols - tcol * per)[None, :]).to(tl.int32)
        dst = start[:, None] + cols[None, :]
        tl.store(indices_ptr + dst, ids, mask=m & (dst < indices_cap))
        c += stride
        cols = c + cols0
        if ERA == 2:
            tcol = cols // per
        else:
            tcol = cols
        ids = tl.load(src + tcol[None, :] * t_c, mask=(cols[None, :] < npg[:, None]) & (tcol[None, :] < wmax)
                      & live[:, None], other=0)


@triton.jit
def _group_slots(g: tl.constexpr, tab_ptr, t_g, t_r, t_c, trow, widths_ptr, bs_ptr, kbs_ptr, pos, real, live,
                 DCP_WORLD: tl.constexpr, DCP_RANK: tl.constexpr, INTERLEAVE: tl.constexpr, ERA: tl.constexpr,
                 ENABLED_MASK: tl.constexpr, SHARDED_MASK: tl.constexpr, PAD_UNMAPPED: tl.constexpr,
                 PAD_ID: tl.constexpr, TILE: tl.constexpr, HOST_BS: tl.constexpr, HOST_KBS: tl.constexpr):
    """Slots of group ``g`` for a tile of tokens whose rows and positions are known."""
    if (ENABLED_MASK >> g) & 1:
        width = tl.load(widths_ptr + g).to(tl.int64)
        bs = _size(g, HOST_BS, bs_ptr)
        kbs = _size(g, HOST_KBS, kbs_ptr)
        # the arithmetic of kernels.mrv2_tables (V1's is the "kv_block" era)
        slot = mrv2_slot(tab_ptr + g * t_g + trow * t_r, t_c, pos, real, live, width, kbs, bs,
                         ((SHARDED_MASK >> g) & 1) != 0, DCP_WORLD, DCP_RANK, INTERLEAVE, ERA, PAD_ID)
        slot = tl.where(real, slot, PAD_ID)
        if PAD_UNMAPPED:
            slot = tl.where(live, slot, PAD_ID)
    else:
        # v0.29.0: slot_mapping_enabled False (CircularBufferSpec): PAD for every token
        slot = tl.full([TILE], PAD_ID, tl.int64)
    return slot


@triton.jit
def _slot_part(p, qsl_ptr, pos_ptr, tab_ptr, t_g, t_r, t_c, idx_ptr, widths_ptr, bs_ptr, kbs_ptr,
               out_ptr, o_g, o_t, num_reqs, num_tokens_padded, search_steps,
               IDX: tl.constexpr, NUM_GROUPS: tl.constexpr, GROUP_MASK: tl.constexpr,
               DCP_WORLD: tl.constexpr, DCP_RANK: tl.constexpr, INTERLEAVE: tl.constexpr,
               ERA: tl.constexpr, ENABLED_MASK: tl.constexpr, SHARDED_MASK: tl.constexpr,
               PAD_UNMAPPED: tl.constexpr, PAD_ID: tl.constexpr, TILE: tl.constexpr,
               FANOUT: tl.constexpr, QSL_WIDE: tl.constexpr, HOST_BS: tl.constexpr, HOST_KBS: tl.constexpr):
    offs = p.to(tl.int64) * TILE + tl.arange(0, TILE)
    inside = offs < num_tokens_padded
    # one round trip: the position, the token count, the guess "token t is request t's" (every
    # decode batch; the lone prefill is request 0) checked against query_start_loc, and V2's row of
    # the guess; only a tile where the guess misses searches
    pos = tl.load(pos_ptr + offs, mask=inside, other=0).to(tl.int64)
    guess = tl.maximum(tl.minimum(offs, num_reqs - 1), 0)
    have = inside & (guess < num_reqs)            # no request at all: nothing to guess
    ga = tl.load(qsl_ptr + guess, mask=have, other=0).to(tl.int64)
    gb = tl.load(qsl_ptr + guess + 1, mask=have, other=0).to(tl.int64)
    if IDX:
        grow = tl.load(idx_ptr + guess, mask=have, other=0)
    num_tokens = tl.load(qsl_ptr + num_reqs).to(tl.int64)
    real = offs < num_tokens
    miss = real & ((ga > offs) | (offs >= gb))
    if tl.max(miss.to(tl.int32), axis=0) == 0:
        lo = guess
        if IDX:
            rrow = grow
    else:
        # request of token t: the last r with qsl[r] <= t (kernels.slot_mapping.request_of). The
        # whole query_start_loc is read at once first (up to QSL_WIDE entries; its lines arrive with
        # the search's first step), so the search's later steps find their lines in L1; the sum
        # keeps the load (an unused one would be dropped) and checks nothing
        if QSL_WIDE > 0:
            w = tl.arange(0, QSL_WIDE)
            q = tl.load(qsl_ptr + w, mask=w <= num_reqs, other=0)
            num_tokens = num_tokens + tl.sum(q * 0, axis=0).to(tl.int64)
        lo = request_of(qsl_ptr, offs, inside, num_reqs, search_steps, FANOUT).to(tl.int64)
        real = offs < num_tokens
        if IDX:
            rrow = tl.load(idx_ptr + lo, mask=real, other=0)
    if IDX:
        trow = rrow.to(tl.int64)
        live = trow >= 0                  # idx_mapping -1: a row that owns no block
        trow = tl.maximum(trow, 0)
    else:
        trow = lo
        live = real                       # V1: every row is real (the helper's mask is real & live)
    # the first HOST_GROUPS groups: every table read issued before any store (a store may alias a
    # later read, so the compiler would otherwise wait out each group's round trip in turn)
    if (GROUP_MASK >> 0) & 1:
        s0 = _group_slots(0, tab_ptr, t_g, t_r, t_c, trow, widths_ptr, bs_ptr, kbs_ptr, pos, real, live,
                          DCP_WORLD, DCP_RANK, INTERLEAVE, ERA, ENABLED_MASK, SHARDED_MASK, PAD_UNMAPPED,
                          PAD_ID, TILE, HOST_BS, HOST_KBS)
    if NUM_GROUPS > 1 and (GROUP_MASK >> 1) & 1:
        s1 = _group_slots(1, tab_ptr, t_g, t_r, t_c, trow, widths_ptr, bs_ptr, kbs_ptr, pos, real, live,
                          DCP_WORLD, DCP_RANK, INTERLEAVE, ERA, ENABLED_MASK, SHARDED_MASK, PAD_UNMAPPED,
                          PAD_ID, TILE, HOST_BS, HOST_KBS)
    if NUM_GROUPS > 2 and (GROUP_MASK >> 2) & 1:
        s2 = _group_slots(2, tab_ptr, t_g, t_r, t_c, trow, widths_ptr, bs_ptr, kbs_ptr, pos, real, live,
                          DCP_WORLD, DCP_RANK, INTERLEAVE, ERA, ENABLED_MASK, SHARDED_MASK, PAD_UNMAPPED,
                          PAD_ID, TILE, HOST_BS, HOST_KBS)
    if NUM_GROUPS > 3 and (GROUP_MASK >> 3) & 1:
        s3 = _group_slots(3, tab_ptr, t_g, t_r, t_c, trow, widths_ptr, bs_ptr, kbs_ptr, pos, real, live,
                          DCP_WORLD, DCP_RANK, INTERLEAVE, ERA, ENABLED_MASK, SHARDED_MASK, PAD_UNMAPPED,
                          PAD_ID, TILE, HOST_BS, HOST_KBS)
    if (GROUP_MASK >> 0) & 1:
        tl.store(out_ptr + offs * o_t, s0, mask=inside)
    if NUM_GROUPS > 1 and (GROUP_MASK >> 1) & 1:
        tl.store(out_ptr + o_g + offs * o_t, s1, mask=inside)
    if NUM_GROUPS > 2 and (GROUP_MASK >> 2) & 1:
        tl.store(out_ptr + 2 * o_g + offs * o_t, s2, mask=inside)
    if NUM_GROUPS > 3 and (GROUP_MASK >> 3) & 1:
        tl.store(out_ptr + 3 * o_g + offs * o_t, s3, mask=inside)
    for g in tl.static_range(4, NUM_GROUPS):
        if (GROUP_MASK >> g) & 1:
            sg = _group_slots(g, tab_ptr, t_g, t_r, t_c, trow, widths_ptr, bs_ptr, kbs_ptr, pos, real, live,
                              DCP_WORLD, DCP_RANK, INTERLEAVE, ERA, ENABLED_MASK, SHARDED_MASK, PAD_UNMAPPED,
                              PAD_ID, TILE, HOST_BS, HOST_KBS)
            tl.store(out_ptr + g * o_g + offs * o_t, sg, mask=inside)


@triton.jit
def _gather_part(b, state_ptr, st_g, st_r, st_c, wmax, inp_ptr, in_g, in_r, in_c, nb_ptr, nb_g, nb_r,
                 idx_ptr, widths_ptr, num_reqs, bs_ptr, kbs_ptr, nc_ptr, reach_ptr,
                 NUM_GROUPS: tl.constexpr, GROUPS_P2: tl.constexpr, BLOCK: tl.constexpr, ERA: tl.constexpr,
                 MASK_SW: tl.constexpr):
    # every group at once, [GROUPS_P2, BLOCK] (the tables are stacked): the row number, then the
    # counts and the first BLOCK columns of every group's row together (read up to the stacked
    # width, always inside the tensor), then the stores
    b = b.to(tl.int64)
    gs = tl.arange(0, GROUPS_P2).to(tl.int64)
    ing = gs < NUM_GROUPS
    gq = tl.minimum(gs, NUM_GROUPS - 1)       # the lanes past the groups read group G-1's, store nothing
    width = tl.load(widths_ptr + gs, mask=ing, other=0).to(tl.int64)
    cols = tl.arange(0, BLOCK).to(tl.int64)
    dst = inp_ptr + gs[:, None] * in_g + b * in_r
    if b < num_reqs:
        s = tl.load(idx_ptr + b).to(tl.int64)
        s0 = tl.maximum(s, 0)
        n = row_count(nb_ptr, gq, s, nb_g, nb_r, width)     # width 0 past the groups: n 0
        src = state_ptr + gs[:, None] * st_g + s0 * st_r
        v = tl.load(src + cols[None, :] * st_c, mask=ing[:, None] & (cols[None, :] < wmax), other=0)
        num_null = tl.zeros([GROUPS_P2], dtype=tl.int64)
        if MASK_SW:
            # v0.33.0: entries of what one row entry covers (manager blocks from v0.32.0)
            if ERA == 2:
                ebs = tl.load(bs_ptr + gq).to(tl.int64)
            else:
                ebs = tl.load(kbs_ptr + gq).to(tl.int64)
            num_null = swa_num_null(nc_ptr, reach_ptr, gq, s0, ebs)
        top = tl.max(n, axis=0)
        c = b * 0
        while c < top:
            cc = c + cols
            m = cc[None, :] < n[:, None]
            tl.store(dst + cc[None, :] * in_c, tl.where(cc[None, :] >= num_null[:, None], v, 0), mask=m)
            c += BLOCK
            cc = c + cols
            v = tl.load(src + cc[None, :] * st_c, mask=cc[None, :] < n[:, None], other=0)
    else:
        top = tl.max(width, axis=0)
        for c in range(0, top, BLOCK):
            cc = c + cols
            tl.store(dst + cc[None, :] * in_c, tl.zeros([GROUPS_P2, BLOCK], dtype=tl.int32),
                     mask=cc[None, :] < width[:, None])


@triton.jit(do_not_specialize=["num_reqs", "num_reqs_padded", "num_tokens_padded", "search_steps",
                               "n_csr", "n_slot", "n_split", "csr_group", "indices_cap"])
def _fused_step_kernel(qsl_ptr, pos_ptr, seq_ptr, tab_ptr, t_g, t_r, t_c, wmax,
                       idx_ptr, nb_ptr, nb_g, nb_r, inp_ptr, in_g, in_r, in_c,
                       widths_ptr, bs_ptr, kbs_ptr, out_ptr, o_g, o_t, nc_ptr, reach_ptr,
                       indptr_ptr, indices_ptr, indices_cap, lpl_ptr, csr_group,
                       num_reqs, num_reqs_padded, num_tokens_padded, search_steps, n_csr, n_slot, n_split,
                       IDX: tl.constexpr, GATHER: tl.constexpr, NUM_GROUPS: tl.constexpr,
                       GROUP_MASK: tl.constexpr, DCP_WORLD: tl.constexpr, DCP_RANK: tl.constexpr,
                       INTERLEAVE: tl.constexpr, EMPTY_IS_ZERO: tl.constexpr, PADDED_LPL: tl.constexpr,
                       PAD_ID: tl.constexpr, TILE: tl.constexpr, REQ_TILE: tl.constexpr,
                       PAGE_CHUNK: tl.constexpr, PREFIX_CHUNK: tl.constexpr, GATHER_BLOCK: tl.constexpr,
                       FANOUT: tl.constexpr, ERA: tl.constexpr, ENABLED_MASK: tl.constexpr,
                       SHARDED_MASK: tl.constexpr, PAD_UNMAPPED: tl.constexpr, MASK_SW: tl.constexpr,
                       QSL_WIDE: tl.constexpr, ONE_PREFIX: tl.constexpr, HOST_BS: tl.constexpr,
                       HOST_KBS: tl.constexpr, HOST_PAGE: tl.constexpr, HOST_EBS: tl.constexpr,
                       GROUPS_P2: tl.constexpr):
    pid = tl.program_id(0)
    if pid < n_csr:
        _csr_part(pid // n_split, pid % n_split, n_split, seq_ptr, tab_ptr, t_g, t_r, t_c, wmax, idx_ptr,
                  widths_ptr, kbs_ptr, csr_group, indptr_ptr, indices_ptr, indices_cap, lpl_ptr,
                  num_reqs, num_reqs_padded, bs_ptr, nc_ptr, reach_ptr, IDX, ERA, MASK_SW, DCP_WORLD,
                  DCP_RANK, INTERLEAVE, EMPTY_IS_ZERO, PADDED_LPL, REQ_TILE, PAGE_CHUNK, PREFIX_CHUNK,
                  ONE_PREFIX, HOST_PAGE, HOST_EBS)
    elif pid < n_csr + n_slot:
        _slot_part(pid - n_csr, qsl_ptr, pos_ptr, tab_ptr, t_g, t_r, t_c, idx_ptr, widths_ptr, bs_ptr,
                   kbs_ptr, out_ptr, o_g, o_t, num_reqs, num_tokens_padded, search_steps, IDX, NUM_GROUPS,
                   GROUP_MASK, DCP_WORLD, DCP_RANK, INTERLEAVE, ERA, ENABLED_MASK, SHARDED_MASK,
                   PAD_UNMAPPED, PAD_ID, TILE, FANOUT, QSL_WIDE, HOST_BS, HOST_KBS)
    else:
        if GATHER:
            _gather_part(pid - n_csr - n_slot, tab_ptr, t_g, t_r, t_c, wmax, inp_ptr, in_g, in_r, in_c,
                         nb_ptr, nb_g, nb_r, idx_ptr, widths_ptr, num_reqs, bs_ptr, kbs_ptr, nc_ptr,
                         reach_ptr, NUM_GROUPS, GROUPS_P2, GATHER_BLOCK, ERA, MASK_SW)


# --- launchers ----------------------------------------------------------------------------------

class FusedStepOutputs(NamedTuple):
    """What one fused launch filled (the caller's buffers, or new ones)."""
    slot_mappings: object       # int64 [G, >= num_tokens_padded]
    indptr: object              # int32 [>= num_reqs_padded + 1]
    indices: object             # int32 [capacity]; entries [0, indptr[num_reqs]) are written
    last_page_len: object       # int32 [>= num_reqs_padded]
    input_tables: object = None  # V2: the gathered stacked tables


def csr_config(num_reqs_padded: int, max_pages: int) -> tuple[int, int, int]:
    """(REQ_TILE, PAGE_CHUNK, PAGE_SPLIT) of the CSR programs, from host-known sizes: up to
    ``CSR_MAX_REQ_TILE`` requests a program, copy blocks of about 1024 entries, and a request of more than 2048 pages
    split over up to 16 programs when there are few request tiles. Never changes the result."""
    req_tile = max(1, min(triton.next_power_of_2(max(num_reqs_padded, 1)), CSR_MAX_REQ_TILE))
    chunk = max(CSR_BLOCK // req_tile, CSR_MIN_PAGE_CHUNK)
    tiles = triton.cdiv(max(num_reqs_padded, 1), req_tile)
    split = 1
    if tiles <= CSR_SPLIT_MAX_TILES:
        split = max(1, min(triton.cdiv(max(max_pages, 1), CSR_PAGES_PER_PROGRAM), CSR_MAX_SPLIT))
    return req_tile, chunk, split


def _host_list(values):
    """The values as a list of ints when the host has them (a list, or a CPU tensor), else None."""
    if values is None:
        return None
    if hasattr(values, "device"):
        return [int(v) for v in values.tolist()] if values.device.type == "cpu" else None
    return [int(v) for v in values]


def _i32_out(buf, n: int, name: str, device):
    import torch

    if buf is None:
        return torch.empty(max(n, 1), dtype=torch.int32, device=device)
    return check_tensor(name, buf, dtype=torch.int32, ndim=1, min_numel=n, contiguous=True, device=device)


def _launch(*, v2, query_start_loc, positions, seq_lens, tables, idx_mapping, num_blocks, input_tables,
            widths, block_sizes, kernel_block_sizes, num_reqs, num_reqs_padded, num_tokens_padded,
            csr_group, slot_mappings, indptr, indices, last_page_len, dcp_world_size, dcp_rank,
            interleave, has_slot_mapping, empty_last_page_len_is_zero, padded_last_page_len,
            max_seq_len, tile, num_warps, release=None, roles=ROLES):
    import torch

    from .mrv2_tables import _check_stacked, _check_widths, _group_mask, _per_group, _swa_args

    rel = release or {}
    if not set(roles) <= set(ROLES):
        raise ValueError(f"roles: {tuple(roles)} are not all of {ROLES}")
    era = rel.get("dcp_era", "kv_block")
    if era not in DCP_ERAS:
        raise ValueError(f"dcp_era: {era!r} is not one of {DCP_ERAS}")

    tname = "state_tables" if v2 else "block_tables"
    _check_stacked(tables, tname)
    G, rows, wmax = tables.shape
    dev = tables.device
    if not 1 <= G <= MAX_GROUPS:
        raise ValueError(f"{tname}: {G} groups, needs between 1 and {MAX_GROUPS}")
    num_reqs = check_int("num_reqs", num_reqs)
    num_reqs_padded = num_reqs if num_reqs_padded is None else check_int("num_reqs_padded", num_reqs_padded,
                                                                         lo=num_reqs)
    check_tensor("query_start_loc", query_start_loc, dtype=torch.int32, ndim=1, min_numel=num_reqs + 1,
                 contiguous=True, device=dev)
    check_tensor("positions", positions, dtype=torch.int64, ndim=1, contiguous=True, device=dev)
    check_tensor("seq_lens", seq_lens, dtype=torch.int32, ndim=1, min_numel=num_reqs, contiguous=True, device=dev)
    if not v2 and rows < num_reqs:
        raise ValueError(f"block_tables: needs at least {num_reqs} rows (one per request), got {rows}")
    dcp_world_size = check_int("dcp_world_size", dcp_world_size, lo=1)
    dcp_rank = check_int("dcp_rank", dcp_rank, lo=0, hi=dcp_world_size - 1)
    interleave = check_int("interleave", interleave, lo=1)
    csr_group = check_int("csr_group", csr_group, lo=0, hi=G - 1)
    _check_widths(widths, wmax)
    host_w = _host_list(widths) or [wmax] * G
    w = _per_group(widths, "widths", G, dev, default=wmax)
    bs = _per_group(block_sizes, "block_sizes", G, dev, minimum=1)
    kbs = bs if kernel_block_sizes is None else _per_group(kernel_block_sizes, "kernel_block_sizes", G, dev,
                                                           minimum=1)
    hb, hk = _host_list(block_sizes), _host_list(kernel_block_sizes if kernel_block_sizes is not None
                                                 else block_sizes)
    if hb is not None and hk is not None:
        for g, (b, k) in enumerate(zip(hb, hk)):
            if b % k:
                raise ValueError(f"kernel_block_sizes: group {g}'s {k} does not divide its block size {b}")
            if dcp_world_size > 1 and b % interleave:
                raise ValueError(f"interleave: {interleave} does not divide group {g}'s block size {b}")
    mask = _group_mask(has_slot_mapping, G)
    enabled = _group_mask(rel.get("slot_mapping_enabled"), G)
    sharded = _group_mask(rel.get("dcp_sharded"), G)
    per = 1                                   # kernel blocks per manager block of the CSR group
    if era == "manager_ids" and hb is not None and hk is not None:
        per = hb[csr_group] // hk[csr_group]
    # outputs
    if num_tokens_padded is not None:
        num_tokens_padded = check_int("num_tokens_padded", num_tokens_padded, hi=positions.numel())
    if slot_mappings is None:
        n_tok = positions.numel() if num_tokens_padded is None else num_tokens_padded
        slot_mappings = torch.empty((G, n_tok), dtype=torch.int64, device=dev)
    # written through both of its strides (a window of a larger buffer works)
    check_tensor("slot_mappings", slot_mappings, dtype=torch.int64, ndim=2, shape=(G, None), non_overlapping=True,
                 device=dev)
    n_tok = slot_mappings.shape[1] if num_tokens_padded is None else num_tokens_padded
    if n_tok > slot_mappings.shape[1]:
        raise ValueError(f"slot_mappings: needs shape ({G}, >= {n_tok}) for num_tokens_padded {n_tok}, got "
                         f"{tuple(slot_mappings.shape)}")
    if n_tok > positions.numel():
        raise ValueError(f"num_tokens_padded: {n_tok} exceeds positions ({positions.numel()})")
    indptr = _i32_out(indptr, num_reqs_padded + 1, "indptr", dev)
    if indices is None:
        indices = torch.empty(max(num_reqs_padded * host_w[csr_group] * per, 1), dtype=torch.int32,
                              device=dev)
    indices = _i32_out(indices, 0, "indices", dev)
    last_page_len = _i32_out(last_page_len, num_reqs_padded, "last_page_len", dev)
    if padded_last_page_len is not None:
        check_int("padded_last_page_len", padded_last_page_len)
    # V2 pieces (V1 passes the tables again as harmless stand-ins: never read)
    if v2:
        from .mrv2_tables import _check_idx

        if _check_idx(idx_mapping, num_reqs, dev) != num_reqs:
            raise ValueError("num_reqs: disagrees with idx_mapping")
        _check_stacked(input_tables, "input_tables", dev, written=True)
        if input_tables.shape[0] != G or input_tables.shape[2] != wmax or input_tables.shape[1] < num_reqs_padded:
            raise ValueError(f"input_tables: needs shape ({G}, >= {num_reqs_padded}, {wmax}) as state_tables "
                             f"{tuple(tables.shape)} and num_reqs_padded {num_reqs_padded}, got "
                             f"{tuple(input_tables.shape)}")
        check_tensor("num_blocks", num_blocks, dtype=(torch.int32, torch.int64), ndim=2, device=dev)
        if num_blocks.shape[0] != G or num_blocks.shape[1] < rows:
            raise ValueError(f"num_blocks: needs shape ({G}, >= {rows}), got {tuple(num_blocks.shape)}")
        idx, nb, inp = idx_mapping, num_blocks, input_tables
        mask_sw, nc, reach, _ = _swa_args(rel.get("num_computed"), rel.get("sliding_window_reach"), bs, G,
                                          rows, dev, w)
        n_rows = max(num_reqs_padded, min(check_int("dirty_rows", rel.get("dirty_rows", 0)),
                                            input_tables.shape[1]))
    else:
        idx, nb, inp = query_start_loc, tables[0], tables
        mask_sw, nc, reach, n_rows = False, w, w, 0
    # grid
    if max_seq_len is None:
        max_pages = host_w[csr_group] * per
    else:
        page = hk[csr_group] if hk is not None else 1
        max_pages = -(-int(max_seq_len) // (page * dcp_world_size)) + 1
    req_tile, chunk, split = csr_config(num_reqs_padded, max_pages)
    n_csr = triton.cdiv(max(num_reqs_padded, 1), req_tile) * split
    tile = TILE if tile is None else int(tile)
    if tile < 16 or tile & (tile - 1):
        raise ValueError(f"tile: {tile} must be a power of two >= 16")
    n_slot = triton.cdiv(n_tok, tile) if mask else 0
    n_gather = n_rows
    steps = search_steps(num_reqs, SEARCH_FANOUT)
    prefix = max(triton.next_power_of_2(max(num_reqs_padded, 1)), 16)
    prefix = prefix if prefix <= PREFIX_ONE_MAX else PREFIX_CHUNK
    groups_p2 = triton.next_power_of_2(G)
    gblock = min(max(triton.next_power_of_2(wmax), GATHER_MIN_BLOCK), GATHER_MAX_BLOCK,
                 max(GATHER_MIN_BLOCK, GATHER_MAX_ELEMS // groups_p2))
    qsl_wide = triton.next_power_of_2(num_reqs + 1) if num_reqs + 1 <= QSL_WIDE_MAX else 0
    host_bs, host_kbs = pack_sizes(hb), pack_sizes(hk)
    host_page = hk[csr_group] if hk is not None and hk[csr_group] <= HOST_SIZE_MAX else 0
    host_ebs = hb[csr_group] if hb is not None and hb[csr_group] <= HOST_SIZE_MAX else 0
    n_csr, n_slot, n_gather = (n if k in roles else 0 for n, k in ((n_csr, "csr"), (n_slot, "slot"),
                                                                    (n_gather, "gather")))
    _fused_step_kernel[(n_csr + n_slot + n_gather,)](
        query_start_loc, positions, seq_lens, tables, *tables.stride(), wmax,
        idx, nb, *nb.stride(), inp, *inp.stride(),
        w, bs, kbs, slot_mappings, *slot_mappings.stride(), nc, reach,
        indptr, indices, indices.numel(), last_page_len, csr_group,
        num_reqs, num_reqs_padded, n_tok, steps, n_csr, n_slot, split,
        IDX=bool(v2), GATHER=bool(v2), NUM_GROUPS=G, GROUP_MASK=mask, DCP_WORLD=dcp_world_size,
        DCP_RANK=dcp_rank, INTERLEAVE=interleave, EMPTY_IS_ZERO=bool(empty_last_page_len_is_zero),
        PADDED_LPL=-1 if padded_last_page_len is None else int(padded_last_page_len),
        PAD_ID=PAD_SLOT_ID, TILE=tile, REQ_TILE=req_tile, PAGE_CHUNK=chunk, PREFIX_CHUNK=prefix,
        GATHER_BLOCK=gblock, FANOUT=SEARCH_FANOUT, ERA=DCP_ERAS.index(era), ENABLED_MASK=enabled,
        SHARDED_MASK=sharded, PAD_UNMAPPED=bool(rel.get("pad_unmapped_rows", False)), MASK_SW=mask_sw,
        QSL_WIDE=qsl_wide, ONE_PREFIX=num_reqs_padded <= prefix, HOST_BS=host_bs, HOST_KBS=host_kbs,
        HOST_PAGE=host_page, HOST_EBS=host_ebs, GROUPS_P2=groups_p2,
        num_warps=WARPS if num_warps is None else int(num_warps))
    return FusedStepOutputs(slot_mappings, indptr, indices, last_page_len, input_tables if v2 else None)


def fused_step_v1(query_start_loc, positions, seq_lens, block_tables, *, block_sizes, num_reqs: int,
                  widths=None, kernel_block_sizes=None, num_reqs_padded: int | None = None,
                  num_tokens_padded: int | None = None, csr_group: int = 0, slot_mappings=None,
                  indptr=None, indices=None, last_page_len=None, dcp_world_size: int = 1,
                  dcp_rank: int = 0, interleave: int = 1, has_slot_mapping=None,
                  empty_last_page_len_is_zero: bool = True, padded_last_page_len: int | None = None,
                  max_seq_len: int | None = None, tile: int | None = None,
                  num_warps: int | None = None, roles=ROLES) -> FusedStepOutputs:
    """V1: every group's slot mapping and the CSR of group ``csr_group``, in one launch.

    Inputs: ``query_start_loc`` int32 ``[>= num_reqs + 1]``, ``positions`` int64
    ``[>= num_tokens_padded]``, ``seq_lens`` int32 ``[>= num_reqs]`` (device copies; only
    entries below num_reqs are read), ``block_tables`` the committed tables of every group,
    stacked int32 ``[G, >= num_reqs, Wmax]`` (row r = request r; entries in kernel blocks),
    ``widths`` / ``block_sizes`` / ``kernel_block_sizes`` per group (int32 tensors [G] or lists;
    widths default Wmax, kernel block sizes default the block sizes).

    Outputs (pass persistent buffers for a CUDA graph; new ones otherwise):
    ``slot_mappings`` int64 ``[G, >= num_tokens_padded]``: for every group flagged in
    ``has_slot_mapping`` (default all; the others are left untouched), entries
    ``[0, num_tokens_padded)`` are written, PAD past ``query_start_loc[num_reqs]`` and for other DCP
    ranks' tokens. ``indptr`` int32 ``[>= num_reqs_padded + 1]``, ``last_page_len`` int32
    ``[>= num_reqs_padded]`` (rows past num_reqs: empty requests), ``indices`` int32
    (default ``num_reqs_padded * W_csr`` entries; entries ``[0, indptr[num_reqs])`` written):
    FlashInfer's page table of group ``csr_group``, pages of ``kernel_block_sizes[csr_group]``
    tokens, this DCP rank's share of each request.

    Host ints only decide the grid (module docstring): ``num_tokens_padded`` (default
    ``slot_mappings``' width, or ``positions``' length), ``num_reqs_padded`` (default num_reqs);
    ``max_seq_len`` (optional, as vLLM's metadata has it) only helps split long requests' page
    copies over programs. ``padded_last_page_len``: what the padding rows get (vLLM v0.10.1 to
    v0.11.x: 1); default the empty-request rule. ``roles``: which program roles launch ("csr",
    "slot", "gather"; all by default): the bench's breakdown of where a step's time goes, never a
    step's result. Returns ``FusedStepOutputs``."""
    return _launch(v2=False, query_start_loc=query_start_loc, positions=positions, seq_lens=seq_lens,
                   tables=block_tables, idx_mapping=None, num_blocks=None, input_tables=None, widths=widths,
                   block_sizes=block_sizes, kernel_block_sizes=kernel_block_sizes, num_reqs=num_reqs,
                   num_reqs_padded=num_reqs_padded, num_tokens_padded=num_tokens_padded, csr_group=csr_group,
                   slot_mappings=slot_mappings, indptr=indptr, indices=indices, last_page_len=last_page_len,
                   dcp_world_size=dcp_world_size, dcp_rank=dcp_rank, interleave=interleave,
                   has_slot_mapping=has_slot_mapping, empty_last_page_len_is_zero=empty_last_page_len_is_zero,
                   padded_last_page_len=padded_last_page_len, max_seq_len=max_seq_len, tile=tile,
                   num_warps=num_warps, roles=roles)


def fused_step_v2(idx_mapping, query_start_loc, positions, seq_lens, state_tables, num_blocks, input_tables, *,
                  block_sizes, num_reqs_padded: int, num_reqs: int | None = None, widths=None,
                  kernel_block_sizes=None, num_tokens_padded: int | None = None, csr_group: int = 0,
                  slot_mappings=None, indptr=None, indices=None, last_page_len=None,
                  dcp_world_size: int = 1, dcp_rank: int = 0, interleave: int = 1, has_slot_mapping=None,
                  empty_last_page_len_is_zero: bool = True, padded_last_page_len: int | None = None,
                  max_seq_len: int | None = None, tile: int | None = None,
                  num_warps: int | None = None, dcp_era: str = "kv_block", slot_mapping_enabled=None,
                  dcp_sharded=None, pad_unmapped_rows: bool = False, num_computed=None,
                  sliding_window_reach=None, dirty_rows: int = 0, roles=ROLES) -> FusedStepOutputs:
    """Model Runner V2: the gather of the input tables, every group's slot mapping and the CSR, in
    one launch.

    ``idx_mapping`` int32/int64 ``[>= num_reqs]`` (batch row -> state row; num_reqs defaults to
    its length), ``state_tables`` stacked int32 ``[G, max_num_reqs, Wmax]``, ``num_blocks`` int32
    ``[G, max_num_reqs]``, ``input_tables`` stacked int32 ``[G, >= num_reqs_padded, Wmax]`` (written:
    the gather of ``kernels.mrv2_tables.gather_block_tables``, padding rows zeroed, nothing else
    touched); ``seq_lens`` int32 per BATCH row. The slot mappings and the CSR are those of
    ``fused_step_v1`` over the gathered tables, but read from the state rows (module docstring).
    ``block_sizes``: manager block sizes; ``kernel_block_sizes`` default to them (vLLM's MRV2
    tables count kernel blocks: pass the kernel block size as both). Other arguments as
    ``fused_step_v1``. Returns ``FusedStepOutputs`` with ``input_tables``.

    Release rules, as ``kernels.mrv2_tables`` has them (``kvviz.core.slots_v2`` states them; vLLM
    ``vllm/v1/worker/gpu/block_table.py``): ``dcp_era`` "kernel_block" (to v0.28.x), "kv_block"
    (v0.29 .. v0.31; the default: V1's arithmetic, what this launch always computed) or
    "manager_ids" (v0.32 on: state rows hold manager ids of ``block_sizes`` tokens; the CSR is the
    attention group's kernel-block table, manager id b at column c // r giving b*r + c % r with
    r = block size / kernel block size); ``slot_mapping_enabled`` (v0.29.0) and ``dcp_sharded``
    (v0.31.0): per-group flags, as ``compute_slot_mappings``'s (constexprs here: a flag of all
    True compiles away); ``pad_unmapped_rows`` (v0.31.0): PAD for an idx_mapping -1 row (any
    release: such a row reads the null block 0, its gather copies nothing). v0.33.0's gather
    (``gather_block_tables``): ``num_computed`` (int32 [max_num_reqs] by state row) with
    ``sliding_window_reach`` ([G]) writes a group's columns below ``max(num_computed - reach, 0)
    // e`` as 0 (e: the tokens one entry covers, the manager block size in "manager_ids", else
    the kernel block size), in the gathered tables and the CSR alike; ``dirty_rows`` (the previous
    gather's num_reqs) zeroes the input rows up to it too."""
    from .mrv2_tables import _check_idx

    n = _check_idx(idx_mapping, num_reqs)
    return _launch(v2=True, query_start_loc=query_start_loc, positions=positions, seq_lens=seq_lens,
                   tables=state_tables, idx_mapping=idx_mapping, num_blocks=num_blocks, input_tables=input_tables,
                   widths=widths, block_sizes=block_sizes, kernel_block_sizes=kernel_block_sizes, num_reqs=n,
                   num_reqs_padded=num_reqs_padded, num_tokens_padded=num_tokens_padded, csr_group=csr_group,
                   slot_mappings=slot_mappings, indptr=indptr, indices=indices, last_page_len=last_page_len,
                   dcp_world_size=dcp_world_size, dcp_rank=dcp_rank, interleave=interleave,
                   has_slot_mapping=has_slot_mapping, empty_last_page_len_is_zero=empty_last_page_len_is_zero,
                   padded_last_page_len=padded_last_page_len, max_seq_len=max_seq_len, tile=tile,
                   num_warps=num_warps, roles=roles, release=dict(
                       dcp_era=dcp_era, slot_mapping_enabled=slot_mapping_enabled, dcp_sharded=dcp_sharded,
                       pad_unmapped_rows=pad_unmapped_rows, num_computed=num_computed,
                       sliding_window_reach=sliding_window_reach, dirty_rows=dirty_rows))
