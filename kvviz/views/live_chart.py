"""What the app's live chart component receives for one plotly figure.

The figure goes as one JSON text per trace plus the layout, so the browser can tell which traces
did not change between two reruns (equal text) and hand those to ``Plotly.react`` as the same
objects: then only what changed is redrawn. The look follows plotly's white template (the figures
set their own fonts and colours), the same whichever renderer draws the figure.
"""
from __future__ import annotations

import json
from functools import lru_cache

import plotly.graph_objects as go
import plotly.io as pio
from plotly.io.json import to_json_plotly


@lru_cache(maxsize=1)
def _white_template() -> dict:
    return pio.templates["plotly_white"].to_plotly_json()


def _default_template(template) -> bool:
    """True for no template, plotly's default one, or the placeholder Streamlit makes the default
    once imported (colours like #000011 that only st.plotly_chart's own renderer replaces)."""
    if not template:
        return True
    for name in ("plotly", "streamlit"):
        if name in pio.templates and template == _template_json(name):
            return True
    return False


@lru_cache(maxsize=4)
def _template_json(name: str) -> dict:
    return pio.templates[name].to_plotly_json()


def chart_payload(fig, config: dict | None = None, *, clicks: bool = False) -> dict:
    """``{"traces": [json text per trace], "layout": json text, "height": its pixels or None,
    "config": {...}, "clicks": bool}``.
    ``fig``: a plotly Figure or its dict. A layout without a template of its own gets the white
    one; ``clicks``: the browser reports a click on a point (curve, index, x, y, customdata)."""
    spec = fig.to_plotly_json() if isinstance(fig, go.Figure) else dict(fig)
    layout = dict(spec.get("layout") or {})
    if _default_template(layout.get("template")):
        layout["template"] = _white_template()
    height = layout.get("height")
    return {"traces": [to_json_plotly(t) for t in spec.get("data") or []],
            "layout": to_json_plotly(layout),
            "height": int(height) if isinstance(height, (int, float)) else None,
            "config": dict(config or {}),
            "clicks": bool(clicks)}


def with_overlay(payload: dict, overlay: dict | None) -> dict:
    """``payload`` with an overlay (``{"traces": [dict], "shapes": [dict]}``, e.g. a selection) drawn
    on top: its traces after the figure's, its shapes after the layout's. Sent apart from the base
    (``payload["overlay"]``), so that the browser, finding the base unchanged, only moves the
    overlay (``Plotly.relayout`` of the shapes, ``Plotly.restyle`` of the overlay traces) instead of
    reacting to a whole new figure. A new dict: ``payload`` (often cached, shared) is left as it is."""
    out = dict(payload)
    overlay = overlay or {}
    out["overlay"] = {"traces": [to_json_plotly(t) for t in overlay.get("traces") or []],
                      "shapes": to_json_plotly(list(overlay.get("shapes") or []))}
    return out


def payload_figure(payload: dict) -> dict:
    """The plotly figure dict a payload describes, overlay included (for tests and downloads)."""
    layout = json.loads(payload["layout"])
    data = [json.loads(t) for t in payload["traces"]]
    overlay = payload.get("overlay")
    if overlay:
        data += [json.loads(t) for t in overlay["traces"]]
        shapes = json.loads(overlay["shapes"])
        if shapes:
            layout["shapes"] = [*(layout.get("shapes") or []), *shapes]
    return {"data": data, "layout": layout}


# The live chart's plotly.js (static/live_chart.js loads it): plotly.js's own "cartesian" partial
# bundle, npm package plotly.js-cartesian-dist-min at the version the pinned plotly package bundles
# (its LICENSE beside it). 1.5 MB instead of the full 4.8 MB: a page's first chart waited ~1 s for the
# full bundle to run in each new tab (issue 25). It has the trace types the app draws (CARTESIAN_TRACES).
PLOTLY_BUNDLE = "plotly/plotly-cartesian.min.js"
CARTESIAN_TRACES = frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour",
                              "image", "pie", "scatter", "scatterternary", "violin"})


def bundle_version(path: str) -> str | None:
    """The plotly.js version a bundle's header names (``* plotly.js (cartesian - minified) v4.1.1``)."""
    import re

    with open(path, "rb") as f:
        head = f.read(300).decode("ascii", "replace")
    m = re.search(r"plotly\.js[^\n]*? v(\d+\.\d+\.\d+)", head)
    return m.group(1) if m else None
