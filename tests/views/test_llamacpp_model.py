"""kvviz's model of llama.cpp's cells (kvviz.notations.llamacpp_cells), rule by rule, without the engine
(tests/engines/test_llamacpp_cells.py holds it against llama.cpp itself)."""
from __future__ import annotations

import pytest

from kvviz.errors import BadInput
from kvviz.notations.llamacpp_rules import LlamaCells, geometry, plan_calls
from kvviz.notations.llamacpp_cells import compare_llamacpp, llamacpp_side_by_side
from kvviz.notations.llamacpp_cells import model_answer as predict
from kvviz.notations.llamacpp_cells import pack, unpack
from kvviz.notations.llamacpp_driver import parse_find_slot
from kvviz.notations.models import EXAMPLE_SCENARIO


def fill(cells, seq, start, end):
    assert cells.decode([(seq, p) for p in range(start, end)])


def test_geometry_pads_like_llama_context():
    assert geometry(3, 600, True) == (768, 768, 512)                 # n_ctx padded to 256
    assert geometry(3, 600, False) == (768, 256, 512)                # 600/3 -> 200 -> 256 a stream
    assert geometry(2, 1024, False) == (1024, 512, 513)              # n_ubatch above a stream's cells
    with pytest.raises(BadInput, match="n_ubatch"):
        geometry(2, 1024, False, 512)
    with pytest.raises(BadInput, match="sequences"):
        geometry(11, 256, True)
    assert geometry(11, 256, True, strict=False)[0] == 256            # the notation's own bound
    with pytest.raises(BadInput, match="n_ubatch"):
        geometry(2, 256, True, 0)


def test_lowest_empty_cells_and_the_head_moving_back():
    c = LlamaCells(3, 256, True)
    fill(c, 0, 0, 5)
    fill(c, 1, 0, 3)
    fill(c, 2, 0, 4)
    st = c.streams[0]
    assert st.head == 12 and st.used == 12
    c.seq_rm(1)                                   # cells 5..7 empty; head back to 5
    assert st.head == 5 and st.pos[5:8] == [-1, -1, -1]
    fill(c, 0, 5, 9)                              # 3 tokens into the hole, the 4th after seq 2
    assert [i for i, ss in enumerate(st.seqs) if 0 in ss] == [0, 1, 2, 3, 4, 5, 6, 7, 12]
    assert st.head == 13


def test_search_restarts_at_zero_and_wraps():
    c = LlamaCells(1, 256, True)
    fill(c, 0, 0, 250)
    st = c.streams[0]
    c.seq_rm(0, 0, 100)                           # 100 cells free at the front; head back to 0
    st.head = 240                                 # a head far past used + 2 * n: search from 0
    fill(c, 0, 250, 251)
    assert st.pos[0] == 250 and st.head == 1
    w = LlamaCells(1, 256, True)
    fill(w, 0, 0, 250)
    w.seq_rm(0, 0, 3)                             # 3 cells free at the front, 247 used
    w.streams[0].head = 252                       # 252 <= 247 + 2 * 5: scan from 252, then wrap
    assert w.find_slot([(0, 250)] * 5) == [(0, [252, 253, 254, 255, 0])]


def test_a_batch_that_does_not_fit_changes_nothing():
    c = LlamaCells(2, 256, True, n_ubatch=64)
    fill(c, 0, 0, 200)
    before = (list(c.streams[0].pos), c.streams[0].head)
    assert not c.decode([(1, p) for p in range(100)])   # 2 ubatches: the first fits, the second not
    assert (c.streams[0].pos, c.streams[0].head) == before
    assert not c.decode([(0, 205)])                      # a gap in sequence 0's positions
    assert c.decode([(0, 200)])


