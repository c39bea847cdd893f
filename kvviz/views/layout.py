"""The memory-layout page's view-model (no streamlit): one small cache in NHD and HND of a
cache layout family, the byte address of a picked element, a pasted byte address parsed, and
how wide a line of the memory picture is."""
from __future__ import annotations

import re

from kvviz.core.geometry import Geometry
from kvviz.core.layout import CacheGeometry
from kvviz.texts.i18n import t

MAX_PICTURE = 2048     # elements; a bigger cache gets no memory picture
MAX_BYTE_CHARS = 64


def caches(num_blocks: int, block_size: int, num_kv_heads: int, head_dim: int, dtype: str,
           family: str) -> dict[str, CacheGeometry]:
    """The cache in both layouts of ``family``: {"NHD": ..., "HND": ...}."""
    return {lay: CacheGeometry(lay, num_blocks, block_size, num_kv_heads, head_dim, dtype, family)
            for lay in ("NHD", "HND")}


def picked_addresses(geo: dict[str, CacheGeometry], block: int, offset: int, head: int, dim: int,
                     kv: str) -> dict[str, dict]:
    """Address (byte and element offset) in each layout of one element: K or V of ``head``,
    ``dim`` of the token at ``offset`` in ``block``."""
    block_size = next(iter(geo.values())).block_size
    slot = Geometry(block_size).slot_at(block, offset)
    return {lay: gm.address(slot, head, dim, kv) for lay, gm in geo.items()}


def picture_line(cache: CacheGeometry) -> int:
    """Elements in one line of the memory picture: one token's heads (K|V of each head in the
    packed family), the same in both layouts."""
    return cache.num_kv_heads * cache.head_dim * (2 if cache.cache_layout == "flashinfer_packed" else 1)


def parse_byte(text: str, lang: str = "en") -> int:
    """A pasted byte address: decimal or 0x-hex (also 0o/0b, underscores), as Python's int(s, 0);
    leading zeros read as decimal. ValueError with a sentence in ``lang`` for anything else."""
    s = text.strip()
    if len(s) > MAX_BYTE_CHARS:
        raise ValueError(t("layout", "byte_garbage", lang, text=s[:MAX_BYTE_CHARS]))
    try:
        value = int(s, 0)
    except ValueError:
        if not re.fullmatch(r"[+-]?\d+", s):
            raise ValueError(t("layout", "byte_garbage", lang, text=s)) from None
        value = int(s, 10)
    if value < 0:
        raise ValueError(t("layout", "byte_negative", lang, value=value))
    return value
