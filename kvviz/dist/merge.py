"""Merging partial decode attention across DCP ranks by log-sum-exp, and its references.

Rank ``r`` attends over its own shard of a request's tokens and returns ``o_r`` (softmax-weighted
V over the shard) and ``lse_r = log sum_{n in shard} exp(s_n)`` (``s_n`` the scaled score). The
full softmax over every token is then

    lse = log sum_r exp(lse_r)              o = sum_r exp(lse_r - lse) * o_r

so each rank rescales its own output by ``exp(lse_r - lse)`` once it has every rank's LSE (an
all-gather of ``[R, H]`` floats), and the rescaled outputs are summed (an all-reduce of
``[R, H, D]``). A rank whose shard is empty has ``lse_r = -inf``: weight 0. A row empty on every
rank (a padded row) has ``lse = -inf`` and output 0, computed without an ``inf - inf``.

``merge_factors`` is what the ranks run (torch); ``merge_reference`` (float64 numpy, normalised
weights instead of the LSE) and ``dense_decode`` (fp32 attention over an explicit token list) share
no code with it or with the kernels.
"""
from __future__ import annotations

import numpy as np

NEG_INF = float("-inf")


def merge_factors(lse_all):
    """``lse_all`` [W, R, H] (every rank's LSE) -> (lse [R, H], factors [W, R, H]) with
    ``factors[r] = exp(lse_all[r] - lse)``; rows empty on every rank get lse -inf and factor 0. A
    NaN LSE (a rank that read poison) stays NaN, so it cannot vanish in the merge."""
    import torch

    m = lse_all.amax(dim=0)
    empty = m == NEG_INF
    m0 = torch.where(empty, torch.zeros_like(m), m)
    lse = m0 + torch.log(torch.exp(lse_all - m0).sum(dim=0))
    lse = torch.where(empty, torch.full_like(m, NEG_INF), lse)
    factors = torch.exp(lse_all - torch.where(empty, torch.zeros_like(lse), lse))
    factors = torch.where(empty.unsqueeze(0), torch.zeros_like(factors), factors)
    return lse, factors


def merge_reference(outs, lses):
    """float64: outs [W, R, H, D], lses [W, R, H] -> (out [R, H, D], lse [R, H]) by normalised
    weights ``w_r = exp(lse_r - max)``; an all-empty row gives 0 and -inf."""
    outs = np.asarray(outs, dtype=np.float64)
    lses = np.asarray(lses, dtype=np.float64)
    m = lses.max(axis=0)
    empty = m == NEG_INF
    with np.errstate(invalid="ignore"):
        w = np.where(empty, 0.0, np.exp(lses - np.where(empty, 0.0, m)))
    s = w.sum(axis=0)
    out = (w[..., None] * outs).sum(axis=0) / np.where(s > 0, s, 1.0)[..., None]
    lse = np.where(empty, NEG_INF, np.where(empty, 0.0, m) + np.log(np.where(s > 0, s, 1.0)))
    return out, lse


def dense_decode(q, keys, values, token_lists, *, sm_scale: float | None = None):
    """fp32 decode attention (torch, on q's device): q [R, Hq, D]; keys/values [N, Hkv, D] hold every
    token's K/V; ``token_lists[r]`` (an index tensor, or None for none) are the tokens request r
    attends to. Returns (out [R, Hq, D], lse [R, Hq]); a request with no tokens gets 0 and -inf."""
    import torch

    q = q.float()
    num_reqs, num_q_heads, head_dim = q.shape
    group = num_q_heads // keys.shape[1]
    scale = head_dim ** -0.5 if sm_scale is None else sm_scale
    out = torch.zeros_like(q)
    lse = torch.full((num_reqs, num_q_heads), NEG_INF, dtype=torch.float32, device=q.device)
    for r in range(num_reqs):
        idx = token_lists[r] if r < len(token_lists) else None
        if idx is None or idx.numel() == 0:
            continue
        k = keys[idx].float().repeat_interleave(group, dim=1)      # [S, Hq, D]
        v = values[idx].float().repeat_interleave(group, dim=1)
        s = torch.einsum("hd,shd->hs", q[r], k) * scale
        lse[r] = torch.logsumexp(s, dim=1)
        out[r] = torch.einsum("hs,shd->hd", torch.softmax(s, dim=1), v)
    return out, lse
