"""What issue 12's speed work changed in what the pages send and compute: the big block table as a
window of rows and columns, the kernels untimed in the interpreter, the PCIe figures and the notations
round trip built once, and the next demo step built ahead."""
import json
import threading

import numpy as np
import pytest

import ui
from kvviz.core.geometry import Geometry
from kvviz.views import batch as ex
from kvviz.views import figures
from kvviz.views.figures import HILITE

from browser_support import charts_drawn, needs_chromium, no_exception, wait_idle
from page_support import batch_kernel_table, chart_figures, chart_specs, open_page as _open, plotly_array as _array  # noqa: F401 - shared helpers


def _plots(at):
    return chart_figures(at)


def test_table_col_window_bounds():
    assert ex.table_col_window(200, 50) is None                         # narrow enough: every column
    assert ex.table_col_window(2050, 0) == (0, 256)
    assert ex.table_col_window(2050, -1) == (0, 256)                    # a padding token: the first ones
    assert ex.table_col_window(2050, 1000) == (872, 1128)
    assert ex.table_col_window(2050, 2049) == (2050 - 256, 2050)        # clamped at the end
    for centre in (0, 127, 128, 700, 2049):
        c0, c1 = ex.table_col_window(2050, centre)
        assert c1 - c0 == 256 and c0 <= centre < c1


def test_heatmap_column_window_keeps_real_column_numbers():
    bt = np.arange(6 * 600, dtype=np.int32).reshape(6, 600) % 97
    geo = Geometry(4, 4)
    fig = figures.block_table_heatmap(bt, num_reqs=6, num_blocks=97, geometry=geo, selected=(2, 300),
                                      counts=np.full(6, 600), col_window=(250, 350))
    heat = fig.data[0]
    assert list(heat.x) == list(range(250, 350))
    assert np.array_equal(np.asarray(heat.z), bt[:, 250:350])
    boxes = [s for s in fig.layout.shapes if s.line.color == HILITE["color"]]
    assert len(boxes) == 1 and (boxes[0].x0, boxes[0].x1) == (299.5, 300.5)
    assert all(s.line.dash != "dot" for s in fig.layout.shapes)         # no row outlines in a window
    # a selected cell outside the window draws no box; without a window nothing changes
    off = figures.block_table_heatmap(bt, num_reqs=6, num_blocks=97, geometry=geo, selected=(2, 10),
                                      col_window=(250, 350))
    assert not [s for s in off.layout.shapes if s.line.color == HILITE["color"]]
    full = figures.block_table_heatmap(bt, num_reqs=6, num_blocks=97, geometry=geo)
    assert full.data[0].x is None and np.asarray(full.data[0].z).shape == (6, 600)


def test_big_batch_token_change_sends_a_small_window(at):
    """256 x 2048: each token change sends a 48-row x 256-column window of both tables (was 48 x 2050,
    0.8 MB each), around the token's row and column."""
    _open(at, "batch")
    at.selectbox(key="batch.preset").set_value("big").run()
    at.number_input(key="batch.tok").set_value(200).run()
    assert not at.exception
    chain = {m.label: int(m.value) for m in at.metric if m.value.lstrip("-").isdigit()}
    row, col = chain["row"], chain["table column"]
    specs = chart_specs(at)
    assert len(specs[0]) < 250_000 and len(specs[-1]) < 250_000
    table = json.loads(specs[0])["data"][0]
    xs, ys = _array(table["x"]), _array(table["y"])
    assert len(xs) == 256 and xs[0] <= col <= xs[-1] and ys[0] <= row <= ys[-1]
    assert any(f"around column {col}" in c.value for c in at.caption)


def test_batch_kernels_untimed_in_the_interpreter(at):
    if ui.backend_label()["mode"] != "interpreter":
        pytest.skip("on a GPU the kernels are timed")
    _open(at, "batch")
    kernels = batch_kernel_table(at)
    assert kernels is not None and "us" not in kernels.columns and (kernels["passed"] == "✔").all()
    assert any("untimed" in c.value for c in at.caption)


def test_pcie_figures_built_once_per_shape(at, monkeypatch):
    built = []
    real = figures.bytes_lines
    monkeypatch.setattr(figures, "bytes_lines", lambda df, **kw: built.append(kw["x"]) or real(df, **kw))
    _open(at, "pcie")
    first = _plots(at)
    at.number_input(key="pcie.reqs").set_value(65).run()
    at.number_input(key="pcie.reqs").set_value(64).run()     # back to a shape already drawn
    assert not at.exception
    assert sorted(built) == sorted(["num_reqs", "context_len", "block_size"] * 2)
    assert _plots(at) == first and len(first) == 4


