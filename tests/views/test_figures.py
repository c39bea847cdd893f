"""The figure builders: colour = request wherever a request is shown (one legend entry per
request row), physical block ids on a categorical scale with the id written in the cell, the
slot buffer's "written this step" markers centred in their cells."""
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from hypothesis import given, strategies as st

from kvviz.constants import PAD_SLOT_ID
from kvviz.core.geometry import Geometry
from kvviz.views import figures as F


def _tokens(rows, slots):
    n = len(rows)
    return pd.DataFrame({"token": np.arange(n), "row": rows, "position": np.arange(n), "logical_block": np.zeros(n, int),
                         "column": np.zeros(n, int), "physical_block": np.array(slots) // 4,
                         "offset": np.array(slots) % 4, "slot": slots})


def _colour_at(scale, z, zmin, zmax):
    """The colour a plotly colorscale (list of [stop, colour]) gives to value z: the stop interval it falls in."""
    u = (z - zmin) / (zmax - zmin)
    for (a, ca), (b, _) in zip(scale, scale[1:]):
        if a <= u < b:
            return ca
    return scale[-1][1]


def test_slot_mapping_one_trace_and_legend_entry_per_request():
    rows = np.array([0, 0, 0, 1, 1, 2, -1])
    slots = np.array([4, 5, 6, 8, 9, 12, PAD_SLOT_ID])
    fig = F.slot_mapping_figure(_tokens(rows, slots), num_reqs=3, row_names=["A", "B", ""])
    req = [t for t in fig.data if t.legendgroup and t.legendgroup.startswith("row")]
    assert [t.name for t in req] == ["0: A", "1: B", "request row 2"]
    for r, t in enumerate(req):
        assert list(t.x) == list(np.nonzero(rows == r)[0]) and list(t.y) == list(slots[rows == r])
        assert t.marker.color == F.request_color(r) == F.PALETTE[r]
    assert len({t.marker.color for t in req}) == 3
    pad = [t for t in fig.data if t.marker.symbol == "x"]
    assert len(pad) == 1 and list(pad[0].x) == [6]
    # a click selects a token (batch page): Streamlit keeps clicks selecting only off box/lasso drag
    assert fig.layout.clickmode == "event+select" and fig.layout.dragmode not in ("select", "lasso")


def test_request_colours_agree_between_slots_buffer_and_csr():
    """Row r is PALETTE[r] in the slot mapping (marker), the slot buffer and the CSR strip
    (heatmaps over row_colorscale with zmin=-0.5, zmax=n-0.5)."""
    n = 4
    scale = F.row_colorscale(n)
    for r in range(n):
        assert _colour_at(scale, r, -0.5, n - 0.5) == F.request_color(r)


def test_block_ids_on_a_categorical_scale_with_their_ids_written():
    bt = np.array([[1, 2, 3, 0], [4, 5, 0, 0], [11, 0, 0, 0]], dtype=np.int32)
    fig = F.block_table_heatmap(bt, num_reqs=3, num_blocks=12, geometry=Geometry(4))
    heat = fig.data[0]
    assert np.array_equal(np.asarray(heat.z), bt) and heat.texttemplate == "%{z}"
    scale = [list(s) for s in heat.colorscale]
    got = {b: _colour_at(scale, b, heat.zmin, heat.zmax) for b in range(12)}
    assert got[0] == F.NULL_GRAY
    assert all(got[b] == F.block_color(b) for b in range(12))
    # neighbouring small ids are told apart (the continuous ramp drew 1, 2 and 3 in one blue)
    assert len({got[b] for b in (1, 2, 3, 4, 5)}) == 5
    # flat bands: the colour does not change inside an id's interval
    for b in (1, 5, 11):
        assert _colour_at(scale, b - 0.4, heat.zmin, heat.zmax) == _colour_at(scale, b + 0.4, heat.zmin, heat.zmax)
    assert heat.showscale is False                            # the ids are the labels
    assert F.NULL_GRAY not in F.BLOCK_PALETTE and "#f2f2f2" not in F.BLOCK_PALETTE and len(F.BLOCK_PALETTE) >= 20


