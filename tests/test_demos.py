"""Every demo plays to its end, every step has a narrative in three languages, and what the
narratives claim really happens in the engine."""
import numpy as np
import pytest

from kvviz import demos
from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID
from kvviz.i18n import LANGS, missing_translations
from kvviz.texts.demos import STRINGS

REQUIRED = {"prefix", "fork", "preempt", "chunked", "condense", "cudagraph", "hybrid",
            "kernel_block", "dcp", "pcie"}


def _events(run, step, kind):
    return [e for e in run.history[step].events if e["kind"] == kind]


def _all_events(run, kind):
    return [(r.index, e) for r in run.history for e in r.events if e["kind"] == kind]


def test_all_lessons_exist():
    assert REQUIRED <= set(demos.DEMOS)
    assert len(demos.DEMOS) >= 8


@pytest.mark.parametrize("key", demos.DEMO_KEYS)
def test_plays_to_the_end_with_a_narrative_per_step(key):
    d = demos.DEMOS[key]
    lengths = set()
    for vi in range(len(d.variants)):
        run = demos.play(key, vi)
        assert run.num_steps >= 2
        lengths.add(run.num_steps)
        for r in run.history:
            r.inputs  # built without error
    assert len(lengths) == 1, "variants of one demo must have the same steps"
    n = lengths.pop()
    steps = {k for k in STRINGS if k.startswith(key + ".step")}
    assert steps == {f"{key}.step{i}" for i in range(n)}
    for k in [f"{key}.title", f"{key}.intro", *steps]:
        for lang in LANGS:
            assert STRINGS[k].get(lang, "").strip(), (k, lang)
    for v in d.variants:
        assert f"variant.{v.key}" in STRINGS
    for f in d.figures:
        assert f"fig.{f}" in STRINGS


def test_no_missing_translations():
    assert missing_translations(["demos"]) == []


def test_narrative_placeholders_match_across_languages():
    import re
    for k, e in STRINGS.items():
        keys = {lang: set(re.findall(r"{(\w+)}", e[lang])) for lang in LANGS}
        assert keys["en"] == keys["zh"] == keys["es"], k


def test_clamp_step_validates_untrusted_input():
    n = demos.num_steps("fork")
    assert demos.clamp_step("fork", "1") == 1
    assert demos.clamp_step("fork", "999") == n - 1
    assert demos.clamp_step("fork", "-4") == 0
    assert demos.clamp_step("fork", "x; drop") == 0
    assert demos.clamp_step("fork", None) == 0


# --- the claims ---------------------------------------------------------------------------------

def test_prefix_really_hits_the_cache():
    run = demos.play("prefix")
    hits = _events(run, 1, "cache_hit")
    assert hits and hits[0]["req"] == "B" and hits[0]["blocks"] == [1, 2] and hits[0]["tokens"] == 8
    r1 = run.history[1]
    assert r1.requests["B"]["blocks"][0][:2] == r1.requests["A"]["blocks"][0][:2] == [1, 2]
    assert r1.ref_counts[1] == r1.ref_counts[2] == 2
    assert [s.num_tokens for s in r1.scheduled if s.req_id == "B"] == [3]
    r0 = run.history[0]
    assert set(r0.cached_blocks) == {1, 2}                 # the partial block 3 has no hash
    r2 = run.history[2]
    assert 3 in r2.free_queue_after and r2.ref_counts_after[1] == 1 and 1 not in r2.free_queue_after
    assert _events(run, 3, "move_row")


def test_fork_really_copies_on_write():
    run = demos.play("fork")
    cow = _events(run, 1, "cow")
    assert cow and cow[0]["src"] == 3 and cow[0]["dst"] == 4 and cow[0]["tokens"] == 2
    r = run.history[1]
    assert r.requests["A.1"]["blocks"][0] == [1, 2, 4]
    assert r.ref_counts[1] == r.ref_counts[2] == 2 and r.ref_counts[3] == 1
    sm = r.inputs[0].slot_mapping.tolist()
    assert sm == [14, 18]                                  # same position, different slots


def test_preemption_frees_and_recomputes_from_zero():
    run = demos.play("preempt")
    pre = _all_events(run, "preempt")
    assert [(s, e["req"]) for s, e in pre] == [(3, "B")]
    assert pre[0][1]["why"] == "pool exhausted" and pre[0][1]["recompute_tokens"] == 9
    first = run.history[1].inputs[0].slot_mapping.tolist()
    last = run.history[-1]
    (b,) = [s for s in last.scheduled if s.req_id == "B"]
    assert b.num_computed == 0 and b.num_tokens == 9 and b.kind == "prefill"
    assert first[1] == 16 and last.inputs[0].slot_mapping[0] == 24   # position 0 moved
    assert run.history[2].free_queue == []


def test_chunked_prefill_crosses_a_block_boundary():
    run = demos.play("chunked")
    kinds = [[s.kind for s in r.scheduled] for r in run.history]
    assert kinds == [["chunk"], ["chunk"], ["prefill"], ["decode"]]
    r1 = run.history[1]
    assert r1.inputs[0].positions.tolist() == list(range(6, 12))
    assert r1.inputs[0].slot_mapping.tolist() == [10, 11, 12, 13, 14, 15]
    assert r1.inputs[0].block_table[0, :3].tolist() == [1, 2, 3]
    assert _events(run, 1, "append_row")