def test_notations_round_trip_in_each_language(at):
    _open(at, "notations")
    trip = at.dataframe[-1].value
    assert (trip.to_numpy() == 0).all() and trip.shape[0] == trip.shape[1] >= 5
    assert trip.index.name == "from"
    at.selectbox(key="lang.widget").set_value("es").run()
    trip = at.dataframe[-1].value
    assert trip.index.name == "desde" and trip.columns.name == "hacia" and not at.exception


def test_prefetch_runs_in_the_background_and_is_bounded():
    started, release = threading.Event(), threading.Event()
    calls = []

    def slow(x):
        started.set()
        release.wait(10)
        calls.append(x)

    ui.prefetch(slow, 1)
    assert started.wait(10)                       # the one thread took it
    for i in range(2, 2 + ui.PREFETCH_PENDING_MAX + 3):
        ui.prefetch(calls.append, i)              # queued up to the bound, the rest dropped
    release.set()
    ui._ahead_pool().submit(lambda: None).result(timeout=10)      # the queue drained
    assert calls == list(range(1, ui.PREFETCH_PENDING_MAX + 1))
    ui.prefetch(lambda: 1 / 0)                    # an error stays in the thread
    ui._ahead_pool().submit(lambda: None).result(timeout=10)
    assert ui._prefetch_pending[0] == 0


# --- in the browser: the token follower is a fragment; its link and its figures still follow ----------

@pytest.mark.browser
@needs_chromium()
def test_token_fragment_updates_link_chain_and_figures(server, page):  # noqa: F811 - fixtures
    from playwright.sync_api import expect

    page.goto(server + "/batch")
    wait_idle(page)
    charts_drawn(page)
    box = page.get_by_label("Token of the step (or click a marker in the slot mapping)", exact=True)
    box.fill("12")
    box.press("Enter")
    expect(page.get_by_text("slot = 4 × 4 + 2 = 18")).to_be_visible(timeout=30_000)
    wait_idle(page)
    page.wait_for_function("() => location.search.includes('tok=12')", timeout=30_000)
    assert page.locator('.kv-live-chart').count() == 4
    # a batch edit after the fragment's run is a full rerun: the link keeps the token and the new size
    nb = page.get_by_label("Pool size (blocks)", exact=True)
    nb.fill("40")
    nb.press("Enter")
    page.wait_for_function("() => location.search.includes('nb=40') && location.search.includes('tok=12')",
                           timeout=60_000)
    wait_idle(page)
    no_exception(page)


def test_batch_small_tables_are_markdown_big_ones_scroll(at):
    """A small batch's requests, kernel and idx_mapping tables are markdown tables (a new batch redraws
    them in a few ms of browser time; a changed grid cost ~70 ms and a late redraw), each short header
    explained in the table's tooltip; the 256-request preset keeps its requests in a scrolling grid."""
    from page_support import batch_labels, table_frames
    from kvviz.texts.i18n import t

    _open(at, "batch")
    assert not at.exception
    shown = table_frames(at, batch_labels())
    reqs = [f for f in shown if "seq_len" in f.columns]
    assert len(reqs) == 1 and list(reqs[0]["row"]) == list(range(len(reqs[0])))
    assert not [d for d in at.dataframe if "seq_len" in d.value.columns]
    # each short header's long name: in the tooltip of the table's heading (a markdown table draws none)
    head = next(h for h in at.subheader if h.value == t("batch", "allocated", "en"))
    assert t("batch", "rcol_cache_hit_tokens", "en") in head.help
    idx_title = next(m for m in at.markdown if m.value == f"**{t('batch', 'idx_title', 'en')}**")
    assert t("batch", "icol_state_help", "en") in idx_title.help
    assert batch_kernel_table(at) is not None
    at.selectbox(key="batch.preset").set_value("big").run()
    assert not at.exception
    grids = [d.value for d in at.dataframe if "seq_len" in d.value.columns]
    assert len(grids) == 1 and len(grids[0]) == 256
    assert not [f for f in table_frames(at, batch_labels()) if "seq_len" in f.columns]
