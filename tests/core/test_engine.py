import numpy as np
import pytest

from kvviz.core.engine import Engine, run_scenario
from kvviz.errors import BadInput
from kvviz.core.scenario import parse_scenario

SHARED = {"config": {"runner": "v1", "num_blocks": 16, "block_size": 4, "max_num_reqs": 4, "max_num_batched_tokens": 16,
                     "cudagraph_capture_sizes": [1, 2, 4, 8]},
          "requests": [{"id": "A", "arrival": 0, "prompt_len": 10, "prefix_group": "sys", "prefix_len": 8,
                        "max_tokens": 3},
                       {"id": "B", "arrival": 1, "prompt_len": 9, "prefix_group": "sys", "prefix_len": 8,
                        "max_tokens": 4},
                       {"id": "C", "arrival": 1, "prompt_len": 5, "max_tokens": 2}],
          "actions": [{"step": 3, "kind": "fork", "req": "B", "n": 1}]}


def kinds(rec, kind):
    return [e for e in rec.events if e["kind"] == kind]


def test_shared_prefix_hit_padding_finish_condense_fork():
    h = run_scenario(parse_scenario(SHARED))
    s0, s1, s2, s3 = h[:4]
    assert s0.inputs[0].slot_mapping.tolist() == list(range(4, 14))  # blocks 1,2,3
    # B reuses A's two full prefix blocks; only its 9th token is computed
    assert kinds(s1, "cache_hit")[0]["blocks"] == [1, 2]
    assert [(s.req_id, s.row, s.num_tokens) for s in s1.scheduled] == [("A", 0, 1), ("B", 1, 1), ("C", 2, 5)]
    assert s1.device_tables[0][1, :3].tolist() == [1, 2, 4]
    assert s1.inputs[0].slot_mapping.tolist() == [14, 16, 20, 21, 22, 23, 24, -1]  # 7 tokens padded to 8
    # step 2: three decodes padded to 4 rows / 4 tokens: NULL row, -1 slot, seq_len 0
    i2 = s2.inputs[0]
    assert (s2.num_reqs_padded, s2.num_tokens_padded) == (4, 4)
    assert i2.slot_mapping.tolist() == [15, 17, 25, -1]
    assert i2.seq_lens.tolist() == [12, 10, 6, 0] and (i2.block_table[3] == 0).all()
    assert i2.query_start_loc.tolist() == [0, 1, 2, 3, 3]
    assert i2.paged_kv_last_page_len.tolist() == [4, 2, 2, 0]
    assert {e["req"] for e in kinds(s2, "finish")} == {"A", "C"}
    # step 3: A and C leave (rows 0, 2 cleared); the fork child B.1 fills the lowest hole
    assert [e["row"] for e in kinds(s3, "clear_row")] == [0, 2]
    assert kinds(s3, "cow")[0]["src"] == 4 and kinds(s3, "share")[0]["blocks"] == [1, 2]
    assert s3.rows[:2] == ["B.1", "B"]
    assert s3.ref_counts[1] == 2 and s3.ref_counts[4] == 1


def test_condense_moves_highest_row_and_clears_it():
    sc = {"config": {"runner": "v1", "num_blocks": 32, "block_size": 4},
          "requests": [{"id": r, "prompt_len": 5, "max_tokens": m} for r, m in
                       [("A", 2), ("B", 6), ("C", 6)]]}
    e = Engine(parse_scenario(sc))
    e.step(); e.step()  # A finishes after step 1
    rec = e.step()      # A's row 0 cleared; C (row 2) moves into it
    assert [(m["src"], m["dst"]) for m in kinds(rec, "move_row")] == [(2, 0)]
    assert rec.cpu_tables[0][2].sum() == 0 and rec.rows[:2] == ["C", "B"]
    assert rec.device_tables[0][2, :2].tolist() != [0, 0]  # the mirror of row 2 is not refreshed (not committed)


def test_move_row_no_clear_fault_leaves_source():
    sc = {"config": {"runner": "v1", "num_blocks": 32, "block_size": 4},
          "requests": [{"id": r, "prompt_len": 5, "max_tokens": m} for r, m in [("A", 2), ("B", 6), ("C", 6)]]}
    e = Engine(parse_scenario(sc), faults={"move_row_no_clear"})
    for _ in range(3):
        rec = e.step()
    assert rec.cpu_tables[0][2, :2].tolist() == rec.cpu_tables[0][0, :2].tolist() != [0, 0]


