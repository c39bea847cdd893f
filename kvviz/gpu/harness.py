"""The live backend: run the Triton kernels on a step's tables and check every output.

On a CUDA GPU the kernels run compiled; without one they run in Triton's CPU
interpreter. Every result carries a label saying which (device, mode, Triton
and torch versions), and every kernel output is compared with a reference
that shares no code with the kernels: exact for indices and cache bytes, a
tolerance for attention. A mismatch is reported, never smoothed over.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kvviz import reference
from kvviz.gpu.attention_ref import decode_attention_ref, kv_write_ref, quantize_fp8
from kvviz.constants import PAD_SLOT_ID
from kvviz.gpu.device import device_label, label_string, sync, time_us, torch_device
from kvviz.core.geometry import Geometry
from kvviz.core.step import StepInputs
from kvviz.gpu.kernel_results import (  # noqa: F401 - handed on: callers take them from the harness
    BackendResult, KernelMismatch, KernelResult, detail_text)

DTYPES = ("float16", "bfloat16", "fp8")
LAYOUTS = ("NHD", "HND")
ATTN_ATOL = 2e-3
ATTN_RTOL = 2e-3
LOOP_REFERENCE_MAX_TOKENS = 20000
MAX_CACHE_BYTES = {"cuda": 8 << 30, "cpu": 512 << 20}


def _exact(name: str, got: np.ndarray, want: np.ndarray, what: str, us=None) -> KernelResult:
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return KernelResult(name, False, float("inf"),
                            f"MISMATCH: {what}: shape {got.shape} != reference {want.shape}", us, got)
    bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
    if len(bad) == 0:
        return KernelResult(name, True, 0.0, f"{what}: {got.size} entries identical", us, got)
    g, w = got.reshape(-1), want.reshape(-1)
    first = ", ".join(f"[{i}] {g[i]} != {w[i]}" for i in bad[:5])
    err = float(np.max(np.abs(g[bad].astype(np.float64) - w[bad].astype(np.float64))))
    return KernelResult(name, False, err,
                        f"MISMATCH: {what}: {len(bad)} of {got.size} entries differ: {first}", us, got)


def _raise_on(results: list[KernelResult]) -> None:
    bad = [r for r in results if not r.passed]
    if bad:
        lines = "\n".join(f"  {r.name}: {r.detail}" for r in bad)
        raise KernelMismatch(f"KERNEL MISMATCH on {label_string()}:\n{lines}")


# --- the two index kernels (also what `kvviz compute --backend triton` runs) -----------------

def _dev_tables(step: StepInputs):
    import torch

    dev = torch_device()
    return (dev, torch.from_numpy(np.ascontiguousarray(step.query_start_loc)).to(dev),
            torch.from_numpy(np.ascontiguousarray(step.positions)).to(dev),
            torch.from_numpy(np.ascontiguousarray(step.block_table)).to(dev))


def _poison(n: int, dtype, dev):
    import torch

    gen = torch.Generator().manual_seed(n * 7919 + 1)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, (max(n, 1),), dtype=dtype, generator=gen)[:n].to(dev)


# The design whose output feeds the KV write in run_batch (all three are run and checked on
# every step). "auto": kernels.slot_mapping.choose_slot_mapping_design picks flat or grid2d per
# step from host-known sizes (flat for one request or a long prefill over at most 8, grid2d
# otherwise; the H200 sweep of 2026-11-30 behind it is in BENCHMARKS.md, "Tuning (2026-11-30)").
# A design name ("flat", "grid2d", "per-request") pins that design instead.
STEP_SLOTS_DESIGN = "auto"


def step_slots_design(step: StepInputs) -> str:
    """The design whose output run_batch feeds to the KV write for ``step``."""
    if STEP_SLOTS_DESIGN != "auto":
        return STEP_SLOTS_DESIGN
    from kvviz_kernels.slot_mapping import choose_slot_mapping_design

    return choose_slot_mapping_design(step.num_reqs, step.num_tokens_padded, max_query_len(step))


def max_query_len(step: StepInputs) -> int:
    """The longest query of the step, from the host query_start_loc (vLLM's attention metadata
    carries it; nothing is read back from the device)."""
    q = np.diff(np.asarray(step.query_start_loc[: step.num_reqs + 1], dtype=np.int64))
    return int(q.max()) if len(q) else 0


def run_slot_mapping(step: StepInputs, *, timing: bool = False, want: np.ndarray | None = None):
    """The three slot-mapping designs on the step; [KernelResult per design], named
    slot_mapping[per-request], slot_mapping[flat], slot_mapping[grid2d]."""
    from kvviz_kernels.slot_mapping import slot_mapping_flat, slot_mapping_grid2d, slot_mapping_per_request
    import torch

    dev, qsl, pos, bt = _dev_tables(step)
    kw = dict(num_reqs=step.num_reqs, block_size=step.block_size,
              kernel_block_size=step.kernel_block_size, num_tokens_padded=step.num_tokens_padded,
              dcp_world_size=step.dcp_world_size, dcp_rank=step.dcp_rank, interleave=step.interleave)
    if want is None:
        want = step.slot_mapping
    out = []
    for name, fn, extra in (("slot_mapping[per-request]", slot_mapping_per_request, {}),
                            ("slot_mapping[flat]", slot_mapping_flat, {}),
                            ("slot_mapping[grid2d]", slot_mapping_grid2d, {"max_query_len": max_query_len(step)})):
        buf = _poison(step.num_tokens_padded, torch.int64, dev)
        fn(qsl, pos, bt, out=buf, **kw, **extra)
        sync()
        got = buf.cpu().numpy()
        us = time_us(lambda: fn(qsl, pos, bt, out=buf, **kw, **extra)) if timing else None
        out.append(_exact(name, got, want, f"{step.num_tokens_padded} slots", us))
    return out


def run_csr(step: StepInputs, seq_lens: np.ndarray, want, *, empty_last_page_len_is_zero: bool = True,
            timing: bool = False, last_page_lens: np.ndarray | None = None):
    """The CSR repack for ``seq_lens`` (host: the page counts) over the step's table, last_page_len
    from ``last_page_lens`` (device; default ``seq_lens``); one KernelResult and the device
    (indptr, indices, last_page_len)."""
    from kvviz_kernels.page_indices import flashinfer_csr
    import torch

    dev = torch_device()
    bt = torch.from_numpy(np.ascontiguousarray(step.block_table)).to(dev)
    seq_host = np.ascontiguousarray(seq_lens, dtype=np.int32)
    last_host = seq_host if last_page_lens is None else np.ascontiguousarray(last_page_lens, dtype=np.int32)
    seq_dev = torch.from_numpy(last_host).to(dev)
    total = int(np.asarray(want[0])[-1]) if len(want[0]) else 0
    spare = 7  # poisoned entries past the end: the kernel must leave them alone
    idx_buf = _poison(total + spare, torch.int32, dev)
    lpl_buf = _poison(len(seq_host), torch.int32, dev)
    poison_tail = idx_buf[total:].cpu().numpy().copy()
    call = lambda: flashinfer_csr(bt, seq_dev, seq_host, step.kernel_block_size,  # noqa: E731
                                  empty_last_page_len_is_zero=empty_last_page_len_is_zero,
                                  indices_out=idx_buf, last_page_len_out=lpl_buf,
                                  row_overrun=step.csr_page_lens is not None)
    indptr, indices, lpl = call()
    sync()
    got_ip, got_idx, got_lpl = indptr.cpu().numpy(), indices.cpu().numpy(), lpl.cpu().numpy()
    us = time_us(call) if timing else None
    parts = [_exact("csr", got_ip, want[0], "paged_kv_indptr"),
             _exact("csr", got_idx[:total], want[1], "paged_kv_indices"),
             _exact("csr", got_lpl, want[2], "paged_kv_last_page_len"),
             _exact("csr", got_idx[total:], poison_tail, "entries past indptr[-1] left alone")]
    ok = all(p.passed for p in parts)
    res = KernelResult("csr", ok, max(p.max_error for p in parts), "; ".join(p.detail for p in parts),
                       us, (got_ip, got_idx[:total], got_lpl))
    return res, (indptr, indices[:total], lpl)


def run_v2_slot_mapping(step: StepInputs, state_rows, idx_mapping, *, era: str, pad_unmapped: bool = False):
    """Model Runner V2's slot kernel (``kvviz_kernels.mrv2_tables.compute_slot_mappings``, one group)
    over the batch's state rows, read through ``idx_mapping`` with a release's DCP ``era``; one
    KernelResult against the step's slot mapping."""
    from kvviz_kernels.mrv2_tables import compute_slot_mappings
    import torch

    dev, qsl, pos, _ = _dev_tables(step)
    geo = step.geometry
    state = torch.from_numpy(np.ascontiguousarray(np.asarray(state_rows, dtype=np.int32)[None])).to(dev)
    idx = torch.from_numpy(np.ascontiguousarray(idx_mapping, dtype=np.int32)).to(dev)
    out = _poison(step.num_tokens_padded, torch.int64, dev).reshape(1, -1)
    compute_slot_mappings(state, idx, qsl, pos, [geo.kernel_block_size], out, cp_size=geo.dcp_world_size,
                          cp_rank=geo.dcp_rank, cp_interleave=geo.interleave, num_reqs=step.num_reqs,
                          dcp_era=era, kv_block_sizes=[geo.block_size], pad_unmapped_rows=pad_unmapped)
    sync()
    return _exact("slot_mapping[mrv2]", out[0].cpu().numpy(), step.slot_mapping, f"{step.num_tokens_padded} slots")


