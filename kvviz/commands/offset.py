"""`kvviz offset`: NHD/HND byte addresses in one layer's cache, and their decoding."""
from __future__ import annotations

from ..cli import dump_json
from ..errors import BadInput
from ..layout import CacheGeometry


def register(sub) -> None:
    p = sub.add_parser(
        "offset", help="byte address of (slot, head, dim), or decode a byte address",
        description="The cache is one tensor, K plane first: [2, N, B, H, D] (NHD) or [2, N, H, B, D] "
        "(HND). With --slot/--head/--dim prints {element_offset, byte_offset, block, offset_in_block}; "
        "with --byte-offset prints {kv, block, offset_in_block, slot, head, dim, byte_in_element}.")
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
    p.set_defaults(func=run)


def run(args) -> int:
    try:
        geo = CacheGeometry(args.layout, args.num_blocks, args.block_size, args.num_kv_heads,
                            args.head_dim, args.dtype)
        if args.byte_offset is not None:
            if any(v is not None for v in (args.slot, args.head, args.dim)):
                raise BadInput("give either --byte-offset or --slot/--head/--dim, not both")
            print(dump_json(geo.decode(args.byte_offset)))
            return 0
        missing = [n for n in ("slot", "head", "dim") if getattr(args, n) is None]
        if missing:
            raise BadInput("missing --" + ", --".join(missing) + " (or give --byte-offset)")
        print(dump_json(geo.address(args.slot, args.head, args.dim, args.kv)))
        return 0
    except BadInput:
        raise
    except ValueError as e:
        raise BadInput(str(e)) from None