def test_block_colorscale_huge_pool_falls_back_to_a_ramp():
    stops = F.block_colorscale(F.MAX_CATEGORICAL_BLOCKS + 1)
    assert len(stops) == 13 and stops[0][1] == F.NULL_GRAY
    go.Heatmap(z=[[0, 1]], colorscale=stops)                  # plotly accepts it
    go.Heatmap(z=[[0, 1]], colorscale=F.block_colorscale(12))


def test_slot_buffer_written_markers_centred_in_their_cells():
    geo = Geometry(4)
    row = np.array([[0, 0, 0, 0], [1, 1, -1, -1], [0, -1, -1, -1]])
    new = np.array([[False, False, False, True], [False, True, False, False], [True, False, False, False]])
    owners = {"row": row, "pos": np.where(row >= 0, 3, 0), "new": new, "share": np.zeros(row.shape, int),
              "first_block": 5}
    fig = F.slot_buffer_figure(owners, geometry=geo, num_reqs=2)
    dots = [t for t in fig.data if t.type == "scatter" and t.x[0] is not None]
    assert len(dots) == 1
    pts = sorted(zip(dots[0].x, dots[0].y))
    assert pts == sorted([(3, 5), (1, 6), (0, 7)])           # (offset, block): the cell's centre, exactly
    assert all(float(x).is_integer() and float(y).is_integer() for x, y in pts)
    heat = [t for t in fig.data if t.type == "heatmap"][1]
    scale = [list(s) for s in heat.colorscale]
    assert _colour_at(scale, 1, heat.zmin, heat.zmax) == F.request_color(1)
    keys = [t for t in fig.data if t.type == "scatter" and t.x[0] is None]   # the legend: every request row
    assert [t.name for t in keys] == ["request row 0", "request row 1"]
    assert [t.marker.color for t in keys] == [F.request_color(0), F.request_color(1)] and fig.layout.showlegend


def test_a_long_title_wraps_for_a_narrow_chart():
    import pandas as pd

    from kvviz.views.figures import bytes_lines, wrap_title

    assert wrap_title("bytes per step as the batch grows", 12) == "bytes per<br>step as the<br>batch grows"
    assert wrap_title("short", 12) == "short"
    df = pd.DataFrame({"n": [1, 2, 4], "a": [10, 20, 40], "b": [5, 6, 7]})
    one = bytes_lines(df, x="n", title="bytes per step as the batch grows", x_title="n")
    two = bytes_lines(df, x="n", title="bytes per step as the batch grows", x_title="n", wrap=12)
    assert "<br>" not in one.layout.title.text and two.layout.title.text.count("<br>") == 2
    assert two.layout.margin.t - one.layout.margin.t == two.layout.height - one.layout.height == 52


def _bytes_lines_by_steps(df, *, x, title, x_title, marker_x=None, wrap=None):
    """The sweep figure built the plain plotly way (add_trace, add_vline, update_*, legend_below):
    the reference for the one-dict builder."""
    import plotly.graph_objects as go

    from kvviz.views import figures as F

    fig = go.Figure()
    for i, col in enumerate(c for c in df.columns if c != x):
        fig.add_trace(go.Scatter(x=df[x], y=df[col], mode="lines+markers", name=col,
                                 line=dict(width=3, color=F.PALETTE[i % len(F.PALETTE)]),
                                 hovertemplate=f"{col}<br>{x_title} %{{x}}<br>%{{y:,.0f}} B<extra></extra>"))
    if marker_x is not None:
        fig.add_vline(x=marker_x, line=dict(color="black", width=2, dash="dot"))
    xs = list(df[x])
    if max(xs) / max(min(xs), 1) > 64:
        ticks = xs[::2] if len(xs) > 6 else xs
        fig.update_xaxes(title=x_title, type="log", tickvals=ticks, ticktext=[f"{int(v):,}" for v in ticks])
    else:
        fig.update_xaxes(title=x_title)
    ys = df[[c for c in df.columns if c != x]].to_numpy(dtype=float)
    ys = ys[ys > 0]
    fig.update_yaxes(**F.byte_ticks(ys.min(), ys.max(), log=True))
    ytitle = F._tr("en")("bytes_per_step")   # a narrow chart's on two lines, the bracket on the second
    fig.update_yaxes(title=ytitle.replace(" (", "<br>(", 1) if wrap else ytitle, gridcolor="#eee", type="log",
                     automargin=True)
    return F.base_layout(fig, title, 400 + F.legend_below(fig), wrap=wrap)


