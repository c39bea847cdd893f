"""`kvviz offset`: NHD/HND byte addresses in one layer's cache, and their decoding.

The cache layout family is named, never guessed: it is the one vLLM ``--vllm`` (default main)
allocates for ``--attn-backend`` (default flash_attn), unless ``--cache-layout`` names one by hand.
The output always carries ``"cache_layout"`` (the family used), ``"vllm"`` (the release whose rules
were read, e.g. v0.21.0 for v0.21.1) and ``"attn_backend"``.

From vLLM v0.29.0 (#51718) the cache is one allocation for every layer, ``[L, B, H, N, C]`` in one of
six orders (``kvviz.core.kv_cache_layout``): with no ``--cache-layout`` the order follows ``--layout``
as VLLM_KV_CACHE_LAYOUT does (NHD = LBNHC, HND = LBHNC) and must be one the backend accepts; the output
then also names the layer and the strides (``layer_stride``, ``block_stride``). Naming an old family
keeps the old one-layer answer, byte for byte.
"""
from __future__ import annotations

import argparse

from kvviz.cli import dump_json
from kvviz.errors import BadInput
from kvviz.core.layout import (ALL_CACHE_LAYOUTS, NOTATION, DEFAULT_ATTN_BACKEND, NEWEST_CACHE_LAYOUT, CacheGeometry,
                               cache_layout_for, check_backend_layout)
from kvviz.cli.versions import checked_rules, requested
from kvviz.core import kv_cache_layout as std
from kvviz.core.versions import ATTN_BACKENDS, MAIN, RELEASES, rules_for


def register(sub) -> None:
    p = sub.add_parser(
        "offset", help="byte address of (slot, head, dim), or decode a byte address",
        description=f"One layer's cache is one tensor; its shape in the letters every kvviz page and the README "
        f"use: {NOTATION}. Its cache layout "
        "family is the one vLLM --vllm allocates for --attn-backend, or the one --cache-layout names: "
        "flash_attn [2, B, N, H, D] (NHD) / [2, B, H, N, D] (HND), K plane first (FlashAttention before "
        "v0.23.0; Flex before v0.23.0, NHD only); flashinfer [B, 2, N, H, D] / [B, 2, H, N, D] (FlashInfer "
        "and Triton before v0.26.0, FlashAttention v0.23.0-v0.25.x); flashinfer_packed [B, N, H, 2D] / "
        "[B, H, N, 2D], K in [..., :D], V in [..., D:] (every backend since v0.26.0); flex_interleaved "
        "[B, N, 2, H, D], NHD only (Flex v0.23.0-v0.25.x). Triton follows HND from v0.20.0; Flex never. "
        "With --slot/--head/--dim prints {element_offset, byte_offset, block, offset_in_block}; with "
        "--byte-offset prints {kv, block, offset_in_block, slot, head, dim, byte_in_element}; both add "
        "\"cache_layout\", \"vllm\" (the release whose rules apply) and \"attn_backend\". From v0.29.0 vLLM "
        "allocates one buffer for all layers, logical [L, B, H, N, C] (L = --num-layers, C = (D + Dv) x "
        "dtype bytes, K first) in one of six orders, --cache-layout "
        "LBHNC|LBNHC|LHBNC|BLHNC|BLNHC|BHLNC; without it the order follows --layout (NHD = LBNHC, HND = "
        "LBHNC; flex accepts LBNHC only, flashinfer on SM10x --sm10x LBHNC/BLHNC); layer --layer of "
        "--num-layers is addressed and the output adds \"layer\", \"layer_stride\", \"block_stride\", "
        "\"strides\". v0.34.0's extensible KV cache (default on) pads each LBHNC/LBNHC layer region to the "
        "VMM granule over the reserved capacity. A 5-D order before v0.29.0 exits 2.")
    p.add_argument("--layout", required=True, choices=["NHD", "HND"])
    p.add_argument("--block-size", type=int, required=True, metavar="N", help="tokens per block (N)")
    p.add_argument("--num-kv-heads", type=int, required=True, metavar="H")
    p.add_argument("--head-dim", type=int, required=True, metavar="D")
    p.add_argument("--dtype", required=True, choices=["float16", "bfloat16", "float32", "fp8"])
    p.add_argument("--num-blocks", type=int, required=True, metavar="B", help="blocks in the cache (B)")
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
    p.add_argument("--cache-layout", choices=list(ALL_CACHE_LAYOUTS) + list(std.KV_CACHE_LAYOUTS), default=None,
                   help="how K and V share the cache tensor, named by hand (overrides --vllm/--attn-backend; "
                   f"default: the family they pick, {NEWEST_CACHE_LAYOUT} for main); from v0.29.0 also one of "
                   "the six [L, B, H, N, C] orders, which the backend must accept")
    p.add_argument("--num-layers", type=int, default=None,
                   help="v0.29.0+: layers sharing the allocation (default 1)")
    p.add_argument("--layer", type=int, default=None, help="v0.29.0+: the layer addressed (default 0)")
    p.add_argument("--head-dim-v", type=int, default=None, help="v0.29.0+: V's head dim (default --head-dim)")
    p.add_argument("--sm10x", action="store_true",
                   help="v0.29.0+: the GPU is SM10x (Blackwell), where FlashInfer accepts LBHNC and BLHNC only")
    p.add_argument("--extensible-kv-cache", action=argparse.BooleanOptionalAction, default=None,
                   help="v0.34.0+: the extensible KV cache (vLLM's default on CUDA: on for v0.34.0)")
    p.add_argument("--capacity-blocks", type=int, default=None,
                   help="v0.34.0+ extensible cache: blocks reserved (default --num-blocks)")
    p.add_argument("--granule-bytes", type=int, default=None,
                   help=f"v0.34.0+ extensible cache: VMM granule (default {std.DEFAULT_GRANULE_BYTES}, 2 MiB)")
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


