"""Pickers whose labels follow the release (issue 33, items 1, 2, 10 and 13), without a browser.

A browser picker holds its choice as the label it was last sent; Streamlit sends a value only when
it changed. So when the release changes what "auto" resolves to (auto → V2 becomes auto → V1), the
page must send the runner's value again with its new label: these tests read, in the element the
page sends, that the value is sent (``set_value``) and with which label (``raw_value``). Without
``ui.labels_follow`` the runner's element carries no value on such a run, and the browser kept
"auto → V2" under a "Model Runner V1" caption (tests/pages/test_browser_pickers.py shows it there).
"""
from __future__ import annotations

import tomllib

import pytest

from page_support import ROOT, app_test, open_page
from kvviz.texts.i18n import t
from kvviz.views import runners as rv

PAGES = [("step_through", "step"), ("batch", "batch"), ("prefixes", "pre"), ("csr", "csr"), ("pcie", "pcie")]


def _sent(at, key: str) -> str | None:
    """The label a picker's element sends as its value this run (None: it sends no value)."""
    proto = at.selectbox(key=key).proto
    return proto.raw_value if proto.set_value else None


def _caption_runner(at) -> str:
    shows = [c.value for c in at.caption if "Shows vLLM" in c.value]
    assert len(shows) == 1, shows
    return shows[0].rsplit("Model Runner ", 1)[1][:2].lower()


@pytest.mark.parametrize("page,prefix", PAGES)
def test_runner_label_is_sent_with_the_release(page, prefix):
    at = app_test()
    open_page(at, page)
    for version in ("v0.19.0", "v0.34.0", "v0.11.1"):
        at.selectbox(key=f"{prefix}.vllm").set_value(version).run()
        assert not at.exception, at.exception
        want = rv.pick_runner(version, rv.AUTO)
        label = t("step_through", "runner_auto", "en", runner=want.auto_runner.upper())
        assert at.selectbox(key=f"{prefix}.runner").value == rv.AUTO
        assert _sent(at, f"{prefix}.runner") == label, (page, version)
        assert _caption_runner(at) == want.runner, (page, version)
        assert list(at.selectbox(key=f"{prefix}.runner").options)[0] == label
        assert ("V1: persistent batch" in at.selectbox(key=f"{prefix}.runner").options) == (version != "v0.34.0")


def test_runner_by_hand_then_a_release_without_it():
    """V2 picked at v0.24.0, then v0.11.1 (before V2 shipped): the picker is back on auto and says so."""
    at = app_test()
    open_page(at, "batch")
    at.selectbox(key="batch.vllm").set_value("v0.24.0").run()
    at.selectbox(key="batch.runner").set_value("v2").run()
    assert _sent(at, "batch.runner") == t("step_through", "runner_v2", "en") and _caption_runner(at) == "v2"
    at.selectbox(key="batch.vllm").set_value("v0.11.1").run()
    assert at.selectbox(key="batch.runner").value == rv.AUTO
    assert _sent(at, "batch.runner") == "auto → V1" and _caption_runner(at) == "v1"


def test_batch_cache_layout_auto_names_the_release_layout():
    """Batch's cache-layout picker: "auto → LBNHC" at v0.34.0 (written as the runner's "auto → V2"), as
    the sentence under the offsets says (it read "auto (flashinfer_packed)", main's layout, there)."""
    at = app_test()
    open_page(at, "batch")
    for version, family in (("v0.34.0", "LBNHC"), ("v0.19.0", "flash_attn"), ("v0.24.0", "flashinfer")):
        at.selectbox(key="batch.vllm").set_value(version).run()
        assert not at.exception, at.exception
        assert _sent(at, "batch.family") == f"auto → {family}", version
        assert any(f"follow vLLM {version}" in c.value and family in c.value for c in at.caption), version


def test_version_picker_label_follows_the_language():
    """A language switch relabels the version picker's value too ("main (08-18)" in every language, the
    newest release marked in the page's language)."""
    at = app_test("batch", lang="es")
    at.selectbox(key="batch.vllm").set_value("v0.34.0").run()
    assert _sent(at, "batch.vllm") == rv.version_option("v0.34.0", "es")
    assert at.selectbox(key="batch.runner").label == "Ejecutor del modelo"
    assert _sent(at, "batch.runner") == "automático → V2"


def test_no_deploy_button_and_no_share_chart():
    import ui

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["toolbarMode"] in ("viewer", "minimal")      # no "Deploy" button
    cfg = ui.chart_config("x")
    assert cfg["displaylogo"] is False and cfg["showSendToCloud"] is False and cfg["showEditInChartStudio"] is False
    assert "sendChartToCloud" in cfg["modeBarButtonsToRemove"]
    assert cfg["toImageButtonOptions"]["filename"] == "x"


def test_pickers_follow_a_language_switch():
    """Switching the language in the sidebar sends every picker's value again, with its label in the
    new language: CSR's source read "Mixed batch" on a Chinese page."""
    at = app_test()
    open_page(at, "csr")
    src = at.selectbox(key="csr.src").value
    at.selectbox(key="lang.widget").set_value("zh").run()
    assert not at.exception, at.exception
    assert at.session_state["lang"] == "zh"
    assert _sent(at, "csr.src") == t("batch", "p_" + src, "zh")
    assert _sent(at, "csr.runner") == "自动 → V2" and _sent(at, "csr.vllm") == rv.version_option("main", "zh")


def test_layout_family_auto_names_the_release_layout():
    """Layout's cache-layout picker: "auto → {family}" names what the release allocates for the
    backend (it said only "follow the vLLM version and backend")."""
    from kvviz.views import layout as lay_vm

    at = app_test()
    open_page(at, "layout")
    for version in ("v0.34.0", "v0.19.0", "v0.24.0"):
        at.selectbox(key="lay.vllm").set_value(version).run()
        assert not at.exception, at.exception
        family = lay_vm.pick_family(version, at.session_state["lay.backend"]).vllm_family
        assert _sent(at, "lay.family") == t("layout", "fam_auto", "en", family=family), version
        assert any(family in m.value for m in at.markdown), version   # the "In effect" line agrees


def test_auto_names_v1_for_a_hybrid_model_that_stays_on_v1():
    """A pasted scenario with two KV-cache groups at v0.26.0 (dense models run on V2 there, a hybrid one
    stays on V1 until v0.29.0): the runner picker says "auto → V1", as the caption does."""
    import json

    at = app_test()
    open_page(at, "step_through")
    hybrid = {"config": {"num_blocks": 16, "block_size": 4, "vllm": "v0.26.0",
                         "groups": [{"kind": "full"}, {"kind": "sliding_window", "sliding_window": 8}]},
              "requests": [{"id": "H", "prompt_len": 6, "max_tokens": 2}]}
    at.text_area(key="step.custom_text").set_value(json.dumps(hybrid)).run()
    at.button(key="step.load").click().run()
    assert not at.exception and not at.error
    assert at.selectbox(key="step.vllm").value == "v0.26.0" and at.selectbox(key="step.runner").value == rv.AUTO
    assert _sent(at, "step.runner") == "auto → V1" and _caption_runner(at) == "v1"
    at.selectbox(key="step.vllm").set_value("v0.29.0").run()          # from v0.29.0 every model runs on V2
    assert _sent(at, "step.runner") == "auto → V2" and _caption_runner(at) == "v2"
