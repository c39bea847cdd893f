"""`kvviz dcp BATCH.json --world W`: decode context parallelism on real ranks (torch.distributed)."""
from __future__ import annotations

from kvviz.cli import dump_json, read_json_file
from kvviz.errors import BadInput

MAX_SEED = (1 << 31) - 1
MAX_REPEAT = 1000
MAX_TIMEOUT_S = 86400


def register(sub) -> None:
    p = sub.add_parser(
        "dcp", help="run a batch on W real DCP ranks and check the LSE merge",
        description="Start W ranks (torch.multiprocessing; or join torchrun's group when RANK/WORLD_SIZE are "
        "set), NCCL with a GPU per rank, gloo on the CPU otherwise. Each rank builds the batch's tables for "
        "its own rank, runs the Triton slot-mapping and KV-write kernels into its own cache, computes partial "
        "decode attention over its tokens with the log-sum-exp, all-gathers the LSEs and all-reduces the "
        "rescaled outputs. Rank 0 prints one JSON object: the merged output's error against dense fp32 "
        "attention, the check that every position is stored on exactly one rank, and per rank the tokens "
        "held, bytes written and the time of each collective and of the partial attention.")
    p.add_argument("batch", metavar="BATCH.json", help="a `compute` batch; dcp_rank in it is ignored")
    p.add_argument("--world", type=int, required=True, help="number of ranks W (1..16; the batch's "
                   "dcp_world_size, if it declares one, must equal it)")
    p.add_argument("--interleave", type=int, default=None,
                   help="cp_kv_cache_interleave_size (default: the batch's, else 1); must divide block_size")
    p.add_argument("--backend", default="auto", choices=["auto", "nccl", "gloo"],
                   help="auto: NCCL when there are >= W GPUs, else gloo (CPU ranks, Triton interpreter)")
    p.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always one JSON object")
    p.add_argument("--seed", type=int, default=0, help="seed of q, K and V (shared by every rank); default 0")
    p.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"], help="cache dtype")
    p.add_argument("--layout", default="NHD", choices=["NHD", "HND"])
    p.add_argument("--num-kv-heads", type=int, default=2)
    p.add_argument("--num-q-heads", type=int, default=None, help="default: 2 per KV head")
    p.add_argument("--head-dim", type=int, default=32)
    p.add_argument("--repeat", type=int, default=None,
                   help="timed calls of each collective, median reported (default 20 with NCCL, 1 with gloo)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds before the whole group is taken down (default 600)")
    p.epilog = ("Exit codes: 0 every check passed, 1 a check failed (the report is still printed), "
                "2 bad input or a rank that failed (one line; every rank is stopped).")
    p.set_defaults(func=run)


def _bounded(name: str, v, lo, hi):
    if v is not None and not lo <= v <= hi:
        raise BadInput(f"{name} must be between {lo} and {hi}, got {v:g}" if isinstance(v, float)
                       else f"{name} must be between {lo} and {hi}, got {v}")
    return v


def run(args) -> int:
    from kvviz.dist import launch
    from kvviz.dist.plan import DcpConfig, check_sizes, check_world, dcp_batch

    _bounded("--seed", args.seed, 0, MAX_SEED)
    _bounded("--repeat", args.repeat, 1, MAX_REPEAT)
    _bounded("--timeout", args.timeout, 1, MAX_TIMEOUT_S)
    spec = read_json_file(args.batch)
    norm, step0 = dcp_batch(spec, args.world, args.interleave)
    joined = launch.torchrun_env()
    if args.backend == "gloo" and joined is None:
        check_world(args.world, "gloo", 0)      # before torch is imported: a quick refusal
    backend, gpus = launch.choose_backend(args.backend, args.world)
    kv_heads = args.num_kv_heads
    cfg = DcpConfig(world=args.world, interleave=int(norm["cp_kv_cache_interleave_size"]), backend=backend,
                    seed=args.seed, num_kv_heads=kv_heads,
                    num_q_heads=args.num_q_heads if args.num_q_heads is not None else 2 * kv_heads,
                    head_dim=args.head_dim, dtype=args.dtype, layout=args.layout,
                    repeat=args.repeat or (20 if backend == "nccl" else 1), timeout_s=float(args.timeout))
    check_sizes(cfg, step0)
    if joined is not None:
        report = launch.join(cfg, norm, joined)
    else:
        check_world(args.world, backend, gpus)
        report = launch.spawn(cfg, norm)
    if report is None:      # a torchrun rank other than 0
        return 0
    print(dump_json(report), flush=True)
    return 0 if report["passed"] else 1
