"""Byte addresses inside one layer's paged KV cache.

The cache is one tensor, K plane first:
  NHD: [2, num_blocks, block_size, num_kv_heads, head_dim]
  HND: [2, num_blocks, num_kv_heads, block_size, head_dim]
A slot is ``block * block_size + offset_in_block``; the layout only decides
whether a token's heads (NHD) or a head's tokens (HND) are contiguous.
"""
from __future__ import annotations

from dataclasses import dataclass

from .constants import DTYPE_BYTES

LAYOUTS = ("NHD", "HND")


@dataclass(frozen=True)
class CacheGeometry:
    layout: str
    num_blocks: int
    block_size: int
    num_kv_heads: int
    head_dim: int
    dtype: str = "float16"

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be NHD or HND, not {self.layout!r}")
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"dtype must be one of {sorted(DTYPE_BYTES)}, not {self.dtype!r}")
        for name in ("num_blocks", "block_size", "num_kv_heads", "head_dim"):
            if int(getattr(self, name)) <= 0:
                raise ValueError(f"{name} must be positive")

    @property
    def itemsize(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def shape(self) -> tuple[int, ...]:
        n, b, h, d = self.num_blocks, self.block_size, self.num_kv_heads, self.head_dim
        return (2, n, b, h, d) if self.layout == "NHD" else (2, n, h, b, d)

    @property
    def strides(self) -> tuple[int, ...]:
        """Element strides of the 5-D tensor (contiguous)."""
        s = [1] * 5
        for i in range(3, -1, -1):
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

    def element_offset(self, slot: int, head: int, dim: int, kv: str = "k") -> int:
        self._check_coords(slot, head, dim, kv)
        block, off = divmod(slot, self.block_size)
        plane = 0 if kv == "k" else 1
        idx = (plane, block, off, head, dim) if self.layout == "NHD" else (plane, block, head, off, dim)
        return sum(i * s for i, s in zip(idx, self.strides))

    def address(self, slot: int, head: int, dim: int, kv: str = "k") -> dict:
        e = self.element_offset(slot, head, dim, kv)
        block, off = divmod(slot, self.block_size)
        return {"element_offset": e, "byte_offset": e * self.itemsize,
                "block": block, "offset_in_block": off}

    def decode(self, byte_offset: int) -> dict:
        if not 0 <= byte_offset < self.total_bytes:
            raise ValueError(f"byte offset {byte_offset} is outside the cache "
                             f"(0 .. {self.total_bytes - 1})")
        element, byte_in_element = divmod(byte_offset, self.itemsize)
        idx = []
        for s in self.strides:
            q, element = divmod(element, s)
            idx.append(q)
        if self.layout == "NHD":
            plane, block, off, head, dim = idx
        else:
            plane, block, head, off, dim = idx
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
