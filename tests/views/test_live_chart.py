"""The live chart's payload (kvviz/views/live_chart.py): one JSON text per trace, so the browser can
keep unchanged traces; the white template unless the figure chose one; the vendored plotly.js."""
import base64
import json
import os

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from kvviz.views.live_chart import PLOTLY_BUNDLE, bundle_version, chart_payload, payload_figure


def _fig(sel: int, seed: int):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 1000, size=(5, 7))
    f = go.Figure(go.Heatmap(z=z, colorscale="Viridis"))
    f.add_trace(go.Scatter(x=[sel], y=[2], mode="markers"))
    f.add_shape(type="rect", x0=sel - 0.5, x1=sel + 0.5, y0=1.5, y1=2.5)
    return f, z


@pytest.mark.parametrize("seed", list(np.random.SeedSequence().generate_state(3)))
def test_a_trace_per_text_and_a_round_trip(seed):
    f, z = _fig(3, int(seed))
    p = chart_payload(f, {"displaylogo": False}, clicks=True)
    assert len(p["traces"]) == 2 and all(isinstance(t, str) for t in p["traces"])
    assert p["config"] == {"displaylogo": False} and p["clicks"] is True
    back = payload_figure(json.loads(json.dumps(p)))
    zz = back["data"][0]["z"]     # plotly's typed array: base64 bytes, dtype, shape
    got = np.frombuffer(base64.b64decode(zz["bdata"]), dtype=zz["dtype"]).reshape(
        [int(n) for n in zz["shape"].split(",")])
    assert np.array_equal(got, z)
    assert back["layout"]["shapes"][0]["x0"] == 2.5


def test_moving_a_selection_changes_only_what_moved():
    """A token change keeps the heatmap's text identical (the browser reuses it) and changes the
    marker trace and the layout's shape."""
    a, _ = _fig(3, 7)
    b, _ = _fig(4, 7)
    pa, pb = chart_payload(a), chart_payload(b)
    assert pa["traces"][0] == pb["traces"][0]
    assert pa["traces"][1] != pb["traces"][1] and pa["layout"] != pb["layout"]


@pytest.mark.parametrize("default", ["plotly", "streamlit"])
def test_white_template_unless_the_figure_chose_one(default, monkeypatch):
    """Whatever template is the default (Streamlit, once imported, makes a placeholder one whose
    colours only its own renderer replaces), a figure without its own is drawn white."""
    import streamlit  # noqa: F401 - registers the "streamlit" template

    monkeypatch.setattr(pio.templates, "default", default)
    f, _ = _fig(1, 1)
    lay = json.loads(chart_payload(f)["layout"])
    assert lay["template"]["layout"]["plot_bgcolor"] == pio.templates["plotly_white"].layout.plot_bgcolor
    f.update_layout(template="ggplot2")
    lay = json.loads(chart_payload(f)["layout"])
    assert lay["template"]["layout"]["plot_bgcolor"] == pio.templates["ggplot2"].layout.plot_bgcolor


def test_the_served_plotly_bundle_is_the_pinned_packages_version():
    """static/plotly/'s partial bundle must follow the plotly package: after an upgrade, replace it with
    plotly.js-cartesian-dist-min at plotly.offline.get_plotlyjs_version() (and check the trace types)."""
    import plotly.offline

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "static", PLOTLY_BUNDLE)
    assert bundle_version(path) == plotly.offline.get_plotlyjs_version()
    assert os.path.getsize(path) > 1_000_000


# --- the batch page's figures: built once without a selection, the selection added as an overlay ----

def _batch(seed: int):
    from kvviz.views import batch as ex

    rng = np.random.default_rng(seed)
    rows, cfg = ex.preset(str(rng.choice([p for p in ex.PRESETS if p != "big"])))   # big: 524,288 blocks
    return ex.explore(rows, cfg), cfg, rng


@pytest.mark.parametrize("seed", list(np.random.SeedSequence().generate_state(2)))
def test_overlay_equals_the_figure_drawn_with_its_selection(seed):
    """For random tokens: base payload + overlay == the payload of the figure built with that
    selection (the page's cached path draws exactly what the figure function draws)."""
    from kvviz.views import figures
    from kvviz.views.live_chart import with_overlay

    eb, cfg, rng = _batch(int(seed))
    step = eb.step
    shown = eb.shown_columns()
    bt = step.block_table
    table = dict(num_reqs=step.num_reqs, num_blocks=eb.num_kernel_blocks, geometry=cfg.geometry,
                 counts=eb.row_kernel_blocks(), title="t", max_cols=shown)
    base_t = chart_payload(figures.block_table_heatmap(bt, **table))
    base_s = chart_payload(figures.slot_mapping_figure(eb.tokens, num_reqs=step.num_reqs, title="s"))
    for tok in rng.integers(0, step.num_tokens_padded, size=4):
        ch = eb.chain(int(tok), 0, 0, "k")
        cell = (ch["row"], ch["column"]) if ch["slot"] >= 0 else None
        want = chart_payload(figures.block_table_heatmap(bt, selected=cell, **table))
        got = with_overlay(base_t, figures.table_selection(cell, rows=(0, bt.shape[0]), cols=(0, shown)))
        assert payload_figure(got) == payload_figure(want)
        want = chart_payload(figures.slot_mapping_figure(eb.tokens, num_reqs=step.num_reqs, selected=int(tok),
                                                         title="s"))
        got = with_overlay(base_s, figures.slot_selection(eb.tokens, int(tok)))
        assert payload_figure(got) == payload_figure(want)
        assert got["traces"][:len(base_s["traces"])] == base_s["traces"]      # the base stays as it was sent
        first, last = eb.buffer_window(ch["physical_block"] if ch["slot"] >= 0 else None)
        owners = eb.slot_owners(first, last)
        want = chart_payload(figures.slot_buffer_figure(owners, geometry=cfg.geometry, num_reqs=step.num_reqs,
                                                        selected_slot=ch["slot"], title="b"))
        base_b = chart_payload(figures.slot_buffer_figure(owners, geometry=cfg.geometry, num_reqs=step.num_reqs,
                                                          title="b"))
        got = with_overlay(base_b, figures.buffer_selection(ch["slot"], geometry=cfg.geometry, first_block=first,
                                                            num_blocks=last - first + 1))
        assert payload_figure(got) == payload_figure(want)


def test_every_trace_the_app_builds_is_in_the_served_bundle():
    """A trace type outside the cartesian bundle would draw nothing: every ``go.<Trace>(`` the app's
    code builds (and every ``"type": "..."`` of a trace written as a dict) is one it has."""
    import re

    from kvviz.views.live_chart import CARTESIAN_TRACES

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    found = set()
    for top in ("kvviz", "ui", "pages"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith(".py"):
                    with open(os.path.join(folder, name), encoding="utf-8") as f:
                        text = f.read()
                    found |= {m.lower() for m in re.findall(r"\bgo\.([A-Z][A-Za-z0-9]*)\(", text)} - {"figure", "layout"}
                    found |= set(re.findall(r"""["']type["']\s*:\s*["'](bar|scatter\w*|heatmap\w*|\w+gl|table|sankey|treemap|sunburst|funnel\w*|waterfall|indicator|choropleth\w*|scattergeo|parcoords|parcats|mesh3d|surface|icicle)["']""", text))
    assert found, "no trace found: the scan is broken"
    assert found <= CARTESIAN_TRACES, sorted(found - CARTESIAN_TRACES)
