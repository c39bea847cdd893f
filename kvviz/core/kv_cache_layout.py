"""Byte addresses in vLLM's standardized KV cache (v0.29.0 and newer, PR #51718).

From v0.29.0 the whole KV cache is one int8 allocation. Every layer of a KV cache group is an
``as_strided`` view into it; the logical axes are always ``[L, B, H, N, C]``:

  L = layers of the group, B = blocks, H = KV heads, N = tokens per block, and
  C = content bytes of one (head, token) = (D + Dv) * dtype size: the K vector in bytes
  ``[0, D*es)``, the V vector right after it in ``[D*es, (D+Dv)*es)``.

A ``KVCacheLayout`` names the physical order of those five axes, outermost first (vLLM's
``vllm/v1/kv_cache_layout.py``): LBHNC, LBNHC, LHBNC, BLHNC, BLNHC, BHLNC. ``VLLM_KV_CACHE_LAYOUT``
also accepts NHD (= LBNHC) and HND (= LBHNC). Byte strides are built innermost first over the sizes
(L, B, H, N, C) in that order (``kv_cache_interface.py compute_layout_strides``); block-outer layouts
fix the block stride to the bytes of one block of every layer, which for one group of equal layers is
the same number. Layer l's block b starts at ``offset + l * layer_stride + b * block_stride``
(``KVCacheTensor``).

Groups alias from byte 0 (``core/kv_cache_utils.py get_kv_cache_config_from_groups``; v0.34.0
``core/kv_cache_planning.py``): layer i of every group starts at the same bytes, which is safe because
a block id belongs to one group at a time. So a group index never changes an address.

Which order a release picks: the first layout every backend supports (``backends/utils.py
resolve_kv_cache_layout``): FlashAttention and Triton declare nothing, so vLLM's default preference
LBNHC, LBHNC, BLNHC, BLHNC, BHLNC, LHBNC applies (LBNHC); Flex supports LBNHC only; FlashInfer
declares LBHNC, BLHNC on SM10x (Blackwell) GPUs, otherwise nothing up to v0.33.0 and, from v0.34.0,
the default preference without LHBNC (``get_flashinfer_kv_cache_layouts``).

v0.34.0's extensible KV cache (``Rules.extensible_kv_cache``, ``v1/worker/extensible_kv_cache.py
pad_kv_cache_segments``): the strides describe the reserved capacity, not the committed blocks, and in
the two block-compact layer-outer layouts (LBHNC, LBNHC) each layer region is padded to the VMM
granule: ``layer_stride = round_up(capacity_blocks * page, granule)``. Every other layout is left as
it is. The granule is the driver's, floored at 2 MiB (``utils/extensible_tensor.py granule_size``).
"""
from __future__ import annotations

from dataclasses import dataclass

from kvviz.constants import DTYPE_BYTES
from kvviz.core.versions import Rules, rules_for, version_key

AXES = ("L", "B", "H", "N", "C")          # logical order
# physical order, outermost first, of each layout (the letters name the logical axes)
KV_CACHE_LAYOUTS = ("LBHNC", "LBNHC", "LHBNC", "BLHNC", "BLNHC", "BHLNC")   # vLLM's enum order
ALIASES = {"NHD": "LBNHC", "HND": "LBHNC"}                                 # VLLM_KV_CACHE_LAYOUT's
DEFAULT_PREFERENCE = ("LBNHC", "LBHNC", "BLNHC", "BLHNC", "BHLNC", "LHBNC")
PADDED_LAYOUTS = ("LBHNC", "LBNHC")       # block-compact and layer-outer: padded by the extensible cache
FIRST_RELEASE = "v0.29.0"
STANDARDIZED_PR = 51718
FLASHINFER_NAMED_SINCE = "v0.34.0"        # FlashInfer's set drops LHBNC (it has no NHD/HND name)
DEFAULT_GRANULE_BYTES = 2 << 20           # CUDA's VMM granularity, vLLM's floor
ALIAS_NOTE = ("groups alias from byte 0: layer l of every KV cache group shares these bytes "
              "(a block id belongs to one group at a time)")


def check_kv_cache_layout(name: str) -> str:
    """The layout ``name`` names (an alias NHD/HND read as vLLM reads it); ValueError otherwise."""
    name = ALIASES.get(name, name)
    if name not in KV_CACHE_LAYOUTS:
        raise ValueError(f"KV cache layout must be one of {', '.join(KV_CACHE_LAYOUTS)} (or NHD, HND), "
                         f"not {str(name)[:40]!r}")
    return name


def is_standardized(version_or_rules: str | Rules | None) -> bool:
    """Whether that release allocates the standardized cache (v0.29.0 and newer)."""
    return rules_for(version_or_rules).cache_layout_era == "standardized"


def in_block_layout(layout: str) -> str:
    """NHD when a block's tokens are outside its heads (N before H), else HND."""
    layout = check_kv_cache_layout(layout)
    return "NHD" if layout.index("N") < layout.index("H") else "HND"


