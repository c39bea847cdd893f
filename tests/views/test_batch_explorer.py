"""Batch explorer: editor rows -> real allocation -> step, checked against hand-worked values."""
import numpy as np
import pandas as pd
import pytest

from kvviz.views import batch as ex
from kvviz.views.csr import csr_view
from kvviz.constants import PAD_SLOT_ID
from kvviz.errors import BadInput


def test_default_batch_shares_the_system_prompt():
    eb = ex.explore(ex.default_rows(), ex.BatchConfig())
    # row 0: 10 tokens -> blocks 1 2 3 (block 0 is null); row 1 shares the 2 full prefix blocks (8 tokens)
    assert eb.block_ids[0] == [1, 2, 3]
    assert eb.block_ids[1] == [1, 2, 4, 5]
    assert eb.requests["cache_hit_tokens"].tolist()[:2] == [0, 8]
    assert eb.requests["computed_eff"].tolist()[1] == 8 and eb.requests["new_tokens"].tolist()[1] == 5
    assert eb.ref_counts[1] == eb.ref_counts[2] == 2 and eb.ref_counts[3] == 1
    # width: 64 tokens / 4 = 16 blocks, aligned to 128 tokens = 32 blocks
    assert eb.width == 32
    # token 12 = row 1 position 10 -> logical 2 -> physical 4, offset 2 -> slot 18
    c = eb.chain(12)
    assert (c["row"], c["position"], c["logical_block"], c["physical_block"], c["slot"]) == (1, 10, 2, 4, 18)
    assert c["NHD_byte"] == (4 * 64 + 2 * 16) * 2 and c["HND_byte"] == (4 * 64 + 2 * 8) * 2


def test_slot_owners_mark_shared_and_new_slots():
    eb = ex.explore(ex.default_rows(), ex.BatchConfig())
    o = eb.slot_owners(0, 7)
    assert o["row"][1].tolist() == [0, 0, 0, 0] and o["share"][1].tolist() == [2, 2, 2, 2]
    assert o["pos"][3].tolist() == [8, 9, -1, -1]          # row 0's partial last block
    assert o["pos"][5].tolist() == [12, -1, -1, -1]        # row 1's last block, position 12
    assert o["new"][4].tolist() == [True] * 4 and o["new"][1].all()      # row 0 is a prefill
    # row 2 decodes position 7: block 6 (positions 0-3) is old context, block 7 offset 3 is new
    assert not o["new"][6].any() and o["new"][7].tolist() == [False, False, False, True]


def test_kernel_blocks_split_manager_blocks():
    rows, cfg = ex.preset("kernel")                        # block 16, kernel block 8
    eb = ex.explore(rows, cfg)
    assert eb.block_ids[0] == [1, 2]
    assert eb.step.block_table[0, :4].tolist() == [2, 3, 4, 5]
    assert eb.step.slot_mapping[0] == 16 and eb.step.slot_mapping[9] == 25   # position 9: kernel block 3, offset 1


def test_cuda_graph_padding_pads_tokens_and_rows():
    rows, cfg = ex.preset("decode")                         # 5 decodes, padding on
    eb = ex.explore(rows, cfg)
    assert eb.step.num_tokens_padded == 8 and eb.step.num_reqs_padded == 8
    assert eb.step.slot_mapping[5:].tolist() == [PAD_SLOT_ID] * 3
    assert (eb.step.block_table[5:] == 0).all()
    assert eb.tokens["kind"].tolist()[5:] == ["CUDA-graph pad"] * 3


def test_dcp_other_rank_tokens_get_pad_slots():
    rows, cfg = ex.preset("dcp")                            # 2 ranks, block 4: a block covers 8 positions
    eb = ex.explore(rows, cfg)
    sm = eb.step.slot_mapping[:13].tolist()
    # rank 0 owns positions 0-3 and 8-11 of the 13-token prefill (interleave 1: every other token)
    assert [s != PAD_SLOT_ID for s in sm] == [p % 2 == 0 for p in range(13)]


@pytest.mark.parametrize("change, message", [
    (dict(num_blocks=5), "pool is too small"),
    (dict(kernel_block_size=3), "does not divide"),
    (dict(max_model_len=12), "exceeds the max model length"),
    (dict(dcp_rank=1), "DCP rank"),
])
def test_bad_batches_say_why(change, message):
    cfg = ex.BatchConfig(**{**ex.BatchConfig().__dict__, **change})
    with pytest.raises(BadInput, match=message):
        ex.explore(ex.default_rows(), cfg)


