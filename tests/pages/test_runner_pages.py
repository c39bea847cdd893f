"""The table pages (batch, step-through, prefixes, CSR) under both model runners and an old vLLM, in
every language: a version and a runner selector on each; V2's tables named as V2's (the
request-state table, the gathered input table, idx_mapping), V1's as before; no exception."""
import json

import pytest

from kvviz.texts.i18n import LANGS, t
from kvviz.views.runners import shown_version
from page_support import batch_labels, chart_figures, chart_nodes, app_test, column_labels, frames, open_page

PAGES = ("batch", "step_through", "prefixes", "csr")
PREFIX = {"batch": "batch", "step_through": "step", "prefixes": "pre", "csr": "csr"}


def _texts(at):
    """Every markdown-ish text and every plotly title / axis title of the page."""
    out = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success")
           for e in at.get(kind)]
    for spec in chart_figures(at):
        lay = spec["layout"]
        out.append(str(lay.get("title", {}).get("text", "")))
        out.append(str(lay.get("yaxis", {}).get("title", {}).get("text", "")))
        out += [str(tr.get("name", "")) for tr in spec["data"]]
    return out


def _has(at, text):
    return any(text in x for x in _texts(at))


def _frames(at, lang="en"):
    return frames(at, column_labels("step_through", lang))


def _set(at, page, version=None, runner=None):
    p = PREFIX[page]
    if version is not None:
        at.selectbox(key=f"{p}.vllm").set_value(version).run()
        assert not at.exception, at.exception
    if runner is not None:
        at.selectbox(key=f"{p}.runner").set_value(runner).run()
        assert not at.exception, at.exception
    return at


def _page(page, lang):
    at = app_test(lang=lang)
    return open_page(at, page)


def _assert_v2(at, page, lang):
    tr = lambda p, k, **f: t(p, k, lang, **f)  # noqa: E731
    assert _has(at, tr("app", "shows", what=tr("app", "run", version=shown_version("main"), runner="V2")))
    if page == "batch":
        assert _has(at, tr("batch", "fig_table_v2")) and _has(at, tr("batch", "fig_state_v2"))
        assert _has(at, tr("batch", "idx_title"))
        idx = [f for f in frames(at, batch_labels(lang)) if "state index" in f.columns][0]
        assert list(idx["state index"]) == [4, 3, 2, 1, 0]           # R-1-i from the LIFO free list
        assert _has(at, "idx_mapping = [4, 3, 2, 1, 0]")
        assert len(chart_nodes(at)) == 4
    elif page == "step_through":
        assert _has(at, tr("step_through", "state_table")) and _has(at, tr("step_through", "input_after"))
        assert _has(at, tr("step_through", "idx_mapping")) and _has(at, tr("figures", "state_index"))
        idx = [f for f in _frames(at, lang) if "batch position" in f.columns and "num_blocks" in f.columns][0]
        assert list(idx["state index"]) == [3, 2]            # A and B took the two highest free indices
    elif page == "prefixes":
        assert _has(at, tr("figures", "batch_position"))
        assert _has(at, "idx_mapping = [")
    else:
        assert _has(at, tr("csr", "table_v2")) and _has(at, "idx_mapping = [4, 3, 2, 1, 0]")


def _assert_v1(at, page, lang, version="main"):
    tr = lambda p, k, **f: t(p, k, lang, **f)  # noqa: E731
    assert _has(at, tr("app", "shows", what=tr("app", "run", version=shown_version(version), runner="V1")))
    assert not _has(at, "idx_mapping = [")
    if page == "batch":
        assert _has(at, tr("batch", "fig_table")) and not _has(at, tr("batch", "fig_state_v2"))
        assert len(chart_nodes(at)) == 3
    elif page == "step_through":
        assert _has(at, tr("step_through", "cpu")) and _has(at, tr("step_through", "dev_before"))
        assert not _has(at, tr("step_through", "state_table"))
    elif page == "prefixes":
        assert not _has(at, tr("figures", "batch_position"))
    else:
        assert _has(at, tr("csr", "table")) and not _has(at, tr("csr", "table_v2"))


@pytest.mark.parametrize("lang", list(LANGS))
@pytest.mark.parametrize("page", PAGES)
def test_table_pages_under_v2_v1_and_an_old_version(page, lang):
    at = _page(page, lang)
    p = PREFIX[page]
    # the default: main, auto -> V2 for these dense models
    assert at.selectbox(key=f"{p}.vllm").value == "main" and at.selectbox(key=f"{p}.runner").value == "auto"
    opts = at.selectbox(key=f"{p}.vllm").options                           # newest first, main in its place
    assert opts[0].startswith("v0.34.0") and opts[opts.index("v0.28.0") + 1].startswith("main")
    _assert_v2(at, page, lang)
    _set(at, page, runner="v1")
    _assert_v1(at, page, lang)
    _set(at, page, runner="v2")
    _assert_v2(at, page, lang)
    # v0.11.0 has no V2: the stale v2 choice falls back to auto, and v2 is not offered
    _set(at, page, version="v0.11.0")
    assert at.selectbox(key=f"{p}.runner").value == "auto"
    assert len(at.selectbox(key=f"{p}.runner").options) == 2
    assert _has(at, t("step_through", "no_v2", lang, version="v0.11.0"))
    _assert_v1(at, page, lang, version="v0.11.0")
    # v0.12.0: V2 exists (opt-in) but auto stays V1
    _set(at, page, version="v0.12.0")
    assert len(at.selectbox(key=f"{p}.runner").options) == 3
    _assert_v1(at, page, lang, version="v0.12.0")
    assert not at.exception


