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


def open_link(page: str, *, lang: str | None = None, query: dict | None = None) -> AppTest:
    """A fresh AppTest of the whole app opened on ``page`` itself with ``query``, as a browser opens a
    shared link (``/page?...``): the session starts on that page (a page reached later in the session
    never reads the URL, and Home writes its own state there)."""
    at = AppTest.from_file(APP, default_timeout=60)
    if lang is not None:
        at.session_state["lang"] = lang
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return open_page(at, page)


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


def column_labels(page: str, lang: str = "en", prefix: str = "col.") -> dict:
    """{data key: shown header} of a page's table columns (its ``prefix``-keyed texts)."""
    from kvviz.texts.i18n import _table, t

    return {k[len(prefix):]: t(page, k, lang) for k in _table(page) if k.startswith(prefix)}


def _unescaped(text: str) -> str:
    import re

    return re.sub(r"\\(.)", r"\1", str(text))


def _cell(text: str):
    import re

    text = _unescaped(text.strip())
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def markdown_tables(at: AppTest) -> list[list[list]]:
    """Every markdown table on the page (``ui.table``), in page order: rows of cells (header row
    first), escapes undone, whole numbers as ints."""
    import re

    out = []
    for m in at.markdown:
        lines = m.value.splitlines()
        if len(lines) < 2 or not lines[0].startswith("|") or not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[1]):
            continue
        rows = [lines[0]] + lines[2:]
        out.append([[_cell(c) for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows])
    return out


def table_frames(at: AppTest, labels: dict | None = None) -> list:
    """Every small table (``ui.table``: one markdown table each) as data, in page order: headers
    mapped back from the shown ``labels`` ({key: header}) to their keys."""
    import pandas as pd

    back = {v: k for k, v in (labels or {}).items()}
    return [pd.DataFrame(rows[1:], columns=[back.get(h, h) for h in rows[0]]) for rows in markdown_tables(at)
            if rows[0] and rows[0][0] != ""]    # (a table with row labels, e.g. Notations', has an empty corner)


def frames(at: AppTest, labels: dict | None = None) -> list:
    """The data of every table on the page: the dataframes, then the static tables (:func:`table_frames`)."""
    return [d.value for d in at.dataframe] + table_frames(at, labels)


def batch_labels(lang: str = "en") -> dict:
    """{data key: shown header} of the Batch page's small tables: requests, kernels, idx_mapping."""
    from kvviz.texts.i18n import _table, t

    out = {k[len("rshort_"):]: t("batch", k, lang) for k in _table("batch") if k.startswith("rshort_")}
    out.update({"kernel": t("batch", "kcol_kernel", lang), "passed": t("batch", "kcol_passed", lang),
                "max_error": t("batch", "kcol_max_error", lang), "us": "µs",
                "batch position": t("batch", "icol_position", lang), "state index": t("batch", "icol_state", lang)})
    return out   # (num_blocks: the requests' "blocks" header; idx_mapping's is the same word, mapped there)


def batch_kernel_table(at: AppTest, lang: str = "en"):
    """The Batch page's kernel check table (a markdown table), keys as the harness names them, or None."""
    tables = [f for f in table_frames(at, batch_labels(lang)) if "kernel" in f.columns]
    return tables[0] if tables else None


def pcie_labels(lang: str) -> dict:
    """{data key: shown header} of the PCIe page's two tables (``ui.table``)."""
    from kvviz.gpu import traffic
    from kvviz.texts.i18n import t

    shown = dict(zip(traffic.STRATEGIES, (t("pcie", k, lang) for k in ("s_full", "s_prefix", "s_dirty", "s_dirty_prefix"))))
    return {"table": t("pcie", "col_table", lang), **shown, "strategy": t("pcie", "col_strategy", lang),
            "bytes": t("pcie", "col_bytes", lang), "model µs": t("pcie", "col_model", lang),
            "measured µs": t("pcie", "col_measured", lang)}


def decoded(at: AppTest, lang: str = "en"):
    """The Memory layout page's decoded byte (its one-line static table) as a row keyed by field."""
    from kvviz.texts.i18n import t

    labels = {"kv": "K/V", "block": t("layout", "d_block", lang), "offset_in_block": t("layout", "d_offset", lang),
              "byte_in_element": t("layout", "d_byte", lang)}
    return table_frames(at, labels)[0].iloc[0]
