"""Byte addresses inside one layer's paged KV cache.

A KV element is named by ``(kv, block, offset_in_block, head, dim)``; its slot is
``block * block_size + offset_in_block``. Where that element sits in memory depends on two
choices, both named, never mixed silently:

* the *cache layout family* — how K and V share the tensor (``ALL_CACHE_LAYOUTS``):

  ``flash_attn``             ``[2, B, N, H, D]`` (NHD) / ``[2, B, H, N, D]`` (HND): a whole K plane,
                             then a whole V plane (vLLM's FlashAttention backend before v0.23.0; Flex,
                             NHD only, before v0.23.0);
  ``flashinfer``             ``[B, 2, N, H, D]`` (NHD) / ``[B, 2, H, N, D]`` (HND): each block holds its
                             K then its V (FlashInfer's documented 5-D layout; vLLM's FlashInfer and
                             Triton backends before v0.26.0, FlashAttention v0.23.0 .. v0.25.x);
  ``flashinfer_packed``      ``[B, N, H, 2D]`` (NHD) / ``[B, H, N, 2D]`` (HND): K and V packed in the
                             last dimension, K in ``[..., :D]``, V in ``[..., D:]`` (every vLLM backend
                             since v0.26.0, PR #44455 of 2026-07-11);
  ``flex_interleaved``       ``[B, N, 2, H, D]``, NHD only: inside a block, each token's K (all heads)
                             then its V (vLLM's Flex backend v0.23.0 .. v0.25.x, PR #42095);

  ``CACHE_LAYOUTS`` keeps the first three, the families with both NHD and HND forms;

* the *layout* ``NHD`` / ``HND`` — whether, inside a block, a token's heads (NHD) or a head's
  tokens (HND) are contiguous.

Here B = num_blocks, N = block_size, H = num_kv_heads, D = head_dim; shapes are physical (the
order in memory, contiguous). Every element is one dtype item; fp8 is one byte.

``cache_layout_for(version, attn_backend)`` names the family a vLLM release allocates for a
backend (from v0.29.0 one of the standardized ``[L, B, H, N, C]`` layouts instead, e.g. "LBNHC": see
``kvviz.core.kv_cache_layout``), and ``layouts_for`` whether that backend follows ``VLLM_KV_CACHE_LAYOUT=HND`` at all; both
were read from each backend's ``get_kv_cache_shape`` and ``get_kv_cache_stride_order`` in vLLM's git
history (``CACHE_LAYOUT_CHANGES`` names the pull requests).
"""
from __future__ import annotations

from dataclasses import dataclass

from kvviz.constants import DTYPE_BYTES
from kvviz.core import kv_cache_layout as std
from kvviz.core.versions import ATTN_BACKENDS, MAIN, Rules, rules_for, version_key

LAYOUTS = ("NHD", "HND")
CACHE_LAYOUTS = ("flash_attn", "flashinfer", "flashinfer_packed")   # a public contract: never renamed
NHD_ONLY_CACHE_LAYOUTS = ("flex_interleaved",)
ALL_CACHE_LAYOUTS = CACHE_LAYOUTS + NHD_ONLY_CACHE_LAYOUTS
DEFAULT_CACHE_LAYOUT = "flash_attn"      # CacheGeometry's default when no family is named (unchanged)
DEFAULT_ATTN_BACKEND = "flash_attn"

# Physical axis order of each (family, layout), outermost first, as logical coordinates:
# kv, block, off(set in block), head, dim. The packed family's last physical dimension, 2D,
# is the pair of axes (kv, dim): index kv * D + dim, so it is listed as those two.
_AXES = {
    ("flash_attn", "NHD"): ("kv", "block", "off", "head", "dim"),
    ("flash_attn", "HND"): ("kv", "block", "head", "off", "dim"),
    ("flashinfer", "NHD"): ("block", "kv", "off", "head", "dim"),
    ("flashinfer", "HND"): ("block", "kv", "head", "off", "dim"),
    ("flashinfer_packed", "NHD"): ("block", "off", "head", "kv", "dim"),
    ("flashinfer_packed", "HND"): ("block", "head", "off", "kv", "dim"),
    ("flex_interleaved", "NHD"): ("block", "off", "kv", "head", "dim"),
}

# The letters of every shape kvviz writes (pages, README, ``offset --help``): vLLM's own, as in its
# standardized [L, B, H, N, C] layout (kvviz.core.kv_cache_layout).
NOTATION = "B = blocks (--num-blocks), N = tokens per block (--block-size), H = KV heads, D = head dim"