@pytest.mark.parametrize("field", ["num_reqs", "context_len", "block_size"])
def test_bytes_lines_is_the_figure_the_plain_steps_build(field):
    """The one-dict sweep builder draws exactly the figure add_trace/add_vline/update_* build, for
    random shapes and chosen values (marker included)."""
    import json
    import random

    from kvviz.gpu import traffic
    from kvviz.views.figures import bytes_lines

    rng = random.Random()
    for _ in range(3):
        shape = traffic.StepShape(num_reqs=rng.randint(1, 4096), context_len=rng.randint(1, 30000),
                                  block_size=rng.choice(list(traffic.BLOCK_SIZES)), max_model_len=32768)
        here = getattr(shape, field)
        df = traffic.sweep(shape, field, traffic.sweep_values(field, here))
        kw = dict(x=field, title="bytes per step as it grows", x_title=field, marker_x=here, wrap=rng.choice([None, 14]))
        got, ref = bytes_lines(df, **kw), _bytes_lines_by_steps(df, **kw)
        assert json.dumps(got.to_plotly_json(), sort_keys=True, default=str) == \
            json.dumps(ref.to_plotly_json(), sort_keys=True, default=str)


def test_stacked_bytes_is_the_figure_the_plain_steps_build():
    import json
    import random

    from kvviz.gpu import traffic
    from kvviz.views.figures import stacked_bytes

    rng = random.Random()
    shape = traffic.StepShape(num_reqs=rng.randint(1, 4096), context_len=rng.randint(1, 30000))
    parts = {s: traffic.step_bytes(shape, s) for s in traffic.STRATEGIES}
    ref = go.Figure()
    strategies, comps = list(parts), list(next(iter(parts.values())))
    for i, comp in enumerate(comps):
        ref.add_trace(go.Bar(y=strategies, x=[parts[s][comp] for s in strategies], name=comp, orientation="h",
                             marker_color=F.PALETTE[i % len(F.PALETTE)],
                             hovertemplate=f"{comp}<br>%{{y}}: %{{x:,}} B<extra></extra>"))
    ref.update_layout(barmode="stack")
    totals = [sum(parts[s].values()) for s in strategies]
    ref.update_xaxes(title=F._tr("en")("bytes_per_step"), **F.byte_ticks(1, max(totals + [1]), log=False))
    ref.update_yaxes(autorange="reversed")
    F.legend_below(ref)
    ref.update_layout(legend_orientation="v")      # one part a line (V2's long part names)
    ref = F.base_layout(ref, "t", 100 + 60 * len(strategies) + int(F.LEGEND_LINE_PX * 1.4 * len(comps)))
    got = stacked_bytes(parts, title="t")
    assert json.dumps(got.to_plotly_json(), sort_keys=True, default=str) == \
        json.dumps(ref.to_plotly_json(), sort_keys=True, default=str)


def test_block_table_heatmap_unvalidated_is_the_validated_figure():
    """The block table is built from plain dicts without plotly's validators (its per-id colour
    scale was most of a new batch's server time): on random tables, pools, windows and marks,
    rebuilt through the validators it is the very same figure."""
    import json

    rng = np.random.default_rng()
    for _ in range(25):
        rows, width, nb = int(rng.integers(1, 40)), int(rng.integers(1, 30)), int(rng.integers(2, 700))
        bt = rng.integers(0, nb, size=(rows, width)).astype(np.int32)
        nr = int(rng.integers(1, rows + 1))
        r0 = int(rng.integers(0, rows))
        kw = dict(num_reqs=nr, num_blocks=nb, geometry=Geometry(int(rng.choice([4, 8, 16]))),
                  counts=rng.integers(0, width + 1, size=rows), title="t", lang=str(rng.choice(["en", "zh", "es"])),
                  selected=(int(rng.integers(0, rows)), int(rng.integers(0, width))),
                  stale_rows=[int(rng.integers(0, rows))], pad_until=min(rows, nr + 2),
                  row_names=[f"r{i}" for i in range(rows)], stale_tails={0: 1},
                  row_window=(r0, int(rng.integers(r0 + 1, rows + 1))) if rng.random() < 0.4 else None,
                  col_window=(0, int(rng.integers(1, width + 1))) if rng.random() < 0.3 else None,
                  max_cols=int(rng.integers(1, width + 1)) if rng.random() < 0.3 else None)
        fast, ref = F.block_table_heatmap(bt, **kw), F.block_table_heatmap(bt, validate=True, **kw)
        assert json.dumps(fast.to_plotly_json(), sort_keys=True, default=str) == \
            json.dumps(ref.to_plotly_json(), sort_keys=True, default=str), kw


