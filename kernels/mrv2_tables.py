"""Model Runner V2 block tables: the per-step gather and the slot mappings of every group.

vLLM's Model Runner V2 keeps, per KV-cache group ``g``, a persistent *state* block table
``state[g]`` ([max_num_reqs, W_g] int32) whose rows are indexed by a request's state index,
not by its position in the batch, and ``num_blocks[g, s]``: how many entries of state row
``s`` are valid. Each step it

* **gathers** the rows of the scheduled requests into the *input* tables the attention
  kernels read (``gather_block_tables``): batch position ``b`` gets
  ``state[g][idx_mapping[b], :num_blocks[g, idx_mapping[b]]]``; the rest of that row is left as
  it was (the stale tail: attention never reads past a request's length), the CUDA-graph
  padding rows ``[num_reqs, num_reqs_padded)`` are zeroed (block 0 is the null block) and
  later rows are not touched;
* computes the **slot mappings** of all groups in one launch (``compute_slot_mappings``),
  straight from the state tables: token ``i`` of request ``b`` at position ``pos`` goes to
  ``state[g][idx_mapping[b], pos // (bs[g] * cp)] * bs[g] + local offset``, or PAD when
  another decode-context-parallel (DCP) rank holds that token; every group's CUDA-graph tail
  ``[query_start_loc[num_reqs], max_num_tokens)`` is PAD.

Layout. Groups may differ in width and block size, so the tables of all groups live in ONE
stacked int32 tensor ``[G, rows, Wmax]`` (``stack_tables`` builds it); group ``g`` owns columns
``[0, W_g)`` of its slice and the kernels never read or write the columns past ``W_g``. Per-group
widths and block sizes are small int32 tensors ``[G]`` that the kernels load by program id.
(vLLM passes a table of raw uint64 data pointers instead; Triton's CPU interpreter cannot
dereference such a pointer, so the stacked tensor is what runs both compiled and interpreted.)

Grids: the gather runs one program per (group, batch row < num_reqs_padded), looping over the
row's columns; the slot mapping one program per (group, request) plus one extra program per
group, along the request axis, that writes the PAD tail. All offsets are int64. A column at or
past the group's width reads the null block 0 instead of another row.
"""
from __future__ import annotations

import triton
import triton.language as tl

from .contracts import check_int, check_tensor
from .slot_mapping import PAD_SLOT_ID

DCP_ERAS = ("kernel_block", "kv_block", "manager_ids")   # ERA 0, 1, 2 of the slot kernel

GATHER_MIN_BLOCK, GATHER_MAX_BLOCK = 16, 1024   # columns per loop iteration of the gather
# (tokens per loop iteration, warps) of the slot mapping: slot_tile_config
SLOT_TILE, SLOT_WARPS = 128, 4
SLOT_LONG_TILE, SLOT_LONG_WARPS, SLOT_LONG_QUERY = 512, 8, 256
MAX_GROUPS = 62                                 # has_slot_mapping travels as bits of an int64
MAX_GRID_Y = 65535                              # CUDA's limit on a grid's second dimension