def test_seq_cp_one_stream_shares_cells_and_streams_copy():
    c = LlamaCells(2, 512, True)
    fill(c, 0, 0, 10)
    c.share(0, 1, 6)
    st = c.streams[0]
    assert [len(s) for s in st.seqs[:10]] == [2] * 6 + [1] * 4 and c.seq_pos(1) == (0, 5)
    assert c.snapshot(2)["streams"][0]["strip"][:11] == "MMMMMM0000."
    s = LlamaCells(2, 512, False)
    fill(s, 0, 0, 10)
    s.share(0, 1, 6)                                     # whole copy, then the tail removed
    assert s.streams[1].pos[:8] == [0, 1, 2, 3, 4, 5, -1, -1] and s.streams[1].head == 6
    assert s.streams[0].used == 10 and s.seq_pos(1) == (0, 5)


def test_split_equal_takes_runs_of_consecutive_sequences():
    c = LlamaCells(3, 768, False)
    toks = [(2, 0), (2, 1), (0, 0), (1, 0), (1, 1), (1, 2)]
    assert c.split(toks) == [[(2, 0), (2, 1)], [(0, 0), (1, 0)], [(1, 1), (1, 2)]]
    u = LlamaCells(3, 256, True, n_ubatch=4)
    assert [len(ub) for ub in u.split(toks)] == [4, 2]   # split_simple: batch order, n_ubatch at a time


def test_failed_prepare_restores_the_wrong_head_across_streams():
    c = LlamaCells(3, 768, False)
    fill(c, 0, 0, 200)
    fill(c, 1, 0, 10)
    fill(c, 2, 0, 10)
    assert not c.decode([(1, 10)] + [(2, p) for p in range(10, 260)])
    assert [st.head for st in c.streams] == [200, 200, 10]
    assert c.streams[1].used == 10 and c.streams[2].used == 10
    assert c.find_slot([(1, 10)]) == [(1, [10])]          # 200 > used + 2: the search starts at 0


def _sched(prompts: dict, steps: list) -> dict:
    return {"requests": {k: {"prompt": v, "tokens": v} for k, v in prompts.items()},
            "steps": [{"index": i, "batch": [{"req": r, "start": a, "end": b} for r, a, b in st],
                       "finished": [], "preempted": []} for i, st in enumerate(steps)]}


def test_plan_copies_the_longest_common_prefix_of_a_live_sequence():
    s = _sched({"A": [1, 2, 3, 4, 5], "B": [1, 2, 3, 9], "C": [1, 2, 3, 4, 5], "D": [7]},
               [[("A", 0, 5)], [("B", 0, 4), ("C", 0, 5), ("D", 0, 1)]])
    plan = plan_calls(s, 256)
    assert plan[0] == {"index": 0, "pre": [], "decode": [[[0, 0, 5]]], "post": []}
    # B shares 3 tokens with A; C all 5, capped at end - 1 = 4 so one token is decoded; D none
    assert plan[1]["pre"] == [["cp", 0, 1, 3], ["cp", 0, 2, 4]]
    assert plan[1]["decode"] == [[[1, 3, 4], [2, 4, 5], [3, 0, 1]]]
    assert plan_calls(s, 2)[0]["decode"] == [[[0, 0, 2]], [[0, 2, 4]], [[0, 4, 5]]]   # n_batch
    s["steps"][0]["finished"] = ["Z"]
    with pytest.raises(BadInput, match="'Z' is not a request"):
        plan_calls(s, 256)


def test_side_by_side_of_the_example():
    sbs = llamacpp_side_by_side(EXAMPLE_SCENARIO, 1)
    assert sbs["strip"].startswith("M" * 256 + "0" * 44 + "0" + "1" * 14 + "2" * 40 + ".")
    assert sbs["requests"] == {"0": "A", "1": "B", "2": "C"}
    cell = next(c for c in sbs["cells"] if c["cell"] == 301)
    assert cell["pos"] == 256 and cell["reqs"] == ["B"]
    assert sbs["cells"][0]["reqs"] == ["A", "B"] and "llama.cpp" in sbs["checked_against"]
    streams = llamacpp_side_by_side(EXAMPLE_SCENARIO, 1, kv_unified=False)
    assert [g["used"] for g in streams["streams"]] == [301, 270, 40]
    with pytest.raises(BadInput, match="step 9"):
        llamacpp_side_by_side(EXAMPLE_SCENARIO, 9)