# Physical shape as the framework allocates it, in symbols (for prose and figures).
SHAPE_TEXT = {
    ("flash_attn", "NHD"): "[2, B, N, H, D]", ("flash_attn", "HND"): "[2, B, H, N, D]",
    ("flashinfer", "NHD"): "[B, 2, N, H, D]", ("flashinfer", "HND"): "[B, 2, H, N, D]",
    ("flashinfer_packed", "NHD"): "[B, N, H, 2D]", ("flashinfer_packed", "HND"): "[B, H, N, 2D]",
    ("flex_interleaved", "NHD"): "[B, N, 2, H, D]",
}


def check_cache_layout(name: str) -> str:
    if name not in ALL_CACHE_LAYOUTS:
        raise ValueError(f"cache layout must be one of {', '.join(ALL_CACHE_LAYOUTS)}, not {str(name)[:40]!r}")
    return name


_WORDS = {"B": "num_blocks", "N": "block_size", "H": "num_kv_heads", "D": "head_dim", "2D": "2*head_dim"}


def shape_words(family: str, layout: str = "NHD") -> str:
    """The physical shape in words, "[num_blocks, block_size, 2, num_kv_heads, head_dim]": for
    messages read where the letters may mean something else."""
    dims = SHAPE_TEXT[(family, layout)].strip("[]").split(", ")
    return "[" + ", ".join(_WORDS.get(d, d) for d in dims) + "]"


def family_layouts(family: str) -> tuple[str, ...]:
    """The layouts a family has: NHD and HND, or NHD alone (``flex_interleaved``)."""
    return ("NHD",) if check_cache_layout(family) in NHD_ONLY_CACHE_LAYOUTS else LAYOUTS


# --- which family each vLLM release allocates for each attention backend -------------------------

@dataclass(frozen=True)
class LayoutChange:
    """One change of a backend's cache allocation, read from vLLM's git history."""
    backends: tuple[str, ...]
    pr: int
    date: str | None      # merge date (None: not known; read from the wheel)
    first_release: str    # the first plain release tag containing it
    summary: str


CACHE_LAYOUT_CHANGES = (
    LayoutChange(("triton",), 37940, "2026-04-01", "v0.20.0",
                 "Triton's stride order follows VLLM_KV_CACHE_LAYOUT: HND = (0, 1, 3, 2, 4); before, the "
                 "Triton cache was NHD whatever the setting"),
    LayoutChange(("flash_attn",), 42095, "2026-05-26", "v0.23.0",
                 "FlashAttention num-blocks first: (num_blocks, 2, block_size, H, D), the flashinfer family"),
    LayoutChange(("flex",), 42095, "2026-05-26", "v0.23.0",
                 "Flex (num_blocks, 2, block_size, H, D) allocated in stride order (0, 2, 1, 3, 4): "
                 "physically [B, N, 2, H, D], NHD only"),
    LayoutChange(ATTN_BACKENDS, 44455, "2026-07-11", "v0.26.0",
                 "K and V packed into the content dim, logical (num_blocks, H, block_size, 2D): "
                 "[B, N, H, 2D] (NHD) / [B, H, N, 2D] (HND); Flex always NHD"),
    LayoutChange(ATTN_BACKENDS, std.STANDARDIZED_PR, None, std.FIRST_RELEASE,
                 "one int8 allocation for the whole KV cache, each layer a view [L, B, H, N, C] in one of six "
                 "orders: LBNHC by default (within a layer the packed NHD bytes), LBHNC for FlashInfer on SM10x"),
)

# family by Rules.cache_layout_era and backend (vLLM's get_kv_cache_shape + stride order)
_ERA_FAMILY = {
    "kv_first": {"flash_attn": "flash_attn", "flashinfer": "flashinfer", "triton": "flashinfer",
                 "flex": "flash_attn"},
    "blocks_first": {"flash_attn": "flashinfer", "flashinfer": "flashinfer", "triton": "flashinfer",
                     "flex": "flex_interleaved"},
    "packed": {b: "flashinfer_packed" for b in ATTN_BACKENDS},
}
# the first release whose allocation for the backend follows VLLM_KV_CACHE_LAYOUT=HND (None: never;
# Flex has a fixed stride order or none); FlashAttention and FlashInfer always did
_HND_SINCE = {"flash_attn": "v0.11.0", "flashinfer": "v0.11.0", "triton": "v0.20.0", "flex": None}


