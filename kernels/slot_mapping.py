"""Slot mapping: (positions, query_start_loc, block table) -> int64 slot per token.

Three designs over the same per-token arithmetic (``_slots_of``):

* ``slot_mapping_per_request``: one program per request, looping over that
  request's tokens, plus one extra program that writes PAD into the CUDA-graph
  tail. This is how vLLM launches it; a long prefill runs on a handful of
  programs while the rest of the chip idles.
* ``slot_mapping_flat``: one program per tile of tokens, so the grid depends
  only on the padded token count and every program does the same work, whether
  the tokens come from one prefill or from 1024 decodes. A token's request is
  the number of request starts at or before it, found by a binary search over
  query_start_loc (``request_of``, shared with kernels/fused_step.py), or, for large decode-like batches, by reading
  query_start_loc whole and counting (a histogram of the starts inside the
  tile, then a running sum). The same programs write the tail.
* ``slot_mapping_grid2d``: a 2-D grid (num_reqs + 1, cdiv(max_query_len, TILE)).
  Program (r, j) reads query_start_loc[r] and [r + 1] and maps tokens
  [start + j*TILE, min(end, start + (j+1)*TILE)) of request r: three dependent
  loads in all (query_start_loc, positions, table), no search, and a long
  prefill spread over many programs. Row r == num_reqs writes the PAD tail,
  each program j a share of it. ``max_query_len`` comes from the host (vLLM
  has it in the attention metadata, computed on the CPU), so nothing syncs;
  it picks TILE (64 tokens for decode, 128 otherwise: ``grid2d_config``).
* ``slot_mapping``: picks flat or grid2d per step from host-known sizes
  (``choose_slot_mapping_design``).

Default tiles and warps come from an H200 sweep (scripts/tune_slot_mapping.py;
BENCHMARKS.md, "Tuning (2026-11-30)"): small programs, one token per thread,
beat the old 1024-token tiles on every long prefill.

All offsets are int64. The table's row stride, column stride and width are
arguments; a column at or past the width reads the null block instead of
another row.
"""
from __future__ import annotations

import triton
import triton.language as tl

from .contracts import check_int, check_tensor

PAD_SLOT_ID = -1
"""Slot of a token that must not be written (the CUDA-graph tail, another DCP rank's token). The
KV write skips it; kvviz.constants.PAD_SLOT_ID holds the same value for the simulator, and the
kernel tests check the two agree."""

TOKEN_TILE = 1024
REQ_CHUNK = 1024          # query_start_loc entries one wide load reads in the flat kernel
# The flat kernel counts (histogram) instead of searching only for large decode-like
# batches: on the H200 (2026-11-30) counting won at 1024 requests x 1 token (9.3 vs 11.9 us
# per launch in a CUDA graph) and lost everywhere else (e.g. 16 x 8192: 8.4 vs 5.0 us).
COUNT_MIN_REQS = 1024
COUNT_MAX_REQS = 4096
# default (TILE, num_warps) per design, from the H200 sweep of 2026-11-30 (flat_config, grid2d_config)
FLAT_TILE, FLAT_WARPS = 128, 4
GRID2D_TILE, GRID2D_WARPS = 128, 4
GRID2D_DECODE_MAX_QUERY_LEN = 64
GRID2D_DECODE_TILE, GRID2D_DECODE_WARPS = 64, 2
MAX_GRID_Y = 65535        # CUDA's limit on a grid's second dimension


# Fan-out of request_of in the flat kernel and the fused step: 2, a binary search. On the H200
# (2026-12-02, scripts/kv_write_fused_gpu.py sweep, fused step V1, 1 group, CUDA graph) 16 took 3 dependent
# loads instead of 12 at 4096 requests and was no faster anywhere (4096 x 1: 8.82 against 8.80 us;
# 1024 x 128: 8.03 against 7.10; 16 x 8192: 5.47 against 5.30): qsl is tiny and the first levels
# of the search are the same few entries for every lane, so each step is an L1 hit, while a
# 16-wide step issues 15 loads a lane.
SEARCH_FANOUT = 2
FLAT_SEARCH_FANOUT = SEARCH_FANOUT


