"""KV write (reshape-and-cache): scatter each token's new K and V into the paged cache.

The cache is one tensor with the K plane first, NHD ``[2, N, B, H, D]`` or HND
``[2, N, H, B, D]``; the launcher reads its strides, so either layout (or any
other stride order) works. A token whose slot is PAD (-1) writes nothing. The
number of tokens is the slot mapping's length, not the key's: the key may be
padded past it. A slot outside the cache (negative, or past its last slot) writes
nothing either: vLLM's kernel would scatter out of bounds there, and here the
interpreter runs inside the app's process, where such a write corrupts memory
instead of raising. An fp8 (e4m3) cache takes K and V each either already fp8 (a byte
copy) or fp16/bf16/fp32 that the kernel divides by its scale, saturates to +-448 and casts: each by its
own dtype, so an fp8 key with an fp16 value copies K and quantises V. A 16/32-bit cache takes K and V
of its own dtype only (anything else is refused, naming the argument).
Triton's CPU interpreter casts fp32 -> e4m3 with the wrong rounding for some values (triton 3.9:
1.959 -> 1.0), so a caller that needs exact fp8 bytes there quantises first and passes fp8 K/V
(kvviz's harness does; the kernel tests check the kernel's own branch on values the interpreter
rounds right).
"""
from __future__ import annotations

import triton
import triton.language as tl

from .contracts import check_int, check_tensor

# ~1024 elements a program (one token of 8 heads x 128; more tokens when a row is shorter), 4 warps:
# 8 elements a thread. Swept on the H200 (2026-12-02, scripts/kv_write_fused_gpu.py sweep: 1-32 tokens a
# program x 4/8 warps, every dtype x layout, 65536 tokens): one token a program was the fastest or
# within 0.5% of it everywhere; the old 4 tokens cost 2% for fp16/bf16/fp32 and 17% for an fp8 cache
# fed fp16 (its fp32 divide and clamp of 32 elements a thread took 88 registers: 31% occupancy).
ELEMS_PER_PROGRAM = 1024
MAX_TOKENS_PER_PROGRAM = 32
MAX_ELEMS_PER_PROGRAM = 1024
WARPS = 4


