"""The six notations agree: the same token has the same KV address in each, and each
converts back to the batch it came from."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvviz.notations import models as nt
from kvviz.errors import BadInput

NAMES = list(nt.NOTATIONS)


def _batch(block_size, rows, seq_lens, query_lens, num_slots=None):
    return nt.canonical_from_block_table(np.array(rows), seq_lens, query_lens, block_size,
                                         req_ids=[f"r{i}" for i in range(len(rows))],
                                         num_slots=num_slots)


def _forms(c, page):
    out = {}
    for name in NAMES:
        if name == "deepinfer":
            out[name] = nt.to_deepinfer(c, page_size=page)
        else:
            out[name] = nt.convert(c, name, page)
    out["llamacpp_unified"] = nt.convert(c, "llamacpp", page, kv_unified=True)   # both layouts
    return out


def _same(a, b):
    """Two canonical batches put every token of every request in the same slot."""
    return [(r.slots, r.query_len) for r in a.requests] == [(r.slots, r.query_len) for r in b.requests]


def _assert_agree(c, page):
    forms = _forms(c, page)
    for name, f in forms.items():
        assert _same(nt.to_canonical(f), c), name
        for i, r in enumerate(c.requests):
            for p in range(r.seq_len):
                assert f.address(i, p) == r.slots[p], (name, i, p)
                assert f.coords(i, p)["slot"] == r.slots[p]
                assert f.locate(i, p)
    return forms


# --- a hand-worked batch ------------------------------------------------------------------
# B = 4. A: 10 tokens in blocks [1, 2, 3], decoding its last one. B: shares A's two full
# blocks (a prefix hit) and has its own block 5; it prefills its last 3 tokens (9 in all).

@pytest.fixture
def hand():
    return _batch(4, [[1, 2, 3], [1, 2, 5]], [10, 9], [1, 3])


def test_hand_vllm(hand):
    f = nt.to_vllm(hand, 4)
    assert f.block_table[:, :3].tolist() == [[1, 2, 3], [1, 2, 5]]
    assert f.query_start_loc.tolist() == [0, 1, 4]
    assert f.positions.tolist() == [9, 6, 7, 8]
    # A pos 9 -> block 3 offset 1; B pos 6, 7 -> shared block 2; B pos 8 -> its own block 5
    assert f.slot_mapping.tolist() == [13, 10, 11, 20]
    assert f.address(1, 8) == 5 * 4 + 0


def test_hand_flashinfer(hand):
    f = nt.to_flashinfer(hand, 4)
    assert f.kv_indptr.tolist() == [0, 3, 6]
    assert f.kv_indices.tolist() == [1, 2, 3, 1, 2, 5]
    assert f.kv_last_page_len.tolist() == [2, 1]
    assert f.address(0, 9) == 13


def test_hand_sglang(hand):
    f = nt.to_sglang(hand)
    assert f.req_to_token[0].tolist() == [0] * 10          # the dummy row
    assert f.req_to_token[1].tolist() == list(range(4, 14))
    assert f.req_to_token[2, :9].tolist() == [4, 5, 6, 7, 8, 9, 10, 11, 20]
    assert f.req_pool_indices.tolist() == [1, 2]
    assert f.out_cache_loc.tolist() == [13, 10, 11, 20]


def test_hand_trtllm(hand):
    f = nt.to_trtllm(hand, 4)
    assert f.kv_cache_block_offsets.shape == (1, 2, 2, 3)
    assert f.kv_cache_block_offsets[0, 0].tolist() == [[2, 4, 6], [3, 5, 7]]   # K = 2b, V = 2b+1
    assert f.kv_cache_block_offsets[0, 1].tolist() == [[2, 4, 10], [3, 5, 11]]
    f2 = nt.to_trtllm(hand, 4, num_layers=3)
    assert f2.kv_cache_block_offsets[0, 0, 0].tolist() == [6, 12, 18]     # (b * 3 + 0) * 2
    assert f2.address(0, 9) == 13


def test_hand_llamacpp_unified(hand):
    """llama.cpp's cells, not vLLM's slots (checked against llama.cpp's own debug log in
    tests/engines/test_llamacpp_cells.py): r0's earlier tokens from cell 0, r1 shares its earlier
    prefix (positions 0-5) by seq_cp, and this step's tokens take the next empty cells in batch
    order. r1 computes positions 6 and 7 this step, so llama.cpp writes them into cells of its own
    (10, 11), though vLLM's batch puts them in r0's slots 10 and 11: ``cell_slot`` keeps the slot."""
    f = nt.to_llamacpp(hand, kv_unified=True)
    assert f.kv_unified and isinstance(f, nt.LlamaCppForm)
    assert f.kv_size == 256                                  # n_ctx padded to 256, as llama.cpp does
    assert f.cell_pos[:14].tolist() == list(range(10)) + [6, 7, 8, nt.LLAMA_EMPTY_POS]
    assert f.cell_seqs[0] == f.cell_seqs[5] == frozenset({0, 1})   # shared prefix: one cell, two seqs
    assert f.cell_seqs[6] == frozenset({0}) and f.cell_seqs[10] == frozenset({1})
    assert f.cell_slot[:13].tolist() == list(range(4, 14)) + [10, 11, 20]
    assert f.ubatch_cells.tolist() == [9, 10, 11, 12]         # r0 pos 9, r1 pos 6, 7, 8
    assert f.cells_used == 13 and f.shared_cells == 6
    assert f.coords(1, 3) == {"cell": 3, "pos": 3, "seq_ids": [0, 1], "slot": 7}
    assert f.coords(1, 6) == {"cell": 10, "pos": 6, "seq_ids": [1], "slot": 10}
    assert f.address(0, 6) == f.address(1, 6) == 10 and f.cell(0, 6) != f.cell(1, 6)


def test_hand_llamacpp_streams_is_the_default(hand):
    """kv_unified = false (llama.cpp's default): stream s holds sequence s in cells 0..n-1, and
    the 8-token shared prefix is in both streams, one copy each."""
    assert nt.LLAMA_KV_UNIFIED_DEFAULT is False
    for f in (nt.to_llamacpp(hand), nt.convert(hand, "llamacpp", 4), nt.all_forms(hand, 4)["llamacpp"]):
        assert isinstance(f, nt.LlamaCppStreamsForm) and not f.kv_unified
    f = nt.to_llamacpp(hand)
    assert (f.n_stream, f.kv_size) == (2, 10)
    assert f.stream_pos[0].tolist() == list(range(10))
    assert f.stream_pos[1].tolist() == list(range(9)) + [nt.LLAMA_EMPTY_POS]
    assert f.stream_slot[0].tolist() == list(range(4, 14))
    assert f.stream_slot[1].tolist() == [4, 5, 6, 7, 8, 9, 10, 11, 20, nt.LLAMA_EMPTY_POS]
    assert f.stream_slot[0, :8].tolist() == f.stream_slot[1, :8].tolist()   # the prefix, copied
    assert f.stream_used.tolist() == [10, 9]                   # per-stream cell counts
    assert f.cells_used == 19 == sum(r.seq_len for r in hand.requests)
    assert f.copied_cells == 8
    assert f.ubatch_cells.tolist() == [9, 6, 7, 8] and f.ubatch_seq.tolist() == [0, 1, 1, 1]
    # the same token (slot 7) is cell 3 of each stream; each cell carries one sequence id
    assert f.coords(0, 3) == {"stream": 0, "cell": 3, "pos": 3, "seq_ids": [0], "row": 3, "slot": 7}
    assert f.coords(1, 3) == {"stream": 1, "cell": 3, "pos": 3, "seq_ids": [1], "row": 13, "slot": 7}
    assert f.coords(1, 8)["cell"] == 8 and f.address(1, 8) == 20
    assert [m.index for m in f.locate(1, 7)] == [(1, 7), (2,)]
    assert f.cell_at(1, 9) is None and f.cell_at(0, 9) == 9


def test_llamacpp_streams_vs_unified_cell_counts():
    c = nt.example_batch()
    streams, unified = nt.to_llamacpp(c), nt.to_llamacpp(c, kv_unified=True)
    lens = [r.seq_len for r in c.requests]
    assert streams.stream_used.tolist() == lens
    assert streams.cells_used == sum(lens)
    distinct = len({s for r in c.requests for s in r.slots})
    assert unified.cells_used == distinct == sum(lens) - 256    # A and B share 256 tokens
    assert unified.shared_cells == 256 and streams.copied_cells == 256
    assert unified.cells_used < streams.cells_used
    shared = c.requests[0].slots[:256]
    assert all(unified.cell_seqs[k] == frozenset({0, 1}) for k in range(256))   # cells 0..255
    assert unified.cell_slot[:256].tolist() == list(shared)
    assert streams.stream_slot[0, :256].tolist() == streams.stream_slot[1, :256].tolist() == list(shared)


def test_llamacpp_streams_refuse_bad_input(hand):
    with pytest.raises(BadInput, match="kv_size 5"):
        nt.to_llamacpp(hand, kv_size=5)
    big = nt.to_llamacpp(hand, kv_size=16)
    assert big.kv_size == 16 and nt.to_canonical(big) == nt.to_canonical(nt.to_llamacpp(hand))
    f = nt.to_llamacpp(hand)
    pos = f.stream_pos.copy()
    pos[1, 4] = nt.LLAMA_EMPTY_POS                              # a hole in sequence 1
    holed = nt.LlamaCppStreamsForm(f.req_ids, pos, f.stream_slot, f.ubatch_cells, f.ubatch_seq, f.num_slots)
    with pytest.raises(BadInput, match="gap"):
        nt.from_llamacpp(holed)
    with pytest.raises(BadInput, match="one stream"):
        nt.LlamaCppStreamsForm(f.req_ids[:1], f.stream_pos, f.stream_slot, f.ubatch_cells,
                               f.ubatch_seq, f.num_slots)


def test_hand_deepinfer_runs(hand):
    f = nt.to_deepinfer(hand, page_size=4)
    assert f.desc_indptr.tolist() == [0, 1, 3]
    assert list(zip(f.desc_start.tolist(), f.desc_len.tolist())) == [(1, 3), (1, 2), (5, 1)]
    assert f.coords(1, 8) == {"run": 1, "run_page": 0, "start_page": 5, "length": 1, "page": 5, "offset": 0,
                              "slot": 20}


def test_hand_all_agree(hand):
    _assert_agree(hand, 4)


def test_deepinfer_fixed_128_needs_aligned_pages():
    c = _batch(16, [[1, 2, 3]], [40], [40])   # slots 16..55: not inside one 128-token page
    with pytest.raises(nt.NotRepresentable, match="offset 16"):
        nt.to_deepinfer(c)
    ok = _batch(16, [[8, 9, 10]], [40], [40])  # blocks 8..10 = page 1, offsets 0..39
    f = nt.to_deepinfer(ok)
    assert (f.desc_start.tolist(), f.desc_len.tolist()) == ([1], [1])


def test_vllm_needs_whole_blocks():
    c = _batch(1, [[5, 9, 6]], [3], [3])      # page size 1: any slots at all
    with pytest.raises(nt.NotRepresentable):
        nt.to_vllm(c, 4)
    assert nt.to_sglang(c).req_to_token[1].tolist() == [5, 9, 6]


def test_example_batch_all_six():
    c = nt.example_batch()
    forms = nt.all_forms(c, 16)
    assert not [n for n, f in forms.items() if isinstance(f, Exception)]
    _assert_agree(c, 16)
    d = forms["deepinfer"]
    assert len(d.desc_start) > len(c.requests)      # B's run breaks after the shared prefix


def test_canonical_rejects_a_cell_at_two_positions():
    with pytest.raises(BadInput):
        nt.CanonicalBatch((nt.CanonicalRequest("a", (4, 5)), nt.CanonicalRequest("b", (5, 4))), 8)


def test_from_engine_step_matches_slot_mapping():
    from kvviz.core.engine import Engine
    from kvviz.core.scenario import parse_scenario
    sc = parse_scenario({"config": {"num_blocks": 16, "block_size": 4},
                         "requests": [{"id": "A", "prompt_len": 10, "max_tokens": 3},
                                      {"id": "B", "arrival": 1, "prompt_len": 6, "max_tokens": 2}]})
    eng = Engine(sc)
    for _ in range(3):
        rec = eng.step()
        c = nt.canonical_from_record(rec, sc.config)
        v = nt.to_vllm(c, 4)
        n = rec.inputs[0].num_tokens
        assert v.slot_mapping.tolist() == rec.inputs[0].slot_mapping[:n].tolist()
        _assert_agree(c, 4)


# --- property: random batches with shared prefixes ---------------------------------------------

@st.composite
def batches(draw):
    bs = draw(st.sampled_from([1, 2, 4, 8]))
    num_blocks = draw(st.integers(8, 40))
    free = draw(st.permutations(list(range(1, num_blocks))))   # block 0 is the null block
    n_req = draw(st.integers(1, 4))
    rows, seqs, qs = [], [], []
    for _ in range(n_req):
        seq = draw(st.integers(0, 5 * bs))
        need = -(-seq // bs)
        shared = []
        if rows and draw(st.booleans()):   # share some full blocks of an earlier request
            src = draw(st.sampled_from(range(len(rows))))
            full = seqs[src] // bs
            k = draw(st.integers(0, min(full, need)))
            shared = rows[src][:k]
        own = need - len(shared)
        if own > len(free):
            break
        mine, free = list(free[:own]), free[own:]
        rows.append(shared + mine)
        seqs.append(seq)
        qs.append(draw(st.integers(0, seq)))
    if not rows:
        rows, seqs, qs = [[]], [0], [0]
    width = max(len(r) for r in rows) or 1
    bt = np.zeros((len(rows), width), dtype=np.int32)
    for i, r in enumerate(rows):
        bt[i, : len(r)] = r
    return bs, nt.canonical_from_block_table(bt, seqs, qs, bs, num_slots=num_blocks * bs)


@settings(max_examples=150, deadline=None)
@given(batches())
def test_property_all_notations_agree(args):
    bs, c = args
    _assert_agree(c, bs)
    streams, unified = nt.to_llamacpp(c), nt.to_llamacpp(c, kv_unified=True)
    lens = [r.seq_len for r in c.requests]
    distinct = len({s for r in c.requests for s in r.slots})
    assert streams.stream_used.tolist() == lens and streams.cells_used == sum(lens)
    assert distinct == streams.cells_used - streams.copied_cells
    # llama.cpp shares only cells already written (seq_cp): the earlier tokens' distinct slots once,
    # and every token computed this step in a cell of its own
    early = len({s for r in c.requests for s in r.slots[: r.seq_len - r.query_len]})
    assert unified.cells_used == early + sum(r.query_len for r in c.requests) >= distinct


@settings(max_examples=60, deadline=None)
@given(batches(), st.sampled_from([2, 4]))
def test_property_bigger_pages_agree_or_refuse(args, factor):
    """At a page size the batch was not allocated in, a notation either refuses with a reason
    or (when the blocks happen to be aligned and consecutive) still gives the same address."""
    bs, c = args
    for name in ("vllm", "flashinfer", "trtllm"):
        try:
            f = nt.convert(c, name, bs * factor)
        except nt.NotRepresentable as e:
            assert "token" in str(e)
            continue
        for i, r in enumerate(c.requests):
            assert [f.address(i, p) for p in range(r.seq_len)] == list(r.slots)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=12, unique=True))
def test_page_runs_cover_pages(pages):
    runs = nt.page_runs(pages)
    assert [s + k for s, n in runs for k in range(n)] == pages
    assert all(a[0] + a[1] != b[0] for a, b in zip(runs, runs[1:]))   # runs are maximal


def test_page_answer_styles_and_download():
    import pandas as pd

    from kvviz.views.notations import MARK, forms_json, markdown_table, marked_cells, token_answer

    c = nt.example_batch()
    ans = token_answer(c, 1, 255, 16)          # B's last prefix token: in A's shared block
    assert ans == {"slot": 383, "page": 23, "offset": 15, "sharers": ["A", "B"], "new": False}
    assert token_answer(c, 2, c.requests[2].seq_len - 1, 16)["new"]     # C prefills this step
    blob = forms_json(nt.all_forms(c, 16))
    assert set(blob) == set(nt.NOTATIONS) and isinstance(blob["vllm"]["block_table"], list)
    assert isinstance(blob["llamacpp"]["stream_slot"][0], list) and "_index" not in blob["llamacpp"]
    unified = forms_json(nt.all_forms(c, 16, kv_unified=True))["llamacpp"]
    assert isinstance(unified["cell_seqs"][0], list) and "_index" not in unified
    df = pd.DataFrame({"0": [1, 2]}, index=["a", "b"])
    shown = markdown_table(df, [("b", "0"), ("zz", "0")])   # a mark outside the window: ignored
    assert shown.splitlines() == ["| | 0 |", "|---|---:|", "| a | 1 |", "| b | " + MARK.format(v=2) + " |"]
    assert marked_cells(shown) == ["2"] and "#ffd54f" in MARK
    piped = markdown_table(pd.DataFrame({"x|y": [3]}, index=["r|1"]), [])
    assert piped.splitlines()[0] == r"| | x\|y |" and r"r\|1" in piped    # a pipe cannot open a cell


@pytest.mark.parametrize("lang", ["en", "zh", "es"])
def test_llamacpp_views_follow_the_layout(lang):
    from kvviz.texts.i18n import t
    from kvviz.views.notations import (description_key, forms_json, lookup_text, notation_notes,
                                       round_trip_report, tables)

    c = nt.example_batch()
    lens = [r.seq_len for r in c.requests]
    streams, unified = nt.all_forms(c, 16)["llamacpp"], nt.all_forms(c, 16, kv_unified=True)["llamacpp"]
    assert not streams.kv_unified and unified.kv_unified
    assert description_key("llamacpp", streams) == "d_llamacpp"
    assert description_key("llamacpp", unified) == "d_llamacpp_unified"
    assert notation_notes("vllm", nt.all_forms(c, 16)["vllm"], lang) == []
    (s_note,), (u_note,) = notation_notes("llamacpp", streams, lang), notation_notes("llamacpp", unified, lang)
    assert s_note == t("notations", "v.llama_used_streams", lang, n=sum(lens), parts=" + ".join(map(str, lens)),
                       k=3, copies=256, m=sum(lens) - 256)
    assert u_note == t("notations", "v.llama_used_unified", lang, n=sum(lens) - 256, shared=256, m=sum(lens))
    slot = c.address(1, 255)                                  # B's last shared-prefix token
    for form in (streams, unified):
        assert lookup_text("llamacpp", form, 1, 255, lang).endswith(f"**{slot}**")
        shown = tables("llamacpp", form, 1, 255, lang)        # an old token: not in the ubatch
        assert [bool(m) for _, _, m in shown] == [True] * (len(shown) - 1) + [False]
        for label, df, marks in shown + tables("llamacpp", form, 2, 39, lang):   # C's new token
            assert all(r in df.index and col in df.columns for r, col in marks), label
        assert tables("llamacpp", form, 2, 39, lang)[-1][2]
    every = tables("llamacpp", streams, 1, 255, lang)[1][1]   # position 255 in each stream
    slot_col = t("notations", "v.slot_col", lang)
    assert every[slot_col].tolist() == [str(slot), str(slot), "—"]   # A's copy, B's copy; C is shorter
    assert every[t("notations", "v.used", lang)].tolist() == lens
    for kv_unified in (False, True):
        rt = round_trip_report(c, 16, lang, kv_unified=kv_unified)
        assert (rt.to_numpy() == 0).all()
    blob = forms_json({"llamacpp": streams})["llamacpp"]
    assert blob["kv_unified"] is False and len(blob["stream_pos"]) == 3 and "_index" not in blob
    assert forms_json({"llamacpp": unified})["llamacpp"]["kv_unified"] is True


def test_vllm_query_start_loc_is_shown_whole():
    """query_start_loc has B + 1 entries, the last the batch's token count (55 here): all shown, the
    request's two bounds marked; seq_lens B entries, the request's marked."""
    from kvviz.views.notations import tables

    c = nt.example_batch()
    f = nt.convert(c, "vllm", 16)
    shown = {label.split()[0]: (df, marks) for label, df, marks in tables("vllm", f, 1, 255, "en")}
    qsl, marks = shown["query_start_loc"]
    assert qsl.loc["query_start_loc"].tolist() == f.query_start_loc.tolist() == [0, 1, 15, 55]
    assert marks == [("query_start_loc", "1"), ("query_start_loc", "2")]
    lens, marks = shown["seq_lens"]
    assert lens.loc["seq_lens"].tolist() == f.seq_lens.tolist() and marks == [("seq_lens", "1")]


def test_sglang_notation_follows_sglangs_own_placement():
    """The page's SGLang notation holds SGLang's rows and slots (kvviz's model, equal to SGLang's
    recording), and every lookup still answers the canonical slot."""
    from kvviz.notations import engine_examples as ex
    from kvviz.notations.sglang import from_sglang, sglang_placement

    c = nt.example_batch()
    for ps, model in zip(ex.SGLANG_PAGE_SIZES, ex.sglang_model_answers()):
        f = sglang_placement(c, model["steps"][1])
        assert f.follows_sglang and list(f.req_pool_indices) == [3, 1, 2]
        assert from_sglang(f) == c                                        # the round trip
        for i, r in enumerate(c.requests):
            for p in (0, r.seq_len - 1):
                assert f.address(i, p) == r.slots[p]
        assert f.sglang_slot(1, 255) == f.sglang_slot(0, 255)            # the shared prefix: one slot
        assert (f.sglang_slot(0, 0), ps) in ((1, 1), (16, 16))            # slot 0 / page 0 held back
        marks = f.locate(0, 300)                                          # A's decode: SGLang's last
        assert marks[-1].array == "out_cache_loc" and marks[-1].index == (len(f.out_cache_loc) - 1,)
