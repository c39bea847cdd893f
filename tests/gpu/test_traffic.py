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
    """25 GB/s and 8 µs by default: 1 MB takes 8 + 40 µs; no measurement leaves the column empty."""
    assert tf.model_us(1_000_000) == pytest.approx(48.0)
    t = tf.model_vs_measured([1_000_000, 0, 25_000, 50], None)
    assert list(t.columns) == ["strategy", "bytes", "model µs", "measured µs"]
    assert t["model µs"].tolist() == [48.0, 8.0, 9.0, 8.0] and t["measured µs"].isna().all()
    assert tf.model_vs_measured([1, 2, 3, 4], [5.0, 6.0, 7.0, 8.0])["measured µs"].tolist() == [5.0, 6.0, 7.0, 8.0]


def test_sweeps_cover_the_page_defaults():
    """Each sweep holds the page's default value, so its marker lands on a point."""
    for field, values in tf.SWEEP_VALUES.items():
        assert getattr(tf.StepShape(), field) in values
    assert tf.SWEEP_VALUES["block_size"] == tf.BLOCK_SIZES
