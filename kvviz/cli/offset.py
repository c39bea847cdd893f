"""`kvviz offset`: NHD/HND byte addresses in one layer's cache, and their decoding.

The cache layout family is named, never guessed: it is the one vLLM ``--vllm`` (default main)
allocates for ``--attn-backend`` (default flash_attn), unless ``--cache-layout`` names one by hand.
The output always carries ``"cache_layout"`` (the family used), ``"vllm"`` (the release whose rules
were read, e.g. v0.21.0 for v0.21.1) and ``"attn_backend"``.
"""
from __future__ import annotations

from kvviz.cli import dump_json
from kvviz.errors import BadInput
from kvviz.core.layout import (ALL_CACHE_LAYOUTS, DEFAULT_ATTN_BACKEND, NEWEST_CACHE_LAYOUT, CacheGeometry,
                               cache_layout_for, check_backend_layout)
from kvviz.cli.versions import checked_rules, requested
from kvviz.core.versions import ATTN_BACKENDS, MAIN, RELEASES, rules_for


def register(sub) -> None:
    p = sub.add_parser(
        "offset", help="byte address of (slot, head, dim), or decode a byte address",
        description="One layer's cache is one tensor (N = --num-blocks, B = --block-size). Its cache layout "
        "family is the one vLLM --vllm allocates for --attn-backend, or the one --cache-layout names: "
        "flash_attn [2, N, B, H, D] (NHD) / [2, N, H, B, D] (HND), K plane first (FlashAttention before "
        "v0.23.0; Flex before v0.23.0, NHD only); flashinfer [N, 2, B, H, D] / [N, 2, H, B, D] (FlashInfer "
        "and Triton before v0.26.0, FlashAttention v0.23.0-v0.25.x); flashinfer_packed [N, B, H, 2D] / "
        "[N, H, B, 2D], K in [..., :D], V in [..., D:] (every backend since v0.26.0); flex_interleaved "
        "[N, B, 2, H, D], NHD only (Flex v0.23.0-v0.25.x). Triton follows HND from v0.20.0; Flex never. "
        "With --slot/--head/--dim prints {element_offset, byte_offset, block, offset_in_block}; with "
        "--byte-offset prints {kv, block, offset_in_block, slot, head, dim, byte_in_element}; both add "
        "\"cache_layout\", \"vllm\" (the release whose rules apply) and \"attn_backend\".")
    p.add_argument("--layout", required=True, choices=["NHD", "HND"])
    p.add_argument("--block-size", type=int, required=True)
    p.add_argument("--num-kv-heads", type=int, required=True)
    p.add_argument("--head-dim", type=int, required=True)
    p.add_argument("--dtype", required=True, choices=["float16", "bfloat16", "float32", "fp8"])
    p.add_argument("--num-blocks", type=int, required=True)
    p.add_argument("--slot", type=int)
    p.add_argument("--head", type=int)
    p.add_argument("--dim", type=int)
    p.add_argument("--kv", choices=["k", "v"], default="k")
    p.add_argument("--byte-offset", type=int)
    p.add_argument("--vllm", "--profile", dest="vllm", metavar="VERSION", default=MAIN,
                   help=f"the vLLM release whose cache allocation to follow, {RELEASES[0]} .. {RELEASES[-1]} or "
                   f"main (default; a version between releases follows the older one)")
    p.add_argument("--attn-backend", choices=list(ATTN_BACKENDS), default=DEFAULT_ATTN_BACKEND,
                   help=f"the attention backend whose cache to follow (default {DEFAULT_ATTN_BACKEND})")
    p.add_argument("--cache-layout", choices=list(ALL_CACHE_LAYOUTS), default=None,
                   help="how K and V share the cache tensor, named by hand (overrides --vllm/--attn-backend; "
                   f"default: the family they pick, {NEWEST_CACHE_LAYOUT} for main)")
    p.set_defaults(func=run)


def _family(args) -> tuple[str, str]:
    """(release name, family) from --vllm/--attn-backend, or the family --cache-layout names."""
    rules = checked_rules(args.vllm, "--vllm: ")
    if args.cache_layout is not None:
        return rules.name, args.cache_layout
    try:
        check_backend_layout(rules, args.attn_backend, args.layout)
    except ValueError as e:
        raise BadInput(f"{e}; give --layout NHD, or name a family with --cache-layout") from None
    return rules.name, cache_layout_for(rules, args.attn_backend)


def run(args) -> int:
    try:
        release, family = _family(args)
        geo = CacheGeometry(args.layout, args.num_blocks, args.block_size, args.num_kv_heads,
                            args.head_dim, args.dtype, family)
        if args.byte_offset is not None:
            if any(v is not None for v in (args.slot, args.head, args.dim)):
                raise BadInput("give either --byte-offset or --slot/--head/--dim, not both")
            out = geo.decode(args.byte_offset)
        else:
            missing = [n for n in ("slot", "head", "dim") if getattr(args, n) is None]
            if missing:
                raise BadInput("missing --" + ", --".join(missing) + " (or give --byte-offset)")
            out = geo.address(args.slot, args.head, args.dim, args.kv)
        out.update(cache_layout=family, vllm=release, attn_backend=args.attn_backend)
        out.update(requested(args.vllm, rules_for(release)) if args.vllm != MAIN else {})
        print(dump_json(out))
        return 0
    except BadInput:
        raise
    except ValueError as e:
        raise BadInput(str(e)) from None
