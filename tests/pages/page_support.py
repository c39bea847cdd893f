"""What the page tests share: the app's path, opening a page in an AppTest, reading plotly arrays."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGES = ROOT / "pages"


def app_test(page: str | None = None, *, lang: str | None = None, query: dict | None = None) -> AppTest:
    """A fresh AppTest of the whole app (``page`` None) or of one page file, in ``lang``, with query
    parameters, run once and without exception."""
    at = AppTest.from_file(APP if page is None else str(PAGES / f"{page}.py"), default_timeout=60)
    if lang is not None:
        at.session_state["lang"] = lang
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def open_page(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def plotly_array(v):
    """A plotly JSON array: a list, or plotly's typed-array form {"dtype", "bdata"} (base64)."""
    import base64

    import numpy as np

    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).tolist()
    return list(v)


def is_chart(node) -> bool:
    """An element of the app's live plotly chart (``ui.plot``: a keyed st.components.v2 component)."""
    return getattr(node, "type", "") == "bidi_component" and "live_chart" in getattr(node.proto, "component_name", "")


def chart_figure(node) -> dict:
    """The plotly figure dict one live chart element draws."""
    import json

    from kvviz.views.live_chart import payload_figure

    return payload_figure(json.loads(node.proto.json))


def chart_nodes(at: AppTest) -> list:
    return [e for e in at.get("bidi_component") if is_chart(e)]


def chart_figures(at: AppTest) -> list[dict]:
    """Every live chart's figure dict on the page, in page order."""
    return [chart_figure(e) for e in chart_nodes(at)]


def chart_specs(at: AppTest) -> list[str]:
    """Every live chart's figure as compact JSON text (about the size of what travels)."""
    import json

    return [json.dumps(f, separators=(",", ":")) for f in chart_figures(at)]