_NEW = ("num_layers", "layer", "head_dim_v", "extensible_kv_cache", "capacity_blocks", "granule_bytes")


def _standardized_layout(args, rules) -> str | None:
    """The 5-D order to address, or None for the old one-layer families. BadInput with one sentence
    for a 5-D order or a v0.29+ option where the release has none."""
    named = args.cache_layout
    if named in std.KV_CACHE_LAYOUTS or (named is None and std.is_standardized(rules)):
        try:
            return std.check_layout_for(rules, args.attn_backend, named or args.layout, args.sm10x)
        except ValueError as e:
            raise BadInput(str(e)) from None
    given = [n for n in _NEW if getattr(args, n) is not None and getattr(args, n) is not False]
    if given:
        why = (f"vLLM {rules.name} has no standardized cache" if not std.is_standardized(rules)
               else f"--cache-layout {named} is one layer's tensor")
        raise BadInput(f"--{given[0].replace('_', '-')} describes the standardized [L, B, H, N, C] cache of vLLM "
                       f"{std.FIRST_RELEASE} and newer, but {why}")
    return None


def _std_geometry(args, rules, layout: str) -> std.KVCacheGeometry:
    ext = rules.extensible_kv_cache if args.extensible_kv_cache is None else args.extensible_kv_cache
    if ext and not rules.extensible_kv_cache:
        raise BadInput(f"the extensible KV cache first ships in vLLM v0.34.0; {rules.name} has none")
    if not ext and (args.capacity_blocks is not None or args.granule_bytes is not None):
        raise BadInput("--capacity-blocks and --granule-bytes describe the extensible KV cache, which is off here")
    return std.KVCacheGeometry(
        args.num_layers or 1, args.num_blocks, args.block_size, args.num_kv_heads, args.head_dim, args.dtype,
        layout, head_dim_v=args.head_dim_v, capacity_blocks=args.capacity_blocks if ext else None,
        granule_bytes=(args.granule_bytes or std.DEFAULT_GRANULE_BYTES) if ext else None)


def _decoding(args, *, with_layer: bool) -> bool:
    """True for ``--byte-offset`` (decode), False for ``--slot/--head/--dim`` (address); BadInput
    when both or neither are given. ``with_layer``: ``--layer`` belongs to the address (v0.29.0+)."""
    coords = ("slot", "head", "dim") + (("layer",) if with_layer else ())
    if args.byte_offset is not None:
        if any(getattr(args, n) is not None for n in coords):
            raise BadInput("give either --byte-offset or --slot/--head/--dim" + (" [--layer]" if with_layer else "")
                           + ", not both")
        return True
    missing = [n for n in ("slot", "head", "dim") if getattr(args, n) is None]
    if missing:
        raise BadInput("missing --" + ", --".join(missing) + " (or give --byte-offset)")
    return False


def _run_standardized(args, rules, layout: str) -> dict:
    geo = _std_geometry(args, rules, layout)
    if _decoding(args, with_layer=True):
        out = geo.decode(args.byte_offset)
    else:
        if not 0 <= args.slot < geo.num_blocks * geo.block_size:
            raise BadInput(f"slot {args.slot} is outside the cache (0 .. {geo.num_blocks * geo.block_size - 1})")
        block, off = divmod(args.slot, geo.block_size)
        layer = args.layer or 0
        byte = geo.address(layer, block, off, args.head, args.kv, args.dim)
        out = {"element_offset": byte // geo.itemsize, "byte_offset": byte, "layer": layer, "block": block,
               "offset_in_block": off}
    out.update(geo.describe())
    return out


def run(args) -> int:
    try:
        rules = checked_rules(args.vllm, "--vllm: ")
        layout5 = _standardized_layout(args, rules)
        if layout5 is not None:
            out = _run_standardized(args, rules, layout5)
            out.update(vllm=rules.name, attn_backend=args.attn_backend)
            out.update(requested(args.vllm, rules) if args.vllm != MAIN else {})
            print(dump_json(out))
            return 0
        release, family = _family(args)
        geo = CacheGeometry(args.layout, args.num_blocks, args.block_size, args.num_kv_heads,
                            args.head_dim, args.dtype, family)
        if _decoding(args, with_layer=False):
            out = geo.decode(args.byte_offset)
        else:
            out = geo.address(args.slot, args.head, args.dim, args.kv)
        out.update(cache_layout=family, vllm=release, attn_backend=args.attn_backend)
        out.update(requested(args.vllm, rules_for(release)) if args.vllm != MAIN else {})
        print(dump_json(out))
        return 0
    except BadInput:
        raise
    except ValueError as e:
        raise BadInput(str(e)) from None
