"""Plain references for the KV write and for decode attention.

Independent of the kernels: the write is a loop over tokens on CPU tensors, the
attention is dense float64 numpy over the K/V each request really has.
"""
from __future__ import annotations

import numpy as np

from kvviz.constants import PAD_SLOT_ID


FP8_E4M3_MAX = 448.0


def quantize_fp8(x, scale: float):
    """What an fp8 (e4m3) cache stores for ``x``, as vLLM's cache kernel computes it: ``x / scale``
    in fp32, saturated to e4m3's finite range (+-448), rounded to nearest e4m3."""
    import torch

    y = x.to(torch.float32) / torch.tensor(scale, dtype=torch.float32)
    return y.clamp(-FP8_E4M3_MAX, FP8_E4M3_MAX).to(torch.float8_e4m3fn)


def kv_write_ref(cache, key, value, slot_mapping, *, layout: str = "NHD",
                 k_scale: float = 1.0, v_scale: float = 1.0):
    """Write token by token into a CPU copy of ``cache`` (returned). PAD slots, and slots
    outside the cache, are skipped (the kernel's bound guard)."""
    cache = cache.detach().cpu().clone()
    key = key.detach().cpu()
    value = value.detach().cpu()
    slots = [int(s) for s in slot_mapping.detach().cpu().tolist()]
    block_size = cache.shape[2] if layout == "NHD" else cache.shape[3]
    if cache.dtype != key.dtype:  # fp8 cache fed wider K/V
        key = quantize_fp8(key[: len(slots)], k_scale)
        value = quantize_fp8(value[: len(slots)], v_scale)
    for t, slot in enumerate(slots):
        block, off = divmod(slot, block_size)
        if slot == PAD_SLOT_ID or slot < 0 or block >= cache.shape[1]:
            continue
        for plane, src in ((0, key), (1, value)):
            if layout == "NHD":
                cache[plane, block, off] = src[t]
            else:
                cache[plane, block, :, off] = src[t]
    return cache


def decode_attention_ref(q, keys, values, *, sm_scale: float | None = None) -> np.ndarray:
    """Dense decode attention in float64.

    q: [R, Hq, D]; keys[r], values[r]: [S_r, Hkv, D] (S_r may be 0: the output row is 0).
    Query head h uses KV head h // (Hq // Hkv)."""
    q = np.asarray(q, dtype=np.float64)
    num_reqs, num_q_heads, head_dim = q.shape
    scale = 1.0 / np.sqrt(head_dim) if sm_scale is None else sm_scale
    out = np.zeros_like(q)
    for r in range(num_reqs):
        k = np.asarray(keys[r], dtype=np.float64)
        v = np.asarray(values[r], dtype=np.float64)
        if k.shape[0] == 0:
            continue
        group = num_q_heads // k.shape[1]
        for h in range(num_q_heads):
            s = k[:, h // group, :] @ q[r, h] * scale
            p = np.exp(s - s.max())
            out[r, h] = (p / p.sum()) @ v[:, h // group, :]
    return out
