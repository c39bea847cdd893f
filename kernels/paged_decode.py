"""Decode attention that reads K/V back through the page table.

A row is one (request, query head) pair: the query is the request's last token, and it
attends over all ``seq_len`` cached tokens of its KV head (grouped-query: ``num_q_heads //
num_kv_heads`` query heads share one KV head). One program takes ROWS consecutive rows. Token
``n`` of a request lives in page ``table[n // page_size]`` at entry ``n % page_size``, the table
being either a block-table row (``paged_decode_block_table``) or a CSR slice
``indices[indptr[r]:indptr[r+1]]`` whose length comes from ``last_page_len``
(``paged_decode_csr``). Scores and softmax are fp32, with an online (running max) softmax over
tiles of tokens. A request with no tokens yields zeros.

The rows per program are chosen per backend (``row_tile``). Compiled on a GPU, at head dim 128
with 512 rows or more, a program takes 4 rows (1.1-1.9x faster than one row a program on the
H200); with fewer rows (long contexts of few requests, where 4-row tiles leave SMs idle) and at
other head dims, one row (BENCHMARKS.md, "Rows per program": 40 shapes; callers may pass
``row_tile``). In Triton's
CPU interpreter every program and every standard-library call (``tl.sum``, ``tl.max``) has a fixed
cost (about half a millisecond each here) while a tile's arithmetic is one numpy call: there one
program takes every row (up to MAX_ROW_TILE), so a launch is one program instead of requests x
query heads.

Optionally (``lse_out``) the kernel also writes each (request, query head)'s log-sum-exp of its
scaled scores, ``log(sum_n exp(sm_scale * q.k_n))`` in natural log, fp32: what decode context
parallelism needs to merge partial outputs computed over disjoint shards of the tokens
(``kvviz.dist``). A request with no tokens gets ``-inf`` (and its zero output), never a NaN.
"""
from __future__ import annotations

import math

import triton
import triton.language as tl

from .contracts import check_int, check_tensor
from .kv_write import _dtypes, cache_dims, cache_strides

TOKENS_PER_TILE = 32