def test_condense_move_row_clears_source_and_the_fault_does_not():
    ok, bad = demos.play("condense", 0), demos.play("condense", 1)
    (mv,) = _events(ok, 1, "move_row")
    assert (mv["req"], mv["src"], mv["dst"]) == ("C", 2, 0)
    assert ok.history[1].cpu_tables[0][2, :3].tolist() == [NULL_BLOCK_ID] * 3
    assert ok.history[1].num_blocks_per_row[0][2] == 0
    assert bad.history[1].cpu_tables[0][2, :3].tolist() == [5, 6, 7]
    assert bad.history[1].num_blocks_per_row[0][2] == 3
    for run in (ok, bad):  # the mirror of row 2 is stale either way: the commit covers [0, 2)
        assert run.history[1].commit_rows == 2
        assert run.history[1].device_tables[0][2, :3].tolist() == [5, 6, 7]
    # after C finishes, the fault's row 2 names blocks that are free
    last = bad.history[3]
    assert {5, 6, 7} <= set(last.free_queue_after)
    assert last.cpu_tables[0][2, :3].tolist() == [5, 6, 7]


def test_cudagraph_padding_sentinels():
    run = demos.play("cudagraph")
    assert run.history[0].num_tokens_padded == run.history[0].num_tokens == 14
    for r in run.history[1:]:
        inp = r.inputs[0]
        assert (r.num_tokens, r.num_tokens_padded) == (3, 4)
        assert (r.num_reqs, r.num_reqs_padded) == (3, 4)
        assert inp.slot_mapping[3] == PAD_SLOT_ID
        assert (inp.block_table[3] == NULL_BLOCK_ID).all()
        assert inp.seq_lens[3] == 0
        assert inp.paged_kv_last_page_len[3] == 0
        assert inp.paged_kv_indptr[4] == inp.paged_kv_indptr[3]
        assert inp.query_start_loc[4] == inp.query_start_loc[3]
    assert run.history[1].inputs[0].slot_mapping.tolist() == [10, 17, 23, -1]


def test_hybrid_window_and_state_groups():
    run = demos.play("hybrid")
    skips = _all_events(run, "window_skip")
    assert [(s, e["group"], e["blocks"]) for s, e in skips] == [(1, 1, [4]), (5, 1, [5])]
    r1 = run.history[1]
    assert r1.requests["A"]["blocks"][1][0] == NULL_BLOCK_ID      # the manager's view
    assert r1.cpu_tables[1][0, 0] == 4                             # the worker row keeps the old id
    for r in run.history:
        assert r.inputs[2].slot_mapping is None                    # the state group has no slots
        assert r.num_blocks_per_row[2][0] == 1
    assert run.history[2].inputs[0].slot_mapping.tolist() == [14]
    assert run.history[2].inputs[1].slot_mapping.tolist() == [26]


def test_kernel_block_expansion_addresses_the_same_memory():
    run = demos.play("kernel_block")
    r0 = run.history[0]
    assert r0.requests["A"]["blocks"][0] == [1, 2]
    assert r0.cpu_tables[0][0, :4].tolist() == [2, 3, 4, 5]
    sm = r0.inputs[0].slot_mapping
    manager = run.scenario.config.block_size
    for pos in range(13):
        m = r0.requests["A"]["blocks"][0][pos // manager]
        assert sm[pos] == m * manager + pos % manager
    assert sm[9] == 17
    assert run.history[2].inputs[0].slot_mapping.tolist() == [29]


def test_dcp_ranks_split_the_positions():
    r0, r1 = demos.play("dcp", 0), demos.play("dcp", 1)
    a = r0.history[0].inputs[0].slot_mapping
    b = r1.history[0].inputs[0].slot_mapping
    pos = r0.history[0].inputs[0].positions
    assert ((a == PAD_SLOT_ID) == (pos % 2 == 1)).all()
    assert ((b == PAD_SLOT_ID) == (pos % 2 == 0)).all()
    assert a[:4].tolist() == [4, -1, 5, -1]
    assert np.array_equal(r0.history[0].cpu_tables[0], r1.history[0].cpu_tables[0])
    assert r1.history[1].inputs[0].slot_mapping.tolist() == [9]
    assert r0.history[1].inputs[0].slot_mapping.tolist() == [-1]


def test_pcie_commit_bytes_and_model():
    run = demos.play("pcie")
    c = run.scenario.config
    row = demos.block_table_row_bytes(c.max_model_len, c.block_size)
    assert row == 65536 * 4 == 256 * 1024
    assert [r.commit_bytes for r in run.history] == [row, 2 * row, 2 * row]
    assert demos.commit_bytes_per_step(256, 1 << 20, 16) == 64 * 2**20
    assert demos.pcie_rate(256, 32 * 1024, 16, 50) == 100 * 2**20
    assert demos.pcie_rate(256, 1 << 20, 16, 50) == 3.125 * 2**30


def test_every_event_has_a_sentence_in_every_language():
    from kvviz.demo_views import describe
    from kvviz.texts.events import STRINGS as EVENTS
    for key in demos.DEMO_KEYS:
        for vi in range(len(demos.DEMOS[key].variants)):
            for r in demos.play(key, vi).history:
                for e in r.events:
                    assert e["kind"] in EVENTS, e["kind"]
                    for lang in LANGS:
                        assert describe(e, lang) and "{" not in describe(e, lang)
