"""Decode attention that reads K/V back through the page table.

One program per (request, KV head, tile of G_TILE of the query heads that share the
KV head): the query is the request's last token, and it attends over all
``seq_len`` cached tokens of its KV head (grouped-query: ``num_q_heads //
num_kv_heads`` query heads share one KV head). Token ``n`` of a request lives in
page ``table[n // page_size]`` at entry ``n % page_size``, the table being either
a block-table row (``paged_decode_block_table``) or a CSR slice
``indices[indptr[r]:indptr[r+1]]`` whose length comes from ``last_page_len``
(``paged_decode_csr``). Scores and softmax are fp32, with an online (running max)
softmax over tiles of tokens. A request with no tokens yields zeros.

The query-head tile is chosen per backend (``group_tile``). Compiled on a GPU it is 1: one program
per (request, query head), the fastest of the shapes timed on the H200 (the group as one tile
through ``tl.dot`` in IEEE fp32, padded to 16 rows, took 1.5-2.4x as long). In Triton's CPU
interpreter every program and every standard-library call (``tl.sum``, ``tl.max``) has a fixed
cost (about half a millisecond each here) while the arithmetic of a tile is one numpy call: there
the tile is the whole group (GQA 4/2: half the programs; 32/8: a quarter).

Optionally (``lse_out``) the kernel also writes each (request, query head)'s log-sum-exp of its
scaled scores, ``log(sum_n exp(sm_scale * q.k_n))`` in natural log, fp32: what decode context
parallelism needs to merge partial outputs computed over disjoint shards of the tokens
(``kvviz.dist``). A request with no tokens gets ``-inf`` (and its zero output), never a NaN.
"""
from __future__ import annotations

import math

import triton
import triton.language as tl

from .kv_write import cache_dims, cache_strides

TOKENS_PER_TILE = 32


