"""Model Runner V2 block-table kernels (kernels/mrv2_tables.py): correctness, then timing.

For each step shape (1 / 64 / 256 / 1024 requests, decode or prefill, 1 or 3 KV-cache groups,
DCP 1 or 2) this builds random state tables over a LIFO-like permutation of state rows, runs
``gather_block_tables`` and ``compute_slot_mappings`` on poisoned buffers and compares every
entry (stale tails and untouched rows included) with a torch reference made of indexing ops;
then times each kernel and its torch reference:

* ``launch``: triton.testing.do_bench, median us per call, host launch cost included (the
  Python launcher's checks are part of it);
* ``graph``: triton.testing.do_bench_cudagraph, median us per call replayed in a CUDA graph:
  the device time a model runner that captures its step would see.

An empty Triton launch is timed the same two ways as the floor. Prints a plain table, writes
JSON with ``--json PATH``, and exits 1 if any output differs from its reference.

    python3 scripts/bench_mrv2.py --json /tmp/mrv2.json     # the H200 run (scripts/gpu_run.sh --part bench)
    python scripts/bench_mrv2.py --smoke                     # tiny sizes, CPU interpreter works

Imports only torch, triton, numpy and the kernels package (no kvviz): the GPU machine has
nothing else.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kvviz  # noqa: E402,F401  (names the checkout's kernels/ kvviz_kernels)
import kvviz_kernels as kernels  # noqa: E402  (sets TRITON_INTERPRET before triton is imported, without CUDA)
import torch  # noqa: E402
import triton  # noqa: E402
import triton.testing  # noqa: E402
from kvviz_kernels.empty import empty_launch  # noqa: E402
from kvviz_kernels.mrv2_tables import compute_slot_mappings, gather_block_tables  # noqa: E402

POISON32, POISON64, PAD = 0x5A5A5A5A, -7777, -1


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


# --- shapes ----------------------------------------------------------------------------------

def shapes(smoke: bool) -> list[dict]:
    """Step shapes: requests x mix x groups x DCP."""
    if smoke:
        base = dict(rows=16, max_model_len=512, max_num_tokens=96, budget=64)
        out = [dict(base, reqs=r, mix=m, groups=g, cp=1) for r in (1, 9) for m in ("decode", "prefill")
               for g in (1, 3)]
        return out + [dict(base, reqs=9, mix="prefill", groups=3, cp=2),
                      dict(base, reqs=4, mix="decode", groups=3, cp=2, state_group=True)]
    base = dict(rows=1024, max_model_len=32768, max_num_tokens=8192, budget=8192)
    out = [dict(base, reqs=r, mix=m, groups=g, cp=1) for r in (1, 64, 256, 1024)
           for m in ("decode", "prefill") for g in (1, 3)]
    return out + [dict(base, reqs=r, mix=m, groups=3, cp=2) for r in (64, 1024) for m in ("decode", "prefill")] \
        + [dict(base, reqs=256, mix="decode", groups=3, cp=1, state_group=True)]


def group_layout(n_groups: int, max_model_len: int, cp: int):
    """(kernel block size, width) per group: widths cover max_model_len, as vLLM sizes them."""
    sizes = (16,) if n_groups == 1 else (16, 32, 64)
    return [(bs, cdiv(max_model_len, bs * cp)) for bs in sizes]


def build(shape: dict, rng, device):
    """One random step as device tensors (plus the host-known counts a model runner has)."""
    groups = group_layout(shape["groups"], shape["max_model_len"], shape["cp"])
    n, rows, cp = shape["reqs"], shape["rows"], shape["cp"]
    wmax = max(w for _, w in groups)
    state = np.zeros((len(groups), rows, wmax), dtype=np.int32)
    for g, (_, w) in enumerate(groups):
        state[g, :, :w] = rng.integers(1, 1 << 24, (rows, w))
    q = np.ones(n, dtype=np.int64) if shape["mix"] == "decode" else \
        np.full(n, max(shape["budget"] // n, 1), dtype=np.int64)
    seq = np.array([rng.integers(qi, shape["max_model_len"] + 1) for qi in q], dtype=np.int64)
    idx = rng.permutation(np.arange(rows - 1, rows - 1 - n, -1)).astype(np.int32)   # LIFO rows, shuffled
    # every state row holds some length; the scheduled ones hold their request's
    lens = rng.integers(0, shape["max_model_len"] + 1, rows)
    lens[idx] = seq
    num_blocks = np.stack([np.minimum(cdiv_arr(lens, bs * cp), w) for bs, w in groups]).astype(np.int32)
    qsl = np.concatenate([[0], np.cumsum(q)]).astype(np.int32)
    positions = np.concatenate([s - qi + np.arange(qi) for s, qi in zip(seq, q)]).astype(np.int64)
    T = int(qsl[-1])
    max_num_tokens = max(shape["max_num_tokens"], T)
    dev = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(device)  # noqa: E731
    flags = [not (shape.get("state_group") and g == len(groups) - 1) for g in range(len(groups))]
    return dict(state=dev(state), num_blocks=dev(num_blocks), idx=dev(idx), qsl=dev(qsl),
                positions=dev(positions), widths=[w for _, w in groups], bss=[b for b, _ in groups],
                widths_t=torch.tensor([w for _, w in groups], dtype=torch.int32, device=device),
                bs_t=torch.tensor([b for b, _ in groups], dtype=torch.int32, device=device),
                n=n, max_q=int(q.max()), padded=min(n + (-n) % 8, rows), T=T, max_num_tokens=max_num_tokens, flags=flags,
                cp=cp, rank=int(rng.integers(0, cp)), il=int(rng.choice([1, 4])) if cp > 1 else 1)


def cdiv_arr(a, b):
    return -(-a // b)


# --- torch references (indexing ops, several launches) -------------------------------------

def gather_torch(s, inp):
    idx = s["idx"].long()
    n, padded = s["n"], s["padded"]
    for g, w in enumerate(s["widths"]):
        if w == 0:
            continue
        cnt = s["num_blocks"][g, idx].clamp(0, w)
        keep = torch.arange(w, device=inp.device)[None, :] < cnt[:, None]
        inp[g, :n, :w] = torch.where(keep, s["state"][g, idx, :w], inp[g, :n, :w])
        inp[g, n:padded, :w] = 0
    return inp


def slots_torch(s, out):
    n, T = s["n"], s["T"]
    qsl = s["qsl"].long()
    req = torch.repeat_interleave(torch.arange(n, device=out.device), qsl[1:] - qsl[:-1], output_size=T)
    rows = s["idx"].long()[req]
    pos = s["positions"][:T]
    cp, rank, il = s["cp"], s["rank"], s["il"]
    for g, (w, bs) in enumerate(zip(s["widths"], s["bss"])):
        if not s["flags"][g]:
            continue
        col, off = pos // (bs * cp), pos % (bs * cp)
        inside = col < w
        blk = s["state"][g, rows, col.clamp(max=max(w - 1, 0))].long()
        blk = torch.where(inside, blk, 0)
        if cp == 1:
            slot = blk * bs + off
        else:
            local = (off // il) % cp == rank
            slot = torch.where(local, blk * bs + (off // (il * cp)) * il + off % il, PAD)
        out[g, :T] = slot
        out[g, T:] = PAD
    return out


def gather_kernel(s, inp):
    return gather_block_tables(s["state"], s["num_blocks"], s["idx"], s["padded"], inp, widths=s["widths_t"],
                               num_reqs=s["n"])


def slots_kernel(s, out):
    return compute_slot_mappings(s["state"], s["idx"], s["qsl"], s["positions"], s["bs_t"], out,
                                 widths=s["widths_t"], has_slot_mapping=s["flags"], cp_size=s["cp"],
                                 cp_rank=s["rank"], cp_interleave=s["il"], num_reqs=s["n"],
                                 max_query_len=s["max_q"])


def check(s) -> list[str]:
    """Both kernels against the torch references, from poisoned buffers; the wrong parts, or []."""
    errs = []
    G, rows, wmax = s["state"].shape
    dev = s["state"].device
    got = gather_kernel(s, torch.full((G, rows, wmax), POISON32, dtype=torch.int32, device=dev))
    want = gather_torch(s, torch.full((G, rows, wmax), POISON32, dtype=torch.int32, device=dev))
    if not torch.equal(got, want):
        errs.append(f"gather: {int((got != want).sum())} entries differ")
    got = slots_kernel(s, torch.full((G, s["max_num_tokens"]), POISON64, dtype=torch.int64, device=dev))
    want = slots_torch(s, torch.full((G, s["max_num_tokens"]), POISON64, dtype=torch.int64, device=dev))
    if not torch.equal(got, want):
        errs.append(f"slot mappings: {int((got != want).sum())} entries differ")
    elif (got[:, s["T"]:][torch.tensor(s["flags"], device=dev)] != PAD).any():
        errs.append("slot mappings: tail not PAD")
    return errs


# --- timing --------------------------------------------------------------------------------------

def timer(cuda: bool):
    """(launch_us, graph_us) of a callable: do_bench / do_bench_cudagraph medians on a GPU; in the
    interpreter, the wall time of one call (and no graph)."""
    def on_gpu(fn):
        launch = triton.testing.do_bench(fn, warmup=10, rep=50, return_mode="median") * 1e3
        try:
            graph = triton.testing.do_bench_cudagraph(fn, rep=50, return_mode="median") * 1e3
        except Exception as e:  # a reference that cannot be captured: report it, time the rest
            print(f"  (graph timing failed: {type(e).__name__}: {e})")
            graph = None
        return launch, graph

    def on_cpu(fn):
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e6, None

    return on_gpu if cuda else on_cpu


def bench_shape(shape, rng, device, time_it) -> dict:
    s = build(shape, rng, device)
    errs = check(s)
    G, rows, wmax = s["state"].shape
    inp = torch.full((G, rows, wmax), POISON32, dtype=torch.int32, device=device)
    out = torch.full((G, s["max_num_tokens"]), POISON64, dtype=torch.int64, device=device)
    t = {}
    for name, fn in (("gather", lambda: gather_kernel(s, inp)), ("gather_torch", lambda: gather_torch(s, inp)),
                     ("slots", lambda: slots_kernel(s, out)), ("slots_torch", lambda: slots_torch(s, out))):
        t[name + "_us"], t[name + "_graph_us"] = time_it(fn)
    # the timed calls wrote the same buffers over and over: still right afterwards?
    if not errs and not torch.equal(out, slots_torch(s, out.clone())):
        errs.append("slot mappings wrong after the timing loop")
    name = f"{shape['reqs']}x{shape['mix']} G{shape['groups']} cp{shape['cp']}" + \
        (" +state" if shape.get("state_group") else "")
    return dict(name=name, reqs=s["n"], tokens=s["T"], max_num_tokens=s["max_num_tokens"], groups=G,
                widths=s["widths"], block_sizes=s["bss"], cp=s["cp"], cp_rank=s["rank"], cp_interleave=s["il"],
                copied_blocks=int(s["num_blocks"][:, s["idx"].long()].sum()), ok=not errs, errors=errs, **t)


def fmt(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def print_table(rows, floor):
    cols = ("gather_us", "gather_graph_us", "gather_torch_us", "gather_torch_graph_us",
            "slots_us", "slots_graph_us", "slots_torch_us", "slots_torch_graph_us")
    heads = ("gather", "g.graph", "g.torch", "g.t.graph", "slots", "s.graph", "s.torch", "s.t.graph")
    print(f"empty launch: {fmt(floor[0])} us (launch), {fmt(floor[1])} us (graph)")
    print(f"{'case':<28} {'tokens':>6} {'blocks':>8} " + " ".join(f"{h:>9}" for h in heads) + "  ok")
    for r in rows:
        print(f"{r['name']:<28} {r['tokens']:>6} {r['copied_blocks']:>8} "
              + " ".join(f"{fmt(r[c]):>9}" for c in cols) + ("  ok" if r["ok"] else "  MISMATCH"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="tiny shapes (runs in the CPU interpreter)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--seed", type=int, default=None, help="replay a run (default: a fresh seed)")
    args = ap.parse_args(argv)
    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % (1 << 31))
    rng = np.random.default_rng(seed)
    label = torch.cuda.get_device_name(0) if cuda else "cpu (Triton interpreter)"
    print(f"device {label}; torch {torch.__version__}, triton {triton.__version__}; "
          f"interpreted={kernels.interpreted()}; seed {seed}")
    time_it = timer(cuda)
    buf = torch.zeros(1, device=device)
    floor = time_it(lambda: empty_launch(buf))
    rows = []
    for shape in shapes(args.smoke):
        rows.append(bench_shape(shape, rng, device, time_it))
        for e in rows[-1]["errors"]:
            print(f"MISMATCH {rows[-1]['name']}: {e}")
    print_table(rows, floor)
    bad = [r["name"] for r in rows if not r["ok"]]
    print(f"MRV2 bench: {len(rows)} cases, " + (f"{len(bad)} MISMATCH: {', '.join(bad)}" if bad else "all match"))
    if args.json:
        Path(args.json).write_text(json.dumps(dict(
            device=label, torch=torch.__version__, triton=triton.__version__, interpreted=kernels.interpreted(),
            seed=seed, smoke=args.smoke, empty_launch_us=floor[0], empty_launch_graph_us=floor[1],
            all_ok=not bad, cases=rows), indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
