"""The memory-layout page's view-model for vLLM v0.29.0 and newer (no streamlit): the standardized
``[L, B, H, N, C]`` cache in one of its six orders (``kvviz.core.kv_cache_layout``), the address
formula, and a picture of where each layer's blocks lie in the one allocation."""
from __future__ import annotations

from kvviz.core import kv_cache_layout as std
from kvviz.core.kv_cache_layout import KVCacheGeometry
from kvviz.core.versions import rules_for
from kvviz.views.figures import PALETTE, figure_of

MAX_BANDS = 1024      # bands in the picture; a bigger cache gets none
ORDER_CHOICES = std.KV_CACHE_LAYOUTS


def geometry(version: str, num_layers: int, num_blocks: int, block_size: int, num_kv_heads: int, head_dim: int,
             dtype: str, layout: str) -> KVCacheGeometry:
    """The cache that release allocates in ``layout``: v0.34.0's extensible cache with its defaults
    (capacity = num_blocks, 2 MiB granule) where the release has it."""
    ext = rules_for(version).extensible_kv_cache
    return KVCacheGeometry(num_layers, num_blocks, block_size, num_kv_heads, head_dim, dtype, layout,
                           granule_bytes=std.DEFAULT_GRANULE_BYTES if ext else None)


def formula(geo: KVCacheGeometry) -> str:
    """"byte = l·12288 + b·256 + n·64 + h·32 + kv·16 + d·2": the strides in physical order, then K/V."""
    st = geo.strides
    terms = [f"{ {'L': 'l', 'B': 'b', 'H': 'h', 'N': 'n'}[a] }·{st[a]}".replace(" ", "") for a in geo.layout if a != "C"]
    return "byte = " + " + ".join(terms) + f" + kv·{geo.head_dim * geo.itemsize} + d·{geo.itemsize}"


def bands(geo: KVCacheGeometry) -> list[dict]:
    """The contiguous byte runs of each (layer, block) in memory order: one page per (layer, block)
    where the layout keeps a page whole (L and B outermost), else one run of N·C bytes per head."""
    whole = set(geo.layout[:2]) == {"L", "B"}
    out = []
    for layer in range(geo.num_layers):
        for block in range(geo.num_blocks):
            for head in ([None] if whole else range(geo.num_kv_heads)):
                start = geo.address(layer, block, 0, head or 0, "k", 0)
                size = geo.page_bytes if whole else geo.block_size * geo.content_bytes
                out.append({"layer": layer, "block": block, "head": head, "start": start, "size": size})
    return sorted(out, key=lambda r: r["start"])


def figure(geo: KVCacheGeometry, picked_byte: int, labels: dict, title: str):
    """One row per layer, the byte range of each of its blocks (or block-heads) as a band coloured by
    block; the picked element marked. ``labels``: {"layer", "block", "head", "byte"} in the page's
    language."""
    rows = bands(geo)
    data = []
    for block in range(geo.num_blocks):
        mine = [r for r in rows if r["block"] == block]
        data.append({"type": "bar", "orientation": "h", "name": f"{labels['block']} {block}",
                     "x": [r["size"] for r in mine], "base": [r["start"] for r in mine],
                     "y": [f"{labels['layer']} {r['layer']}" for r in mine],
                     "marker": {"color": PALETTE[block % len(PALETTE)], "line": {"width": 1, "color": "white"}},
                     "hovertemplate": [f"{labels['layer']} {r['layer']} · {labels['block']} {block}"
                                       + ("" if r["head"] is None else f" · {labels['head']} {r['head']}")
                                       + f"<br>{labels['byte']} {r['start']} .. {r['start'] + r['size'] - 1}"
                                       "<extra></extra>" for r in mine]})
    layer = geo.decode(picked_byte)["layer"]
    mark = {"type": "scatter", "mode": "markers", "name": f"{labels['byte']} {picked_byte}", "showlegend": False,
            "x": [picked_byte], "y": [f"{labels['layer']} {layer}"],
            "marker": {"symbol": "x", "size": 12, "color": "black"}}
    layout = {"barmode": "overlay", "xaxis": {"title": {"text": labels["byte"]}},
              "yaxis": {"autorange": "reversed", "type": "category"}, "showlegend": geo.num_blocks <= 16}
    return figure_of(data, layout, title, 120 + 28 * geo.num_layers, overlay=[mark])
