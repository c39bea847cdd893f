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

from page_support import ROOT, app_test, chart_figures, markdown_tables, plotly_array
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


def _ticks(axis: dict) -> list[float]:
    """The tick values a linear axis with ``tick0``/``dtick`` and a ``range`` draws."""
    lo, hi = axis["range"]
    k = np.ceil((lo - axis["tick0"]) / axis["dtick"])
    return list(np.arange(axis["tick0"] + k * axis["dtick"], hi + 1e-9, axis["dtick"]))


def test_one_token_slot_mapping_has_integer_axes():
    """One decoding token at slot 19: plotly alone drew ticks at 19.5 and a token axis from −1 to 1."""
    import pandas as pd

    from kvviz.views import figures

    tokens = pd.DataFrame({"token": [0], "slot": [19], "row": [0], "position": [7], "logical_block": [1],
                           "column": [1], "physical_block": [4], "offset": [3]})
    lay = figures.slot_mapping_figure(tokens, num_reqs=1).to_plotly_json()["layout"]
    for axis, value in (("xaxis", 0), ("yaxis", 19)):
        ticks = _ticks(lay[axis])
        assert ticks == [value - 1, value, value + 1] and all(float(x).is_integer() for x in ticks), (axis, ticks)
    many = pd.DataFrame({"token": range(40), "slot": range(100, 140), "row": [0] * 40, "position": range(40),
                         "logical_block": [0] * 40, "column": [0] * 40, "physical_block": [1] * 40, "offset": [0] * 40})
    lay = figures.slot_mapping_figure(many, num_reqs=1).to_plotly_json()["layout"]
    assert lay["xaxis"]["tickformat"] == "d" and lay["yaxis"]["tickformat"] == "d"   # plotly's ticks, as integers


