"""The live chart's payload (kvviz/views/live_chart.py): one JSON text per trace, so the browser can
keep unchanged traces; the white template unless the figure chose one; the vendored plotly.js."""
import base64
import json
import os

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from kvviz.views.live_chart import chart_payload, ensure_plotly_js, payload_figure


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


def test_white_template_unless_the_figure_chose_one():
    f, _ = _fig(1, 1)
    lay = json.loads(chart_payload(f)["layout"])
    assert lay["template"]["layout"]["plot_bgcolor"] == pio.templates["plotly_white"].layout.plot_bgcolor
    f.update_layout(template="ggplot2")
    lay = json.loads(chart_payload(f)["layout"])
    assert lay["template"]["layout"]["plot_bgcolor"] == pio.templates["ggplot2"].layout.plot_bgcolor


def test_plotly_js_vendored_once_and_atomically(tmp_path):
    dst = ensure_plotly_js(str(tmp_path))
    assert dst == os.path.join(str(tmp_path), "vendor", "plotly.min.js")
    assert os.path.getsize(dst) > 1_000_000
    with open(dst, "rb") as f:
        assert b"plotly" in f.read(4096).lower()
    stamp = os.stat(dst).st_mtime_ns
    assert ensure_plotly_js(str(tmp_path)) == dst and os.stat(dst).st_mtime_ns == stamp   # not rewritten
    with open(dst, "wb") as f:                   # a cut-short copy is replaced
        f.write(b"x")
    ensure_plotly_js(str(tmp_path))
    assert os.path.getsize(dst) > 1_000_000
    assert os.listdir(os.path.dirname(dst)) == ["plotly.min.js"]   # no temporary file left
