"""The memory-layout page's view-model (no streamlit): the cache layout family a vLLM version and
attention backend allocate (or the one picked by hand), one small cache in the layouts of that
family, the byte address of a picked element, a pasted byte address parsed, and how wide a line of
the memory picture is."""
from __future__ import annotations

import re
from dataclasses import dataclass

from kvviz.core.geometry import Geometry
from kvviz.core.kv_cache_layout import KV_CACHE_LAYOUTS
from kvviz.core.layout import (ALL_CACHE_LAYOUTS, DEFAULT_ATTN_BACKEND, LAYOUTS, SHAPE_TEXT, CacheGeometry,
                               cache_layout_for, family_layouts, layout_changes, layouts_for)
from kvviz.core.versions import ATTN_BACKENDS, MAIN, VERSIONS, rules_for
from kvviz.texts.i18n import t

MAX_PICTURE = 2048     # elements; a bigger cache gets no memory picture
MAX_BYTE_CHARS = 64
AUTO = "auto"                                   # the family control's "follow vLLM" choice
FAMILY_CHOICES = (AUTO, *ALL_CACHE_LAYOUTS)
VERSION_CHOICES = tuple(reversed(VERSIONS))     # newest first; main (2026-08-18) in its place
BACKEND_CHOICES = ATTN_BACKENDS
DEFAULT_VERSION = MAIN
DEFAULT_BACKEND = DEFAULT_ATTN_BACKEND


@dataclass(frozen=True)
class FamilyChoice:
    """The family in effect on the page and why: what vLLM ``version`` allocates for ``backend``
    (``vllm_family`` in ``vllm_layouts``), or the family picked by hand (``by_hand``)."""
    version: str
    backend: str
    vllm_family: str
    vllm_layouts: tuple[str, ...]
    family: str
    layouts: tuple[str, ...]
    by_hand: bool

    def vllm_line(self) -> str:
        """"v0.22.1 · flash_attn → flash_attn [2, B, N, H, D] (NHD) / [2, B, H, N, D] (HND)"."""
        return f"{self.version} · {self.backend} → {self.vllm_family} {shapes_text(self.vllm_family, self.vllm_layouts)}"

    def history(self) -> str:
        """The vLLM pull requests that changed this backend's cache up to this version, or ""."""
        return ", ".join(f"#{c.pr} ({c.first_release})" for c in layout_changes(self.backend, self.version))


def shapes_text(family: str, layouts: tuple[str, ...]) -> str:
    if family in KV_CACHE_LAYOUTS:       # v0.29.0+: one order of the logical [L, B, H, N, C] bytes
        return "[" + ", ".join(family) + "]"
    if len(layouts) == 1:
        return f"{SHAPE_TEXT[(family, layouts[0])]} ({layouts[0]})"
    return " / ".join(f"{SHAPE_TEXT[(family, lay)]} ({lay})" for lay in layouts)


def pick_family(version: str, backend: str, choice: str = AUTO) -> FamilyChoice:
    """The family in effect: ``choice`` when it names one (by hand, in all its layouts), else the one
    vLLM ``version`` allocates for ``backend`` (in the layouts that backend allocates)."""
    name = rules_for(version).name
    fam, lays = cache_layout_for(name, backend), layouts_for(name, backend)
    if choice == AUTO or choice is None:
        return FamilyChoice(name, backend, fam, lays, fam, lays, False)
    return FamilyChoice(name, backend, fam, lays, choice, family_layouts(choice), True)


def caches(num_blocks: int, block_size: int, num_kv_heads: int, head_dim: int, dtype: str,
           family: str, layouts: tuple[str, ...] = LAYOUTS) -> dict[str, CacheGeometry]:
    """The cache in the ``layouts`` of ``family`` that it has: {"NHD": ..., "HND": ...} (NHD alone
    for an NHD-only family or backend)."""
    return {lay: CacheGeometry(lay, num_blocks, block_size, num_kv_heads, head_dim, dtype, family)
            for lay in layouts if lay in family_layouts(family)}


def picked_addresses(geo: dict[str, CacheGeometry], block: int, offset: int, head: int, dim: int,
                     kv: str) -> dict[str, dict]:
    """Address (byte and element offset) in each layout of one element: K or V of ``head``,
    ``dim`` of the token at ``offset`` in ``block``."""
    block_size = next(iter(geo.values())).block_size
    slot = Geometry(block_size).slot_at(block, offset)
    return {lay: gm.address(slot, head, dim, kv) for lay, gm in geo.items()}


def picture_line(cache: CacheGeometry) -> int:
    """Elements in one line of the memory picture: one token's heads (K|V of each head in the
    packed family, K of every head then V of every head in flex_interleaved), the same in both
    layouts."""
    both = cache.cache_layout in ("flashinfer_packed", "flex_interleaved")
    return cache.num_kv_heads * cache.head_dim * (2 if both else 1)


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


def decode_byte(cache, byte: int, lang: str = "en") -> dict:
    """``cache.decode(byte)`` (a CacheGeometry or the standardized KVCacheGeometry), a byte past the
    end refused with a sentence in ``lang`` (the geometry's own message is English)."""
    if byte >= cache.total_bytes:
        raise ValueError(t("layout", "byte_outside", lang, byte=byte, last=cache.total_bytes - 1))
    return cache.decode(byte)