@triton.jit
def _paged_decode_kernel(q_ptr, q_stride_r, q_stride_h, out_ptr, o_stride_r, o_stride_h,
                         cache_ptr, plane_stride, block_stride, tok_stride, head_stride,
                         table_ptr, table_stride0, table_stride1, seq_lens_ptr,
                         indptr_ptr, last_page_len_ptr, sm_scale, k_scale, v_scale,
                         lse_ptr, lse_stride_r, lse_stride_h, num_rows,
                         PAGE_SIZE: tl.constexpr, NUM_Q_HEADS: tl.constexpr, GROUP: tl.constexpr,
                         ROWS: tl.constexpr, HEAD_DIM: tl.constexpr, D_PAD: tl.constexpr,
                         BLOCK_N: tl.constexpr, CSR: tl.constexpr, STORE_LSE: tl.constexpr = False):
    row = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)   # request * NUM_Q_HEADS + query head
    rmask = row < num_rows
    r = row // NUM_Q_HEADS
    hq = row % NUM_Q_HEADS
    hkv = hq // GROUP
    if CSR:
        begin = tl.load(indptr_ptr + r, mask=rmask, other=0).to(tl.int64)
        npages = tl.load(indptr_ptr + r + 1, mask=rmask, other=0).to(tl.int64) - begin
        last = tl.load(last_page_len_ptr + r, mask=rmask, other=0).to(tl.int64)
        seq_len = tl.where(npages > 0, (npages - 1) * PAGE_SIZE + last, 0)
        pages = begin                      # each row's first page, in entries of table_ptr
        page_step = 1
    else:
        seq_len = tl.load(seq_lens_ptr + r, mask=rmask, other=0).to(tl.int64)
        pages = r * table_stride0
        page_step = table_stride1
    d = tl.arange(0, D_PAD)
    dmask = d < HEAD_DIM
    qmask = rmask[:, None] & dmask[None, :]
    q = tl.load(q_ptr + r[:, None] * q_stride_r + hq[:, None] * q_stride_h + d[None, :], mask=qmask, other=0.0)
    q = q.to(tl.float32) * sm_scale
    m_i = tl.full([ROWS], float("-inf"), tl.float32)
    l_i = tl.full([ROWS], 0.0, tl.float32)
    acc = tl.full([ROWS, D_PAD], 0.0, tl.float32)
    longest = tl.max(seq_len, axis=0)
    for n0 in range(0, longest, BLOCK_N):
        n = n0 + tl.arange(0, BLOCK_N)
        nmask = n[None, :] < seq_len[:, None]                           # [ROWS, BLOCK_N]
        page = tl.load(table_ptr + pages[:, None] + (n[None, :] // PAGE_SIZE) * page_step, mask=nmask,
                       other=0).to(tl.int64)
        base = page * block_stride + (n[None, :] % PAGE_SIZE) * tok_stride + hkv[:, None] * head_stride
        addr = base[:, :, None] + d[None, None, :]                      # [ROWS, BLOCK_N, D_PAD]
        m3 = nmask[:, :, None] & dmask[None, None, :]
        k = tl.load(cache_ptr + addr, mask=m3, other=0.0).to(tl.float32) * k_scale
        s = tl.sum(k * q[:, None, :], axis=2)
        s = tl.where(nmask, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        # a row with no token so far (a shorter request in the tile, or none): no -inf - -inf
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.exp(s - m_use[:, None])
        alpha = tl.exp(m_i - m_use)
        v = tl.load(cache_ptr + plane_stride + addr, mask=m3, other=0.0).to(tl.float32) * v_scale
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v, axis=1)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        m_i = m_new
    out = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    tl.store(out_ptr + r[:, None] * o_stride_r + hq[:, None] * o_stride_h + d[None, :], out, mask=qmask)
    if STORE_LSE:
        # m_i is -inf and l_i 0 for an empty request: -inf, with no -inf - -inf on the way
        lse = tl.where(l_i > 0, m_i + tl.log(tl.where(l_i > 0, l_i, 1.0)), float("-inf"))
        tl.store(lse_ptr + r * lse_stride_r + hq * lse_stride_h, lse, mask=rmask)


def _check_lse(lse_out, num_reqs, num_q_heads, dev):
    import torch

    # written through both of its strides: any view of the right size works
    check_tensor("lse_out", lse_out, dtype=torch.float32, ndim=2, min_shape=(num_reqs, None), device=dev,
                 non_overlapping=True, optional=True)
    if lse_out is not None and lse_out.shape[1] != num_q_heads:
        raise ValueError(f"lse_out: needs shape (>= {num_reqs}, {num_q_heads}), got {tuple(lse_out.shape)}")


MAX_ROW_TILE = 64        # (request, query head) rows one interpreted program takes at most
GPU_TILE_ROWS = 512      # compiled: from this many rows on, at head dim 128, a program takes GPU_ROW_TILE rows
GPU_ROW_TILE = 4


def row_tile(num_rows: int, device_type: str, head_dim: int | None = None) -> int:
    """(request, query head) rows per program. Compiled on a GPU: GPU_ROW_TILE at head dim 128 with at
    least GPU_TILE_ROWS rows, else 1 (the H200 sweep of 40 shapes behind it: BENCHMARKS.md, "Rows per
    program"; other head dims were not shown to gain). In the CPU interpreter all of them, as a power of
    two, at most MAX_ROW_TILE (see the module's docstring)."""
    if device_type == "cuda":
        return GPU_ROW_TILE if head_dim == 128 and num_rows >= GPU_TILE_ROWS else 1
    return min(MAX_ROW_TILE, triton.next_power_of_2(max(num_rows, 1)))


def _launch(q, cache, layout, table, t0, t1, seq_lens, indptr, last_page_len, csr, num_reqs,
            sm_scale, k_scale, v_scale, out, lse_out=None, rows=None):
    import torch

    check_tensor("cache", cache, dtype=_dtypes()[0])
    plane_s, block_s, tok_s, head_s = cache_strides(cache, layout)
    _, page_size, num_kv_heads, head_dim = cache_dims(cache, layout)
    dev = cache
    check_tensor("q", q, dtype=_dtypes()[1], ndim=3, last_contiguous=True, device=dev)
    if q.shape[2] != head_dim:
        raise ValueError(f"q: needs shape (requests, q_heads, {head_dim}), got {tuple(q.shape)}")
    num_q_heads = q.shape[1]
    if num_q_heads < 1 or num_q_heads % num_kv_heads:
        raise ValueError(f"q: {num_q_heads} query heads do not group over {num_kv_heads} KV heads")
    num_reqs = check_int("num_reqs", num_reqs, hi=q.shape[0])
    if csr:
        check_tensor("indptr", indptr, dtype=(torch.int32, torch.int64), ndim=1, min_numel=num_reqs + 1,
                     contiguous=True, device=dev)
        check_tensor("indices", table, dtype=(torch.int32, torch.int64), ndim=1, contiguous=True, device=dev)
        check_tensor("last_page_len", last_page_len, dtype=(torch.int32, torch.int64), ndim=1,
                     min_numel=num_reqs, contiguous=True, device=dev)
    else:
        # the table is read through both of its strides: any view works
        check_tensor("block_table", table, dtype=(torch.int32, torch.int64), ndim=2, min_shape=(num_reqs, None),
                     device=dev)
        check_tensor("seq_lens", seq_lens, dtype=(torch.int32, torch.int64), ndim=1, min_numel=num_reqs,
                     contiguous=True, device=dev)
    if out is None:
        out = torch.empty((num_reqs, num_q_heads, head_dim), dtype=torch.float32, device=q.device)
    else:
        # at least num_reqs rows (only those are written), through its row and head strides (a window of a
        # larger tensor works), but a unit head-dim stride: the kernel writes d at out + d
        check_tensor("out", out, dtype=torch.float32, ndim=3, min_shape=(num_reqs, num_q_heads, head_dim),
                     last_contiguous=True, non_overlapping=True, device=dev)
        if tuple(out.shape[1:]) != (num_q_heads, head_dim):
            raise ValueError(f"out: needs shape ({num_reqs}, {num_q_heads}, {head_dim}), got {tuple(out.shape)}")
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(head_dim)
    _check_lse(lse_out, num_reqs, num_q_heads, dev)
    if num_reqs == 0:
        return out
    lse = out if lse_out is None else lse_out   # a pointer the kernel never touches without STORE_LSE
    lse_strides = (0, 0) if lse_out is None else (lse_out.stride(0), lse_out.stride(1))
    num_rows = num_reqs * num_q_heads
    rows = row_tile(num_rows, q.device.type, head_dim) if rows is None else int(rows)
    if rows < 1 or rows & (rows - 1):
        raise ValueError(f"row_tile: must be a power of two, not {rows}")
    _paged_decode_kernel[(triton.cdiv(num_rows, rows),)](
        q, q.stride(0), q.stride(1), out, out.stride(0), out.stride(1),
        cache, plane_s, block_s, tok_s, head_s, table, t0, t1, seq_lens, indptr, last_page_len,
        float(sm_scale), float(k_scale), float(v_scale), lse, *lse_strides, num_rows,
        PAGE_SIZE=page_size, NUM_Q_HEADS=num_q_heads, GROUP=num_q_heads // num_kv_heads, ROWS=rows,
        HEAD_DIM=head_dim, D_PAD=triton.next_power_of_2(head_dim), BLOCK_N=TOKENS_PER_TILE, CSR=csr,
        STORE_LSE=lse_out is not None)
    return out


def paged_decode_block_table(q, cache, block_table, seq_lens, *, layout: str = "NHD", num_reqs=None,
                             sm_scale=None, k_scale: float = 1.0, v_scale: float = 1.0, out=None,
                             lse_out=None, row_tile=None):
    """q [R, Hq, D] -> fp32 [R, Hq, D]; row r of ``block_table`` and ``seq_lens[r]`` describe request r.
    ``lse_out`` (fp32 [R, Hq], optional) receives each row's log-sum-exp (-inf for an empty row).
    ``row_tile``: (request, query head) rows per program (a power of two; default: :func:`row_tile`)."""
    n = q.shape[0] if num_reqs is None else num_reqs
    return _launch(q, cache, layout, block_table, block_table.stride(0), block_table.stride(1),
                   seq_lens, seq_lens, seq_lens, False, n, sm_scale, k_scale, v_scale, out, lse_out, row_tile)


def paged_decode_csr(q, cache, indptr, indices, last_page_len, *, layout: str = "NHD", num_reqs=None,
                     sm_scale=None, k_scale: float = 1.0, v_scale: float = 1.0, out=None, lse_out=None,
                     row_tile=None):
    """Same as ``paged_decode_block_table`` with FlashInfer's CSR page table."""
    n = q.shape[0] if num_reqs is None else num_reqs
    return _launch(q, cache, layout, indices, 0, 1, last_page_len, indptr, last_page_len, True, n,
                   sm_scale, k_scale, v_scale, out, lse_out, row_tile)