def test_skip_commit_leaves_mirror_stale():
    sc = {"config": {"runner": "v1", "num_blocks": 16, "block_size": 4}, "requests": [{"id": "A", "prompt_len": 5, "max_tokens": 2}]}
    rec = Engine(parse_scenario(sc), faults={"skip_commit"}).step()
    assert rec.commit_bytes == 0 and rec.device_tables[0][0, :2].tolist() == [0, 0]
    assert rec.inputs[0].slot_mapping.tolist() == [0, 1, 2, 3, 0]  # reads the null block: silent corruption


def test_preemption_frees_and_recomputes_from_zero():
    sc = {"config": {"runner": "v1", "num_blocks": 6, "block_size": 4, "max_num_batched_tokens": 64, "enable_prefix_caching": False},
          "requests": [{"id": "A", "prompt_len": 8, "max_tokens": 10},
                       {"id": "B", "arrival": 1, "prompt_len": 8, "max_tokens": 10}]}
    h = run_scenario(parse_scenario(sc), max_steps=40)
    pre = [(r.index, e) for r in h for e in r.events if e["kind"] == "preempt"]
    assert pre, "the 5-block pool cannot hold both requests to the end"
    idx, ev = pre[0]
    assert ev["req"] == "B" and ev["why"] == "pool exhausted"
    # when B runs again it restarts at position 0
    again = next(s for r in h[idx + 1:] for s in r.scheduled if s.req_id == "B")
    assert again.num_computed == 0
    assert all(r.requests["A"]["output_len"] <= 10 for r in h)
    assert h[-1].requests["B"]["state"] == "finished" and h[-1].requests["A"]["state"] == "finished"


def test_chunked_prefill_across_block_boundary():
    sc = {"config": {"runner": "v1", "num_blocks": 16, "block_size": 4, "max_num_batched_tokens": 6},
          "requests": [{"id": "A", "prompt_len": 10, "max_tokens": 1}]}
    h = run_scenario(parse_scenario(sc))
    assert [s.num_tokens for r in h for s in r.scheduled] == [6, 4]
    assert [s.kind for r in h for s in r.scheduled] == ["chunk", "prefill"]
    assert h[1].inputs[0].positions.tolist() == [6, 7, 8, 9]
    assert h[1].inputs[0].slot_mapping.tolist() == [10, 11, 12, 13]  # 6,7 in block 2; 8,9 in block 3


def test_hybrid_groups_each_have_a_table():
    sc = {"config": {"runner": "v1", "num_blocks": 64, "block_size": 4, "kernel_block_size": 2,
                     "groups": [{"kind": "full"}, {"kind": "sliding_window", "sliding_window": 4}, {"kind": "state"}]},
          "requests": [{"id": "A", "prompt_len": 12, "max_tokens": 6}]}
    h = run_scenario(parse_scenario(sc))
    last = h[-1]
    assert last.inputs[2].slot_mapping is None and last.inputs[2].paged_kv_indptr is None
    assert last.num_blocks_per_row[2][0] == 1  # one state index, never split into kernel blocks
    assert last.num_blocks_per_row[0][0] == 2 * 5  # 17 tokens -> 5 manager blocks -> 10 kernel blocks
    skips = [e for r in h for e in r.events if e["kind"] == "window_skip"]
    assert skips and skips[0]["group"] == 1
    # the scheduler replaced skipped blocks with the null block, the worker row keeps the old ids
    assert last.requests["A"]["blocks"][1][0] == 0
    assert last.device_tables[1][0, 0] == 2 * skips[0]["blocks"][-1]
    # every real block back to 0; the null block's count (vLLM up to v0.32: kept, never checked) fell
    # by the three null entries A's sliding-window group freed
    assert last.requests["A"]["state"] == "finished" and sum(last.ref_counts_after[1:]) == 0
    assert last.ref_counts_after[0] == -3
    # each group's slots come from its own table
    k0 = last.device_tables[0][0]
    pos = last.inputs[0].positions[0]
    assert last.inputs[0].slot_mapping[0] == k0[pos // 2] * 2 + pos % 2


def test_bad_scenarios():
    for bad, msg in [({"config": {"profile": "x"}}, "unknown vLLM version"),
                     ({"config": {"groups": [{"kind": "sliding_window"}]}}, "sliding_window"),
                     ({"requests": [{"id": "A"}, {"id": "A"}]}, "duplicate"),
                     ({"requests": [{"prompt": []}]}, "prompt"),
                     ({"actions": [{"kind": "explode", "req": "A", "step": 0}]}, "kind"),
                     ({"config": {"max_model_len": 8}, "requests": [{"prompt_len": 8, "max_tokens": 4}]}, "max_model_len"),
                     ({"config": {"foo": 1}}, "unknown key"),
                     ({"config": {"num_blocks": 1048576, "block_size": 1, "max_num_reqs": 4096,
                                  "max_model_len": 2097152}}, "exceeds"),
                     ("x", "object")]:
        with pytest.raises(BadInput, match=msg):
            parse_scenario(bad)


def test_replay_is_deterministic():
    a = run_scenario(parse_scenario(SHARED))
    b = run_scenario(parse_scenario(SHARED))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.inputs[0].slot_mapping, y.inputs[0].slot_mapping)
        assert x.events == y.events