def test_frame_round_trip_and_bad_cells():
    rows = ex.default_rows()
    assert ex.frame_to_rows(ex.rows_to_frame(rows)) == rows
    with pytest.raises(BadInput, match="row 0: prompt length"):
        ex.frame_to_rows(pd.DataFrame({"prompt_len": [None], "computed": [0], "new_tokens": [1],
                                       "prefix_group": [""]}))
    with pytest.raises(BadInput, match="whole number"):
        ex.frame_to_rows(pd.DataFrame({"prompt_len": [2.5], "computed": [0], "new_tokens": [1],
                                       "prefix_group": [""]}))
    with pytest.raises(BadInput, match="empty"):
        ex.frame_to_rows(ex.rows_to_frame([]))


def test_big_batch_builds():
    rows, cfg = ex.big_rows(8, 64, 16)
    eb = ex.explore(rows, cfg)
    assert eb.step.block_table.shape == (8, 64) and (eb.requests["num_blocks"] == 64).all()


def test_csr_view_adds_empty_rows_with_either_rule():
    eb = ex.explore(*ex.preset("decode"))                  # 8 rows already (5 real + 3 padded)
    step, seq, (indptr, indices, lpl) = csr_view(eb, 2, True)
    assert len(seq) == 10 and lpl[-5:].tolist() == [0] * 5 and indptr[-1] == indptr[5]
    _, _, (_, _, lpl_old) = csr_view(eb, 2, False)
    assert lpl_old[-5:].tolist() == [8] * 5
    # decode of a 16-token prompt: seq 17 -> 3 pages of 8, last page 1 entry
    assert lpl[2] == 1 and np.diff(indptr)[2] == 3


def test_block_colorscale_is_valid_for_any_pool_size():
    from kvviz.views.figures import block_colorscale

    for n in range(1, 3000):
        stops = block_colorscale(n)
        assert stops[0][0] == 0 and stops[-1][0] == 1.0
        assert all(a[0] <= b[0] for a, b in zip(stops, stops[1:]))


def test_a_table_too_big_to_hold_is_refused():
    import pytest

    from kvviz.views import batch as ex
    from kvviz.errors import BadInput

    rows = [ex.RequestRow(prompt_len=4, computed=0, new_tokens=4, prefix_group="") for _ in range(1024)]
    cfg = ex.BatchConfig(block_size=1, kernel_block_size=1, num_blocks=1 << 20, max_model_len=1 << 18)
    with pytest.raises(BadInput, match="the limit is"):
        ex.explore(rows, cfg)


@pytest.mark.parametrize("rows,msg", [
    ([ex.RequestRow(8, 8, 0), ex.RequestRow(4, 4, 0)], "no request has a new token"),       # used to crash the page
    ([ex.RequestRow(10 ** 12, 0, 1)], "exceeds the max model length"),                          # used to allocate TiB
    ([ex.RequestRow(100, 0, 1)], "a prompt of 100 tokens exceeds the max model length 64"),
])
def test_batches_that_cannot_be_a_step_are_refused(rows, msg):
    with pytest.raises(BadInput, match=msg):
        ex.explore(rows, ex.BatchConfig())


def test_batch_page_survives_an_all_zero_new_tokens_link():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(__import__("pathlib").Path(__file__).resolve().parents[2] / "app.py"),
                           default_timeout=60)
    at.query_params["reqs"] = "8.8.0"
    at.switch_page("pages/batch.py").run()     # the link opens the Batch page itself (/batch?reqs=8.8.0)
    assert not at.exception, at.exception
    assert any("no request has a new token" in e.value for e in at.error)
    at.run()
    assert not at.exception


def test_page_windows_of_the_default_batch():
    eb = ex.explore(ex.default_rows(), ex.BatchConfig())
    # widest row holds 4 blocks: +2 columns, at least 8, at most the width (32)
    assert eb.shown_columns() == 8
    assert eb.row_kernel_blocks().tolist() == [3, 4, 2, 3, 4]
    # blocks up to 14 in use: draw them all, and two blocks more
    assert eb.buffer_window(None) == (0, 16)
    rows, cfg = ex.preset("kernel")                        # 2 kernel blocks per manager block
    ek = ex.explore(rows, cfg)
    assert ek.row_kernel_blocks().tolist() == [4, 2, 6] and ek.buffer_window(None) == (0, 17)


