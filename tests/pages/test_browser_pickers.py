"""Real browser: a page's pickers, its caption and its figures never disagree about the release and the
runner (issue 33, items 1 and 2), and no Deploy or Share button is on screen (item 13).

On Step through and Batch the test walks the vLLM release main -> v0.19.0 -> v0.34.0 -> v0.24.0 with the
runner on auto, then picks V2 at v0.24.0, then v0.11.1 (no V2 before v0.12.0: the picker goes back to
auto), then v0.34.0 (no V1), and reloads the tab; on the other pages with a runner picker (Prefixes,
CSR, PCIe: the same ``ui.version_runner``) main -> v0.19.0 -> v0.34.0 and a reload (a lean test). After each change it reads
what the browser shows: the runner picker's label (its input's value: "auto → V1"), the caption
("Shows vLLM v0.24.0 · Model Runner V1") and what the figures draw under that runner (the block
table's rows are V2's "batch position"s or V1's "request row"s; PCIe's heading names the runner),
and compares the three with what the release resolves to (``kvviz.views.runners.pick_runner``).
Before the fix the label stayed "auto → V2" under a "Model Runner V1" caption. On Batch the cache-
layout picker's "auto" names the release's layout (LBNHC at v0.34.0), as the sentence under the
offsets does. Screenshot: artifacts/screenshots/pickers_batch_v0.34.0.png.
"""
from __future__ import annotations

import re

import pytest

from browser_support import SHOTS, charts_drawn, needs_chromium, wait_idle
from kvviz.texts.i18n import t
from kvviz.views import batch_offsets as offsets
from kvviz.views import runners as rv
from kvviz.views.batch import PRESETS

pytestmark = [pytest.mark.browser, needs_chromium()]

# page -> how its figures say which runner they show: the block table's row axis ("batch position" under
# V2), or for PCIe the heading of the release's step ("This step in vLLM v0.24.0, V1")
PAGES = ["step_through", "batch", "prefixes", "csr", "pcie"]
WALK = ["v0.19.0", "v0.34.0", "v0.24.0"]
FULL_WALK = ("step_through", "batch")

AXES = """() => [...document.querySelectorAll('.kv-live-chart')].flatMap(d => {
  const l = d.layout || {}; const t = o => (o && o.title) ? (o.title.text || '') : '';
  return [t(l), t(l.xaxis), t(l.yaxis)]; })"""


def _runner_box(page):
    return page.get_by_test_id("stSelectbox").filter(has_text=t("step_through", "runner", "en")).first


def _pick(page, label: str, option: str) -> None:
    """Choose ``option`` (its label) in the selectbox labelled ``label``: the version list is long, so
    type the option's start (the pickers filter by prefix) and click it."""
    page.get_by_test_id("stSelectbox").filter(has_text=label).first.click()
    page.keyboard.type(option[:7])
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page)


def _seen(page, name: str) -> dict:
    """What the tab shows now: the runner picker's label, the runner the caption names, and the runner
    the figures are drawn for."""
    from playwright.sync_api import expect

    caption = page.get_by_test_id("stCaptionContainer").filter(has_text=re.compile(r"Shows vLLM .* Model Runner V\d"))
    expect(caption).to_have_count(1, timeout=60_000)
    text = caption.inner_text()
    if name == "pcie":
        head = page.get_by_role("heading", name=re.compile(r"This step in vLLM")).inner_text()
        drawn = head.rsplit(",", 1)[1].strip().lower()
    else:
        page.wait_for_selector(".kv-live-chart", state="attached", timeout=60_000)
        charts_drawn(page)
        axes = page.evaluate(AXES)
        assert any(a in ("batch position", "request row") for a in axes), axes
        drawn = "v2" if "batch position" in axes else "v1"
    return {"label": _runner_box(page).locator("input").input_value(),
            "version": re.search(r"Shows vLLM (\S+)", text).group(1),
            "caption": re.search(r"Model Runner (V\d)", text).group(1).lower(), "drawn": drawn}


def _check(page, name: str, version: str, choice: str) -> None:
    want = rv.pick_runner(version, choice)
    seen = _seen(page, name)
    label = (t("step_through", "runner_auto", "en", runner=want.auto_runner.upper()) if choice == rv.AUTO
             else t("step_through", "runner_" + choice, "en"))
    where = f"{name} at {version}, runner {choice}"
    assert seen["label"] == label, f"{where}: the picker reads {seen['label']!r}, not {label!r}"
    assert seen["version"] == rv.shown_version(version).split()[0], where
    assert seen["caption"] == seen["drawn"] == want.runner, f"{where}: {seen}, want {want.runner}"