def test_step_through_counts_from_one_and_opens_on_a_scenario_its_release_accepts():
    from kvviz.core.capacity import capacity_check
    from kvviz.core.versions import rules_for
    from kvviz.views import scenarios as stepper

    at = app_test("step_through")
    assert at.info[0].value.startswith("Step 1 of 8:") and "counted from 0" not in at.info[0].value
    slider = at.select_slider(key="step.idx")
    assert list(slider.options) == [str(i) for i in range(1, 9)]              # shown from 1; step.idx from 0
    at.button(key="step.next").click().run()
    assert at.info[0].value.startswith("Step 2 of 8:") and at.session_state["step.idx"] == 1
    captions = [c.value for c in at.caption]
    assert any(c.startswith("vLLM main's start-up check passes") for c in captions), captions   # not "would refuse"
    assert not any("would refuse" in c for c in captions)
    assert t("scenarios", "desc.lifecycle.v2") in captions                    # V2 (auto on main): no condense
    assert not any("condense moves a row" in c for c in captions)
    assert t("step_through", "colours") in captions                           # what the colours encode
    for name in stepper.NAMES:                                               # every built-in, every release
        for version in ("main", "v0.19.0", "v0.34.0"):
            scenario = stepper.parse_scenario({**stepper.SCENARIOS[name],
                                               "config": {**stepper.SCENARIOS[name]["config"], "vllm": version}})
            assert capacity_check(scenario.config, rules_for(version))["fits"], (name, version)
    at.selectbox(key="step.runner").set_value("v1").run()                     # V1 condenses: its text says so
    assert t("scenarios", "desc.lifecycle") in [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_step_through_summary_in_language_counts_from_one(lang):
    at = app_test("step_through", lang=lang)
    assert at.info[0].value.startswith({"zh": "第 1 步（共 8 步）", "es": "Paso 1 de 8:"}[lang])


def test_batch_default_token_has_different_nhd_and_hnd_bytes():
    """The token a batch opens on shows the layout's point: its K element lies at different bytes in
    NHD and HND, in every release's layout (token 0 of head 0, dim 0 was the same byte in both)."""
    from kvviz.views import batch as ex
    from kvviz.views import batch_offsets as offsets

    eb = ex.explore(*ex.preset("default"))
    for version in ("main", "v0.19.0", "v0.24.0", "v0.27.1", "v0.29.0", "v0.34.0"):
        ch = offsets.chain(eb, offsets.offset_layout(version), ex.DEFAULT_TOKEN, 0, 0, "k")
        assert ch["NHD_byte"] != ch["HND_byte"], (version, ch)
    at = app_test("batch")
    assert at.number_input(key="batch.tok").value == ex.DEFAULT_TOKEN == 2


def _sweeps(at) -> list[dict]:
    return [f for f in chart_figures(at) if all(tr.get("mode") == "lines+markers" for tr in f["data"])]


@pytest.mark.parametrize("lang", list(LANGS))
def test_pcie_names_v1_and_draws_v2_beside_it(lang):
    at = app_test("pcie", lang=lang)              # main, auto → V2
    sweeps = _sweeps(at)
    assert len(sweeps) == 3
    for fig in sweeps:
        names = [tr["name"] for tr in fig["data"]]
        assert names == [t("pcie", k, lang) for k in ("s_full", "s_prefix", "s_dirty", "s_dirty_prefix", "s_v2")]
        v2 = fig["data"][-1]
        assert all(y > 0 for y in plotly_array(v2["y"])) and "V1" in names[0]
    stacked = next(f for f in chart_figures(at) if f["data"] and f["data"][0].get("type") == "bar")
    assert t("pcie", "s_v2", lang) in stacked["data"][0]["y"]
    assert stacked["layout"]["legend"]["orientation"] == "v"        # every part listed, none scrolled away
    # the what-if charts one a row at the page's width: no title wrapped to its own height
    assert not any("<br>" in _title(f) for f in sweeps)


def test_pcie_v2_line_is_the_step_bytes_of_model_runner_v2():
    from dataclasses import replace

    from kvviz.gpu import traffic
    from kvviz.views import pcie as view

    shape = traffic.StepShape(vllm="main")
    values = traffic.sweep_values("num_reqs", 64)
    got = view.v2_sweep(shape, "num_reqs", values)
    assert got[values.index(64)] == traffic.release_bytes(shape, "v2").pcie
    assert got[values.index(512)] == traffic.release_bytes(replace(shape, num_reqs=512, max_num_reqs=512), "v2").pcie
    assert not view.has_v2(traffic.StepShape(vllm="v0.11.0"))      # no V2 before v0.12.0: no line


@pytest.mark.parametrize("lang", list(LANGS))
def test_home_says_what_colours_mean_and_names_both_runners(lang):
    intro, how = t("home", "intro", lang), t("home", "how", lang)
    assert "V1" in intro and "Model Runner V2" in intro
    assert "exactly as vLLM V1" not in intro
    at = app_test(lang=lang)                       # the app opens on Home
    text = "\n".join(m.value for m in at.markdown)
    assert how in text
    first = how.splitlines()[0]
    for word in {"en": ("block table", "slot mapping", "request row"), "zh": ("块表", "槽位映射", "请求行"),
                 "es": ("tabla de", "mapeo de slots", "fila de petición")}[lang]:
        assert word in first, (lang, word)


def test_prefixes_counts_steps_from_one():
    """Shared prefixes numbers steps as Step through does: its picker, its log and the hash chain's
    "cached at step" count from 1 (``pre.idx`` and the link's ``step=`` from 0)."""
    from kvviz.views import scenarios as stepper

    at = app_test("prefixes")
    n = len(at.select_slider(key="pre.idx").options)
    assert list(at.select_slider(key="pre.idx").options) == [str(i) for i in range(1, n + 1)]
    log = next(d.value for d in at.dataframe if "what happened" in d.value.columns)
    raw = stepper.prefix_events(stepper.replay(stepper.load("prefixes")))
    assert log["step"].tolist() == (raw["step"] + 1).tolist() and log["step"].min() == 1
    at.select_slider(key="pre.idx").set_value(n - 1).run()
    chain = next(d.value for d in at.dataframe if "hash" in d.value.columns)
    cached = [v for v in chain["cached at step"] if v != "—"]
    assert cached and min(int(v) for v in cached) >= 1
