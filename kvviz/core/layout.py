"""Byte addresses inside one layer's paged KV cache.

A KV element is named by ``(kv, block, offset_in_block, head, dim)``; its slot is
``block * block_size + offset_in_block``. Where that element sits in memory depends on two
choices, both named, never mixed silently:

* the *cache layout family* — how K and V share the tensor (``CACHE_LAYOUTS``):

  ``flash_attn`` (default)   ``[2, B, N, H, D]`` (NHD) / ``[2, B, H, N, D]`` (HND): a whole K plane,
                             then a whole V plane (vLLM's FlashAttention backend);
  ``flashinfer``             ``[B, 2, N, H, D]`` (NHD) / ``[B, 2, H, N, D]`` (HND): each block holds its
                             K then its V (FlashInfer's documented 5-D layout; vLLM's FlashInfer
                             backend until 2026-07);
  ``flashinfer_packed``      ``[B, N, H, 2D]`` (NHD) / ``[B, H, N, 2D]`` (HND): K and V packed in the
                             last dimension, K in ``[..., :D]``, V in ``[..., D:]`` (vLLM's FlashInfer
                             backend since 2026-07-11);

* the *layout* ``NHD`` / ``HND`` — whether, inside a block, a token's heads (NHD) or a head's
  tokens (HND) are contiguous.

Here B = num_blocks, N = block_size, H = num_kv_heads, D = head_dim; shapes are physical (the
order in memory, contiguous). Every element is one dtype item; fp8 is one byte.
"""
from __future__ import annotations

from dataclasses import dataclass

from kvviz.constants import DTYPE_BYTES

LAYOUTS = ("NHD", "HND")
CACHE_LAYOUTS = ("flash_attn", "flashinfer", "flashinfer_packed")
DEFAULT_CACHE_LAYOUT = "flash_attn"

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
}

# Physical shape as the framework allocates it, in symbols (for prose and figures).
SHAPE_TEXT = {
    ("flash_attn", "NHD"): "[2, B, N, H, D]", ("flash_attn", "HND"): "[2, B, H, N, D]",
    ("flashinfer", "NHD"): "[B, 2, N, H, D]", ("flashinfer", "HND"): "[B, 2, H, N, D]",
    ("flashinfer_packed", "NHD"): "[B, N, H, 2D]", ("flashinfer_packed", "HND"): "[B, H, N, 2D]",
}


def check_cache_layout(name: str) -> str:
    if name not in CACHE_LAYOUTS:
        raise ValueError(f"cache layout must be one of {', '.join(CACHE_LAYOUTS)}, not {name!r}")
    return name


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
        check_cache_layout(self.cache_layout)
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