def _validated_rebuild_is_identical(fig):
    """``fig`` (built from plain dicts, without plotly's validators) passes them unchanged: rebuilt
    through the validators (which reject a bad colour or property and expand shorthands such as a
    colour scale's name, which plotly.js would not know) it is the very same figure."""
    import json

    from plotly.io.json import to_json_plotly

    fast = json.loads(to_json_plotly(fig.to_plotly_json()))
    ref = json.loads(to_json_plotly(go.Figure(fig.to_plotly_json()).to_plotly_json()))
    assert fast == ref


@pytest.mark.parametrize("num_reqs", [1, 3, len(F.PALETTE) + 5])   # the last: one Turbo-coloured trace
def test_slot_figures_built_from_dicts_pass_plotly_validation(num_reqs):
    rng = np.random.default_rng()
    for _ in range(6):
        n = int(rng.integers(1, 80))
        rows = rng.integers(-1, num_reqs, n)
        slots = np.where(rows >= 0, rng.integers(0, 400, n), PAD_SLOT_ID)
        lang = str(rng.choice(["en", "zh", "es"]))
        names = [f"r<{i}>" if rng.random() < 0.5 else "" for i in range(num_reqs)] if rng.random() < 0.5 else None
        sel = int(rng.integers(0, n)) if rng.random() < 0.7 else None
        _validated_rebuild_is_identical(F.slot_mapping_figure(_tokens(rows, slots), num_reqs=num_reqs, selected=sel,
                                                              title="t " * int(rng.integers(0, 30)), lang=lang,
                                                              row_names=names))
        kbs, nb = int(rng.choice([1, 4, 16, 48])), int(rng.integers(1, 50))
        row = rng.integers(-1, num_reqs, (nb, kbs))
        owners = {"row": row, "pos": np.where(row >= 0, rng.integers(0, 999, row.shape), 0),
                  "new": (row >= 0) & (rng.random(row.shape) < 0.3), "share": rng.integers(0, 3, row.shape),
                  "first_block": int(rng.integers(0, 9))}
        geo = Geometry(kbs)
        slot = int(geo.slot_at(owners["first_block"] + int(rng.integers(0, nb)), int(rng.integers(0, kbs))))
        _validated_rebuild_is_identical(F.slot_buffer_figure(owners, geometry=geo, num_reqs=num_reqs, title="b",
                                                             selected_slot=slot if rng.random() < 0.7 else None,
                                                             lang=lang))


def test_pool_figures_built_from_dicts_pass_plotly_validation():
    """Step through's ref counts and free queue (built for every step, and the next one ahead)."""
    rng = np.random.default_rng()
    for _ in range(20):
        n = int(rng.integers(1, 80))
        ref = rng.integers(0, 4, n)
        ref[0] = 0
        queue = [int(b) for b in rng.permutation(n)[: int(rng.integers(0, n + 1))]]
        cached = {int(b): f"h<{b}>" for b in rng.choice(n, int(rng.integers(0, n + 1)), replace=False)}
        lang = str(rng.choice(["en", "zh", "es"]))
        _validated_rebuild_is_identical(F.ref_count_figure(ref, queue, cached, title="r", lang=lang,
                                                           highlight=[int(x) for x in rng.integers(-2, n + 2, 2)]))
        _validated_rebuild_is_identical(F.free_queue_figure(queue, cached, title="q", lang=lang))