def check_attn_backend(name: str) -> str:
    if name not in ATTN_BACKENDS:
        raise ValueError(f"attention backend must be one of {', '.join(ATTN_BACKENDS)}, not {str(name)[:40]!r}")
    return name


def cache_layout_for(version_or_rules: str | Rules | None, attn_backend: str, sm10x: bool = False) -> str:
    """The cache layout family vLLM ``version_or_rules`` (a version string, as ``rules_for`` reads it,
    or its ``Rules``; None: main) allocates for ``attn_backend``; from v0.29.0 the standardized layout
    it resolves instead ("LBNHC"; FlashInfer on an SM10x GPU, ``sm10x``: "LBHNC"). ValueError with
    one sentence for an unknown version or backend."""
    rules = rules_for(version_or_rules)
    if rules.cache_layout_era == "standardized":
        return std.default_layout(rules, check_attn_backend(attn_backend), sm10x)
    return _ERA_FAMILY[rules.cache_layout_era][check_attn_backend(attn_backend)]


def layouts_for(version_or_rules: str | Rules | None, attn_backend: str) -> tuple[str, ...]:
    """The layouts that release's backend can allocate: ("NHD", "HND") when its stride order follows
    VLLM_KV_CACHE_LAYOUT, ("NHD",) when the cache is NHD whatever the setting."""
    rules = rules_for(version_or_rules)
    family = cache_layout_for(rules, attn_backend)
    if family in std.KV_CACHE_LAYOUTS:   # the in-block orders the backend accepts, NHD first
        got = {std.in_block_layout(x) for x in std.supported_layouts(rules, attn_backend)}
        return tuple(x for x in LAYOUTS if x in got)
    since = _HND_SINCE[attn_backend]
    if since is None or version_key(rules.name) < version_key(since):
        return ("NHD",)
    return family_layouts(family)


def check_backend_layout(version_or_rules: str | Rules | None, attn_backend: str, layout: str) -> str:
    """``layout`` if that release's backend can allocate it; else ValueError with one sentence."""
    rules = rules_for(version_or_rules)
    if layout not in layouts_for(rules, attn_backend):
        family = cache_layout_for(rules, attn_backend)
        shape = "[L, B, N, H, C]" if family in std.KV_CACHE_LAYOUTS else shape_words(family)
        raise ValueError(f"vLLM {rules.name}'s {attn_backend} backend has no {str(layout)[:8]} cache: it "
                         f"always allocates NHD, {shape} ({family})")
    return layout


def layout_changes(attn_backend: str, version_or_rules: str | Rules | None = None) -> list[LayoutChange]:
    """The changes of ``attn_backend``'s allocation up to that release (None: main), oldest first."""
    key = version_key(rules_for(version_or_rules).name)
    return [c for c in CACHE_LAYOUT_CHANGES
            if check_attn_backend(attn_backend) in c.backends and version_key(c.first_release) <= key]


# the app's and ``kvviz offset``'s default: what the newest vLLM allocates for FlashAttention
NEWEST_CACHE_LAYOUT = cache_layout_for(MAIN, DEFAULT_ATTN_BACKEND)


