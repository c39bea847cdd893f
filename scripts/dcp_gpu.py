"""DCP on 2 GPUs with NCCL: the NCCL tests, then the merged error and the collectives' time against
the partial attention at 1K, 32K and 128K tokens of context.

    python scripts/dcp_gpu.py                     # tests + the table (needs >= 2 CUDA GPUs)
    python scripts/dcp_gpu.py --skip-tests --contexts 1024 131072 --reqs 4 --json out.json

Each context is one batch of ``--reqs`` decode requests of that many tokens (block size 16, the
same block ids on both ranks, interleave ``--interleave``), run through ``python -m kvviz dcp
--backend nccl``: every rank writes its half of the KV through the Triton kernels, attends over it
with the LSE, all-gathers the LSEs and all-reduces the rescaled outputs; rank 0 checks the merge
against dense fp32 attention. Times are medians (CUDA events for the kernels, ``--repeat`` barriered
calls for each collective); "coll/attn" is (all-gather + all-reduce) / partial attention, the
slowest rank's figures.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def batch(context: int, reqs: int, block_size: int, world: int, interleave: int) -> dict:
    per_block = block_size * world
    nblk = -(-context // per_block)
    return {"block_size": block_size, "cp_kv_cache_interleave_size": interleave,
            "requests": [{"block_ids": list(range(1 + r * nblk, 1 + (r + 1) * nblk)), "seq_len": context,
                          "query_len": 1} for r in range(reqs)]}


def run_one(args, context: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"dcp_{context}.json"
        path.write_text(json.dumps(batch(context, args.reqs, args.block_size, args.world, args.interleave)))
        cmd = [sys.executable, "-m", "kvviz", "dcp", str(path), "--world", str(args.world), "--backend", "nccl",
               "--num-kv-heads", str(args.kv_heads), "--num-q-heads", str(args.q_heads), "--head-dim",
               str(args.head_dim), "--dtype", args.dtype, "--repeat", str(args.repeat)]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=args.timeout)
    if r.returncode not in (0, 1) or not r.stdout.strip():
        return {"context": context, "error": (r.stderr.strip() or f"exit {r.returncode}")[:300]}
    rep = json.loads(r.stdout)
    rep["context"] = context
    return rep


def row(rep: dict) -> str:
    if "error" in rep:
        return f"{rep['context']:>8}  FAILED: {rep['error']}"
    ranks = rep["ranks"]
    ag = max(x["all_gather_lse_us"] for x in ranks)
    ar = max(x["all_reduce_out_us"] for x in ranks)
    attn = max(x["partial_attention_us"] for x in ranks)
    held = "/".join(str(x["tokens_held"]) for x in ranks)
    return (f"{rep['context']:>8}  {held:>15}  {rep['merged_max_error']:>9.2e}  {ag:>9.1f}  {ar:>9.1f}  "
            f"{attn:>9.1f}  {(ag + ar) / attn if attn else float('nan'):>9.2f}  {'pass' if rep['passed'] else 'FAIL'}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--contexts", type=int, nargs="+", default=[1024, 32768, 131072])
    p.add_argument("--reqs", type=int, default=1)
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--interleave", type=int, default=1)
    p.add_argument("--block-size", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--q-heads", type=int, default=32)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--dtype", default="bfloat16", choices=["float16", "bfloat16", "float32"])
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--skip-tests", action="store_true")
    p.add_argument("--json", help="also write every report to this file")
    args = p.parse_args()
    import torch

    if torch.cuda.device_count() < args.world:
        print(f"needs {args.world} CUDA GPUs, {torch.cuda.device_count()} visible", file=sys.stderr)
        return 2
    rc = 0
    if not args.skip_tests:
        t = subprocess.run([sys.executable, "-m", "pytest", "tests/dist/test_dcp_gloo.py", "-q", "-p", "no:cacheprovider",
                            "-m", "gpu"], cwd=ROOT, env={**os.environ})
        rc |= t.returncode
    print(f"\nDCP over {args.world} x {torch.cuda.get_device_name(0)}, NCCL; {args.reqs} request(s), "
          f"{args.kv_heads} KV / {args.q_heads} q heads x {args.head_dim}, {args.dtype}, block {args.block_size}, "
          f"interleave {args.interleave}; us = median")
    print(f"{'context':>8}  {'tokens/rank':>15}  {'merge err':>9}  {'allgather':>9}  {'allreduce':>9}  "
          f"{'attn':>9}  {'coll/attn':>9}  check")
    reports = []
    for c in args.contexts:
        rep = run_one(args, c)
        reports.append(rep)
        print(row(rep), flush=True)
        rc |= 0 if rep.get("passed") else 1
    if args.json:
        Path(args.json).write_text(json.dumps(reports, indent=1))
    return rc


if __name__ == "__main__":
    sys.exit(main())