def search_steps(num_reqs: int, fanout: int = SEARCH_FANOUT) -> int:
    """Steps ``request_of`` needs to narrow ``num_reqs`` candidates to one: ceil(log_fanout)."""
    steps, n = 0, max(int(num_reqs), 1)
    while n > 1:
        n = -(-n // fanout)
        steps += 1
    return steps


@triton.jit
def request_of(qsl_ptr, t, mask, num_reqs, steps, FANOUT: tl.constexpr):
    """Per lane: the last request r in [0, num_reqs) with ``qsl[r] <= t`` (qsl sorted; an empty
    request repeats its start and is passed over), by a FANOUT-ary search: each step reads FANOUT - 1
    evenly spaced starts of the lane's candidate range in ONE gather and keeps the sub-range the
    count of starts <= t points at: ``steps = search_steps(num_reqs, FANOUT)`` dependent loads
    (ceil(log_FANOUT(num_reqs))). Lanes
    outside ``mask`` read nothing (their answer is 0 or meaningless). FANOUT 2 is a binary search
    (the default: SEARCH_FANOUT says why)."""
    lo = tl.zeros(t.shape, dtype=tl.int32)
    n = tl.zeros(t.shape, dtype=tl.int32) + num_reqs          # candidates [lo, lo + n)
    j = tl.arange(0, FANOUT)[None, :]
    for _ in range(steps):
        s = (n + FANOUT - 1) // FANOUT
        p = lo[:, None] + j * s[:, None]
        ok = (j >= 1) & (p < (lo + n)[:, None]) & mask[:, None]
        st = tl.load(qsl_ptr + p.to(tl.int64), mask=ok, other=0)
        c = tl.sum((ok & (st.to(tl.int64) <= t[:, None])).to(tl.int32), axis=1)
        new_lo = lo + c * s
        n = tl.minimum(s, lo + n - new_lo)
        lo = new_lo
    return lo


@triton.jit
def _slots_of(pos, row_ptr, bt_stride1, bt_width, valid,
              BLOCK_SIZE: tl.constexpr, KERNEL_BLOCK_SIZE: tl.constexpr, DCP_WORLD: tl.constexpr,
              DCP_RANK: tl.constexpr, INTERLEAVE: tl.constexpr, PAD_ID: tl.constexpr):
    # a "virtual block" is one manager block on every DCP rank, interleaved in
    # runs of INTERLEAVE tokens
    vbs = BLOCK_SIZE * DCP_WORLD
    vidx = pos // vbs
    voff = pos - vidx * vbs
    local = ((voff // INTERLEAVE) % DCP_WORLD) == DCP_RANK
    loff = (voff // (DCP_WORLD * INTERLEAVE)) * INTERLEAVE + voff % INTERLEAVE
    col = vidx * (BLOCK_SIZE // KERNEL_BLOCK_SIZE) + loff // KERNEL_BLOCK_SIZE
    take = valid & local & (col < bt_width)
    block = tl.load(row_ptr + col * bt_stride1, mask=take, other=0).to(tl.int64)
    slot = block * KERNEL_BLOCK_SIZE + loff % KERNEL_BLOCK_SIZE
    return tl.where(local, slot, PAD_ID)


@triton.jit(do_not_specialize=["num_reqs", "num_tokens_padded", "bt_width"])
def _slot_mapping_per_request_kernel(qsl_ptr, pos_ptr, bt_ptr, bt_stride0, bt_stride1, bt_width,
                                     out_ptr, num_reqs, num_tokens_padded,
                                     BLOCK_SIZE: tl.constexpr, KERNEL_BLOCK_SIZE: tl.constexpr,
                                     DCP_WORLD: tl.constexpr, DCP_RANK: tl.constexpr,
                                     INTERLEAVE: tl.constexpr, PAD_ID: tl.constexpr,
                                     TILE: tl.constexpr):
    pid = tl.program_id(0)
    lanes = tl.arange(0, TILE)
    if pid == num_reqs:
        # the extra program: the CUDA-graph tail [num_tokens, num_tokens_padded)
        tail = tl.load(qsl_ptr + num_reqs).to(tl.int64)
        for i in range(tail, num_tokens_padded, TILE):
            offs = i + lanes
            tl.store(out_ptr + offs, tl.full([TILE], PAD_ID, tl.int64), mask=offs < num_tokens_padded)
    else:
        start = tl.load(qsl_ptr + pid).to(tl.int64)
        end = tl.load(qsl_ptr + pid + 1).to(tl.int64)
        row_ptr = bt_ptr + pid.to(tl.int64) * bt_stride0
        for i in range(start, end, TILE):
            offs = i + lanes
            m = (offs < end) & (offs < num_tokens_padded)   # a corrupt query_start_loc cannot write past out
            pos = tl.load(pos_ptr + offs, mask=m, other=0).to(tl.int64)
            slot = _slots_of(pos, row_ptr, bt_stride1, bt_width, m, BLOCK_SIZE, KERNEL_BLOCK_SIZE,
                             DCP_WORLD, DCP_RANK, INTERLEAVE, PAD_ID)
            tl.store(out_ptr + offs, slot, mask=m)


@triton.jit(do_not_specialize=["num_reqs", "num_tokens_padded", "bt_width", "search_steps"])
def _slot_mapping_flat_kernel(qsl_ptr, pos_ptr, bt_ptr, bt_stride0, bt_stride1, bt_width,
                              out_ptr, num_reqs, num_tokens_padded, search_steps,
                              BLOCK_SIZE: tl.constexpr, KERNEL_BLOCK_SIZE: tl.constexpr,
                              DCP_WORLD: tl.constexpr, DCP_RANK: tl.constexpr,
                              INTERLEAVE: tl.constexpr, PAD_ID: tl.constexpr, TILE: tl.constexpr,
                              COUNT: tl.constexpr, REQ_CHUNK: tl.constexpr, FANOUT: tl.constexpr):
    pid = tl.program_id(0)
    t0 = pid.to(tl.int64) * TILE
    lanes = tl.arange(0, TILE)
    offs = t0 + lanes
    num_tokens = tl.load(qsl_ptr + num_reqs).to(tl.int64)
    inside = offs < num_tokens_padded
    real = offs < num_tokens
    # issued first: nothing it needs depends on another load
    pos = tl.load(pos_ptr + offs, mask=inside, other=0).to(tl.int64)
    # request of token t = #{r in [1, num_reqs) : qsl[r] <= t} (qsl is sorted; empty
    # requests repeat a value and are counted past)
    if COUNT:
        # few requests: read all of qsl in wide loads (no chain of dependent reads);
        # starts inside this tile go into a histogram whose running sum gives each
        # token's request, the rest count once
        base = tl.zeros([TILE], dtype=tl.int32)
        before = tl.zeros([REQ_CHUNK], dtype=tl.int32)
        for c in range(1, num_reqs, REQ_CHUNK):
            r = c + tl.arange(0, REQ_CHUNK)
            st = tl.load(qsl_ptr + r, mask=r < num_reqs, other=0x7FFFFFFF).to(tl.int64)
            before += (st <= t0).to(tl.int32)
            within = (st > t0) & (st < t0 + TILE)
            base += tl.histogram(tl.where(within, st - t0, 0).to(tl.int32), TILE)
        base = tl.where(lanes == 0, 0, base)   # bin 0 collected the starts outside the tile
        req = tl.sum(before, axis=0) + tl.cumsum(base, axis=0)
    else:
        # many requests: a binary search (request_of, FANOUT 2)
        req = request_of(qsl_ptr, offs, inside, num_reqs, search_steps, FANOUT)
    row_ptr = bt_ptr + req.to(tl.int64) * bt_stride0
    slot = _slots_of(pos, row_ptr, bt_stride1, bt_width, real, BLOCK_SIZE, KERNEL_BLOCK_SIZE,
                     DCP_WORLD, DCP_RANK, INTERLEAVE, PAD_ID)
    tl.store(out_ptr + offs, tl.where(real, slot, PAD_ID), mask=inside)


@triton.jit(do_not_specialize=["num_reqs", "num_tokens_padded", "bt_width"])
def _slot_mapping_grid2d_kernel(qsl_ptr, pos_ptr, bt_ptr, bt_stride0, bt_stride1, bt_width,
                                out_ptr, num_reqs, num_tokens_padded,
                                BLOCK_SIZE: tl.constexpr, KERNEL_BLOCK_SIZE: tl.constexpr,
                                DCP_WORLD: tl.constexpr, DCP_RANK: tl.constexpr,
                                INTERLEAVE: tl.constexpr, PAD_ID: tl.constexpr, TILE: tl.constexpr):
    r = tl.program_id(0)
    j = tl.program_id(1).to(tl.int64)
    lanes = tl.arange(0, TILE)
    if r == num_reqs:
        # the extra row: the CUDA-graph tail [num_tokens, num_tokens_padded), tile j, j + ny, ...
        # of it in program j, so a long tail is spread over the row
        tail = tl.load(qsl_ptr + num_reqs).to(tl.int64)
        step = tl.num_programs(1).to(tl.int64) * TILE
        for i in range(tail + j * TILE, num_tokens_padded, step):
            offs = i + lanes
            tl.store(out_ptr + offs, tl.full([TILE], PAD_ID, tl.int64), mask=offs < num_tokens_padded)
    else:
        start = tl.load(qsl_ptr + r).to(tl.int64)
        end = tl.load(qsl_ptr + r + 1).to(tl.int64)
        offs = start + j * TILE + lanes
        m = (offs < end) & (offs < num_tokens_padded)   # a corrupt query_start_loc cannot write past out
        pos = tl.load(pos_ptr + offs, mask=m, other=0).to(tl.int64)
        row_ptr = bt_ptr + r.to(tl.int64) * bt_stride0
        slot = _slots_of(pos, row_ptr, bt_stride1, bt_width, m, BLOCK_SIZE, KERNEL_BLOCK_SIZE,
                         DCP_WORLD, DCP_RANK, INTERLEAVE, PAD_ID)
        tl.store(out_ptr + offs, slot, mask=m)


def _check(query_start_loc, positions, block_table, num_reqs, block_size, kernel_block_size,
           dcp_world_size, dcp_rank, interleave):
    """The contract of every slot-mapping launch (kernels.contracts); returns the kernel block size."""
    import torch

    num_reqs = check_int("num_reqs", num_reqs)
    block_size = check_int("block_size", block_size, lo=1)
    dev = positions
    check_tensor("positions", positions, dtype=torch.int64, ndim=1, contiguous=True)
    check_tensor("query_start_loc", query_start_loc, dtype=torch.int32, ndim=1, min_numel=num_reqs + 1,
                 contiguous=True, device=dev)
    # the table is read through both of its strides: any view works
    check_tensor("block_table", block_table, dtype=torch.int32, ndim=2, min_shape=(num_reqs, None), device=dev)
    kbs = block_size if kernel_block_size is None else check_int("kernel_block_size", kernel_block_size, lo=1)
    if block_size % kbs:
        raise ValueError(f"kernel_block_size: {kbs} does not divide block size {block_size}")
    dcp_world_size = check_int("dcp_world_size", dcp_world_size, lo=1)
    check_int("dcp_rank", dcp_rank, lo=0, hi=dcp_world_size - 1)
    interleave = check_int("interleave", interleave, lo=1)
    if block_size % interleave:
        raise ValueError(f"interleave: {interleave} does not divide block size {block_size}")
    return kbs


def _out(out, positions, num_tokens_padded):
    import torch

    n = positions.numel() if num_tokens_padded is None else check_int("num_tokens_padded", num_tokens_padded)
    if n > positions.numel():
        raise ValueError(f"num_tokens_padded: {n} exceeds positions ({positions.numel()})")
    if out is None:
        out = torch.empty(n, dtype=torch.int64, device=positions.device)
    else:
        check_tensor("out", out, dtype=torch.int64, ndim=1, min_numel=n, contiguous=True, device=positions)
    return out, n


def slot_mapping_per_request(query_start_loc, positions, block_table, *, num_reqs: int, block_size: int,
                             kernel_block_size: int | None = None, num_tokens_padded: int | None = None,
                             dcp_world_size: int = 1, dcp_rank: int = 0, interleave: int = 1,
                             out=None, num_warps: int | None = None):
    """One program per request (vLLM's launch) + one for the padding tail.

    ``positions`` holds ``num_tokens_padded`` entries (the default is all of it);
    entries ``[0, num_tokens_padded)`` of ``out`` are written on every call."""
    kbs = _check(query_start_loc, positions, block_table, num_reqs, block_size, kernel_block_size,
                 dcp_world_size, dcp_rank, interleave)
    out, n = _out(out, positions, num_tokens_padded)
    _slot_mapping_per_request_kernel[(num_reqs + 1,)](
        query_start_loc, positions, block_table, block_table.stride(0), block_table.stride(1),
        block_table.shape[1], out, num_reqs, n,
        BLOCK_SIZE=block_size, KERNEL_BLOCK_SIZE=kbs, DCP_WORLD=dcp_world_size, DCP_RANK=dcp_rank,
        INTERLEAVE=interleave, PAD_ID=PAD_SLOT_ID, TILE=TOKEN_TILE, **_warps(num_warps))
    return out


def slot_mapping_flat(query_start_loc, positions, block_table, *, num_reqs: int, block_size: int,
                      kernel_block_size: int | None = None, num_tokens_padded: int | None = None,
                      dcp_world_size: int = 1, dcp_rank: int = 0, interleave: int = 1,
                      out=None, tile: int | None = None, num_warps: int | None = None):
    """One program per ``tile`` tokens; same arguments and result as the per-request launch.
    ``tile`` and ``num_warps`` override the defaults (``flat_config``)."""
    kbs = _check(query_start_loc, positions, block_table, num_reqs, block_size, kernel_block_size,
                 dcp_world_size, dcp_rank, interleave)
    out, n = _out(out, positions, num_tokens_padded)
    if n == 0:
        return out
    steps = search_steps(num_reqs, FLAT_SEARCH_FANOUT)
    d_tile, d_warps = flat_config(n, num_reqs)
    tile = d_tile if tile is None else _tile_ok(tile)
    num_warps = d_warps if num_warps is None else num_warps
    grid = (triton.cdiv(n, tile),)
    _slot_mapping_flat_kernel[grid](
        query_start_loc, positions, block_table, block_table.stride(0), block_table.stride(1),
        block_table.shape[1], out, num_reqs, n, steps,
        BLOCK_SIZE=block_size, KERNEL_BLOCK_SIZE=kbs, DCP_WORLD=dcp_world_size, DCP_RANK=dcp_rank,
        INTERLEAVE=interleave, PAD_ID=PAD_SLOT_ID, TILE=tile,
        COUNT=COUNT_MIN_REQS <= num_reqs <= COUNT_MAX_REQS and n <= 2 * num_reqs, REQ_CHUNK=REQ_CHUNK,
        FANOUT=FLAT_SEARCH_FANOUT, **_warps(num_warps))
    return out


def _tile_ok(tile: int) -> int:
    tile = int(tile)
    if tile < 16 or tile & (tile - 1):
        raise ValueError(f"tile: {tile} must be a power of two >= 16")
    return tile


def _warps(num_warps: int | None) -> dict:
    if num_warps is None:
        return {}
    if num_warps not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"num_warps: {num_warps} must be a power of two in [1, 32]")
    return {"num_warps": int(num_warps)}


def flat_config(num_tokens_padded: int, num_reqs: int) -> tuple[int, int]:
    """(TILE, num_warps) of the flat launch, from host-known sizes: 128 tokens on 4 warps, one
    token per thread, for every shape. Swept on the H200 (2026-11-30, scripts/tune_slot_mapping.py,
    TILE 64..1024 x 1..8 warps over the bench's 9 shapes): 128/4 was the fastest or within noise
    (~0.3 us) of it on every shape, e.g. 1 x 131072 5.2 us (the old 1024-token tile: 7.3),
    8 x 8192 4.95 (7.3-7.8), 1024 x 1 6.4-6.6 (13.5). Long prefills want many small programs:
    more loads in flight over more SMs."""
    return FLAT_TILE, FLAT_WARPS


def grid2d_config(max_query_len: int, num_reqs: int) -> tuple[int, int]:
    """(TILE, num_warps) of the 2-D launch, from host-known sizes: 64 tokens on 2 warps when no
    query is longer than 64 tokens (decode), else 128 on 4. Same sweep: 128/4 was within noise of
    the best everywhere (1 x 8192 5.0 us, 8 x 8192 5.2, 1 x 131072 5.5; the old tile of up to 1024
    tokens took 8.2-9.3 there); at 1024 x 1, 64/2 was the fastest (5.3-5.4 us, 128/4 5.4-5.8)."""
    if int(max_query_len) <= GRID2D_DECODE_MAX_QUERY_LEN:
        return GRID2D_DECODE_TILE, GRID2D_DECODE_WARPS
    return GRID2D_TILE, GRID2D_WARPS


def slot_mapping_grid2d(query_start_loc, positions, block_table, *, num_reqs: int, block_size: int,
                        max_query_len: int, kernel_block_size: int | None = None,
                        num_tokens_padded: int | None = None, dcp_world_size: int = 1, dcp_rank: int = 0,
                        interleave: int = 1, out=None, tile: int | None = None, num_warps: int | None = None):
    """A (num_reqs + 1) x cdiv(max_query_len, tile) grid; same arguments and result as the
    other two, plus ``max_query_len`` (host int, >= every request's query length: a request
    longer than that would leave tokens unwritten). On CPU tensors it is checked; on a device
    it is trusted, as reading query_start_loc back would sync."""
    kbs = _check(query_start_loc, positions, block_table, num_reqs, block_size, kernel_block_size,
                 dcp_world_size, dcp_rank, interleave)
    out, n = _out(out, positions, num_tokens_padded)
    max_query_len = check_int("max_query_len", max_query_len)
    if query_start_loc.device.type == "cpu" and num_reqs > 0:
        q = query_start_loc[: num_reqs + 1]
        longest = int((q[1:] - q[:-1]).max())
        if longest > max_query_len:
            raise ValueError(f"max_query_len: {max_query_len} is below a request's query length {longest}")
    if n == 0:
        return out
    d_tile, d_warps = grid2d_config(max_query_len, num_reqs)
    tile = d_tile if tile is None else _tile_ok(tile)
    num_warps = d_warps if num_warps is None else num_warps
    ny = max(triton.cdiv(max_query_len, tile), 1)
    if ny > MAX_GRID_Y:
        raise ValueError(f"max_query_len: {max_query_len} needs {ny} tiles of {tile} tokens: over the "
                         f"{MAX_GRID_Y} programs a grid's second dimension may have")
    _slot_mapping_grid2d_kernel[(num_reqs + 1, ny)](
        query_start_loc, positions, block_table, block_table.stride(0), block_table.stride(1),
        block_table.shape[1], out, num_reqs, n,
        BLOCK_SIZE=block_size, KERNEL_BLOCK_SIZE=kbs, DCP_WORLD=dcp_world_size, DCP_RANK=dcp_rank,
        INTERLEAVE=interleave, PAD_ID=PAD_SLOT_ID, TILE=tile, **_warps(num_warps))
    return out


def slot_mapping_torch(query_start_loc, positions, block_table, *, num_reqs: int, block_size: int,
                       kernel_block_size: int | None = None, num_tokens_padded: int | None = None,
                       dcp_world_size: int = 1, dcp_rank: int = 0, interleave: int = 1,
                       num_tokens: int | None = None, out=None):
    """The same mapping as torch indexing ops (several launches), for the benchmark.

    ``num_tokens`` must be known on the host (as it is in a model runner); without
    it this reads query_start_loc[num_reqs] back, which syncs."""
    import torch

    kbs = _check(query_start_loc, positions, block_table, num_reqs, block_size, kernel_block_size,
                 dcp_world_size, dcp_rank, interleave)
    out, n = _out(out, positions, num_tokens_padded)
    if num_tokens is None:
        num_tokens = int(query_start_loc[num_reqs])
    qsl = query_start_loc[: num_reqs + 1]
    lens = qsl[1:] - qsl[:-1]
    rows = torch.repeat_interleave(torch.arange(num_reqs, device=positions.device), lens,
                                   output_size=num_tokens)
    pos = positions[:num_tokens]
    vbs = block_size * dcp_world_size
    voff = pos % vbs
    local = (voff // interleave) % dcp_world_size == dcp_rank
    loff = (voff // (dcp_world_size * interleave)) * interleave + voff % interleave
    cols = (pos // vbs) * (block_size // kbs) + loff // kbs
    cols = torch.where(local, cols, 0).clamp_(max=block_table.shape[1] - 1)
    blocks = block_table[rows, cols].to(torch.int64)
    out[:num_tokens] = torch.where(local, blocks * kbs + loff % kbs, PAD_SLOT_ID)
    out[num_tokens:n] = PAD_SLOT_ID
    return out


# auto: which design a step gets, from host-known sizes only (no device read, so no sync)
AUTO_FLAT_MAX_REQS = 8
AUTO_FLAT_MIN_QUERY_LEN = 1024


def choose_slot_mapping_design(num_reqs: int, num_tokens_padded: int, max_query_len: int) -> str:
    """"flat" or "grid2d" for a step of ``num_reqs`` requests, ``num_tokens_padded`` tokens and a
    longest query of ``max_query_len`` (host ints, as a model runner has them).

    flat issues its position read at once and finds each token's request by a search of
    log2(num_reqs) dependent reads; grid2d always waits for one read of query_start_loc before
    the position read. So flat wins when the search is short: one request (no search at all;
    1 x 1 4.2-4.4 us against grid2d's 4.8-5.0 on the H200, 2026-11-30), or a long prefill over
    a few requests (1 x 131072 5.2 against 5.5; 8 x 8192 4.95 against 5.2). Each search step cost
    about 0.3 us in that sweep (1 / 8 / 16 x 8192: 4.8 / 4.95 / 6.1 us), so from 16 requests on,
    and on every decode-shaped batch (256 x 1: 5.2 against 6.1; 1024 x 128: 5.5 against 7.6),
    grid2d. Per-request is never picked: 10-150x an empty launch on long prefills."""
    if num_reqs <= 1:
        return "flat"
    if num_reqs <= AUTO_FLAT_MAX_REQS and max_query_len >= AUTO_FLAT_MIN_QUERY_LEN:
        return "flat"
    return "grid2d"


def slot_mapping(query_start_loc, positions, block_table, *, num_reqs: int, block_size: int,
                 max_query_len: int, kernel_block_size: int | None = None,
                 num_tokens_padded: int | None = None, dcp_world_size: int = 1, dcp_rank: int = 0,
                 interleave: int = 1, out=None):
    """The slot mapping through the design ``choose_slot_mapping_design`` picks for the step's
    sizes, with that design's default tile and warps; arguments as ``slot_mapping_grid2d``."""
    n = positions.numel() if num_tokens_padded is None else num_tokens_padded
    kw = dict(num_reqs=num_reqs, block_size=block_size, kernel_block_size=kernel_block_size,
              num_tokens_padded=num_tokens_padded, dcp_world_size=dcp_world_size, dcp_rank=dcp_rank,
              interleave=interleave, out=out)
    if choose_slot_mapping_design(num_reqs, n, max_query_len) == "flat":
        return slot_mapping_flat(query_start_loc, positions, block_table, **kw)
    return slot_mapping_grid2d(query_start_loc, positions, block_table, max_query_len=max_query_len, **kw)