def kernel_backend_for_compute(step: StepInputs, *, empty_last_page_len_is_zero: bool = True,
                               v2_slots: dict | None = None) -> str:
    """Run the slot-mapping kernels (all three designs; with ``v2_slots`` — ``state_rows``,
    ``idx_mapping``, ``era``, ``pad_unmapped`` — Model Runner V2's instead) and, when the step has
    them, the CSR kernel; compare exactly with the step's own arrays. Returns the label string;
    raises KernelMismatch."""
    results = []
    if step.slot_mapping is not None:
        results += [run_v2_slot_mapping(step, **v2_slots)] if v2_slots else run_slot_mapping(step)
    if step.paged_kv_indptr is not None:
        want = (step.paged_kv_indptr, step.paged_kv_indices, step.paged_kv_last_page_len)
        # the rule comes from the profile, never from the arrays being checked; under DCP the
        # lengths are the release's (global or rank-local, ``kvviz.core.kernel_tables.csr_lengths``)
        pages = step.seq_lens if step.csr_page_lens is None else step.csr_page_lens
        res, _ = run_csr(step, pages, want, empty_last_page_len_is_zero=empty_last_page_len_is_zero,
                         last_page_lens=step.csr_last_lens)
        results.append(res)
    _raise_on(results)
    return label_string()


