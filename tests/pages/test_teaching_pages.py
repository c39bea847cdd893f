"""The teaching pages as a class reads them (issue 33, items 7, 8, 9, 11): Memory layout's
memory-order charts name their layout, carry a colour legend and draw block boundaries, and its
decoder speaks the page's language; Step through counts steps from 1 and opens on a scenario the
default release accepts, with text true for the runner shown; one-token charts have integer axes;
PCIe's what-ifs have a V2 line; the home page says what colours mean."""
import ast
import re
from pathlib import Path

import numpy as np
import pytest

from page_support import ROOT, app_test, chart_figures, markdown_tables
from kvviz.texts.i18n import LANGS, t

TEXTS = ROOT / "kvviz" / "texts"


def test_no_text_key_is_written_twice():
    """A text key written twice in one table silently keeps the last one: Memory layout's chart
    title "Memory order, {family} {layout} …" was overwritten by the order picker's "physical order"."""
    for path in sorted(TEXTS.glob("*.py")):
        seen = {}
        for node in ast.walk(ast.parse(path.read_text())):
            target = None
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                target = node.value
            elif (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "update" and node.args
                  and isinstance(node.args[0], ast.Dict)):
                target = node.args[0]
            if target is None:
                continue
            for k in target.keys:
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    assert k.value not in seen, f"{path.name}: {k.value!r} written twice (lines {seen[k.value]}, {k.lineno})"
                    seen[k.value] = k.lineno


def _memory_charts(at):
    return [f for f in chart_figures(at) if any(tr.get("type") == "heatmap" for tr in f["data"])]


def _title(fig) -> str:
    t_ = fig["layout"].get("title", {})
    return re.sub(r"<br>", " ", t_.get("text", "") if isinstance(t_, dict) else str(t_))


@pytest.mark.parametrize("lang", list(LANGS))
def test_layout_memory_order_charts_name_their_layout_with_legend_and_block_boundaries(lang):
    at = app_test("layout", lang=lang)
    charts = _memory_charts(at)
    assert len(charts) == 2
    for fig, lay, shape in zip(charts, ("NHD", "HND"), ("[B, N, H, 2D]", "[B, H, N, 2D]")):
        assert _title(fig) == f"{lay} {shape}"                     # main's flashinfer_packed, not "physical order"
        heat = next(tr for tr in fig["data"] if tr["type"] == "heatmap")
        assert heat["showscale"] is True                           # the colour legend: a bar of slots
        assert heat["colorbar"]["title"]["text"] == t("figures", "slot", lang)
        assert heat["colorbar"]["dtick"] == 1 and (heat["zmin"], heat["zmax"]) == (-0.5, 7.5)   # 2 blocks × 4 = 8 slots
        lines = [tr for tr in fig["data"] if tr["type"] == "scatter" and tr.get("mode") == "lines"]
        assert len(lines) == 1 and lines[0]["name"] == t("figures", "block_boundary", lang)
        ys = {y for y in lines[0]["y"] if y is not None}
        assert ys == {3.5}        # 16 elements a line, a block = 4 lines (4 tokens): one boundary, after line 3
    captions = [c.value for c in at.caption]
    for lay in ("NHD", "HND"):
        assert any(c.startswith(t("layout", "order", lang, family="flashinfer_packed", layout=lay,
                                   shape_text="", n=32).split(" ")[0]) and lay in c for c in captions)


def test_memory_boundaries_follow_the_family():
    """flash_attn [2, B, N, H, D] keeps K and V in two planes: the boundary between block 0 and
    block 1 comes twice (once in K's plane, once in V's), and between the planes (block 1 then 0)."""
    from kvviz.core.layout import CacheGeometry
    from kvviz.views import figures

    geo = CacheGeometry("NHD", 2, 4, 2, 4, "float16", "flash_attn")
    fig = figures.memory_order_figure(geo, lang="en")
    line = next(tr for tr in fig.data if getattr(tr, "mode", None) == "lines")
    assert sorted({y for y in line.y if y is not None}) == [3.5, 7.5, 11.5]   # 8 elements a line, 4 lines a block


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_layout_decoder_headers_follow_the_language(lang):
    at = app_test("layout", lang=lang)
    header = markdown_tables(at)[0][0]
    want = ["K/V", *(t("layout", k, lang) for k in ("d_block", "d_offset", "d_slot", "d_head", "d_dim", "d_byte"))]
    assert header == want
    english = {"slot", "head", "dim", "block", "offset", "byte in element"} - ({"slot"} if lang == "es" else set())
    # (Spanish writes "slot" on every page: the loanword is its term)
    assert not english & set(header), header
    at.text_input(key="lay.byte").set_value("99999").run()       # past the end: a sentence in the language
    assert at.error and t("layout", "byte_outside", lang, byte=99999, last=255) in re.sub(r"\\(.)", r"\1", at.error[0].value)
