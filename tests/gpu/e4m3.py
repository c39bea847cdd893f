"""An independent model of float8 e4m3fn (the fp8 KV cache format), from the bit layout alone.

1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0 is subnormal (m/8 * 2^-6); no
infinities; S.1111.111 is NaN, so the largest finite value is 1.75 * 2^8 = 448. Nothing here calls
torch's or Triton's fp8 cast: the kernel tests compare both against this.
"""
from __future__ import annotations

import numpy as np


def decode(byte: int) -> float:
    sign = -1.0 if byte & 0x80 else 1.0
    exp, man = (byte >> 3) & 0xF, byte & 0x7
    if exp == 0xF and man == 0x7:
        return float("nan")
    if exp == 0:
        return sign * (man / 8) * 2.0 ** -6
    return sign * (1 + man / 8) * 2.0 ** (exp - 7)


TABLE = np.array([decode(b) for b in range(256)])
FINITE = np.array([b for b in range(256) if not np.isnan(TABLE[b])])
FP8_MAX = 448.0


def quantise(x: np.ndarray, scale: float) -> np.ndarray:
    """Bytes of clamp(x / scale, -448, 448) rounded to the nearest e4m3 value, ties to the even
    mantissa (IEEE round-to-nearest-even), as vLLM's KV write stores it."""
    q = np.clip(np.asarray(x, dtype=np.float64) / scale, -FP8_MAX, FP8_MAX)
    vals = TABLE[FINITE]
    dist = np.abs(q[..., None] - vals)
    best = dist.min(axis=-1, keepdims=True)
    tied = dist == best
    # among equally near codes prefer the even mantissa; +0 over -0 for a zero result
    pref = np.where(tied, (FINITE & 1) * 2 + (FINITE >> 7), 99)
    code = FINITE[np.argmin(pref, axis=-1)]
    neg_zero = (code == 0) & np.signbit(q)   # a negative quotient (or -0) that rounds to zero keeps its sign
    return np.where(neg_zero, 0x80, code).astype(np.uint8)