# --- the whole chain ----------------------------------------------------------------------------

def cache_torch_dtype(dtype: str):
    """The torch dtype of a cache of ``dtype`` (one of DTYPES); ValueError otherwise."""
    import torch

    try:
        return {"float16": torch.float16, "bfloat16": torch.bfloat16, "fp8": torch.float8_e4m3fn}[dtype]
    except KeyError:
        raise ValueError(f"dtype must be one of {DTYPES}, not {dtype!r}") from None


def full_sequence_slots(step: StepInputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(request, position, slot) of every token 0..seq_len-1 of every real request on this rank."""
    seq = step.seq_lens[: step.num_reqs].astype(np.int64)
    starts = np.zeros(step.num_reqs + 1, dtype=np.int64)
    np.cumsum(seq, out=starts[1:])
    req = np.repeat(np.arange(step.num_reqs), seq)
    pos = np.arange(int(starts[-1]), dtype=np.int64) - np.repeat(starts[:-1], seq)
    return req, pos, step.geometry.slots(pos, req, step.block_table)


@dataclass
class _BatchKV:
    """The K/V one run_batch draws: every position of every request, what is fed to the KV write
    (already in e4m3 when the interpreter runs an fp8 cache) and the step's own padded tokens."""
    req_all: np.ndarray         # request of each position of the full sequences
    slot_all: np.ndarray        # its slot (PAD where another DCP rank stores it)
    ctx: np.ndarray             # indices of the earlier context, written first
    k_all: object               # K/V as drawn, in the cache dtype (fp16 for an fp8 cache)
    v_all: object
    k_feed: object              # what the kernel is given
    v_feed: object
    k_step: object              # the step's tokens, then garbage for the CUDA-graph tail
    v_step: object
    scales: tuple               # (k_scale, v_scale) the kernel is given
    quant_in_kernel: bool


def _check_batch_args(step: StepInputs, layout: str, dtype: str, num_kv_heads: int,
                      num_q_heads: int | None) -> int:
    """Refuse what run_batch cannot run; the number of query heads (default: 2 per KV head)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be NHD or HND, not {layout!r}")
    cache_torch_dtype(dtype)
    if step.slot_mapping is None:
        raise ValueError("this step has no slot mapping (a state group): nothing to write")
    num_q_heads = num_q_heads or 2 * num_kv_heads
    if num_q_heads % num_kv_heads:
        raise ValueError(f"num_q_heads {num_q_heads} is not a multiple of num_kv_heads {num_kv_heads}")
    return num_q_heads


def _check_step_slots(step: StepInputs, res: BackendResult, timing: bool) -> tuple[str, np.ndarray]:
    """Stage 1: the three slot-mapping designs against the plain loop (the vectorised core for big
    steps). Returns the name of the design that feeds the KV write, and the reference slots."""
    geo = step.geometry
    if step.num_tokens_padded <= LOOP_REFERENCE_MAX_TOKENS:
        want_slots = reference.slot_mapping(step.query_start_loc, step.positions, step.block_table,
                                            block_size=geo.block_size, num_reqs=step.num_reqs,
                                            num_tokens_padded=step.num_tokens_padded,
                                            kernel_block_size=geo.kernel_block_size,
                                            dcp_world_size=geo.dcp_world_size, dcp_rank=geo.dcp_rank,
                                            interleave=geo.interleave)
    else:
        want_slots = step.slot_mapping
    for r in run_slot_mapping(step, timing=timing, want=want_slots):
        res.kernels[r.name] = r
    picked = step_slots_design(step)
    res.params["step_slots_design"] = picked + (" (auto)" if STEP_SLOTS_DESIGN == "auto" else "")
    return f"slot_mapping[{picked}]", want_slots


def _check_batch_csr(step: StepInputs, res: BackendResult, timing: bool, empty_last_page_len_is_zero: bool):
    """Stage 2: the CSR repack over this rank's tokens of every (padded) row. Returns the local
    sequence lengths and the device (indptr, indices, last_page_len)."""
    local_seq = step.geometry.local_seq_lens(step.seq_lens)
    want_csr = reference.flashinfer_csr(step.block_table, local_seq, step.geometry.kernel_block_size,
                                        empty_last_page_len_is_zero=empty_last_page_len_is_zero)
    res.kernels["csr"], csr_dev = run_csr(step, local_seq, want_csr, timing=timing,
                                          empty_last_page_len_is_zero=empty_last_page_len_is_zero)
    return local_seq, csr_dev


def _poisoned_cache(step: StepInputs, geo: Geometry, num_blocks: int | None, gen):
    """Stage 3a: a cache of random bytes (NaNs included), so an unwritten or misread entry cannot
    pass; big enough for every block the table names. (host copy, device copy)."""
    import torch

    used = int(step.block_table.max()) + 1 if step.block_table.size else 1
    nblocks = max(num_blocks or 0, used)
    cache_geo = geo.cache(nblocks)
    dev = torch_device()
    if cache_geo.total_bytes > MAX_CACHE_BYTES[dev]:
        raise ValueError(f"a cache of {nblocks} blocks x {geo.kernel_block_size} x {geo.num_kv_heads} x "
                         f"{geo.head_dim} is {cache_geo.total_bytes >> 20} MiB, over the "
                         f"{MAX_CACHE_BYTES[dev] >> 20} MiB limit on {dev}")
    cache = (torch.randint(0, 256, (cache_geo.total_bytes,), dtype=torch.uint8, generator=gen)
             .view(cache_torch_dtype(geo.dtype)).reshape(cache_geo.shape))
    return cache.clone(), cache.to(dev)


def _draw_kv(step: StepInputs, geo: Geometry, gen, k_scale: float, v_scale: float) -> _BatchKV:
    """Stage 3b: random K/V for every position, split into the earlier context and the step's
    own tokens (request-major, position order = the step's token order)."""
    import torch

    req_all, pos_all, slot_all = full_sequence_slots(step)
    seq = step.seq_lens[: step.num_reqs].astype(np.int64)
    first_new = np.repeat(seq - np.diff(step.query_start_loc[: step.num_reqs + 1]).astype(np.int64), seq)
    is_ctx = pos_all < first_new
    if not np.array_equal(pos_all[~is_ctx], step.positions[: step.num_tokens]):
        raise ValueError("the step's positions are not each request's last query_len positions")
    wide = torch.float16 if geo.dtype == "fp8" else cache_torch_dtype(geo.dtype)
    # K/V are drawn per physical slot: rows that share a block (a prefix hit, a fork, or a hit on
    # blocks another row computes in this very step) hold the same tokens there. Whether two rows
    # *should* share a block is a bookkeeping question the checker answers (shared-partial-block).
    uniq, inv = np.unique(slot_all, return_inverse=True)
    inv_t = torch.from_numpy(inv.reshape(-1))
    shape = (len(uniq), geo.num_kv_heads, geo.head_dim)
    k_all = torch.randn(shape, generator=gen).to(wide)[inv_t]
    v_all = torch.randn(shape, generator=gen).to(wide)[inv_t]
    # the kernel quantises to fp8 on a GPU; the interpreter's cast rounds differently from
    # torch's (triton 3.9), so there the K/V arrive already in e4m3 and the kernel copies bytes
    quant_in_kernel = geo.dtype == "fp8" and torch_device() == "cuda"
    if geo.dtype == "fp8" and not quant_in_kernel:
        k_feed, v_feed, scales = quantize_fp8(k_all, k_scale), quantize_fp8(v_all, v_scale), (1.0, 1.0)
    else:
        k_feed, v_feed, scales = k_all, v_all, (k_scale, v_scale)
    pad = step.num_tokens_padded - step.num_tokens
    garbage = (torch.randn((pad, geo.num_kv_heads, geo.head_dim), generator=gen) * 100).to(k_feed.dtype)
    new = np.flatnonzero(~is_ctx)
    return _BatchKV(req_all, slot_all, np.flatnonzero(is_ctx), k_all, v_all, k_feed, v_feed,
                    torch.cat([k_feed[new], garbage]), torch.cat([v_feed[new], garbage]), scales,
                    quant_in_kernel)


def _check_kv_write(res: BackendResult, kv: _BatchKV, caches, step_slots: str, want_slots: np.ndarray,
                    geo: Geometry, timing: bool) -> KernelResult:
    """Stage 3c: write the context (slots from the core), then the step's tokens through the slot
    mapping the kernel produced; compare every cache byte with the token-by-token reference."""
    import torch
    from kvviz_kernels.kv_write import kv_write

    cache_before, cache = caches
    dev = torch_device()
    kw = dict(layout=geo.layout, k_scale=kv.scales[0], v_scale=kv.scales[1])
    ctx_slots = torch.from_numpy(kv.slot_all[kv.ctx].copy())
    kv_write(kv.k_feed[kv.ctx].to(dev), kv.v_feed[kv.ctx].to(dev), cache, ctx_slots.to(dev), **kw)
    slots_dev = torch.from_numpy(res.kernels[step_slots].output.copy()).to(dev)
    k_dev, v_dev = kv.k_step.to(dev), kv.v_step.to(dev)
    kv_write(k_dev, v_dev, cache, slots_dev, **kw)
    sync()
    want = kv_write_ref(cache_before, kv.k_feed[kv.ctx], kv.v_feed[kv.ctx], ctx_slots, **kw)
    want = kv_write_ref(want, kv.k_step, kv.v_step, torch.from_numpy(want_slots), **kw)
    got = cache.cpu()
    us = time_us(lambda: kv_write(k_dev, v_dev, cache, slots_dev, **kw)) if timing else None
    bits = torch.uint8 if geo.dtype == "fp8" else torch.int16
    result = _exact("kv_write", got.view(bits).numpy(), want.view(bits).numpy(),
                    f"cache bytes ({geo.layout}, {geo.dtype}{_quant_note(geo.dtype, kv.quant_in_kernel)})", us)
    result.output = None
    result.detail += _kv_slots_note(res, step_slots, cache_before.shape[1], geo)
    return result


def _quant_note(dtype: str, quant_in_kernel: bool) -> str:
    """What the KV write's label says about who quantised an fp8 cache's values."""
    if dtype != "fp8":
        return ""
    if quant_in_kernel:
        return ", quantised in the kernel"
    return ", quantised by torch first: the interpreter's e4m3 cast is inexact, its kernel copies the bytes"


def _kv_slots_note(res: BackendResult, step_slots: str, nblocks: int, geo: Geometry) -> str:
    """Which slot mapping fed the KV write, and, when that one was wrong, how wrong."""
    note = f"; slots from {step_slots}{' (auto)' if STEP_SLOTS_DESIGN == 'auto' else ''}"
    if not res.kernels[step_slots].passed:
        note += f" [the slot mapping it used ({step_slots}) was wrong]"
        used_slots = res.kernels[step_slots].output
        outside = int(np.count_nonzero((used_slots < PAD_SLOT_ID) | (used_slots >= geo.cache(nblocks).num_slots)))
        if outside:
            note += f" [{outside} of its slots lie outside the cache and were not written]"
    return note


def _dense_attention_inputs(step: StepInputs, kv: _BatchKV, geo: Geometry, scales: tuple):
    """Per request (padded rows included, empty), the K/V it holds on this rank as stored: rounded
    to the cache dtype and, for fp8, scaled back."""
    if geo.dtype == "fp8":
        stored_k = quantize_fp8(kv.k_all, scales[0]).float() * scales[0]
        stored_v = quantize_fp8(kv.v_all, scales[1]).float() * scales[1]
    else:
        stored_k, stored_v = kv.k_all.float(), kv.v_all.float()
    owned = kv.slot_all != PAD_SLOT_ID
    keys, values = [], []
    for r in range(step.num_reqs_padded):
        sel = np.flatnonzero((kv.req_all == r) & owned) if r < step.num_reqs else np.zeros(0, np.int64)
        keys.append(stored_k[sel].numpy())
        values.append(stored_v[sel].numpy())
    return keys, values


def _check_decode(step: StepInputs, res: BackendResult, cache, kv: _BatchKV, local_seq, csr_dev, geo: Geometry,
                  q, scales: tuple, timing: bool) -> None:
    """Stage 4: paged decode through both page tables against dense attention over what each
    request holds."""
    import torch
    from kvviz_kernels.paged_decode import paged_decode_block_table, paged_decode_csr

    keys, values = _dense_attention_inputs(step, kv, geo, scales)
    want = decode_attention_ref(q.numpy(), keys, values)
    dev = torch_device()
    indptr, indices, lpl = csr_dev
    q_dev = q.to(dev)
    bt_dev = torch.from_numpy(np.ascontiguousarray(step.block_table)).to(dev)
    seq_dev = torch.from_numpy(np.ascontiguousarray(local_seq, dtype=np.int32)).to(dev)
    fp8 = geo.dtype == "fp8"
    sc = dict(layout=geo.layout, k_scale=scales[0] if fp8 else 1.0, v_scale=scales[1] if fp8 else 1.0)
    tokens = int(sum(len(k) for k in keys))
    for name, call in (
            ("paged_decode[block_table]", lambda: paged_decode_block_table(q_dev, cache, bt_dev, seq_dev, **sc)),
            ("paged_decode[csr]", lambda: paged_decode_csr(q_dev, cache, indptr, indices, lpl, **sc))):
        got = call()
        sync()
        got = got.cpu().numpy().astype(np.float64)
        us = time_us(call) if timing else None
        res.kernels[name] = _close(name, got, want, us, f"{step.num_reqs_padded} requests x {q.shape[1]} heads "
                                                         f"over {tokens} cached tokens")


def _close(name: str, got: np.ndarray, want: np.ndarray, us, what: str) -> KernelResult:
    """Attention within ATTN_ATOL / ATTN_RTOL of the dense float64 reference; a NaN never passes."""
    nan = bool(np.isnan(got).any())
    err = float("inf") if nan else (float(np.max(np.abs(got - want))) if got.size else 0.0)
    ok = bool(np.allclose(got, want, atol=ATTN_ATOL, rtol=ATTN_RTOL)) and not nan
    detail = (f"{what} vs dense float64 attention, max |err| {err:.3g} (atol {ATTN_ATOL}, rtol {ATTN_RTOL})")
    return KernelResult(name, ok, err, detail if ok else "MISMATCH: " + detail, us, got)


def run_batch(step: StepInputs, *, layout: str = "NHD", dtype: str = "float16", num_kv_heads: int = 2,
              head_dim: int = 32, num_q_heads: int | None = None, num_blocks: int | None = None,
              seed: int | None = None, k_scale: float = 1.0, v_scale: float = 1.0,
              timing: bool = True, empty_last_page_len_is_zero: bool = True) -> BackendResult:
    """Run all four kernels on ``step`` and check each against its reference.

    Random K/V are drawn for every position 0..seq_len-1 of every request: the
    earlier context is written first (through the KV-write kernel, with slots
    from the core), then the step's own tokens through the slot mapping the
    kernel produced (its PAD tail and other ranks' tokens write nothing). The
    decode then reads every request's tokens back through the block table and
    through the CSR arrays and is compared with dense attention over the K/V
    drawn (as stored: rounded to the cache dtype)."""
    import torch

    num_q_heads = _check_batch_args(step, layout, dtype, num_kv_heads, num_q_heads)
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (1 << 31))
    gen = torch.Generator().manual_seed(seed)
    geo = step.geometry.with_cache(num_kv_heads=num_kv_heads, head_dim=head_dim, dtype=dtype, layout=layout)
    res = BackendResult(label=device_label(), params=dict(layout=layout, dtype=dtype, num_kv_heads=num_kv_heads,
                                                          head_dim=head_dim, num_q_heads=num_q_heads, seed=seed))
    step_slots, want_slots = _check_step_slots(step, res, timing)
    local_seq, csr_dev = _check_batch_csr(step, res, timing, empty_last_page_len_is_zero)
    caches = _poisoned_cache(step, geo, num_blocks, gen)
    kv = _draw_kv(step, geo, gen, k_scale, v_scale)
    res.kernels["kv_write"] = _check_kv_write(res, kv, caches, step_slots, want_slots, geo, timing)
    q = torch.randn((step.num_reqs_padded, num_q_heads, head_dim), generator=gen)
    _check_decode(step, res, caches[1], kv, local_seq, csr_dev, geo, q, (k_scale, v_scale), timing)
    return res