def test_every_event_kind_reads_as_a_sentence_in_three_languages():
    from kvviz.texts.i18n import missing_translations
    from kvviz.views.report import describe_event

    assert missing_translations(["events"]) == []
    seen = {}
    for path in ["shared_prefix_fork", "preemption", "hybrid"]:
        import json
        from pathlib import Path

        spec = json.loads((Path(__file__).parents[2] / "examples" / "scenarios" / f"{path}.json").read_text())
        for runner in ("v1", "v2"):
            spec["config"]["runner"] = runner
            for r in run_scenario(parse_scenario(spec)):
                for e in r.events:
                    seen.setdefault(e["kind"], e)
    assert {"arrive", "alloc", "cache", "cache_hit", "free", "cow", "share", "fork", "preempt", "finish",
            "add_row", "clear_row", "commit", "window_skip", "add_state", "free_state", "stage_write",
            "apply_staged_writes", "gather"} <= set(seen)
    for e in seen.values():
        for lang in ("en", "zh", "es"):
            text = describe_event(e, lang)
            assert not text.startswith("{") and "{" not in text, (e, lang, text)
    assert describe_event({"kind": "alloc", "req": "A", "group": 0, "blocks": [1, 2]}) == \
        "A gets new block(s) [1, 2] from the front of the free queue"
    assert "从空闲队列队首" in describe_event({"kind": "alloc", "req": "A", "group": 1, "blocks": [3]}, "zh")


def test_history_has_a_memory_bound(monkeypatch):
    import kvviz.core.engine as engine_mod

    monkeypatch.setattr(engine_mod, "MAX_HISTORY_BYTES", 10_000)
    sc = {"config": {"runner": "v1", "num_blocks": 64, "block_size": 4, "max_model_len": 256},
          "requests": [{"id": "A", "prompt_len": 5, "max_tokens": 50}]}
    with pytest.raises(BadInput, match="MiB"):
        run_scenario(parse_scenario(sc))


def test_no_admission_in_a_step_that_preempted():
    # the pool runs short at step 2: B (newest) is preempted, and C, waiting, is not admitted then
    sc = {"config": {"runner": "v1", "num_blocks": 6, "block_size": 4, "max_num_batched_tokens": 64, "enable_prefix_caching": False},
          "requests": [{"id": "A", "prompt_len": 8, "max_tokens": 10},
                       {"id": "B", "arrival": 1, "prompt_len": 8, "max_tokens": 10},
                       {"id": "C", "arrival": 2, "prompt_len": 1, "max_tokens": 1}]}
    h = run_scenario(parse_scenario(sc), max_steps=60)
    step = next(r for r in h if any(e["kind"] == "preempt" for e in r.events))
    assert {s.req_id for s in step.scheduled} == {"A"}
    assert step.requests["C"]["state"] == "waiting" and step.requests["B"]["state"] == "preempted"


def test_run_output_shows_a_vacated_row_that_was_not_cleared():
    """The move_row_no_clear fault leaves the vacated row counting its blocks; `run` (text and JSON)
    must show it, although this step's commit of num_reqs rows never copies it. The clean run has
    no such row."""
    from kvviz.views.report import step_to_json, step_to_text

    sc = parse_scenario({"config": {"runner": "v1", "num_blocks": 32, "block_size": 4, "max_num_reqs": 4},
                         "requests": [{"id": "A", "prompt_len": 5, "max_tokens": 6},
                                      {"id": "B", "prompt_len": 5, "max_tokens": 2},
                                      {"id": "C", "prompt_len": 9, "max_tokens": 6}]})
    bad = run_scenario(sc, max_steps=4, faults={"move_row_no_clear"})
    good = run_scenario(sc, max_steps=4)
    moved = [r for r in bad if any(e["kind"] == "move_row" for e in r.events)][0]
    j = step_to_json(moved, sc.config)["groups"][0]
    src = [e for e in moved.events if e["kind"] == "move_row"][0]["src"]
    assert [v["row"] for v in j["vacated_rows"]] == [src] and j["vacated_rows"][0]["num_blocks"] == 3
    assert j["vacated_rows"][0]["block_table_cpu"] == moved.cpu_tables[0][src][:3].tolist() != [0, 0, 0]
    assert f"row {src}: cpu " in step_to_text(moved, sc.config) and "not live" in step_to_text(moved, sc.config)
    for r in good:
        assert step_to_json(r, sc.config)["groups"][0]["vacated_rows"] == []
        assert "not live" not in step_to_text(r, sc.config)