@dataclass(frozen=True)
class CacheGeometry:
    layout: str
    num_blocks: int
    block_size: int
    num_kv_heads: int
    head_dim: int
    dtype: str = "float16"
    cache_layout: str = DEFAULT_CACHE_LAYOUT

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be NHD or HND, not {self.layout!r}")
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"dtype must be one of {sorted(DTYPE_BYTES)}, not {self.dtype!r}")
        if self.layout not in family_layouts(self.cache_layout):
            raise ValueError(f"the {self.cache_layout} cache layout has no {self.layout} form (it is "
                             f"{shape_words(self.cache_layout)}, NHD only)")
        for name in ("num_blocks", "block_size", "num_kv_heads", "head_dim"):
            if int(getattr(self, name)) <= 0:
                raise ValueError(f"{name} must be positive")

    # --- shape -----------------------------------------------------------------------------

    @property
    def itemsize(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def axes(self) -> tuple[str, ...]:
        """The five logical coordinates in physical order, outermost first."""
        return _AXES[(self.cache_layout, self.layout)]

    def _size(self, axis: str) -> int:
        return {"kv": 2, "block": self.num_blocks, "off": self.block_size, "head": self.num_kv_heads,
                "dim": self.head_dim}[axis]

    @property
    def coord_strides(self) -> dict[str, int]:
        """Element stride of each logical coordinate (kv, block, off, head, dim)."""
        out, s = {}, 1
        for axis in reversed(self.axes):
            out[axis] = s
            s *= self._size(axis)
        return out

    @property
    def shape(self) -> tuple[int, ...]:
        """Physical shape of the cache tensor (4-D for the packed family, 5-D otherwise)."""
        sizes = [self._size(a) for a in self.axes]
        if self.cache_layout == "flashinfer_packed":
            return (*sizes[:3], 2 * self.head_dim)
        return tuple(sizes)

    @property
    def shape_text(self) -> str:
        return SHAPE_TEXT[(self.cache_layout, self.layout)]

    @property
    def strides(self) -> tuple[int, ...]:
        """Element strides of the physical tensor (contiguous)."""
        s = [1] * len(self.shape)
        for i in range(len(s) - 2, -1, -1):
            s[i] = s[i + 1] * self.shape[i + 1]
        return tuple(s)

    @property
    def num_slots(self) -> int:
        return self.num_blocks * self.block_size

    @property
    def total_elements(self) -> int:
        return 2 * self.num_slots * self.num_kv_heads * self.head_dim

    @property
    def total_bytes(self) -> int:
        return self.total_elements * self.itemsize

    # --- encode / decode -----------------------------------------------------------------------

    def element_index(self, kv: str, block: int, off: int, head: int, dim: int) -> int:
        """Element offset of (kv, block, offset_in_block, head, dim); coordinates are checked."""
        if not 0 <= block < self.num_blocks:
            raise ValueError(f"block {block} is outside 0 .. {self.num_blocks - 1}")
        if not 0 <= off < self.block_size:
            raise ValueError(f"offset in block {off} is outside 0 .. {self.block_size - 1}")
        self._check_coords(block * self.block_size + off, head, dim, kv)
        c = {"kv": 0 if kv == "k" else 1, "block": block, "off": off, "head": head, "dim": dim}
        st = self.coord_strides
        return sum(c[a] * st[a] for a in self.axes)

    def element_offset(self, slot: int, head: int, dim: int, kv: str = "k") -> int:
        self._check_coords(slot, head, dim, kv)
        block, off = divmod(slot, self.block_size)
        return self.element_index(kv, block, off, head, dim)

    def address(self, slot: int, head: int, dim: int, kv: str = "k") -> dict:
        e = self.element_offset(slot, head, dim, kv)
        block, off = divmod(slot, self.block_size)
        return {"element_offset": e, "byte_offset": e * self.itemsize,
                "block": block, "offset_in_block": off}

    def decode_elements(self, elements):
        """Element offsets (an int or a numpy integer array, assumed in range) ->
        (plane, block, offset_in_block, head, dim), plane 0 = K, 1 = V."""
        st = self.coord_strides
        rem, got = elements, {}
        for axis in self.axes:
            got[axis], rem = divmod(rem, st[axis])
        return got["kv"], got["block"], got["off"], got["head"], got["dim"]

    def decode(self, byte_offset: int) -> dict:
        if isinstance(byte_offset, bool) or int(byte_offset) != byte_offset:
            raise ValueError(f"byte offset must be a whole number, not {byte_offset!r}")
        byte_offset = int(byte_offset)
        if not 0 <= byte_offset < self.total_bytes:
            raise ValueError(f"byte offset {byte_offset} is outside the cache "
                             f"(0 .. {self.total_bytes - 1})")
        element, byte_in_element = divmod(byte_offset, self.itemsize)
        plane, block, off, head, dim = self.decode_elements(element)
        return {"kv": "k" if plane == 0 else "v", "block": block, "offset_in_block": off,
                "slot": block * self.block_size + off, "head": head, "dim": dim,
                "byte_in_element": byte_in_element}

    def _check_coords(self, slot, head, dim, kv):
        if kv not in ("k", "v"):
            raise ValueError("kv must be 'k' or 'v'")
        if not 0 <= slot < self.num_slots:
            raise ValueError(f"slot {slot} is outside the cache (0 .. {self.num_slots - 1})")
        if not 0 <= head < self.num_kv_heads:
            raise ValueError(f"head {head} is outside 0 .. {self.num_kv_heads - 1}")
        if not 0 <= dim < self.head_dim:
            raise ValueError(f"dim {dim} is outside 0 .. {self.head_dim - 1}")
