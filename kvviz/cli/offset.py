"""`kvviz offset`: NHD/HND byte addresses in one layer's cache, and their decoding.

The cache layout family (``--cache-layout``) is named, never guessed: the default,
``flash_attn``, is the layout this command always used, and an invocation without the flag
prints exactly what it printed before. With the flag, the output also carries
``"cache_layout"`` naming the family.
"""
from __future__ import annotations

from kvviz.cli import dump_json
from kvviz.errors import BadInput
from kvviz.core.layout import CACHE_LAYOUTS, DEFAULT_CACHE_LAYOUT, CacheGeometry


def register(sub) -> None:
    p = sub.add_parser(
        "offset", help="byte address of (slot, head, dim), or decode a byte address",
        description="One layer's cache is one tensor (N = --num-blocks, B = --block-size). "
        "--cache-layout names how K and V share it: flash_attn (default; vLLM FlashAttention backend) "
        "[2, N, B, H, D] (NHD) / [2, N, H, B, D] (HND), K plane first; flashinfer (FlashInfer's 5-D layout, "
        "vLLM FlashInfer backend before 2026-07) [N, 2, B, H, D] / [N, 2, H, B, D]; flashinfer_packed "
        "(vLLM FlashInfer backend since 2026-07-11) [N, B, H, 2D] / [N, H, B, 2D], K in [..., :D], "
        "V in [..., D:]. With --slot/--head/--dim prints {element_offset, byte_offset, block, "
        "offset_in_block}; with --byte-offset prints {kv, block, offset_in_block, slot, head, dim, "
        "byte_in_element}. Given --cache-layout, the output also has \"cache_layout\".")
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
    p.add_argument("--cache-layout", choices=list(CACHE_LAYOUTS), default=None,
                   help=f"how K and V share the cache tensor (default {DEFAULT_CACHE_LAYOUT})")
    p.set_defaults(func=run)


def run(args) -> int:
    try:
        family = args.cache_layout or DEFAULT_CACHE_LAYOUT
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
        if args.cache_layout is not None:  # named on the command line: named in the output
            out["cache_layout"] = family
        print(dump_json(out))
        return 0
    except BadInput:
        raise
    except ValueError as e:
        raise BadInput(str(e)) from None