def test_2025_profile_keeps_removed_rows_and_takes_slots_from_the_cpu_table():
    """2025-11: no clear_row on removal (the vacated row keeps its ids and count), and the slot
    mapping comes from the CPU table — so a skipped commit leaves slots right but the attention's
    table stale. The current profile clears the row and reads slots from the mirror."""
    from kvviz.views.report import step_to_json

    base = {"config": {"runner": "v1", "num_blocks": 32, "block_size": 4, "max_num_reqs": 4},
            "requests": [{"id": "A", "prompt_len": 5, "max_tokens": 1}, {"id": "B", "prompt_len": 6, "max_tokens": 4}]}
    old = parse_scenario({**base, "config": {**base["config"], "profile": "2025-11"}})
    cur = parse_scenario(base)
    h_old, h_cur = run_scenario(old, max_steps=3), run_scenario(cur, max_steps=3)
    # A finishes at step 0 and leaves row 0 at step 1; B (row 1) is condensed into row 0
    rm = [e for e in h_old[1].events if e["kind"] == "remove_row"]
    assert rm and rm[0]["req"] == "A" and not [e for e in h_old[1].events if e["kind"] == "clear_row"]
    assert [e["kind"] for e in h_cur[1].events if e["kind"] in ("clear_row", "remove_row")] == ["clear_row"]
    # skip_commit: under 2025-11 the slots still follow the CPU table; now they read the stale mirror
    one = {"config": {"runner": "v1", "num_blocks": 16, "block_size": 4}, "requests": [{"id": "A", "prompt_len": 5, "max_tokens": 2}]}
    rec_old = Engine(parse_scenario({**one, "config": {**one["config"], "profile": "2025-11"}}),
                     faults={"skip_commit"}).step()
    rec_cur = Engine(parse_scenario(one), faults={"skip_commit"}).step()
    blocks = rec_old.cpu_tables[0][0, :2].tolist()
    assert rec_old.inputs[0].slot_mapping.tolist() == [blocks[0] * 4 + i for i in range(4)] + [blocks[1] * 4]
    assert rec_old.inputs[0].block_table[0, :2].tolist() == [0, 0]          # attention reads the stale mirror
    assert rec_cur.inputs[0].slot_mapping.tolist() == [0, 1, 2, 3, 0]
    assert step_to_json(rec_old, parse_scenario(one).config)["groups"][0]["slot_mapping"][:4] != [0, 1, 2, 3]


@pytest.mark.parametrize("sc,step", [
    # decodes past the pool: preempted by itself, re-admitted, preempted again ... forever
    ({"config": {"num_blocks": 8, "block_size": 4}, "requests": [{"id": "A", "prompt_len": 12, "max_tokens": 40}]}, 17),
    # a prompt larger than the whole pool: never admitted
    ({"config": {"num_blocks": 4, "block_size": 4}, "requests": [{"id": "A", "prompt_len": 20, "max_tokens": 4}]}, 0),
])
def test_a_scenario_that_can_never_finish_is_refused(sc, step):
    with pytest.raises(BadInput, match=f"can never finish: at step {step} request A needs room for"):
        run_scenario(parse_scenario(sc), max_steps=1000)


def test_a_request_too_big_for_now_but_not_forever_still_runs():
    """Two requests that do not fit together: one waits (or is preempted), then runs; no refusal."""
    sc = {"config": {"runner": "v1", "num_blocks": 6, "block_size": 4, "enable_prefix_caching": False},
          "requests": [{"id": "A", "prompt_len": 8, "max_tokens": 8}, {"id": "B", "prompt_len": 8, "max_tokens": 8}]}
    h = run_scenario(parse_scenario(sc), max_steps=200)
    assert {r for rec in h for e in rec.events if e["kind"] == "finish" for r in [e["req"]]} == {"A", "B"}


def test_history_bound_counts_the_pool_lists(monkeypatch):
    """A big pool with a tiny table: the free queue and ref counts (kept per step) dominate the
    memory and must count against the bound (they used to be left out)."""
    import kvviz.core.engine as engine_mod

    sc = parse_scenario({"config": {"runner": "v1", "num_blocks": 20000, "block_size": 16, "max_model_len": 64},
                         "requests": [{"id": "A", "prompt_len": 5, "max_tokens": 30}]})
    e = Engine(sc)
    e.step()
    per_step = e._history_bytes
    assert per_step >= 36 * 4 * 19999                  # four pool lists of ~20000 entries
    monkeypatch.setattr(engine_mod, "MAX_HISTORY_BYTES", 10 * per_step)
    with pytest.raises(BadInput, match="MiB at step"):
        run_scenario(sc)