@pytest.mark.parametrize("lang", ["en", "zh", "es"])
def test_rows_outside_the_batch_are_named_in_the_legend_not_over_the_rows(lang):
    """V2's input table: rows past the step's batch are washed out, CUDA-graph padded rows greyed, and
    each band is named by a legend entry under the plot (an annotation inside the band hid the last
    row's ids); the entries are wrapped to fit a half-width chart, and the figure grows by the legend."""
    from kvviz.texts.i18n import t

    bt = np.arange(1, 4 * 5 + 1).reshape(4, 5)
    kw = dict(num_reqs=2, num_blocks=32, geometry=Geometry(4), lang=lang)
    fig = F.block_table_heatmap(bt, pad_until=2, **kw).to_plotly_json()
    named = [tr for tr in fig["data"] if tr.get("showlegend")]
    assert len(named) == 1 and named[0]["name"].replace("<br>", "").replace(" ", "") == \
        t("figures", "unused_rows", lang).replace(" ", "")
    assert all(F._cells(line) <= 22 for line in named[0]["name"].split("<br>"))
    assert not fig["layout"].get("annotations") and fig["layout"]["showlegend"] is True
    bands = [s for s in fig["layout"]["shapes"] if s.get("fillcolor") == "white"]
    assert [(b["y0"], b["y1"]) for b in bands] == [(1.5, 3.5)]
    # CUDA-graph padded rows (2) then rows outside the batch (3): two entries, no label over any row,
    # and no axis widened for one (a label inside the padded band used to add a phantom row)
    both = F.block_table_heatmap(bt, pad_until=3, **kw).to_plotly_json()
    assert [tr["name"].replace("<br>", "").replace(" ", "") for tr in both["data"] if tr.get("showlegend")] == \
        [t("figures", k, lang).replace(" ", "") for k in ("padded_rows", "unused_rows")]
    assert not both["layout"].get("annotations")
    assert [(b["y0"], b["y1"]) for b in both["layout"]["shapes"] if b.get("fillcolor") in ("gray", "white")] == \
        [(1.5, 2.5), (2.5, 3.5)]
    assert both["layout"]["height"] > fig["layout"]["height"]            # two entries, one to a row
    # a table with every row in the batch has no such entry and no legend band
    full = F.block_table_heatmap(bt[:2], pad_until=2, **kw).to_plotly_json()
    assert not [tr for tr in full["data"] if tr.get("showlegend")]
    assert fig["layout"]["height"] > F.block_table_heatmap(bt, **kw).to_plotly_json()["layout"]["height"] - 1


@given(st.text(alphabet=st.sampled_from(list("ab c（)(中文字") + [" "]), max_size=60), st.integers(4, 30))
def test_wrap_label_keeps_the_text_and_the_width(text, width):
    out = F.wrap_label(text, width)
    assert "".join(out.split("<br>")).replace(" ", "") == text.replace(" ", "")
    assert all(F._cells(line) <= width for line in out.split("<br>"))


def test_bench_figure_guides_in_the_legend_every_point_drawn():
    """The empty-launch floor and the goal are lines across the plot named in the legend: a label
    written on the plot ("goal: 1.5x the empty launch", its white box) hid the 1x131072 points of
    flat / grid2d / auto, which the recorded run has (5.3, 6.2, 5.3 µs)."""
    import json
    from pathlib import Path

    rec = json.loads((Path(__file__).resolve().parents[2] / "examples/bench/h200-2026-11-30.json").read_text())
    df = pd.DataFrame([r for r in rec["rows"] if r["kernel"] == "slot_mapping"])
    fig = F.bench_figure(df, x="shape", y="us", color="variant", title="t", x_title="shape", y_title="µs",
                         log_x=False, floor=3.36, floor_label="empty launch 3.36 µs", goal_x=1.5,
                         goal_label="goal: 1.5× the empty launch")
    assert not fig.layout.annotations
    assert [s.y0 for s in fig.layout.shapes] == [3.36, 3.36 * 1.5]
    names = [tr.name for tr in fig.data]
    assert names[-2:] == ["empty launch 3.36 µs", "goal: 1.5× the empty launch"]
    for tr in fig.data[:-2]:
        assert list(tr.x)[-1] == "1x131072" and len(tr.x) == 9, tr.name
    assert [list(tr.x) for tr in fig.data[-2:]] == [[None], [None]]   # legend entries only
