"""One DCP rank's work, inside an initialised process group (``kvviz.dist.launch`` sets it up).

Every rank:

1. builds its tables (``plan.rank_tables``): the shared block table, its slot mapping (-1 for the
   other ranks' tokens) and its local ``seq_lens``;
2. runs kvviz's Triton slot-mapping kernel on the context and on the step (checked exactly against
   the core's arrays) and the KV-write kernel into its *own* cache, a tensor of random bytes (NaNs
   included, so a position read but never written cannot pass), from K/V values every rank draws
   from the same seed;
3. runs the paged decode kernel over its local tokens, with its LSE, checked against fp32 dense
   attention over exactly the tokens it owns;
4. all-gathers the LSEs, rescales its output by ``exp(lse_r - lse)`` and all-reduces (sum).

Rank 0 then compares the merged output with dense attention over every token, checks that the
ranks' non -1 slots together store every position exactly once, and builds the report.
"""
from __future__ import annotations

import os
import signal
import statistics
import time

import numpy as np

from kvviz.dist import plan
from kvviz.dist.merge import NEG_INF, dense_decode, merge_factors

STATS = ("tokens_held", "bytes_written", "slot_mapping_us", "kv_write_us", "partial_attention_us",
         "all_gather_lse_us", "all_reduce_out_us", "partial_max_error", "lse_max_error", "empty_shards",
         "slot_mapping_exact", "slots_distinct", "tokens_held_match")
FAULT_ENV = "KVVIZ_DCP_FAULT"   # test hook, "kill:RANK:STAGE": that rank SIGKILLs itself at STAGE
STAGES = ("tables", "kv_write", "partial_attention", "merge", "check")   # what ``progress`` reports, in order
MAX_DETAIL_REQS = 64            # the report lists per-request LSEs up to this many requests
# set by the launcher in a spawned rank: called with each stage as the rank enters it (the parent
# shows it as progress); None (torchrun, or a plain call) reports nothing
progress = None


def _progress(stage: str) -> None:
    if progress is not None:
        try:
            progress(stage)
        except (OSError, ValueError):   # the parent has gone: the rank dies with it anyway
            pass


def fault_point(rank: int, stage: str) -> None:
    """Die here (SIGKILL, no clean-up) when KVVIZ_DCP_FAULT names this rank and stage: how the tests
    check that a rank lost in the middle of a collective takes the whole group down."""
    spec = os.environ.get(FAULT_ENV, "")
    if spec == f"kill:{rank}:{stage}":
        os.kill(os.getpid(), signal.SIGKILL)


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _call_and_time(call, device) -> float:
    """Run ``call``; its µs: on a GPU the median of event-timed repeats (``time_us``), in the
    interpreter the wall time of this one call (calling it again would only double a slow run)."""
    from kvviz.gpu.device import time_us

    if device.type != "cuda":
        t0 = time.perf_counter()
        call()
        return (time.perf_counter() - t0) * 1e6
    call()
    _sync(device)
    return time_us(call)


def _max_err(got, want) -> float:
    """max |got - want|, -inf == -inf counted equal, any NaN as inf."""
    import torch

    if got.numel() == 0:
        return 0.0
    d = (got.double() - want.double()).abs()
    d = torch.where((got == NEG_INF) & (want == NEG_INF), torch.zeros_like(d), d)
    return float(torch.nan_to_num(d, nan=float("inf")).max())


def _poison(shape_or_n, dtype, gen, device):
    """Random bit patterns of ``dtype`` (floats include NaNs and infs)."""
    import torch

    n = int(np.prod(shape_or_n))
    item = torch.empty(0, dtype=dtype).element_size()
    raw = torch.randint(0, 256, (n * item,), dtype=torch.uint8, generator=gen, device=device)
    return raw.view(dtype).reshape(shape_or_n)


class _Shared:
    """The values every rank draws from the same seed: q [R_pad, Hq, D] fp32 and K/V of every
    position [N, Hkv, D] in the cache dtype (what the cache stores, so the references read the same)."""

    def __init__(self, cfg: plan.DcpConfig, tables: plan.RankTables, device):
        import torch

        gen = torch.Generator().manual_seed(cfg.seed)
        dt = getattr(torch, cfg.dtype)
        rows = tables.step.num_reqs_padded
        self.q = torch.randn((rows, cfg.num_q_heads, cfg.head_dim), generator=gen).to(device)
        kv_shape = (tables.total_positions, cfg.num_kv_heads, cfg.head_dim)
        self.k = torch.randn(kv_shape, generator=gen).to(dt).to(device)
        self.v = torch.randn(kv_shape, generator=gen).to(dt).to(device)
        pad = tables.step.num_tokens_padded - tables.step.num_tokens
        self.tail = (torch.randn((pad, cfg.num_kv_heads, cfg.head_dim), generator=gen) * 100).to(dt).to(device)