def test_reorder_decodes_first_swaps_rows_and_their_tables():
    """A preempted request re-admitted into row 0 recomputes 2 tokens while B decodes 1 in row 1:
    with reorder_decodes_first the rows swap (decode first), tables and slots moving with them."""
    def run(reorder):
        sc = parse_scenario({"config": {"runner": "v1", "num_blocks": 32, "block_size": 4, "reorder_decodes_first": reorder},
                             "requests": [{"id": "A", "prompt_len": 4, "max_tokens": 6},
                                          {"id": "B", "prompt_len": 4, "max_tokens": 6}],
                             "actions": [{"step": 2, "kind": "preempt", "req": "A"}]})
        return run_scenario(sc, max_steps=4)[2]
    plain, swapped = run(False), run(True)
    assert [(s.req_id, s.row, s.num_tokens) for s in plain.scheduled] == [("A", 0, 2), ("B", 1, 1)]
    assert [(s.req_id, s.row, s.num_tokens) for s in swapped.scheduled] == [("B", 0, 1), ("A", 1, 2)]
    # main's region reorder swaps (src, dst) = (1, 0) as it follows the permutation's cycle
    assert kinds(swapped, "swap_row") == [{"kind": "swap_row", "rows": [1, 0]}] and not kinds(plain, "swap_row")
    assert swapped.cpu_tables[0][0].tolist() == plain.cpu_tables[0][1].tolist()
    assert swapped.cpu_tables[0][1].tolist() == plain.cpu_tables[0][0].tolist()
    assert swapped.device_tables[0][:2].tolist() == swapped.cpu_tables[0][:2].tolist()   # committed after the swap
    # each token keeps its slot; only the order of the rows changed
    assert sorted(swapped.inputs[0].slot_mapping.tolist()) == sorted(plain.inputs[0].slot_mapping.tolist())
    assert swapped.inputs[0].slot_mapping.tolist() != plain.inputs[0].slot_mapping.tolist()


def test_reorder_decodes_first_property():
    """Random live rows and token counts: after the reorder every decode row precedes every prefill
    row, each request keeps its blocks, and no more swaps than needed happen."""
    from hypothesis import given, settings, strategies as st

    from kvviz.core.batch import PersistentBatch
    from kvviz.core.block_table import BlockTable, MultiGroupBlockTable

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.integers(1, 5), min_size=1, max_size=8))
    def check(tokens):
        b = PersistentBatch(MultiGroupBlockTable([BlockTable(8, 16, 4, alignment="none")]))
        sched = {}
        for i, n in enumerate(tokens):
            b.add_request(f"r{i}", [[i + 1, i + 20]])
            sched[f"r{i}"] = n
        swaps = b.reorder_decodes_first(sched)
        order = [sched[q] <= 1 for _, q in b.rows()]
        assert order == sorted(order, reverse=True)
        for row, q in b.rows():
            i = int(q[1:])
            assert b.tables[0].cpu[row, :2].tolist() == [i + 1, i + 20]
        n_dec = sum(order)
        assert len(swaps) == sum(1 for n in tokens[:n_dec] if n > 1)
    check()


def test_step_records_share_unchanged_request_entries():
    """History grows with what changed: a queued request's entry is the same object from step to
    step, a changed one is new, and a later step never alters an earlier record."""
    import copy as _copy

    sc = parse_scenario({"config": {"runner": "v1", "num_blocks": 16, "block_size": 4, "max_num_reqs": 2},
                         "requests": [{"id": f"R{i}", "prompt_len": 3, "max_tokens": 2} for i in range(6)]})
    engine = Engine(sc)
    first = engine.step()
    frozen = _copy.deepcopy(first.requests)
    second, third = engine.step(), engine.step()
    assert [r for r, e in first.requests.items() if e["state"] == "waiting"] == ["R2", "R3", "R4", "R5"]
    assert all(second.requests[r] is first.requests[r] for r in ("R2", "R3", "R4", "R5"))   # still queued
    assert all(third.requests[r] is not second.requests[r] and third.requests[r]["state"] == "running"
               for r in ("R2", "R3"))                                                      # admitted: new
    assert third.requests["R4"] is first.requests["R4"]
    engine.run(100)
    assert first.requests == frozen