@triton.jit
def _paged_decode_kernel(q_ptr, q_stride_r, q_stride_h, out_ptr, o_stride_r, o_stride_h,
                         cache_ptr, plane_stride, block_stride, tok_stride, head_stride,
                         table_ptr, table_stride0, table_stride1, seq_lens_ptr,
                         indptr_ptr, last_page_len_ptr, sm_scale, k_scale, v_scale,
                         lse_ptr, lse_stride_r, lse_stride_h,
                         PAGE_SIZE: tl.constexpr, GROUP: tl.constexpr, G_TILE: tl.constexpr,
                         TILES_PER_GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, D_PAD: tl.constexpr,
                         BLOCK_N: tl.constexpr, CSR: tl.constexpr, STORE_LSE: tl.constexpr = False):
    r = tl.program_id(0)
    hkv = (tl.program_id(1) // TILES_PER_GROUP).to(tl.int64)
    tile = tl.program_id(1) % TILES_PER_GROUP
    if CSR:
        begin = tl.load(indptr_ptr + r).to(tl.int64)
        npages = tl.load(indptr_ptr + r + 1).to(tl.int64) - begin
        last = tl.load(last_page_len_ptr + r).to(tl.int64)
        seq_len = tl.where(npages > 0, (npages - 1) * PAGE_SIZE + last, 0)
        pages_ptr = table_ptr + begin
        page_step = 1
    else:
        seq_len = tl.load(seq_lens_ptr + r).to(tl.int64)
        pages_ptr = table_ptr + r.to(tl.int64) * table_stride0
        page_step = table_stride1
    # this program's query heads of the KV head's group: the rows of the tile
    g = tile * G_TILE + tl.arange(0, G_TILE)
    gmask = g < GROUP
    hq = hkv * GROUP + g
    d = tl.arange(0, D_PAD)
    dmask = d < HEAD_DIM
    qmask = gmask[:, None] & dmask[None, :]
    q = tl.load(q_ptr + r.to(tl.int64) * q_stride_r + hq[:, None] * q_stride_h + d[None, :], mask=qmask, other=0.0)
    q = q.to(tl.float32) * sm_scale
    m_i = tl.full([G_TILE], float("-inf"), tl.float32)
    l_i = tl.full([G_TILE], 0.0, tl.float32)
    acc = tl.full([G_TILE, D_PAD], 0.0, tl.float32)
    for n0 in range(0, seq_len, BLOCK_N):
        n = n0 + tl.arange(0, BLOCK_N)
        nmask = n < seq_len
        page = tl.load(pages_ptr + (n // PAGE_SIZE) * page_step, mask=nmask, other=0).to(tl.int64)
        base = page * block_stride + (n % PAGE_SIZE) * tok_stride + hkv * head_stride
        addr = base[:, None] + d[None, :]
        m2 = nmask[:, None] & dmask[None, :]
        k = tl.load(cache_ptr + addr, mask=m2, other=0.0).to(tl.float32) * k_scale
        s = tl.sum(q[:, None, :] * k[None, :, :], axis=2)            # [G_TILE, BLOCK_N]
        s = tl.where(nmask[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))                  # finite: the tile has a real token
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        v = tl.load(cache_ptr + plane_stride + addr, mask=m2, other=0.0).to(tl.float32) * v_scale
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        m_i = m_new
    out = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    tl.store(out_ptr + r.to(tl.int64) * o_stride_r + hq[:, None] * o_stride_h + d[None, :], out, mask=qmask)
    if STORE_LSE:
        # m_i is -inf and l_i 0 for an empty request: -inf, with no -inf - -inf on the way
        lse = tl.where(l_i > 0, m_i + tl.log(tl.where(l_i > 0, l_i, 1.0)), float("-inf"))
        tl.store(lse_ptr + r.to(tl.int64) * lse_stride_r + hq * lse_stride_h, lse, mask=gmask)


def _check_lse(lse_out, num_reqs, num_q_heads):
    import torch

    if lse_out is None:
        return
    if lse_out.dtype != torch.float32 or lse_out.dim() != 2:
        raise ValueError("lse_out must be a 2-D float32 tensor [requests, q_heads]")
    if lse_out.shape[0] < num_reqs or lse_out.shape[1] != num_q_heads:
        raise ValueError(f"lse_out is {tuple(lse_out.shape)}, needs at least [{num_reqs}, {num_q_heads}]")


MAX_GROUP_TILE = 64      # query heads one interpreted program takes at most


def group_tile(group: int, device_type: str) -> int:
    """Query heads per program: 1 compiled on a GPU, the whole group (a power of two, at most
    MAX_GROUP_TILE) in the CPU interpreter (see the module's docstring)."""
    if device_type == "cuda":
        return 1
    return min(MAX_GROUP_TILE, triton.next_power_of_2(max(group, 1)))


def _launch(q, cache, layout, table, t0, t1, seq_lens, indptr, last_page_len, csr, num_reqs,
            sm_scale, k_scale, v_scale, out, lse_out=None, g_tile=None):
    import torch

    plane_s, block_s, tok_s, head_s = cache_strides(cache, layout)
    _, page_size, num_kv_heads, head_dim = cache_dims(cache, layout)
    if q.dim() != 3 or q.shape[2] != head_dim or q.stride(2) != 1:
        raise ValueError(f"q must be [requests, q_heads, {head_dim}] with a contiguous last dim")
    num_q_heads = q.shape[1]
    if num_q_heads % num_kv_heads:
        raise ValueError(f"{num_q_heads} query heads do not group over {num_kv_heads} KV heads")
    if out is None:
        out = torch.empty((num_reqs, num_q_heads, head_dim), dtype=torch.float32, device=q.device)
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(head_dim)
    _check_lse(lse_out, num_reqs, num_q_heads)
    if num_reqs == 0:
        return out
    lse = out if lse_out is None else lse_out   # a pointer the kernel never touches without STORE_LSE
    lse_strides = (0, 0) if lse_out is None else (lse_out.stride(0), lse_out.stride(1))
    group = num_q_heads // num_kv_heads
    g_tile = group_tile(group, q.device.type) if g_tile is None else int(g_tile)
    if g_tile < 1 or g_tile & (g_tile - 1):
        raise ValueError(f"group_tile must be a power of two, not {g_tile}")
    tiles = -(-group // g_tile)
    _paged_decode_kernel[(num_reqs, num_kv_heads * tiles)](
        q, q.stride(0), q.stride(1), out, out.stride(0), out.stride(1),
        cache, plane_s, block_s, tok_s, head_s, table, t0, t1, seq_lens, indptr, last_page_len,
        float(sm_scale), float(k_scale), float(v_scale), lse, *lse_strides,
        PAGE_SIZE=page_size, GROUP=group, G_TILE=g_tile, TILES_PER_GROUP=tiles, HEAD_DIM=head_dim,
        D_PAD=triton.next_power_of_2(head_dim), BLOCK_N=TOKENS_PER_TILE, CSR=csr,
        STORE_LSE=lse_out is not None)
    return out


def paged_decode_block_table(q, cache, block_table, seq_lens, *, layout: str = "NHD", num_reqs=None,
                             sm_scale=None, k_scale: float = 1.0, v_scale: float = 1.0, out=None,
                             lse_out=None, group_tile=None):
    """q [R, Hq, D] -> fp32 [R, Hq, D]; row r of ``block_table`` and ``seq_lens[r]`` describe request r.
    ``lse_out`` (fp32 [R, Hq], optional) receives each row's log-sum-exp (-inf for an empty row).
    ``group_tile``: query heads per program (a power of two; default: :func:`group_tile`)."""
    n = q.shape[0] if num_reqs is None else num_reqs
    return _launch(q, cache, layout, block_table, block_table.stride(0), block_table.stride(1),
                   seq_lens, seq_lens, seq_lens, False, n, sm_scale, k_scale, v_scale, out, lse_out, group_tile)


def paged_decode_csr(q, cache, indptr, indices, last_page_len, *, layout: str = "NHD", num_reqs=None,
                     sm_scale=None, k_scale: float = 1.0, v_scale: float = 1.0, out=None, lse_out=None,
                     group_tile=None):
    """Same as ``paged_decode_block_table`` with FlashInfer's CSR page table."""
    n = q.shape[0] if num_reqs is None else num_reqs
    return _launch(q, cache, layout, indices, 0, 1, last_page_len, indptr, last_page_len, True, n,
                   sm_scale, k_scale, v_scale, out, lse_out, group_tile)