def test_step_through_v2_events_stale_tails_and_gather_toggle():
    at = _page("step_through", "en")
    seen = set()
    for i in range(8):
        at.select_slider(key="step.idx").set_value(i).run()
        assert not at.exception
        kinds = {line.split("`")[1] for m in at.markdown for line in m.value.splitlines() if line.startswith("- `")}
        seen |= kinds
        if i == 3:   # C (batch row 1) holds 2 blocks; the row held B's 3 the step before
            assert _has(at, "stale tails in batch row(s) 1")
            assert _has(at, t("figures", "stale_tail", "en"))
    assert {"add_state", "stage_write", "apply_staged_writes", "gather", "free_state"} <= seen, seen
    assert not seen & {"move_row", "commit", "add_row", "swap_row"}, seen
    at.toggle(key="step.after_v2").set_value(False).run()
    assert _has(at, t("step_through", "input_before", "en")) and not at.exception
    at.selectbox(key="step.runner").set_value("v1").run()
    kinds = {line.split("`")[1] for m in at.markdown for line in m.value.splitlines() if line.startswith("- `")}
    assert "commit" in kinds and not kinds & {"gather", "stage_write"}


def test_step_through_custom_scenario_sets_and_keeps_the_selectors():
    at = _page("step_through", "en")
    own = {"config": {"num_blocks": 8, "block_size": 4, "vllm": "v0.19.1", "runner": "v2"},
           "requests": [{"id": "Z", "prompt_len": 6, "max_tokens": 2}]}
    at.text_area(key="step.custom_text").set_value(json.dumps(own)).run()
    at.button(key="step.load").click().run()
    assert not at.exception and not at.error
    assert at.selectbox(key="step.vllm").value == "v0.19.1" and at.selectbox(key="step.runner").value == "v2"
    assert _has(at, "Shows vLLM v0.19.1 · Model Runner V2")
    at.selectbox(key="step.runner").set_value("v1").run()          # the user overrides the scenario's key
    assert _has(at, "Shows vLLM v0.19.1 · Model Runner V1") and not at.exception
    # a model with two KV-cache groups stays on V1, whatever the selector says
    hybrid = {"config": {"num_blocks": 16, "block_size": 4,
                         "groups": [{"kind": "full"}, {"kind": "sliding_window", "sliding_window": 8}]},
              "requests": [{"id": "H", "prompt_len": 6, "max_tokens": 2}]}
    at.text_area(key="step.custom_text").set_value(json.dumps(hybrid)).run()
    at.button(key="step.load").click().run()
    at.selectbox(key="step.runner").set_value("v2").run()
    assert not at.exception and not at.error
    assert _has(at, t("step_through", "v1_only_model", "en")) and _has(at, "· Model Runner V1")
    # a scenario whose own runner its own version lacks is refused (the one on screen stays)
    bad = dict(own, config={**own["config"], "vllm": "v0.11.0"})
    at.text_area(key="step.custom_text").set_value(json.dumps(bad)).run()
    at.button(key="step.load").click().run()
    assert any("v0.12.0" in e.value for e in at.error) and not at.exception


def test_runner_choice_survives_a_page_switch():
    at = _page("prefixes", "en")
    _set(at, "prefixes", version="v0.25.1", runner="v1")
    open_page(at, "layout")
    open_page(at, "prefixes")
    assert at.selectbox(key="pre.vllm").value == "v0.25.1" and at.selectbox(key="pre.runner").value == "v1"


def test_scenario_link_opens_the_version_and_runner_it_names():
    from streamlit.testing.v1 import AppTest
    from pathlib import Path
    app = str(Path(__file__).resolve().parents[2] / "app.py")
    at = AppTest.from_file(app, default_timeout=60)
    at.query_params.update({"sc": "lifecycle", "step": "1", "vllm": "v0.20.0", "runner": "v1"})
    at.switch_page("pages/step_through.py").run()
    assert not at.exception
    assert at.selectbox(key="step.vllm").value == "v0.20.0" and at.selectbox(key="step.runner").value == "v1"
    qp = at.query_params
    assert qp.get("vllm") in ("v0.20.0", ["v0.20.0"]) and qp.get("runner") in ("v1", ["v1"])
    bad = AppTest.from_file(app, default_timeout=60)
    bad.query_params.update({"sc": "lifecycle", "vllm": "[a](https://x)"})
    bad.switch_page("pages/step_through.py").run()
    assert not bad.exception and bad.selectbox(key="step.vllm").value == "main"
    assert any("link parameter vllm" in w.value for w in bad.warning)
