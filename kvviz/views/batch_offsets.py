"""The Batch page's byte offsets in the picked vLLM release's KV-cache layout (no streamlit).

The offsets follow the release (``auto``, the default) or a cache layout family picked by hand. What a
release allocates for its FlashAttention backend (``kvviz.core.layout.cache_layout_for``): a family
before v0.29.0 (flash_attn before v0.23.0, flashinfer v0.23.0 .. v0.25.x, flashinfer_packed from
v0.26.0), from v0.29.0 the standardized ``[L, B, H, N, C]`` cache (``kvviz.core.kv_cache_layout``):
the NHD byte is then LBNHC's (the release's default) and the HND byte LBHNC's, layer 0 of a one-layer
cache built as the release builds it (v0.34.0's extensible cache included).

The Batch page's kernels always write and check a flash_attn cache; ``kernel_note`` says how that
relates to the release's layout.
"""
from __future__ import annotations

from dataclasses import dataclass

from kvviz.core import kv_cache_layout as std
from kvviz.core.layout import CACHE_LAYOUTS, DEFAULT_ATTN_BACKEND, cache_layout_for
from kvviz.core.versions import rules_for
from kvviz.views import layout5

AUTO = "auto"
FAMILY_CHOICES = (AUTO, *CACHE_LAYOUTS)
KERNEL_FAMILY = "flash_attn"              # the layout the Batch page's kernels write and check
STD_ORDERS = {"NHD": "LBNHC", "HND": "LBHNC"}   # the standardized orders whose one-layer bytes are NHD / HND


@dataclass(frozen=True)
class OffsetLayout:
    """The layout the byte offsets are in: ``family`` (a CACHE_LAYOUTS name) or, for a release of
    the standardized era followed automatically, ``standardized`` (LBNHC / LBHNC). ``release_family``
    is what vLLM ``version`` allocates for FlashAttention (a family, or its default standardized order)."""
    version: str
    release_family: str
    family: str | None
    by_hand: bool

    @property
    def standardized(self) -> bool:
        return self.family is None


def offset_layout(version: str | None, choice: str | None = AUTO) -> OffsetLayout:
    """The byte offsets' layout for vLLM ``version`` (None: main) and the selector's ``choice``
    (``auto``: the release's; a family name: that family, by hand)."""
    rules = rules_for(version)
    release = cache_layout_for(rules, DEFAULT_ATTN_BACKEND)
    if choice in CACHE_LAYOUTS:
        return OffsetLayout(rules.name, release, choice, True)
    return OffsetLayout(rules.name, release, None if release in std.KV_CACHE_LAYOUTS else release, False)


def chain(eb, ol: OffsetLayout, token: int, head: int = 0, dim: int = 0, kv: str = "k") -> dict:
    """``ExploredBatch.chain`` of one token with its NHD and HND bytes in ``ol``'s layout: a family's,
    or the release's standardized cache (layer 0 of one layer, LBNHC and LBHNC)."""
    if not ol.standardized:
        return eb.chain(token, head, dim, kv, cache_layout=ol.family)
    out = eb.chain(token, head, dim, kv, cache_layout="flashinfer_packed")
    if "NHD_byte" in out:
        c = eb.config
        block, off = divmod(int(out["slot"]), c.kernel_block_size)
        for lay, order in STD_ORDERS.items():
            geo = layout5.geometry(ol.version, 1, eb.num_kernel_blocks, c.kernel_block_size, c.num_kv_heads,
                                   c.head_dim, c.dtype, order)
            out[f"{lay}_byte"] = geo.address(0, block, off, head, kv, dim)
    return out


def whose(ol: OffsetLayout) -> list[tuple[str, dict]]:
    """The sentences under the offsets, as (text key of kvviz/texts/batch.py, fields): whose layout they
    are in (the release's, or one picked by hand and what the release allocates instead), then the
    family's own description."""
    if ol.standardized:
        return [("whose_standardized", {"version": ol.version, "nhd": STD_ORDERS["NHD"], "hnd": STD_ORDERS["HND"],
                                        "default": ol.release_family})]
    if ol.by_hand:
        head = ("whose_hand", {"version": ol.version, "family": ol.family, "release": ol.release_family})
    else:
        head = ("whose_release", {"version": ol.version, "family": ol.family})
    return [head, ("whose_" + ol.family, {})]


def kernel_note(version: str | None) -> tuple[str, dict]:
    """The kernel panel's line: the kernels write and check flash_attn; whether that is the layout vLLM
    ``version`` allocates (then their bytes are the release's), or not (then they check the release's
    slots, tables and CSR, and the release's bytes are the ones the token panel shows)."""
    ol = offset_layout(version)
    if ol.release_family == KERNEL_FAMILY:
        return "kernel_family_same", {"version": ol.version}
    return "kernel_family_other", {"version": ol.version, "release": ol.release_family}