def _slot_mapping(step, device, gen):
    """The slot-mapping kernel (the design kvviz picks for the step) on ``step`` into a poisoned
    buffer; (slots on the device, exact?, µs)."""
    import torch
    from kvviz_kernels.slot_mapping import slot_mapping
    from kvviz.gpu.harness import max_query_len

    out = _poison((max(step.num_tokens_padded, 1),), torch.int64, gen, device)[: step.num_tokens_padded]
    if step.num_tokens_padded == 0:
        return out, True, 0.0
    qsl, pos, bt = (torch.from_numpy(np.ascontiguousarray(a)).to(device)
                    for a in (step.query_start_loc, step.positions, step.block_table))
    kw = dict(num_reqs=step.num_reqs, block_size=step.block_size, max_query_len=max_query_len(step),
              kernel_block_size=step.kernel_block_size, num_tokens_padded=step.num_tokens_padded,
              dcp_world_size=step.dcp_world_size, dcp_rank=step.dcp_rank, interleave=step.interleave, out=out)
    us = _call_and_time(lambda: slot_mapping(qsl, pos, bt, **kw), device)
    _sync(device)
    return out, bool(np.array_equal(out.cpu().numpy(), step.slot_mapping)), us


def _write_cache(cfg, tables, shared, device, gen):
    """Slot mapping + KV write of the context, then of the step, into this rank's own poisoned
    cache. Returns (cache, every non -1 slot's shared index and slot, stats)."""
    import torch
    from kvviz_kernels.kv_write import kv_write

    cache = _poison(plan.cache_geometry(cfg, tables.step).shape, getattr(torch, cfg.dtype), gen, device)
    ctx_slots, ctx_ok, _ = _slot_mapping(tables.context, device, gen)
    step_slots, step_ok, slot_us = _slot_mapping(tables.step, device, gen)
    ctx_idx = torch.from_numpy(tables.context_index).to(device)
    step_idx = torch.from_numpy(tables.step_index).to(device)
    if ctx_idx.numel():
        kv_write(shared.k[ctx_idx], shared.v[ctx_idx], cache, ctx_slots, layout=cfg.layout)
    k_step = torch.cat([shared.k[step_idx], shared.tail])
    v_step = torch.cat([shared.v[step_idx], shared.tail])
    kvw_us = _call_and_time(lambda: kv_write(k_step, v_step, cache, step_slots, layout=cfg.layout), device)
    _sync(device)
    n = tables.step.num_tokens
    slots = torch.cat([ctx_slots, step_slots[:n]])
    index = torch.cat([ctx_idx, step_idx])
    mine = slots != -1
    held = int(mine.sum())
    per_token = 2 * cfg.num_kv_heads * cfg.head_dim * cache.element_size()
    stats = {"tokens_held": held, "bytes_written": held * per_token, "slot_mapping_us": slot_us,
             "kv_write_us": kvw_us, "slot_mapping_exact": ctx_ok and step_ok,
             "slots_distinct": int(torch.unique(slots[mine]).numel()) == held,
             "tokens_held_match": held == int(tables.local_seq_lens.astype(np.int64).sum())}
    return cache, index[mine], stats


def _token_lists(tables: plan.RankTables, device, owned_index=None):
    """Per request row, the shared indices of its tokens: every one, or those in ``owned_index``."""
    import torch

    lists = []
    keep = None
    if owned_index is not None:
        keep = torch.zeros(tables.total_positions, dtype=torch.bool, device=device)
        keep[owned_index] = True
    for r in range(tables.step.num_reqs):
        idx = torch.arange(int(tables.seq_start[r]), int(tables.seq_start[r + 1]), device=device)
        lists.append(idx if keep is None else idx[keep[idx]])
    return lists


def _partial(cfg, tables, shared, cache, owned, device, gen):
    """Paged decode over this rank's tokens (poisoned out/LSE buffers) and its check against dense
    fp32 attention over the same tokens. (out, lse, stats)."""
    import torch
    from kvviz_kernels.paged_decode import paged_decode_block_table

    rows = tables.step.num_reqs_padded
    out = _poison((rows, cfg.num_q_heads, cfg.head_dim), torch.float32, gen, device)
    lse = _poison((rows, cfg.num_q_heads), torch.float32, gen, device)
    bt = torch.from_numpy(np.ascontiguousarray(tables.step.block_table)).to(device)
    seq = torch.from_numpy(np.ascontiguousarray(tables.local_seq_lens, dtype=np.int32)).to(device)
    call = lambda: paged_decode_block_table(shared.q, cache, bt, seq, layout=cfg.layout,  # noqa: E731
                                            out=out, lse_out=lse)
    attn_us = _call_and_time(call, device)
    _sync(device)
    want_out, want_lse = dense_decode(shared.q, shared.k, shared.v, _token_lists(tables, device, owned))
    stats = {"partial_attention_us": attn_us, "partial_max_error": _max_err(out, want_out),
             "lse_max_error": _max_err(lse, want_lse),
             "empty_shards": int((tables.local_seq_lens[: tables.step.num_reqs] == 0).sum())}
    return out, lse, stats