@triton.jit
def swa_num_null(nc_ptr, reach_ptr, g, s, ebs):
    """v0.33.0 (``_gather_block_tables_kernel``, MASK_SLIDING_WINDOW): how many leading entries of
    state row ``s`` no query of this step reaches in group ``g`` (``max(num_computed[s] - reach,
    0) // ebs``; 0 where the group's reach is 0). ``ebs``: the tokens one row entry covers."""
    reach = tl.load(reach_ptr + g).to(tl.int64)
    first = tl.load(nc_ptr + s).to(tl.int64)
    return tl.where(reach > 0, tl.maximum(first - reach, 0) // ebs, 0)


@triton.jit
def gather_row(src, st_c, dst, in_c, n, num_null, BLOCK: tl.constexpr):
    """Copy entries ``[0, n)`` of one state row to one input row, the first ``num_null`` as the
    null block 0; entries from ``n`` on are not written (the stale tail)."""
    cols = tl.arange(0, BLOCK).to(tl.int64)
    for c in range(0, n, BLOCK):
        cc = c + cols
        m = cc < n
        v = tl.load(src + cc * st_c, mask=m & (cc >= num_null), other=0)
        tl.store(dst + cc * in_c, v, mask=m)


@triton.jit
def zero_row(dst, in_c, width, BLOCK: tl.constexpr):
    """A CUDA-graph padding row (or, v0.33.0, a row the previous batch left): the null block."""
    cols = tl.arange(0, BLOCK).to(tl.int64)
    for c in range(0, width, BLOCK):
        cc = c + cols
        tl.store(dst + cc * in_c, tl.zeros([BLOCK], dtype=tl.int32), mask=cc < width)


@triton.jit
def row_count(nb_ptr, g, s, nb_g, nb_r, width):
    """``num_blocks[g, s]`` clamped to [0, width] (a bad count cannot leave the group's row); 0 for
    a row whose idx_mapping is -1 (it owns no block: nothing is read)."""
    n = tl.load(nb_ptr + g * nb_g + tl.maximum(s, 0) * nb_r).to(tl.int64)
    n = tl.minimum(tl.maximum(n, 0), width)
    return tl.where(s >= 0, n, 0)


@triton.jit(do_not_specialize=["num_reqs"])
def _gather_block_tables_kernel(state_ptr, st_g, st_r, st_c, inp_ptr, in_g, in_r, in_c,
                                nb_ptr, nb_g, nb_r, idx_ptr, widths_ptr, num_reqs,
                                nc_ptr, reach_ptr, ebs_ptr,
                                BLOCK: tl.constexpr, MASK_SW: tl.constexpr):
    g = tl.program_id(0).to(tl.int64)
    b = tl.program_id(1).to(tl.int64)
    width = tl.load(widths_ptr + g).to(tl.int64)
    dst = inp_ptr + g * in_g + b * in_r
    if b < num_reqs:
        s = tl.load(idx_ptr + b).to(tl.int64)
        n = row_count(nb_ptr, g, s, nb_g, nb_r, width)
        src = state_ptr + g * st_g + tl.maximum(s, 0) * st_r
        num_null = 0
        if MASK_SW:
            # v0.33.0: a sliding window's columns no query of this step reaches read block 0
            num_null = swa_num_null(nc_ptr, reach_ptr, g, tl.maximum(s, 0),
                                    tl.load(ebs_ptr + g).to(tl.int64))
        gather_row(src, st_c, dst, in_c, n, num_null, BLOCK)
    else:
        zero_row(dst, in_c, width, BLOCK)


@triton.jit
def mrv2_slot(row, st_c, pos, m, live, width, kbs, kvbs, sh, CP_SIZE: tl.constexpr,
              CP_RANK: tl.constexpr, CP_INTERLEAVE: tl.constexpr, ERA: tl.constexpr,
              PAD_ID: tl.constexpr):
    """Slots (int64) of tokens at ``pos`` (lanes ``m``) that read the state row at ``row`` (``live``:
    its idx_mapping is not -1; a dead row reads the null block 0), under the release's DCP era
    (``DCP_ERAS``); PAD for a token another DCP rank stores. ``sh``: the group is DCP-sharded
    (v0.31.0; unsharded: global positions, local on every rank). A column outside ``[0, width)``
    reads block 0. ``slot_mapping_enabled`` and the idx -1 PAD are the caller's."""
    if ERA == 2:
        entry = kvbs                          # rows hold manager ids
    else:
        entry = kbs                           # rows hold kernel block ids
    if ERA == 0:
        base = kbs                            # virtual block = kernel block x CP
    else:
        base = kvbs                           # virtual block = KV block x CP
    gcol = pos // entry
    goff = pos - gcol * entry
    if CP_SIZE == 1:
        col = gcol
        off = goff
        local = m
    else:
        vbs = base * CP_SIZE
        vidx = pos // vbs
        voff = pos - vidx * vbs
        local = ((voff // CP_INTERLEAVE) % CP_SIZE) == CP_RANK
        loff = (voff // (CP_INTERLEAVE * CP_SIZE)) * CP_INTERLEAVE + voff % CP_INTERLEAVE
        if ERA == 0:
            col = vidx                    # the local offset is added as it is
            off = loff
        else:
            lp = vidx * base + loff
            col = lp // entry
            off = lp - col * entry
        col = tl.where(sh, col, gcol)
        off = tl.where(sh, off, goff)
        local = local | (sh == 0)
    ok = m & local & live & (col >= 0) & (col < width)   # past the width: block 0
    blk = tl.load(row + col * st_c, mask=ok, other=0).to(tl.int64)
    return tl.where(local, blk * entry + off, PAD_ID)


@triton.jit(do_not_specialize=["num_reqs", "max_num_tokens", "token_limit", "group_mask",
                               "enabled_mask", "sharded_mask"])
def _slot_mappings_kernel(state_ptr, st_g, st_r, st_c, widths_ptr, bs_ptr, kvbs_ptr, idx_ptr, qsl_ptr,
                          pos_ptr, out_ptr, out_g, out_t, num_reqs, max_num_tokens, token_limit,
                          group_mask, enabled_mask, sharded_mask, CP_SIZE: tl.constexpr,
                          CP_RANK: tl.constexpr, CP_INTERLEAVE: tl.constexpr, ERA: tl.constexpr,
                          PAD_UNMAPPED: tl.constexpr, PAD_ID: tl.constexpr, TILE: tl.constexpr):
    g = tl.program_id(0)
    b = tl.program_id(1)
    g64 = g.to(tl.int64)
    lanes = tl.arange(0, TILE).to(tl.int64)
    row_out = out_ptr + g64 * out_g
    if ((group_mask.to(tl.int64) >> g64) & 1) != 0:   # skipped groups: nothing written
        if b == num_reqs:
            # the extra program: the CUDA-graph tail [qsl[num_reqs], max_num_tokens)
            tail = tl.load(qsl_ptr + num_reqs).to(tl.int64)
            for i in range(tail, max_num_tokens, TILE):
                offs = i + lanes
                tl.store(row_out + offs * out_t, tl.full([TILE], PAD_ID, tl.int64),
                         mask=offs < max_num_tokens)
        else:
            start = tl.load(qsl_ptr + b).to(tl.int64)
            end = tl.load(qsl_ptr + b + 1).to(tl.int64)
            s = tl.load(idx_ptr + b).to(tl.int64)
            # idx_mapping -1: a row that owns no block (read nothing; PAD from v0.31.0)
            width = tl.load(widths_ptr + g).to(tl.int64)
            kbs = tl.load(bs_ptr + g).to(tl.int64)
            kvbs = tl.load(kvbs_ptr + g).to(tl.int64)
            enabled = ((enabled_mask.to(tl.int64) >> g64) & 1) != 0
            row = state_ptr + g64 * st_g + tl.maximum(s, 0) * st_r
            live = (lanes * 0 + s) >= 0                     # real, one lane each
            # an unsharded group (v0.31.0) uses global positions, local on every rank
            sh = (((lanes * 0 + sharded_mask.to(tl.int64)) >> g64) & 1) != 0
            for i in range(start, end, TILE):
                offs = i + lanes
                m = (offs < end) & (offs < token_limit)   # a corrupt qsl cannot write past out
                pos = tl.load(pos_ptr + offs, mask=m, other=0).to(tl.int64)
                slot = mrv2_slot(row, st_c, pos, m, live, width, kbs, kvbs, sh, CP_SIZE, CP_RANK,
                                 CP_INTERLEAVE, ERA, PAD_ID)
                if PAD_UNMAPPED:
                    slot = tl.where(live, slot, PAD_ID)
                slot = tl.where(enabled, slot, PAD_ID)
                tl.store(row_out + offs * out_t, slot, mask=m)


# --- launchers ----------------------------------------------------------------------------------

def stack_tables(tables, *, rows: int | None = None, fill: int = 0):
    """Stack per-group 2-D int32 tables ``[rows_g, W_g]`` into the ``[G, rows, Wmax]`` tensor the
    kernels take (a copy; entries past a group's own shape get ``fill``). Returns
    ``(stacked, widths)`` with ``widths`` an int32 tensor ``[G]`` on the tables' device."""
    import torch

    if not tables:
        raise ValueError("no tables to stack")
    for t in tables:
        if t.dtype != torch.int32 or t.dim() != 2:
            raise ValueError("every table must be a 2-D int32 tensor")
    rows = max(t.shape[0] for t in tables) if rows is None else int(rows)
    wmax = max(max(t.shape[1] for t in tables), 1)
    dev = tables[0].device
    out = torch.full((len(tables), rows, wmax), fill, dtype=torch.int32, device=dev)
    for g, t in enumerate(tables):
        n = min(rows, t.shape[0])
        out[g, :n, : t.shape[1]] = t[:n]
    widths = torch.tensor([t.shape[1] for t in tables], dtype=torch.int32, device=dev)
    return out, widths


_DEVICE_INTS: dict = {}      # (groups, values, device) -> the int32 tensor a list was copied to once
_DEVICE_INTS_MAX = 256


def _per_group(values, name: str, num_groups: int, device, default=None, minimum: int = 0):
    """A per-group int32 tensor [G] on ``device``: a tensor is checked and used as it is (no copy,
    so a CUDA graph can capture the launch); a sequence of ints (or the default) is checked on every
    call and copied to the device once, then reused: per-group widths and block sizes are a model's
    constants, and a copy on every launch cost ~200 us of host time and broke graph capture."""
    import torch

    if values is None:
        values = [default] * num_groups
    if isinstance(values, torch.Tensor):
        check_tensor(name, values, dtype=torch.int32, ndim=1, shape=(num_groups,), contiguous=True, device=device)
        return values
    values = [int(v) for v in values]
    if len(values) != num_groups:
        raise ValueError(f"{name}: needs {num_groups} entries (one per group), got {len(values)}")
    if any(v < minimum for v in values):
        raise ValueError(f"{name}: needs every entry >= {minimum}, got {values}")
    key = (num_groups, tuple(values), str(device))
    hit = _DEVICE_INTS.get(key)
    if hit is None:
        if len(_DEVICE_INTS) >= _DEVICE_INTS_MAX:
            _DEVICE_INTS.clear()
        hit = _DEVICE_INTS[key] = torch.tensor(values, dtype=torch.int32, device=device)
    return hit


def _check_stacked(t, name: str, device=None, written: bool = False):
    """A stacked int32 table [groups, rows, width] (stack_tables builds one), read (and ``written``)
    through all three strides: any view works, but an output's elements must not overlap."""
    import torch

    check_tensor(name, t, dtype=torch.int32, ndim=3, non_overlapping=written, device=device)


def _check_widths(widths, wmax: int):
    """Host-side bound of host-given widths (a device tensor is trusted: reading it would sync)."""
    if widths is not None and not hasattr(widths, "device"):
        for w in widths:
            if not 0 <= int(w) <= wmax:
                raise ValueError(f"widths: {int(w)} outside [0, {wmax}] (the stacked tables' width)")


def _check_idx(idx_mapping, num_reqs: int | None, device=None):
    import torch

    check_tensor("idx_mapping", idx_mapping, dtype=(torch.int32, torch.int64), ndim=1, contiguous=True,
                 device=device)
    if num_reqs is None:
        return idx_mapping.numel()
    return check_int("num_reqs", num_reqs, hi=idx_mapping.numel())


def gather_block_tables(state_tables, num_blocks, idx_mapping, num_reqs_padded: int, input_tables, *,
                        widths=None, num_reqs: int | None = None, block: int | None = None,
                        num_computed=None, sliding_window_reach=None, block_sizes=None,
                        dirty_rows: int = 0):
    """Gather the scheduled requests' state rows into the input tables, every group in one launch.

    ``state_tables`` and ``input_tables``: stacked int32 ``[G, max_num_reqs, Wmax]`` (any strides;
    the same G and Wmax); ``widths``: each group's W_g (None: all Wmax; a list of ints, or an int32
    device tensor [G]); ``num_blocks``: int32 ``[G, max_num_reqs]``; ``idx_mapping``: int32/int64
    ``[>= num_reqs]``, batch position -> state row; ``num_reqs`` defaults to its length (host ints
    only: nothing syncs). For b < num_reqs, ``input[g, b, :n]`` = ``state[g, idx_mapping[b], :n]``
    with n = clamp(num_blocks[g, idx_mapping[b]], 0, W_g), and ``input[g, b, n:]`` is left as it
    was; rows [num_reqs, num_reqs_padded) get zeros in ``[0, W_g)``; nothing else is written.

    v0.33.0 (``BlockTables.gather_block_tables``): ``dirty_rows`` (the previous gather's num_reqs)
    zeroes rows up to it too; with ``num_computed`` (int32 ``[max_num_reqs]`` by state row, the
    request's first scheduled position), ``sliding_window_reach`` ([G]: window - 1 + extra, 0 for
    other groups) and ``block_sizes`` ([G]: the tokens one row entry covers) a group's columns
    below ``max(num_computed - reach, 0) // block_size`` are written as 0. Returns
    ``input_tables``."""
    import torch

    _check_stacked(state_tables, "state_tables")
    dev = state_tables.device
    _check_stacked(input_tables, "input_tables", dev, written=True)
    n_groups, rows, wmax = state_tables.shape
    if input_tables.shape[0] != n_groups or input_tables.shape[2] != wmax:
        raise ValueError(f"input_tables: needs shape ({n_groups}, *, {wmax}) as state_tables "
                         f"{tuple(state_tables.shape)}, got {tuple(input_tables.shape)}")
    check_tensor("num_blocks", num_blocks, dtype=(torch.int32, torch.int64), ndim=2, device=dev)
    if num_blocks.shape[0] != n_groups or num_blocks.shape[1] < rows:
        raise ValueError(f"num_blocks: needs shape ({n_groups}, >= {rows}), got {tuple(num_blocks.shape)}")
    n = _check_idx(idx_mapping, num_reqs, dev)
    num_reqs_padded = check_int("num_reqs_padded", num_reqs_padded, lo=n)
    if input_tables.shape[1] < num_reqs_padded:
        raise ValueError(f"input_tables: needs at least {num_reqs_padded} rows (num_reqs_padded), got "
                         f"{tuple(input_tables.shape)}")
    num_rows = max(num_reqs_padded, min(check_int("dirty_rows", dirty_rows), input_tables.shape[1]))
    if num_rows > MAX_GRID_Y:
        raise ValueError(f"num_reqs_padded: {num_rows} rows over the grid limit {MAX_GRID_Y}")
    _check_widths(widths, wmax)
    w = _per_group(widths, "widths", n_groups, state_tables.device, default=wmax)
    mask_sw, nc, reach, ebs = _swa_args(num_computed, sliding_window_reach, block_sizes, n_groups, rows,
                                        state_tables.device, w)
    if block is None:
        block = min(max(triton.next_power_of_2(wmax), GATHER_MIN_BLOCK), GATHER_MAX_BLOCK)
    elif check_int("block", block, lo=1) & (int(block) - 1):
        raise ValueError(f"block: {block} must be a power of two")
    if n_groups == 0 or num_rows == 0:
        return input_tables
    _gather_block_tables_kernel[(n_groups, num_rows)](
        state_tables, *state_tables.stride(), input_tables, *input_tables.stride(),
        num_blocks, *num_blocks.stride(), idx_mapping, w, n, nc, reach, ebs, BLOCK=block,
        MASK_SW=mask_sw)
    return input_tables


def _swa_args(num_computed, reach, block_sizes, n_groups: int, rows: int, device, dummy):
    """(MASK_SW, num_computed, reach, block sizes) of the gather: masking only with
    ``num_computed`` and a reach (a host list with every entry 0 turns it off, as vLLM's
    ``has_sliding_window_groups``); otherwise any int32 tensor stands in for the unused ones."""
    import torch

    if num_computed is None or reach is None:
        return False, dummy, dummy, dummy
    if not isinstance(reach, torch.Tensor) and not any(int(r) > 0 for r in reach):
        return False, dummy, dummy, dummy
    if block_sizes is None:
        raise ValueError("block_sizes: sliding-window masking needs them")
    check_tensor("num_computed", num_computed, dtype=torch.int32, ndim=1, min_numel=rows, contiguous=True,
                 device=device)
    return (True, num_computed, _per_group(reach, "sliding_window_reach", n_groups, device, minimum=0),
            _per_group(block_sizes, "block_sizes", n_groups, device, minimum=1))


def _group_mask(has_slot_mapping, n_groups: int) -> int:
    if has_slot_mapping is None:
        return (1 << n_groups) - 1
    flags = [bool(f) for f in has_slot_mapping]
    if len(flags) != n_groups:
        raise ValueError(f"has_slot_mapping: needs {n_groups} entries (one per group), got {len(flags)}")
    return sum(1 << g for g, f in enumerate(flags) if f)


def _check_slot_args(state_tables, query_start_loc, positions, slot_mappings, n: int,
                     cp_size: int, cp_rank: int, cp_interleave: int):
    import torch

    _check_stacked(state_tables, "state_tables")
    dev = state_tables.device
    n_groups = state_tables.shape[0]
    if n_groups > MAX_GROUPS:
        raise ValueError(f"state_tables: {n_groups} groups, at most {MAX_GROUPS}")
    check_tensor("query_start_loc", query_start_loc, dtype=torch.int32, ndim=1, min_numel=n + 1, contiguous=True,
                 device=dev)
    check_tensor("positions", positions, dtype=torch.int64, ndim=1, contiguous=True, device=dev)
    # written through both of its strides (a row window of a larger buffer works)
    check_tensor("slot_mappings", slot_mappings, dtype=torch.int64, ndim=2, shape=(n_groups, None),
                 non_overlapping=True, device=dev)
    cp_size = check_int("cp_size", cp_size, lo=1)
    check_int("cp_rank", cp_rank, lo=0, hi=cp_size - 1)
    check_int("cp_interleave", cp_interleave, lo=1)
    if n + 1 > MAX_GRID_Y:
        raise ValueError(f"num_reqs: {n} requests, over the grid limit {MAX_GRID_Y}")


def slot_tile_config(max_query_len: int) -> tuple[int, int]:
    """(TILE, num_warps) of the slot-mapping launch for a step whose longest query has
    ``max_query_len`` tokens (a host int). One program maps a whole request, looping TILE tokens
    at a time, so a long prefill wants wide iterations: on the H200 (2026-12-01, CUDA graph, 3
    groups) 1 x 8192 tokens took 29.0 us at 128/4 and 10.5 at 512/8, 8 x 1024 4.9 against 2.5;
    short queries want small programs: 1024 x 1 3.9 us at 128/4, 9.6 at 512/4, and 64 x 128
    1.9 at 128/4, within noise of the best."""
    if int(max_query_len) >= SLOT_LONG_QUERY:
        return SLOT_LONG_TILE, SLOT_LONG_WARPS
    return SLOT_TILE, SLOT_WARPS


def compute_slot_mappings(state_tables, idx_mapping, query_start_loc, positions, block_sizes,
                          slot_mappings, *, widths=None, has_slot_mapping=None, cp_size: int = 1,
                          cp_rank: int = 0, cp_interleave: int = 1, num_reqs: int | None = None,
                          max_query_len: int | None = None, tile: int | None = None,
                          num_warps: int | None = None, dcp_era: str = "kernel_block",
                          kv_block_sizes=None, slot_mapping_enabled=None, dcp_sharded=None,
                          pad_unmapped_rows: bool = False):
    """Slot mappings of every group in one launch, read from the *state* tables.

    ``state_tables``: stacked int32 ``[G, max_num_reqs, Wmax]``; ``widths`` as in
    ``gather_block_tables``; ``block_sizes``: each group's kernel block size (list of ints, or an
    int32 device tensor [G]); ``idx_mapping``: batch position -> state row; ``query_start_loc``:
    int32 ``[>= num_reqs + 1]``; ``positions``: int64 (non-negative); ``slot_mappings``: int64
    ``[G, max_num_tokens]``, written in place and returned. ``has_slot_mapping``: one flag per
    group (None: all); a group flagged False (a Mamba state group) is skipped: its row of
    ``slot_mappings`` is left exactly as it was, tail included. Every other row gets the slots of
    tokens [0, qsl[num_reqs]) and PAD (-1) in [qsl[num_reqs], max_num_tokens). DCP:
    ``cp_size`` ranks, this one ``cp_rank``, tokens dealt out in runs of ``cp_interleave``; a token
    of another rank gets PAD. Lists are copied to the device on each call: pass tensors under a
    CUDA graph. ``max_query_len`` (host int, as vLLM's metadata has it; default: ``positions``'
    length over num_reqs, rounded up) only picks the tile and warps (``slot_tile_config``), never
    the result; ``tile`` and ``num_warps`` override them.

    Release rules (``kvviz.core.slots_v2`` states them): ``dcp_era`` "kernel_block" (to v0.28.x:
    virtual block = kernel block x CP), "kv_block" (v0.29 .. v0.31: KV block x CP, then split by
    the kernel block) or "manager_ids" (v0.32 on: rows hold manager ids, slots in KV blocks);
    ``kv_block_sizes``: each group's KV-manager block size (default: ``block_sizes``);
    ``slot_mapping_enabled`` (v0.29.0): a group flagged False gets PAD for every token;
    ``dcp_sharded`` (v0.31.0): a group flagged False uses global positions on every rank;
    ``pad_unmapped_rows`` (v0.31.0): a row whose idx_mapping is -1 gets PAD (otherwise it reads
    the null block 0: kvviz never reads outside the tables)."""
    if dcp_era not in DCP_ERAS:
        raise ValueError(f"dcp_era: {dcp_era!r} is not one of {DCP_ERAS}")
    n = _check_idx(idx_mapping, num_reqs, state_tables.device if hasattr(state_tables, "device") else None)
    cp_size, cp_rank, cp_interleave = int(cp_size), int(cp_rank), int(cp_interleave)
    _check_slot_args(state_tables, query_start_loc, positions, slot_mappings, n, cp_size, cp_rank,
                     cp_interleave)
    n_groups, _, wmax = state_tables.shape
    _check_widths(widths, wmax)
    w = _per_group(widths, "widths", n_groups, state_tables.device, default=wmax)
    bs = _per_group(block_sizes, "block_sizes", n_groups, state_tables.device, minimum=1)
    kvbs = bs if kv_block_sizes is None else _per_group(kv_block_sizes, "kv_block_sizes", n_groups,
                                                        state_tables.device, minimum=1)
    mask = _group_mask(has_slot_mapping, n_groups)
    enabled = _group_mask(slot_mapping_enabled, n_groups)
    sharded = _group_mask(dcp_sharded, n_groups)
    if max_query_len is None:
        max_query_len = -(-positions.numel() // max(n, 1))
    d_tile, d_warps = slot_tile_config(max_query_len)
    tile = d_tile if tile is None else int(tile)
    num_warps = d_warps if num_warps is None else int(num_warps)
    if tile < 16 or tile & (tile - 1):
        raise ValueError(f"tile: {tile} must be a power of two >= 16")
    max_num_tokens = slot_mappings.shape[1]
    if n_groups == 0 or mask == 0:
        return slot_mappings
    _slot_mappings_kernel[(n_groups, n + 1)](
        state_tables, *state_tables.stride(), w, bs, kvbs, idx_mapping, query_start_loc, positions,
        slot_mappings, *slot_mappings.stride(), n, max_num_tokens,
        min(max_num_tokens, positions.numel()), mask, enabled, sharded,
        CP_SIZE=cp_size, CP_RANK=cp_rank, CP_INTERLEAVE=cp_interleave,
        ERA=DCP_ERAS.index(dcp_era), PAD_UNMAPPED=bool(pad_unmapped_rows), PAD_ID=PAD_SLOT_ID,
        TILE=tile, num_warps=num_warps)
    return slot_mappings