def test_buffer_window_of_a_big_pool_follows_the_token():
    eb = ex.explore(*ex.big_rows(8, 64, 16))               # 513 blocks in use
    assert eb.buffer_window(None) == (0, 31)               # no token picked: round block 1
    assert eb.buffer_window(300) == (284, 315)
    assert eb.buffer_window(512) == (481, 512)             # clamped at the pool's end


def test_token_frame_marks_other_rank_tokens():
    eb = ex.explore(*ex.preset("dcp"))                     # rank 0 of 2, block 4: 8 positions a block
    t = eb.tokens.iloc[:4]
    assert t["logical_block"].tolist() == [0, 0, 0, 0]
    assert t["column"].tolist() == [0, -1, 0, -1] and t["offset"].tolist() == [0, -1, 1, -1]
    assert t["physical_block"].tolist() == [1, -1, 1, -1] and t["slot"].tolist() == [4, -1, 5, -1]
    assert t["kind"].tolist() == ["written", "other DCP rank"] * 2
    assert ex.token_frame(eb.step).equals(eb.tokens.drop(columns=["kind"]))


def test_chain_bytes_follow_the_cache_layout_family():
    eb = ex.explore(ex.default_rows(), ex.BatchConfig())
    c = eb.chain(12, cache_layout="flashinfer")           # slot 18 = block 4, offset 2
    assert (c["NHD_byte"], c["HND_byte"]) == (1088, 1056)
    assert eb.chain(12)["NHD_byte"] == 576                  # flash_attn, the default


def test_csr_table_window_and_request_lines():
    from kvviz.views import csr as csr_vm

    eb = ex.explore(ex.default_rows(), ex.BatchConfig())
    step, seq, (indptr, _, lpl) = csr_view(eb, 2, True)
    assert csr_vm.table_shape(step.block_table, indptr) == (7, 6)      # 4 pages at most, + 2
    assert csr_vm.table_window(step.block_table, indptr, 1) == (6, None)
    lines = csr_vm.requests_frame(seq, indptr, lpl, 4)
    assert lines["rule"].tolist() == ["partial", "partial", "full page", "partial", "partial", "empty", "empty"]
    assert lines.iloc[1].to_dict() == {"request": 1, "seq_len (this rank)": 13, "pages": 4, "indptr[r]": 3,
                                       "indptr[r+1]": 7, "last_page_len": 1, "rule": "partial"}
    big = ex.explore(*ex.big_rows())
    bstep, _, (bptr, _, _) = csr_view(big, 2, True)
    assert csr_vm.table_window(bstep.block_table, bptr, 100) == (2048, (76, 124))   # capped at the width


def test_rows_past_the_prompt_are_named_as_decode_rows():
    from kvviz.views.batch import RequestRow, rows_past_prompt
    rows = [RequestRow(10, 0, 10), RequestRow(10, 10, 1), RequestRow(13, 8, 5), RequestRow(4, 2, 4)]
    assert rows_past_prompt(rows) == [1, 3]


def test_every_request_column_has_a_label_in_every_language():
    from kvviz.texts.i18n import LANGS, t
    from kvviz.views.batch import default_rows, explore, BatchConfig
    eb = explore(default_rows(), BatchConfig())
    for lang in LANGS:
        labels = [t("batch", "rcol_" + c, lang) for c in eb.requests.columns]
        assert all(labels) and len(set(labels)) == len(labels)
        assert not any("_" in x for x in labels), (lang, labels)     # no snake_case on screen


def test_chain_line_has_every_number_in_full():
    from kvviz.views.batch import BatchConfig, default_rows, explore, chain_line
    eb = explore(default_rows(), BatchConfig())
    ch = eb.chain(12, 0, 0, "k", cache_layout="flashinfer_packed")
    line = chain_line(ch)
    assert f"slot {ch['slot']}" in line and f"NHD byte {ch['NHD_byte']}" in line and "…" not in line
    assert line.startswith(f"row {ch['row']} · position {ch['position']}")


def test_kernel_table_marks_formats_and_dashes():
    rows = [{"kernel": "csr", "passed": True, "max_error": 0.0, "us": 12.345, "detail": "x"},
            {"kernel": "decode[csr]", "passed": False, "max_error": 0.000123456, "us": None, "detail": "y"}]
    assert ex.kernel_table(rows, timed=True) == [
        {"kernel": "csr", "passed": "✔", "max_error": "0", "us": "12.3"},
        {"kernel": "decode[csr]", "passed": "✘", "max_error": "0.00012", "us": "—"}]
    untimed = ex.kernel_table(rows, timed=False)
    assert [set(r) for r in untimed] == [{"kernel", "passed", "max_error"}] * 2     # no µs column, no detail
