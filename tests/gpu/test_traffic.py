"""PCIe traffic model, against hand-worked byte counts."""
import pytest

from kvviz.gpu import traffic as tf
from kvviz.errors import BadInput

S = tf.StepShape(num_reqs=64, context_len=2048, block_size=16, max_model_len=32768, query_len=1)


def test_components_by_hand():
    # width: 32768 / 16 = 2048 blocks (already a multiple of 128 / 16 = 8)
    assert S.width == 2048 and S.pages_per_req == 128 and S.dirty_rows == 4   # 64 decodes / 16
    b = tf.step_bytes(S)
    assert b == {"block table": 64 * 2048 * 4, "positions": 64 * 8, "query_start_loc": 65 * 4,
                 "seq_lens": 64 * 4, "CSR indptr": 65 * 4, "CSR last_page_len": 64 * 4, "CSR indices": 0}
    assert tf.total_bytes(S) == 524288 + 512 + 260 + 256 + 260 + 256


def test_strategies_by_hand():
    assert tf.block_table_bytes(S, "valid prefix only") == 64 * 128 * 4
    assert tf.block_table_bytes(S, "dirty rows only") == 4 * (2048 + 1) * 4
    assert tf.block_table_bytes(S, "dirty rows, valid prefix") == 4 * (128 + 1) * 4
    assert tf.step_bytes(tf.StepShape(**{**S.__dict__, "host_csr_indices": True}))["CSR indices"] == 64 * 128 * 4


def test_alignment_and_prefill():
    # block 48: a row covers a multiple of lcm(128, 48) = 384 tokens; 1000 tokens -> 21 blocks -> 24
    s = tf.StepShape(num_reqs=1, context_len=100, block_size=48, max_model_len=1000)
    assert s.width == 24
    # a prefill chunk of >= block_size tokens changes every row
    assert tf.StepShape(num_reqs=10, context_len=64, query_len=16).dirty_rows == 10


def test_sweep_and_model():
    df = tf.sweep(S, "num_reqs", [1, 2, 4])
    assert df["full width (vLLM)"].tolist() == [tf.total_bytes(tf.StepShape(**{**S.__dict__, "num_reqs": n}))
                                                for n in (1, 2, 4)]
    ctx = tf.sweep(S, "context_len", [65536])          # past max_model_len: the width grows with it
    assert ctx["full width (vLLM)"].iloc[0] > tf.total_bytes(S)
    assert tf.model_us(25_000, gbps=25.0, latency_us=8.0) == pytest.approx(9.0)
    assert tf.measure_h2d_us([4]) is None or len(tf.measure_h2d_us([4])) == 1


@pytest.mark.parametrize("kw", [dict(context_len=40000), dict(query_len=4096), dict(num_reqs=0),
                                dict(kernel_block_size=5)])
def test_bad_shapes(kw):
    with pytest.raises(BadInput):
        tf.validate(tf.StepShape(**{**S.__dict__, **kw}))


def test_strategy_totals_match_the_components_table():
    """The PCIe page's per-strategy totals are the 'total' line of the components table."""
    comp = tf.components_frame(S)
    want = [int(comp.loc[comp["table"] == "total", s].iloc[0]) for s in tf.STRATEGIES]
    assert tf.strategy_totals(S) == want and want[0] == tf.total_bytes(S)


def test_model_vs_measured_table():
    """25 GB/s and 8 µs by default: 1 MB takes 8 + 40 µs; no measurement says why, never None."""
    assert tf.model_us(1_000_000) == pytest.approx(48.0)
    t = tf.model_vs_measured([1_000_000, 0, 25_000, 50], None, "—, no GPU here")
    assert list(t.columns) == ["strategy", "bytes", "model µs", "measured µs"]
    assert t["model µs"].tolist() == [48.0, 8.0, 9.0, 8.0] and t["measured µs"].tolist() == ["—, no GPU here"] * 4
    assert not t.isna().any().any()
    assert tf.model_vs_measured([1, 2, 3, 4], [5.0, 6.25, 7.0, 8.0])["measured µs"].tolist() == ["5.0", "6.2", "7.0", "8.0"]


def test_sweeps_include_the_chosen_value():
    """A 1M-token context is a point of the context sweep (the marker sits on the curve)."""
    assert 1 << 20 in tf.sweep_values("context_len", 1 << 20)
    assert tf.sweep_values("num_reqs", 3) == sorted(set(tf.SWEEP_VALUES["num_reqs"]) | {3})
    df = tf.sweep(tf.StepShape(context_len=1 << 20, max_model_len=1 << 20), "context_len",
                  tf.sweep_values("context_len", 1 << 20))
    assert df["context_len"].max() == 1 << 20


def test_byte_axis_ticks_are_binary_units():
    pytest.importorskip("plotly")          # a view module: the GPU machine has no plotly
    from kvviz.views.figures import byte_label, byte_ticks, bytes_lines
    assert [byte_label(v) for v in (512, 4096, 1536 * 1024, 1 << 30, 3 << 30)] == \
        ["512 B", "4 KiB", "1.5 MiB", "1 GiB", "3 GiB"]
    t = byte_ticks(100, 5e9, log=True)
    assert t["tickvals"][0] <= 100 and t["tickvals"][-1] >= 5e9 and all("B" in x for x in t["ticktext"])
    lin = byte_ticks(1, 3 << 20, log=False)
    assert lin["tickvals"][0] == 0 and lin["tickvals"][-1] >= 3 << 20 and 3 <= len(lin["tickvals"]) <= 12
    df = tf.sweep(tf.StepShape(), "num_reqs", tf.sweep_values("num_reqs", 64))
    fig = bytes_lines(df, x="num_reqs", title="t", x_title="x")
    assert all(x.endswith("B") for x in fig.layout.yaxis.ticktext)


def test_sweeps_cover_the_page_defaults():
    """Each sweep holds the page's default value, so its marker lands on a point."""
    for field, values in tf.SWEEP_VALUES.items():
        assert getattr(tf.StepShape(), field) in values
    assert tf.SWEEP_VALUES["block_size"] == tf.BLOCK_SIZES
