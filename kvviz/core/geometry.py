"""The geometry of one KV-cache group: how a token position becomes a column, a slot and a byte.

``Geometry`` is the one owner of every quantity derived from the block size. The loose numbers it
holds are validated once, here, with the messages users see:

* ``block_size``          tokens per *manager* block (what the KV-cache manager hands out);
* ``kernel_block_size``   tokens per *kernel* block (what table entries, slots and FlashInfer pages
                          count); it divides ``block_size``, and one manager block ``m`` stands for the
                          kernel blocks ``m*k .. m*k+k-1`` with ``k = blocks_per_kv_block``;
* ``dcp_world_size``, ``dcp_rank``, ``interleave``  decode context parallelism: a manager block id
                          covers ``virtual_block_size = block_size * dcp_world_size`` positions, dealt to
                          the ranks ``interleave`` tokens at a time; each rank stores its share in its own
                          copy of the block;
* ``num_kv_heads``, ``head_dim``, ``dtype``, ``layout``, ``cache_layout``  the bytes of one layer's cache
                          (``cache(num_blocks)`` gives the byte-address calculator, ``kvviz.core.layout``).

``kvviz.reference`` (loops) and the Triton kernels' ``_slots_of`` compute the same arithmetic on
purpose, independently: they are the oracles this class is tested against.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from kvviz.constants import DTYPE_BYTES, PAD_SLOT_ID, TOKEN_ALIGNMENT
from kvviz.errors import BadInput

MAX_BLOCK_SIZE = 1 << 16
MAX_DCP_WORLD = 1024
WIDTH_ALIGNMENTS = ("lcm", "pow2", "none")


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Geometry:
    block_size: int
    kernel_block_size: int | None = None
    dcp_world_size: int = 1
    dcp_rank: int = 0
    interleave: int = 1
    num_kv_heads: int = 1
    head_dim: int = 1
    dtype: str = "float16"
    layout: str = "NHD"
    cache_layout: str = "flash_attn"

    def __post_init__(self):
        for name in ("block_size", "kernel_block_size", "dcp_world_size", "dcp_rank", "interleave",
                     "num_kv_heads", "head_dim"):
            v = getattr(self, name)
            if v is None and name == "kernel_block_size":
                continue
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise BadInput(f"{name!r} must be an integer, got {type(v).__name__}")
            object.__setattr__(self, name, int(v))
        bs = self.block_size
        if not 1 <= bs <= MAX_BLOCK_SIZE:
            raise BadInput(f"'block_size' must be between 1 and {MAX_BLOCK_SIZE}, got {bs}")
        if self.kernel_block_size is None:
            object.__setattr__(self, "kernel_block_size", bs)
        kbs = self.kernel_block_size
        if kbs < 1 or bs % kbs:
            raise BadInput(f"kernel_block_size {kbs} does not divide block_size {bs}")
        if not 1 <= self.dcp_world_size <= MAX_DCP_WORLD:
            raise BadInput(f"'dcp_world_size' must be between 1 and {MAX_DCP_WORLD}, got {self.dcp_world_size}")
        if not 0 <= self.dcp_rank < self.dcp_world_size:
            raise BadInput(f"dcp_rank {self.dcp_rank} is outside the DCP world of size {self.dcp_world_size}")
        if self.interleave < 1 or bs % self.interleave:
            raise BadInput(f"cp_kv_cache_interleave_size {self.interleave} does not divide block_size {bs}")
        if self.num_kv_heads < 1 or self.head_dim < 1:
            raise BadInput("num_kv_heads and head_dim must be positive")
        if self.dtype not in DTYPE_BYTES:
            raise BadInput(f"dtype must be one of {sorted(DTYPE_BYTES)}, not {self.dtype!r}")

    # --- blocks and tokens ------------------------------------------------------------------

    @property
    def blocks_per_kv_block(self) -> int:
        """Kernel blocks per manager block."""
        return self.block_size // self.kernel_block_size

    @property
    def virtual_block_size(self) -> int:
        """Positions one manager block id stands for, across every DCP rank."""
        return self.block_size * self.dcp_world_size

    @property
    def dcp_span(self) -> int:
        """Positions dealt to the ranks in one round (``interleave`` to each)."""
        return self.dcp_world_size * self.interleave

    @property
    def itemsize(self) -> int:
        return DTYPE_BYTES[self.dtype]

    def blocks_for(self, num_tokens: int) -> int:
        """Manager blocks a request of ``num_tokens`` positions needs."""
        return cdiv(num_tokens, self.virtual_block_size)

    def full_blocks(self, num_tokens: int) -> int:
        """Manager blocks that ``num_tokens`` positions fill completely (the ones a prefix-cache
        hash can cover; a partial tail block has none)."""
        return num_tokens // self.virtual_block_size

    def tokens_held(self, num_blocks: int) -> int:
        """Positions ``num_blocks`` manager blocks can hold (every DCP rank's share together)."""
        return num_blocks * self.virtual_block_size

    def kernel_blocks(self, block_ids) -> list[int]:
        """Manager block ids -> the kernel block ids that fill a table row."""
        k = self.blocks_per_kv_block
        if k == 1:
            return [int(b) for b in block_ids]
        return [int(b) * k + j for b in block_ids for j in range(k)]

    def manager_block_of(self, kernel_block):
        return kernel_block // self.blocks_per_kv_block

    def kernel_block_count(self, num_blocks):
        """Kernel blocks (table columns) that ``num_blocks`` manager blocks stand for (vectorised)."""
        return num_blocks * self.blocks_per_kv_block

    def table_width(self, max_num_blocks: int, alignment: str = "lcm") -> int:
        """Row width in kernel blocks for ``max_num_blocks`` manager blocks. ``alignment``: "lcm" (a
        row covers a multiple of lcm(128, block_size) tokens), "pow2" (a multiple of 128 // block_size
        blocks when block_size <= 128) or "none" (:data:`WIDTH_ALIGNMENTS`)."""
        if alignment not in WIDTH_ALIGNMENTS:
            raise ValueError(f"unknown alignment {alignment!r}")
        if alignment == "lcm":
            step = TOKEN_ALIGNMENT // math.gcd(TOKEN_ALIGNMENT, self.block_size)
            max_num_blocks = cdiv(max_num_blocks, step) * step
        elif alignment == "pow2" and self.block_size <= TOKEN_ALIGNMENT:
            step = TOKEN_ALIGNMENT // self.block_size
            max_num_blocks = cdiv(max_num_blocks, step) * step
        return max_num_blocks * self.blocks_per_kv_block

    # --- positions -> (local?, column, offset) -> slot ---------------------------------------

    def locate(self, positions):
        """Vectorised: positions -> (is_local, column in the table row, offset in the kernel block).

        ``is_local`` says whether this DCP rank stores the position; column and offset are only
        meaningful where it does."""
        pos = np.asarray(positions, dtype=np.int64)
        vidx, voff = np.divmod(pos, self.virtual_block_size)
        local = (voff // self.interleave) % self.dcp_world_size == self.dcp_rank
        loff = self.local_offset(voff)
        col = vidx * self.blocks_per_kv_block + loff // self.kernel_block_size
        return local, col, loff % self.kernel_block_size

    def local_offset(self, virtual_offset):
        """Offset inside this rank's copy of a manager block of a position at ``virtual_offset``
        in the virtual block (valid for the positions this rank stores)."""
        span, inter = self.dcp_span, self.interleave
        return (virtual_offset // span) * inter + virtual_offset % inter

    def virtual_offset(self, local_offset, rank: int | None = None):
        """Inverse of ``local_offset`` for ``rank`` (default: this rank)."""
        r = self.dcp_rank if rank is None else rank
        inter = self.interleave
        return (local_offset // inter) * self.dcp_span + r * inter + local_offset % inter

    def position_of(self, column, offset, rank: int | None = None):
        """Inverse of ``locate``: the position stored at (table column, offset in the kernel block)
        of ``rank``'s copy (default: this rank)."""
        vidx, sub = np.divmod(np.asarray(column, dtype=np.int64), self.blocks_per_kv_block)
        loff = sub * self.kernel_block_size + np.asarray(offset, dtype=np.int64)
        return vidx * self.virtual_block_size + self.virtual_offset(loff, rank)

    def kernel_block_of_slot(self, slot):
        """The kernel block a slot lies in (``slot // kernel_block_size``); PAD stays PAD."""
        s = np.asarray(slot, dtype=np.int64)
        return np.where(s >= 0, s // self.kernel_block_size, PAD_SLOT_ID)

    def split_slot(self, slot):
        """(kernel block, offset in it) of a slot, with no special case for PAD (to name what a
        wrong slot points at)."""
        return divmod(slot, self.kernel_block_size)

    def logical_block(self, positions):
        """Vectorised: the manager block (index in the request's block list) each position lies
        in, the same on every DCP rank."""
        return np.asarray(positions, dtype=np.int64) // self.virtual_block_size

    def logical_block_of_column(self, column):
        """The manager block (index in the request's block list) a table column belongs to."""
        return self.manager_block_of(np.asarray(column, dtype=np.int64))

    def as_pages(self) -> "Geometry":
        """The geometry a kernel that counts kernel blocks as pages sees (FlashInfer's CSR): one
        kernel block per block, no DCP."""
        return Geometry(self.kernel_block_size)

    def slot_at(self, kernel_block, offset):
        """The slot at ``offset`` in kernel block ``kernel_block`` (inverse of ``kernel_block_of_slot``)."""
        return kernel_block * self.kernel_block_size + offset

    def slot_of(self, position: int, row) -> int:
        """Slot of one position in a request whose table row (kernel blocks) is ``row``, or
        PAD_SLOT_ID where another DCP rank stores it."""
        local, col, off = self.locate(position)
        if not local:
            return PAD_SLOT_ID
        return int(row[int(col)]) * self.kernel_block_size + int(off)

    def slots(self, positions, rows, block_table) -> np.ndarray:
        """Vectorised slot of each position; ``rows[i]`` is token i's table row."""
        local, col, off = self.locate(positions)
        bt = np.asarray(block_table)
        blocks = bt[np.asarray(rows), np.where(local, col, 0)].astype(np.int64)
        return np.where(local, blocks * self.kernel_block_size + off, PAD_SLOT_ID).astype(np.int64)

    def local_seq_lens(self, seq_lens) -> np.ndarray:
        """How many of each request's positions this DCP rank stores."""
        seq = np.asarray(seq_lens, dtype=np.int64)
        full, rem = np.divmod(seq, self.dcp_span)
        return (full * self.interleave
                + np.clip(rem - self.dcp_rank * self.interleave, 0, self.interleave)).astype(np.int32)

    def page_count(self, seq_lens) -> np.ndarray:
        """FlashInfer pages (kernel blocks) per request for these (local) sequence lengths."""
        seq = np.asarray(seq_lens, dtype=np.int64)
        return (seq + self.kernel_block_size - 1) // self.kernel_block_size

    def last_page_len(self, seq_lens, empty_is_zero: bool = True) -> np.ndarray:
        """Tokens in each request's last FlashInfer page: a full page counts ``kernel_block_size``;
        an empty request 0, or a full page where ``empty_is_zero`` is false (older FlashInfer)."""
        seq = np.asarray(seq_lens, dtype=np.int64)
        page = self.kernel_block_size
        rem = seq % page
        return np.where(seq == 0, 0 if empty_is_zero else page, np.where(rem == 0, page, rem))

    # --- variants and bytes -----------------------------------------------------------------

    def with_rank(self, rank: int) -> "Geometry":
        return replace(self, dcp_rank=rank)

    def with_cache(self, **kw) -> "Geometry":
        return replace(self, **kw)

    def cache(self, num_blocks: int):
        """Byte addresses in one layer's cache of ``num_blocks`` kernel blocks (``CacheGeometry``). A
        standardized layout (v0.29.0+, e.g. LBNHC) is read as the old family that addresses one layer
        of a one-layer cache byte for byte (``kv_cache_layout.one_layer_family``)."""
        from kvviz.core.kv_cache_layout import KV_CACHE_LAYOUTS, one_layer_family
        from kvviz.core.layout import CacheGeometry

        family, layout = self.cache_layout, self.layout
        if family in KV_CACHE_LAYOUTS:
            mapped = one_layer_family(family)
            if mapped is None:
                raise ValueError(f"{family} puts heads outside blocks: no single-layer cache family has its "
                                 f"byte order (use kvviz.core.kv_cache_layout.KVCacheGeometry)")
            family, layout = mapped
        return CacheGeometry(layout=layout, num_blocks=num_blocks, block_size=self.kernel_block_size,
                             num_kv_heads=self.num_kv_heads, head_dim=self.head_dim, dtype=self.dtype,
                             cache_layout=family)