def _timed(op, repeat: int, device) -> float:
    """Median µs of ``op`` (a collective), the ranks lined up by a barrier before each call."""
    import torch.distributed as dist

    times = []
    for _ in range(max(repeat, 1)):
        dist.barrier()
        _sync(device)
        t0 = time.perf_counter()
        op()
        _sync(device)
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def _merge(cfg, rank, out, lse, device):
    """All-gather the LSEs, rescale, all-reduce. (merged out, merged lse, stats)."""
    import torch
    import torch.distributed as dist

    parts = [torch.empty_like(lse) for _ in range(cfg.world)]
    fault_point(rank, "all_gather")
    ag_us = _timed(lambda: dist.all_gather(parts, lse), cfg.repeat, device)
    lse_total, factors = merge_factors(torch.stack(parts))
    scaled = out * factors[rank].unsqueeze(-1)
    merged = torch.empty_like(scaled)

    def all_reduce():
        merged.copy_(scaled)
        dist.all_reduce(merged, op=dist.ReduceOp.SUM)

    fault_point(rank, "all_reduce")
    ar_us = _timed(all_reduce, cfg.repeat, device)
    return merged, lse_total, factors, torch.stack(parts), {"all_gather_lse_us": ag_us, "all_reduce_out_us": ar_us}


def _lse_detail(tables: plan.RankTables, lse_all, lse_total, factors) -> dict | None:
    """Query head 0 of each request: every rank's LSE, its weight ``exp(lse_r - lse)`` in the merge,
    and the merged LSE (JSON-safe: -inf as a string); None past MAX_DETAIL_REQS requests."""
    from kvviz.dist.report import _num

    n = tables.step.num_reqs
    if n > MAX_DETAIL_REQS:
        return None
    rows = lambda t: [[_num(float(x)) for x in r] for r in t[:, :n, 0].cpu().tolist()]  # noqa: E731
    return {"head": 0, "rank_lse": rows(lse_all), "rank_weight": rows(factors),
            "merged_lse": [_num(float(x)) for x in lse_total[:n, 0].cpu().tolist()]}


def run_rank(cfg: plan.DcpConfig, norm: dict, rank: int, device) -> dict | None:
    """This rank's part; rank 0 returns the report (the other ranks None)."""
    import torch
    import torch.distributed as dist

    fault_point(rank, "start")
    _progress("tables")
    tables = plan.rank_tables(norm, rank)
    gen = torch.Generator(device=device).manual_seed(cfg.seed * 1009 + rank + 1)
    shared = _Shared(cfg, tables, device)
    _progress("kv_write")
    cache, owned, stats = _write_cache(cfg, tables, shared, device, gen)
    _progress("partial_attention")
    out, lse, more = _partial(cfg, tables, shared, cache, owned, device, gen)
    stats.update(more)
    _progress("merge")
    merged, merged_lse, factors, lse_all, more = _merge(cfg, rank, out, lse, device)
    stats.update(more)
    _progress("check")
    counts = torch.zeros(tables.total_positions, dtype=torch.int32, device=device)
    counts[owned] = 1
    dist.all_reduce(counts, op=dist.ReduceOp.SUM)
    mine = torch.tensor([float(stats[k]) for k in STATS], dtype=torch.float64, device=device)
    every = [torch.empty_like(mine) for _ in range(cfg.world)]
    dist.all_gather(every, mine)
    if rank != 0:
        return None
    from kvviz.dist.report import build_report

    want_out, want_lse = dense_decode(shared.q, shared.k, shared.v, _token_lists(tables, device))
    merged_err = {"merged_max_error": _max_err(merged, want_out), "merged_lse_max_error": _max_err(merged_lse, want_lse),
                  "positions_stored_once": bool((counts == 1).all()),
                  "positions_not_stored": int((counts == 0).sum()), "positions_stored_twice": int((counts > 1).sum())}
    per_rank = [dict(zip(STATS, t.cpu().tolist())) for t in every]
    merged_err["lse_detail"] = _lse_detail(tables, lse_all, merged_lse, factors)
    return build_report(cfg, tables, per_rank, merged_err)