def test_compare_names_the_first_difference():
    from kvviz.notations.engine_schedule import schedule_from_scenario

    sched = schedule_from_scenario(EXAMPLE_SCENARIO)
    a, b = predict(sched), predict(sched)
    assert compare_llamacpp(a, b) == []
    back = unpack(pack(a))                  # the recorded file's form, read back
    assert compare_llamacpp(back, a) == [] and back["steps"][1]["strip"] == a["steps"][1]["strip"]
    assert back["steps"][1]["cells"][300] == {"cell": 300, "pos": 300, "mark": "0"}
    moved = b["steps"][2]["streams"][0]
    moved["cells"][5] = {**moved["cells"][5], "pos": 99}
    assert compare_llamacpp(a, b) == ["step 2, cell 5: llama.cpp holds position 5 of several "
                                      "sequences (M), kvviz position 99 of several sequences (M)"]
    b = predict(sched)
    b["steps"][3]["streams"][0]["head"] = 7
    assert compare_llamacpp(a, b) == ["step 3: llama.cpp's head is 361, kvviz's 7"]
    b["steps"] = b["steps"][:3]
    assert compare_llamacpp(a, b) == ["llama.cpp ran 5 steps, kvviz 3"]
    assert compare_llamacpp(a, predict(sched, False))[0].startswith("one answer is for the unified")


def test_parse_find_slot_reads_the_debug_log():
    size = 300
    strip = "0" * 5 + "M" * 2 + "." * (size - 7)
    pos = [str(i) for i in range(7)] + ["."] * (size - 7)

    def lines(cells, width, per_line, star):
        out = ""
        for i, c in enumerate(cells):
            out += c.ljust(width)
            if i % 256 == 255:
                out += " *" + ("\n" if star else "")
            if per_line and i % per_line == per_line - 1:
                out += "\n"
        return out

    log = (f"find_slot: stream[0], n =     7, used =     7, head =     7, size =   {size}, n_swa =     0\n"
           f"\n{lines(strip, 1, 0, True)}\n\n{lines(pos, 5, 64, False)}\n"
           "find_slot: stream[0] min[0] =     0, max[0] =     6\n")
    (block,) = parse_find_slot(log)
    assert block["strip"] == strip and block["pos"][:8] == [0, 1, 2, 3, 4, 5, 6, -1]
    assert (block["head"], block["used"], block["size"]) == (7, 7, size)
    with pytest.raises(BadInput, match="cut short"):
        parse_find_slot(log[:200])


def test_unified_notation_of_the_example_is_llamacpps_own_strip():
    """The Notations page's batch (step 1) in kvviz's unified llama.cpp notation holds the cells llama.cpp
    itself held after that step (recorded/llamacpp.json, read from its debug log): here the shortest
    history is the real one (A prefilled alone, then B's prefix copied)."""
    from kvviz.notations import models as nt
    from kvviz.notations.llamacpp_cells import recorded_example
    from kvviz.notations.llamacpp_rules import mark

    real = recorded_example()["unified"]["steps"][1]
    f = nt.to_llamacpp(nt.example_batch(1), kv_unified=True)
    assert f.cells_used == real["streams"][0]["used"] == 355
    strip = "".join(mark(s) for s in f.cell_seqs)
    assert strip[: len(real["strip"])] == real["strip"][: len(strip)]
    assert [(c["cell"], c["pos"]) for c in real["cells"]] == [
        (k, int(p)) for k, p in enumerate(f.cell_pos) if p >= 0]
    assert sum(1 for ch in real["strip"] if ch == "M") == f.shared_cells == 256