@triton.jit(do_not_specialize=["num_tokens", "num_slots"])
def _kv_write_kernel(key_ptr, value_ptr, k_stride_t, k_stride_h, v_stride_t, v_stride_h,
                     cache_ptr, plane_stride, block_stride, tok_stride, head_stride,
                     slot_ptr, num_tokens, num_slots, k_scale, v_scale,
                     BLOCK_SIZE: tl.constexpr, HEAD_DIM: tl.constexpr, NUM_HEADS: tl.constexpr,
                     TOK_TILE: tl.constexpr, ELEM_TILE: tl.constexpr, QUANT_K: tl.constexpr,
                     QUANT_V: tl.constexpr, FP8_MAX: tl.constexpr = 448.0):
    t = tl.program_id(0).to(tl.int64) * TOK_TILE + tl.arange(0, TOK_TILE)
    e = tl.program_id(1) * ELEM_TILE + tl.arange(0, ELEM_TILE)
    head = (e // HEAD_DIM).to(tl.int64)
    dim = (e % HEAD_DIM).to(tl.int64)
    slot = tl.load(slot_ptr + t, mask=t < num_tokens, other=-1).to(tl.int64)
    keep = (slot >= 0) & (slot < num_slots)
    block = slot // BLOCK_SIZE
    off = slot % BLOCK_SIZE
    # K/V are read under the token bound alone, not the slot's: their loads do not wait for the
    # slot's (one DRAM round trip instead of two in a row); a PAD token's row is read, not written
    inb = (e < NUM_HEADS * HEAD_DIM)[None, :]
    lm = (t < num_tokens)[:, None] & inb
    m = keep[:, None] & inb
    dst = (block * block_stride + off * tok_stride)[:, None] + (head * head_stride + dim)[None, :]
    k = tl.load(key_ptr + (t * k_stride_t)[:, None] + (head * k_stride_h + dim)[None, :], mask=lm)
    v = tl.load(value_ptr + (t * v_stride_t)[:, None] + (head * v_stride_h + dim)[None, :], mask=lm)
    # as vLLM: x / scale (IEEE division), saturated to e4m3's finite range; K and V each by its own
    # dtype (one already in the cache's dtype is copied as it is)
    if QUANT_K:
        k = tl.clamp(tl.math.div_rn(k.to(tl.float32), k_scale), -FP8_MAX, FP8_MAX)
    if QUANT_V:
        v = tl.clamp(tl.math.div_rn(v.to(tl.float32), v_scale), -FP8_MAX, FP8_MAX)
    tl.store(cache_ptr + dst, k.to(cache_ptr.dtype.element_ty), mask=m)
    tl.store(cache_ptr + plane_stride + dst, v.to(cache_ptr.dtype.element_ty), mask=m)


def _name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def _dtypes():
    """(cache dtypes, dtypes an fp8 cache quantises)."""
    import torch

    return ((torch.float16, torch.bfloat16, torch.float32, torch.float8_e4m3fn),
            (torch.float16, torch.bfloat16, torch.float32))


def cache_strides(cache, layout: str):
    """(plane, block, token-in-block, head) element strides of a 5-D cache."""
    check_tensor("cache", cache, ndim=5, last_contiguous=True)
    if cache.shape[0] != 2:
        raise ValueError(f"cache: needs the K/V plane first, shape (2, *, *, *, *), got {tuple(cache.shape)}")
    s = cache.stride()
    if layout == "NHD":
        return s[0], s[1], s[2], s[3]
    if layout == "HND":
        return s[0], s[1], s[3], s[2]
    raise ValueError(f"layout: needs 'NHD' or 'HND', got {layout!r}")


def cache_dims(cache, layout: str):
    """(num_blocks, block_size, num_heads, head_dim)."""
    _, n, a, b, d = cache.shape
    return (n, a, b, d) if layout == "NHD" else (n, b, a, d)


def kv_config(hd: int, tokens_per_program: int | None = None) -> tuple[int, int]:
    """(tokens, elements) one program writes: a whole token row (up to 1024 elements) and, by
    default, as many tokens as make about ``ELEMS_PER_PROGRAM`` elements. Never changes the result."""
    elem_tile = min(triton.next_power_of_2(hd), MAX_ELEMS_PER_PROGRAM)
    if tokens_per_program is None:
        tokens_per_program = ELEMS_PER_PROGRAM // elem_tile
    tok = max(1, min(triton.next_power_of_2(int(tokens_per_program)), MAX_TOKENS_PER_PROGRAM))
    return tok, elem_tile


def kv_write(key, value, cache, slot_mapping, *, layout: str = "NHD",
             k_scale: float = 1.0, v_scale: float = 1.0, tokens_per_program: int | None = None,
             num_warps: int | None = None):
    """Write ``key``/``value`` [T', H, D] (T' >= len(slot_mapping)) into ``cache`` in place.
    ``tokens_per_program`` / ``num_warps``: tuning knobs (``kv_config``); the result is the same."""
    import torch

    cache_dtypes, quant_dtypes = _dtypes()
    check_tensor("cache", cache, dtype=cache_dtypes)
    plane_s, block_s, tok_s, head_s = cache_strides(cache, layout)
    num_blocks, block_size, num_heads, head_dim = cache_dims(cache, layout)
    check_tensor("slot_mapping", slot_mapping, dtype=torch.int64, ndim=1, contiguous=True, device=cache)
    num_tokens = slot_mapping.numel()
    quant = {}
    for name, x, scale in (("key", key, k_scale), ("value", value, v_scale)):
        check_tensor(name, x, ndim=3, last_contiguous=True, device=cache)
        if tuple(x.shape[1:]) != (num_heads, head_dim) or x.shape[0] < num_tokens:
            raise ValueError(f"{name}: needs shape (>= {num_tokens}, {num_heads}, {head_dim}), got {tuple(x.shape)}")
        quant[name] = x.dtype != cache.dtype
        if quant[name] and (cache.dtype != torch.float8_e4m3fn or x.dtype not in quant_dtypes):
            extra = " (or float16/bfloat16/float32, quantised)" if cache.dtype == torch.float8_e4m3fn else ""
            raise ValueError(f"{name}: a {_name(cache.dtype)} cache needs {_name(cache.dtype)} {name}s{extra}, "
                             f"got {_name(x.dtype)}")
        if quant[name] and not float(scale) > 0:
            raise ValueError(f"{'k' if name == 'key' else 'v'}_scale: needs > 0 to quantise {name}, got {scale}")
    if num_tokens == 0:
        return cache
    hd = num_heads * head_dim
    tok_tile, elem_tile = kv_config(hd, tokens_per_program)
    grid = (triton.cdiv(num_tokens, tok_tile), triton.cdiv(hd, elem_tile))
    _kv_write_kernel[grid](
        key, value, key.stride(0), key.stride(1), value.stride(0), value.stride(1),
        cache, plane_s, block_s, tok_s, head_s, slot_mapping, num_tokens, num_blocks * block_size,
        float(k_scale), float(v_scale),
        BLOCK_SIZE=block_size, HEAD_DIM=head_dim, NUM_HEADS=num_heads,
        TOK_TILE=tok_tile, ELEM_TILE=elem_tile, QUANT_K=quant["key"], QUANT_V=quant["value"], num_warps=WARPS if num_warps is None else int(num_warps))
    return cache