def one_layer_family(layout: str) -> tuple[str, str] | None:
    """(family, NHD/HND) of ``kvviz.core.layout`` that addresses one layer of a one-layer cache in
    ``layout`` byte for byte: the packed family ``[B, N, H, 2D]`` / ``[B, H, N, 2D]``, or None for
    LHBNC (heads outside blocks: no old family has that order)."""
    layout = check_kv_cache_layout(layout)
    if layout == "LHBNC":
        return None
    return "flashinfer_packed", in_block_layout(layout)


def supported_layouts(version_or_rules: str | Rules | None, attn_backend: str,
                      sm10x: bool = False) -> tuple[str, ...]:
    """The layouts vLLM's ``attn_backend`` accepts in that release, most preferred first (each
    backend's ``supported_kv_cache_layouts``); () before v0.29.0."""
    rules = rules_for(version_or_rules)
    if not is_standardized(rules):
        return ()
    if attn_backend == "flex":
        return ("LBNHC",)
    if attn_backend == "flashinfer":
        if sm10x:
            return ("LBHNC", "BLHNC")
        if version_key(rules.name) >= version_key(FLASHINFER_NAMED_SINCE):
            return tuple(x for x in DEFAULT_PREFERENCE if x != "LHBNC")
    return DEFAULT_PREFERENCE


def default_layout(version_or_rules: str | Rules | None, attn_backend: str, sm10x: bool = False) -> str | None:
    """The layout that release resolves for ``attn_backend`` with no VLLM_KV_CACHE_LAYOUT: the first
    supported one (None before v0.29.0)."""
    got = supported_layouts(version_or_rules, attn_backend, sm10x)
    return got[0] if got else None


def check_layout_for(version_or_rules: str | Rules | None, attn_backend: str, layout: str,
                     sm10x: bool = False) -> str:
    """``layout`` if that release's backend accepts it (as VLLM_KV_CACHE_LAYOUT must be), else
    ValueError with one sentence."""
    rules = rules_for(version_or_rules)
    if not is_standardized(rules):
        raise ValueError(f"the standardized KV cache layouts ({', '.join(KV_CACHE_LAYOUTS)}) first appear in "
                         f"vLLM {FIRST_RELEASE} (#{STANDARDIZED_PR}); {rules.name} allocates each backend's own "
                         f"shape, named by flash_attn, flashinfer, flashinfer_packed or flex_interleaved")
    name = check_kv_cache_layout(layout)
    ok = supported_layouts(rules, attn_backend, sm10x)
    if name not in ok:
        gpu = " on an SM10x GPU" if sm10x and attn_backend == "flashinfer" else ""
        raise ValueError(f"vLLM {rules.name}'s {attn_backend} backend{gpu} accepts only {', '.join(ok)}, "
                         f"not {name}")
    return name


