#!/usr/bin/env python3
"""Real FlashInfer as an independent oracle for kvviz's paged-KV chain (GPU machine only).

One batch is built by kvviz's core (``build_step_from_batch``: scattered block ids,
requests of 1 .. 2048 tokens, full last pages, a 3-token chunk, PAD tokens). Then,
for each (layout, dtype):

1. kvviz's flat slot-mapping kernel and CSR kernel run on the device and must equal
   the core's arrays exactly;
2. kvviz's KV-write kernel writes every token's K/V into a cache in FlashInfer's own
   shape (``[N, 2, P, H, D]`` NHD or ``[N, 2, H, P, D]`` HND), seen by kvviz through a
   transposed view (``cache.transpose(0, 1)``: kvviz's ``[2, N, ...]``, strides
   passed to the kernel as they are); context tokens through the core's slots, the
   step's tokens through the slot-mapping kernel's output (PAD tail included);
3. FlashInfer's ``append_paged_kv_cache`` writes the same tokens into a second copy of
   the same poisoned cache, from kvviz's CSR arrays: the two caches must be equal
   byte for byte;
4. FlashInfer's ``BatchDecodeWithPagedKVCacheWrapper`` (plan + run, fed kvviz's CSR
   arrays as the CSR kernel produced them) decodes over the cache kvviz wrote, and is
   compared with a dense float64 attention reference and with kvviz's own paged
   decode kernel (through the CSR arrays and through the block table).

Prints max errors and PASS/FAIL per check, writes JSON (``--json``), exits 0 when
everything passed, 1 on a failure, 2 when FlashInfer or CUDA is missing
(``--cpu-smoke`` runs steps 1, 2 and 4 without FlashInfer in the Triton interpreter,
small heads, to test this script off the GPU).

usage: python3 scripts/flashinfer_oracle.py [--json OUT] [--quick] [--cpu-smoke]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


if not _has_cuda():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import numpy as np  # noqa: E402

PAGE = 16
# (seq_len, query_len): a 1-token request, exactly one and exactly three full pages, a
# 3-token chunk, a last page of one token, long ones; ids scattered over the pool
REQUESTS = [(1, 1), (16, 1), (48, 1), (37, 3), (513, 1), (1000, 1), (2048, 1), (7, 1)]
PAD_TOKENS = 5
TOL = {"float16": 4e-3, "bfloat16": 3e-2}   # max |a - b| on outputs of magnitude ~1
KVVIZ_TOL = 1e-3                             # kvviz decode is fp32 over the same stored K/V
CONFIGS = [("NHD", "float16", False), ("NHD", "float16", True), ("HND", "float16", False),
           ("NHD", "bfloat16", False)]


def make_spec(seed: int, requests=REQUESTS) -> dict:
    rng = np.random.default_rng(seed)
    need = [(s + PAGE - 1) // PAGE for s, _ in requests]
    pool = rng.permutation(np.arange(1, 4 * sum(need) + 64))   # block 0 stays the null block
    reqs, at = [], 0
    for (s, q), n in zip(requests, need):
        reqs.append({"block_ids": [int(b) for b in pool[at: at + n]], "seq_len": s, "query_len": q})
        at += n
    total = sum(q for _, q in requests)
    return {"block_size": PAGE, "requests": reqs, "num_tokens_padded": total + PAD_TOKENS}


def _err(got, want) -> dict:
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    d = np.abs(got - want)
    scale = max(float(np.abs(want).max()), 1e-30)
    return {"max_abs": float(d.max()), "max_rel": float(d.max() / scale),
            "finite": bool(np.isfinite(got).all())}


def run_config(step, layout: str, dtype: str, tensor_cores: bool, *, kv_heads: int, q_heads: int,
               head_dim: int, use_flashinfer: bool, seed: int) -> dict:
    import torch
    import kvviz  # noqa: E402,F401  (names the checkout's kernels/ kvviz_kernels)
    from kvviz_kernels.kv_write import kv_write
    from kvviz_kernels.page_indices import flashinfer_csr
    from kvviz_kernels.paged_decode import paged_decode_block_table, paged_decode_csr
    from kvviz_kernels.slot_mapping import slot_mapping_flat
    from kvviz.gpu.attention_ref import decode_attention_ref
    from kvviz.gpu.harness import full_sequence_slots, torch_device

    dev = torch_device()
    cdt = {"float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
    gen = torch.Generator().manual_seed(seed)
    res = {"layout": layout, "dtype": dtype, "tensor_cores": tensor_cores, "checks": {}}
    checks = res["checks"]
    nr = step.num_reqs

    # 1. slot mapping and CSR on the device vs the core
    qsl = torch.from_numpy(step.query_start_loc).to(dev)
    pos = torch.from_numpy(step.positions).to(dev)
    bt = torch.from_numpy(np.ascontiguousarray(step.block_table)).to(dev)
    slots = torch.full((step.num_tokens_padded,), 12345, dtype=torch.int64, device=dev)
    slot_mapping_flat(qsl, pos, bt, num_reqs=nr, block_size=step.block_size, out=slots,
                      num_tokens_padded=step.num_tokens_padded)
    ok = bool(np.array_equal(slots.cpu().numpy(), step.slot_mapping))
    checks["slot_mapping kernel == core"] = {"pass": ok}
    seq_host = step.seq_lens[:nr].astype(np.int32)
    seq_dev = torch.from_numpy(seq_host).to(dev)
    indptr, indices, lpl = flashinfer_csr(bt, seq_dev, seq_host, PAGE)
    ok = all(np.array_equal(g.cpu().numpy(), w) for g, w in
             ((indptr, step.paged_kv_indptr[: nr + 1]), (indices, step.paged_kv_indices),
              (lpl, step.paged_kv_last_page_len[:nr])))
    checks["CSR kernel == core"] = {"pass": ok}

    # 2. kvviz writes every token into a cache of FlashInfer's shape, through a transposed view
    nblocks = int(step.block_table.max()) + 1
    shape = ((nblocks, 2, PAGE, kv_heads, head_dim) if layout == "NHD"
             else (nblocks, 2, kv_heads, PAGE, head_dim))
    poison = (torch.randn(shape, generator=gen) * 300).to(cdt)     # finite, loud if read unmasked
    fi_cache = poison.to(dev)
    view = fi_cache.transpose(0, 1)                                # kvviz's [2, N, ...] over the same memory
    req_all, pos_all, slot_all = full_sequence_slots(step)
    k_all = torch.randn((len(pos_all), kv_heads, head_dim), generator=gen).to(cdt)
    v_all = torch.randn((len(pos_all), kv_heads, head_dim), generator=gen).to(cdt)
    qlen = np.diff(step.query_start_loc[: nr + 1]).astype(np.int64)
    first_new = np.repeat(step.seq_lens[:nr].astype(np.int64) - qlen, step.seq_lens[:nr].astype(np.int64))
    ctx = np.flatnonzero(pos_all < first_new)
    new = np.flatnonzero(pos_all >= first_new)
    garbage = (torch.randn((PAD_TOKENS, kv_heads, head_dim), generator=gen) * 100).to(cdt)
    kv_write(k_all[ctx].to(dev), v_all[ctx].to(dev), view, torch.from_numpy(slot_all[ctx].copy()).to(dev),
             layout=layout)
    kv_write(torch.cat([k_all[new], garbage]).to(dev), torch.cat([v_all[new], garbage]).to(dev), view, slots,
             layout=layout)
    if dev == "cuda":
        torch.cuda.synchronize()
    # every token where the core says it lives (independent of the kernels' addressing)
    got = fi_cache.cpu()
    # both layouts as [N, P, 2, H, D]: page, entry in page, K/V, head, dim
    per_entry = (lambda c: c.permute(0, 2, 1, 3, 4)) if layout == "NHD" else (lambda c: c.permute(0, 3, 1, 2, 4))
    got_e, poison_e = per_entry(got), per_entry(poison)
    blk = torch.from_numpy(slot_all // PAGE)
    off = torch.from_numpy(slot_all % PAGE)
    ok = torch.equal(got_e[blk, off, 0], k_all) and torch.equal(got_e[blk, off, 1], v_all)
    untouched = torch.ones(nblocks, PAGE, dtype=torch.bool)
    untouched[blk, off] = False
    same = torch.equal(got_e[untouched], poison_e[untouched])
    checks["kvviz kv_write: every token at its slot, nothing else touched"] = {"pass": bool(ok and same)}

    # 3. FlashInfer's append into a second copy of the poisoned cache, from kvviz's CSR arrays
    if use_flashinfer:
        import flashinfer

        fi_cache2 = poison.to(dev)
        flashinfer.append_paged_kv_cache(k_all.to(dev), v_all.to(dev),
                                         torch.from_numpy(req_all.astype(np.int32)).to(dev),
                                         torch.from_numpy(pos_all.astype(np.int32)).to(dev),
                                         fi_cache2, indices, indptr, lpl, kv_layout=layout)
        torch.cuda.synchronize()
        a = fi_cache.view(torch.int16)
        b = fi_cache2.view(torch.int16)
        nbad = int((a != b).sum())
        checks["kvviz kv_write == FlashInfer append_paged_kv_cache (bytes)"] = {"pass": nbad == 0,
                                                                             "elements_differing": nbad}

    # 4. decode: dense reference, kvviz (CSR and block table), FlashInfer
    q = torch.randn((nr, q_heads, head_dim), generator=gen).to(cdt)
    keys = [k_all[np.flatnonzero(req_all == r)].float().numpy() for r in range(nr)]
    values = [v_all[np.flatnonzero(req_all == r)].float().numpy() for r in range(nr)]
    want = decode_attention_ref(q.float().numpy(), keys, values)
    q_dev = q.to(dev)
    outs = {"kvviz paged_decode[csr]": paged_decode_csr(q_dev, view, indptr, indices, lpl, layout=layout),
            "kvviz paged_decode[block_table]": paged_decode_block_table(q_dev, view, bt, seq_dev, layout=layout)}
    fi_out = None
    if use_flashinfer:
        import flashinfer

        ws = torch.zeros(128 << 20, dtype=torch.uint8, device=dev)
        w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(ws, kv_layout=layout, use_tensor_cores=tensor_cores)
        t0 = time.perf_counter()
        w.plan(indptr, indices, lpl, q_heads, kv_heads, head_dim, PAGE, pos_encoding_mode="NONE",
               q_data_type=cdt, kv_data_type=cdt)
        fi_out = w.run(q_dev, fi_cache)
        torch.cuda.synchronize()
        res["flashinfer_first_plan_run_s"] = round(time.perf_counter() - t0, 2)
        outs["flashinfer decode"] = fi_out
    for name, o in outs.items():
        e = _err(o.float().cpu().numpy(), want)
        tol = TOL[dtype] if name == "flashinfer decode" else KVVIZ_TOL
        checks[f"{name} vs dense reference"] = {"pass": e["finite"] and e["max_abs"] <= tol, "tol": tol, **e}
    if fi_out is not None:
        e = _err(outs["kvviz paged_decode[csr]"].float().cpu().numpy(), fi_out.float().cpu().numpy())
        checks["kvviz paged_decode[csr] vs flashinfer decode"] = {"pass": e["finite"] and e["max_abs"] <= TOL[dtype],
                                                                 "tol": TOL[dtype], **e}
    res["pass"] = all(c["pass"] for c in checks.values())
    return res


def run_oracle(*, quick: bool = False, cpu_smoke: bool = False, seed: int = 0, progress=print) -> dict:
    import torch
    from kvviz.gpu.harness import device_label, torch_device
    from kvviz.core.step import build_step_from_batch

    out = {"label": device_label(), "torch": torch.__version__, "configs": [], "seed": seed}
    import triton

    out["triton"] = triton.__version__
    use_fi = False
    if torch_device() == "cuda":
        try:
            t0 = time.perf_counter()
            import flashinfer

            out["flashinfer"] = flashinfer.__version__
            out["flashinfer_import_s"] = round(time.perf_counter() - t0, 2)
            use_fi = True
            try:
                import tvm_ffi

                out["apache_tvm_ffi"] = getattr(tvm_ffi, "__version__", "?")
            except Exception:
                pass
        except Exception as e:  # noqa: BLE001
            out["flashinfer_error"] = f"{type(e).__name__}: {e}"
    if not use_fi and not cpu_smoke:
        out["status"] = "SKIP"
        out["reason"] = out.get("flashinfer_error", "no CUDA device")
        return out
    step = build_step_from_batch(make_spec(seed))
    out["batch"] = {"seq_lens": step.seq_lens[: step.num_reqs].tolist(),
                    "query_lens": np.diff(step.query_start_loc[: step.num_reqs + 1]).tolist(),
                    "num_tokens_padded": step.num_tokens_padded, "page_size": PAGE,
                    "pages": int(step.paged_kv_indptr[step.num_reqs])}
    heads = dict(kv_heads=2, q_heads=4, head_dim=32) if cpu_smoke else dict(kv_heads=8, q_heads=32, head_dim=128)
    out["heads"] = heads
    configs = CONFIGS[:1] if (quick or cpu_smoke) else CONFIGS
    for i, (layout, dtype, tc) in enumerate(configs):
        t0 = time.perf_counter()
        try:
            r = run_config(step, layout, dtype, tc, use_flashinfer=use_fi, seed=seed + i, **heads)
        except Exception as e:  # noqa: BLE001 - one broken config is a FAIL, the others still run
            r = {"layout": layout, "dtype": dtype, "tensor_cores": tc, "pass": False,
                 "error": f"{type(e).__name__}: {e}", "checks": {}}
        r["seconds"] = round(time.perf_counter() - t0, 2)
        out["configs"].append(r)
        progress(f"== {layout} {dtype}{' tensor cores' if tc else ''}: {'PASS' if r['pass'] else 'FAIL'} "
                 f"({r['seconds']} s{', first plan+run ' + str(r['flashinfer_first_plan_run_s']) + ' s' if 'flashinfer_first_plan_run_s' in r else ''})")
        if "error" in r:
            progress(f"   ERROR {r['error']}")
        for name, c in r["checks"].items():
            fig = (f" max_abs {c['max_abs']:.2e} max_rel {c['max_rel']:.2e} (tol {c['tol']})"
                   if "max_abs" in c else "")
            extra = f" {c['elements_differing']} elements differ" if c.get("elements_differing") else ""
            progress(f"   {'PASS' if c['pass'] else 'FAIL'} {name}{fig}{extra}")
    out["status"] = "PASS" if all(c["pass"] for c in out["configs"]) else "FAIL"
    if not use_fi:
        out["status"] += " (no FlashInfer: cpu smoke)"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--quick", action="store_true", help="NHD fp16 only")
    ap.add_argument("--cpu-smoke", action="store_true", help="no GPU: kvviz's half in the interpreter")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    out = run_oracle(quick=a.quick, cpu_smoke=a.cpu_smoke, seed=a.seed)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))
    print(f"FlashInfer oracle: {out['status']}"
          + (f" ({out['reason']})" if out.get("reason") else "")
          + (f"; flashinfer {out['flashinfer']}" if out.get("flashinfer") else ""))
    if out["status"].startswith("SKIP"):
        return 2
    return 0 if out["status"].startswith("PASS") else 1


if __name__ == "__main__":
    sys.exit(main())