def _batch_layout(page, version: str) -> None:
    """Batch: the cache-layout picker's "auto" names the layout the release allocates, and so does the
    sentence under the offsets."""
    family = offsets.offset_layout(version).release_family
    box = page.get_by_test_id("stSelectbox").filter(has_text=t("batch", "family", "en")).first
    assert box.locator("input").input_value() == t("batch", "fam_auto", "en", family=family, version=version)
    text = page.get_by_test_id("stMain").inner_text()
    assert re.search(rf"follow vLLM {re.escape(version)}\b[^\n]*\b{family}\b", text), f"{version}: no {family}"


@pytest.fixture(scope="module")
def tab(browser):
    pg = browser.new_page(viewport={"width": 1400, "height": 1000})
    yield pg
    pg.close()


@pytest.mark.parametrize("name", PAGES)
def test_runner_picker_caption_and_figures_agree(tab, server, name):
    vlabel = t("step_through", "vllm", "en")
    tab.goto(f"{server}/{name}")
    wait_idle(tab)
    _check(tab, name, rv.DEFAULT_VERSION, rv.AUTO)
    full = name in FULL_WALK
    for version in WALK if full else WALK[:2]:      # the runner on auto: its label follows the release
        _pick(tab, vlabel, rv.version_option(version))
        _check(tab, name, version, rv.AUTO)
        if name == "batch":
            _batch_layout(tab, version)
            if version == "v0.34.0":
                tab.get_by_test_id("stSelectbox").filter(has_text=t("batch", "family", "en")).first.scroll_into_view_if_needed()
                tab.screenshot(path=str(SHOTS / "pickers_batch_v0.34.0.png"))
    if full:   # v0.34.0 offered no V1; v0.24.0 offers both: V2 by hand, then a release without V2 (back to auto)
        _pick(tab, t("step_through", "runner", "en"), t("step_through", "runner_v2", "en"))
        _check(tab, name, "v0.24.0", "v2")
        _pick(tab, vlabel, rv.version_option("v0.11.1"))
        _check(tab, name, "v0.11.1", rv.AUTO)
        assert tab.get_by_text("vLLM v0.11.1 has only Model Runner V1").count() == 1
        _pick(tab, vlabel, rv.version_option("v0.34.0"))
    tab.reload()
    wait_idle(tab)
    _check(tab, name, "v0.34.0", rv.AUTO)


def test_pickers_follow_a_language_switch(tab, server):
    """CSR in English, then Chinese from the sidebar: the source, version and runner pickers show their
    Chinese labels (the source read "Mixed batch" on the Chinese page)."""
    tab.goto(f"{server}/csr?vllm=v0.19.0")
    wait_idle(tab)
    lang_box = tab.get_by_test_id("stSelectbox").filter(has_text="Idioma").first
    source = tab.get_by_test_id("stSelectbox").filter(has_text=t("csr", "source", "en")).first
    shown = source.locator("input").input_value()
    src = next(k for k in PRESETS if shown == t("batch", "p_" + k, "en"))
    lang_box.click()
    tab.get_by_role("option", name="中文").click()
    wait_idle(tab)
    source = tab.get_by_test_id("stSelectbox").filter(has_text=t("csr", "source", "zh")).first
    assert source.locator("input").input_value() == t("batch", "p_" + src, "zh")
    runner = tab.get_by_test_id("stSelectbox").filter(has_text=t("step_through", "runner", "zh")).first
    assert runner.locator("input").input_value() == t("step_through", "runner_auto", "zh", runner="V1")
    lang_box.click()
    tab.get_by_role("option", name="English").click()
    wait_idle(tab)


def test_no_deploy_or_share_button(tab, server):
    """No Streamlit "Deploy" button, and the charts' mode bar has no "Share chart", no Chart Studio
    button and no plotly logo: only the PNG download and the zoom/pan tools. (On the page the walk
    left open, with its charts: a fresh page load costs seconds.)"""
    if tab.locator(".kv-live-chart").count() == 0:
        tab.goto(f"{server}/batch")
        wait_idle(tab)
    tab.wait_for_selector(".kv-live-chart", state="attached", timeout=60_000)
    charts_drawn(tab)
    tab.locator(".kv-live-chart").first.hover()
    assert tab.get_by_test_id("stAppDeployButton").count() == 0
    assert tab.get_by_role("button", name="Deploy").count() == 0
    buttons = tab.evaluate("() => [...document.querySelectorAll('.modebar-btn')].map(a => a.getAttribute('data-title'))")
    assert "Download plot as a PNG" in buttons, buttons
    assert not [b for b in buttons if b and re.search(r"share|studio|plotly|cloud", b, re.I)], buttons
    assert tab.locator(".modebar-btn--logo").count() == 0