def round_up(x: int, m: int) -> int:
    return -(-x // m) * m


@dataclass(frozen=True)
class KVCacheGeometry:
    """The bytes of one group of ``num_layers`` equal attention layers in the standardized cache.

    ``granule_bytes`` not None means v0.34.0's extensible cache, reserved for ``capacity_blocks``
    (default ``num_blocks``; the committed ``num_blocks`` may be fewer)."""
    num_layers: int
    num_blocks: int
    block_size: int
    num_kv_heads: int
    head_dim: int
    dtype: str = "float16"
    layout: str = "LBNHC"
    head_dim_v: int | None = None
    capacity_blocks: int | None = None
    granule_bytes: int | None = None
    num_groups: int = 1

    def __post_init__(self):
        object.__setattr__(self, "layout", check_kv_cache_layout(self.layout))
        if self.head_dim_v is None:
            object.__setattr__(self, "head_dim_v", self.head_dim)
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"dtype must be one of {sorted(DTYPE_BYTES)}, not {self.dtype!r}")
        for name in ("num_layers", "num_blocks", "block_size", "num_kv_heads", "head_dim", "num_groups"):
            if isinstance(getattr(self, name), bool) or int(getattr(self, name)) <= 0:
                raise ValueError(f"{name} must be a positive whole number")
        if int(self.head_dim_v) < 0:
            raise ValueError("head_dim_v must not be negative")
        if self.capacity_blocks is not None and self.capacity_blocks < self.num_blocks:
            raise ValueError(f"capacity_blocks {self.capacity_blocks} is below num_blocks {self.num_blocks}: "
                             f"the committed blocks are a prefix of the reserved capacity")
        if self.granule_bytes is not None and self.granule_bytes <= 0:
            raise ValueError("granule_bytes must be positive")

    # --- sizes and strides -------------------------------------------------------------------

    @property
    def itemsize(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def extensible(self) -> bool:
        return self.granule_bytes is not None

    @property
    def planned_blocks(self) -> int:
        """Blocks the strides describe: the reserved capacity (extensible), else num_blocks."""
        return (self.capacity_blocks or self.num_blocks) if self.extensible else self.num_blocks

    @property
    def content_bytes(self) -> int:
        """C: K then V of one (head, token), in bytes."""
        return (self.head_dim + self.head_dim_v) * self.itemsize

    @property
    def page_bytes(self) -> int:
        """One layer's block: H * N * C bytes."""
        return self.num_kv_heads * self.block_size * self.content_bytes

    def _sizes(self) -> dict[str, int]:
        return {"L": self.num_layers, "B": self.planned_blocks, "H": self.num_kv_heads,
                "N": self.block_size, "C": self.content_bytes}

    @property
    def padded(self) -> bool:
        return self.extensible and self.layout in PADDED_LAYOUTS

    @property
    def strides(self) -> dict[str, int]:
        """Byte stride of each logical axis L, B, H, N, C (C's is 1)."""
        sizes, out, s = self._sizes(), {}, 1
        for axis in reversed(self.layout):
            out[axis] = s
            s *= sizes[axis]
        if self.padded:
            out["L"] = round_up(self.planned_blocks * self.page_bytes, self.granule_bytes)
        return {a: out[a] for a in AXES}

    @property
    def layer_stride(self) -> int:
        return self.strides["L"]

    @property
    def block_stride(self) -> int:
        return self.strides["B"]

    @property
    def total_bytes(self) -> int:
        """Bytes of the (reserved) allocation this group spans."""
        outer = self.layout[0]
        return self.strides[outer] * self._sizes()[outer]

    def shape_text(self) -> str:
        """The physical order in symbols: "[L, B, N, H, C]"."""
        return "[" + ", ".join(self.layout) + "]"

    # --- encode / decode -----------------------------------------------------------------------

    def address(self, layer: int, block: int, token: int, head: int, kv: str, dim: int, group: int = 0) -> int:
        """Byte offset of the first byte of element ``dim`` of K or V of (layer, block, token in
        block, head); the same for every ``group``. ValueError with one sentence for a coordinate
        out of range."""
        for name, value, top in (("group", group, self.num_groups), ("layer", layer, self.num_layers),
                                 ("block", block, self.num_blocks), ("token in block", token, self.block_size),
                                 ("head", head, self.num_kv_heads)):
            _check_index(name, value, top)
        if kv not in ("k", "v"):
            raise ValueError("kv must be 'k' or 'v'")
        _check_index("dim", dim, self.head_dim if kv == "k" else self.head_dim_v)
        c = (0 if kv == "k" else self.head_dim * self.itemsize) + dim * self.itemsize
        st = self.strides
        return layer * st["L"] + block * st["B"] + head * st["H"] + token * st["N"] + c

    def decode(self, byte_offset: int) -> dict:
        """(layer, block, offset_in_block, slot, head, kv, dim, byte_in_element) of a byte of the
        allocation; ValueError with one sentence for a byte outside it, in padding, or in a block
        the extensible cache has not committed."""
        if isinstance(byte_offset, bool) or int(byte_offset) != byte_offset:
            raise ValueError(f"byte offset must be a whole number, not {byte_offset!r}")
        rem = int(byte_offset)
        if not 0 <= rem < self.total_bytes:
            raise ValueError(f"byte offset {rem} is outside the allocation (0 .. {self.total_bytes - 1})")
        sizes, st, got = self._sizes(), self.strides, {}
        for axis in self.layout:
            got[axis], rem = divmod(rem, st[axis])
            if got[axis] >= sizes[axis]:
                raise ValueError(f"byte offset {byte_offset} lies in the padding after layer {got['L']}'s "
                                 f"region (each region is rounded up to the {self.granule_bytes}-byte granule)")
        if got["B"] >= self.num_blocks:
            raise ValueError(f"byte offset {byte_offset} is in block {got['B']}, reserved but not committed "
                             f"(only blocks 0 .. {self.num_blocks - 1} are)")
        c = got["C"]
        k_bytes = self.head_dim * self.itemsize
        kv, c = ("k", c) if c < k_bytes else ("v", c - k_bytes)
        dim, byte_in_element = divmod(c, self.itemsize)
        return {"layer": got["L"], "kv": kv, "block": got["B"], "offset_in_block": got["N"],
                "slot": got["B"] * self.block_size + got["N"], "head": got["H"], "dim": dim,
                "byte_in_element": byte_in_element}

    def describe(self) -> dict:
        """The numbers a reader needs: layout, strides, sizes, and the group-alias rule."""
        out = {"cache_layout": self.layout, "num_layers": self.num_layers, "layer_stride": self.layer_stride,
               "block_stride": self.block_stride, "strides": self.strides, "page_bytes": self.page_bytes,
               "total_bytes": self.total_bytes, "groups": ALIAS_NOTE}
        if self.extensible:
            out.update(extensible_kv_cache=True, capacity_blocks=self.planned_blocks,
                       granule_bytes=self.granule_bytes, layer_region_padded=self.padded)
        return out


def _check_index(name: str, value, top: int) -> None:
    if isinstance(value, bool) or int(value) != value or not 0 <= value < top:
        raise ValueError(f"{name} {value!r} is outside 0 .. {top - 1}")
