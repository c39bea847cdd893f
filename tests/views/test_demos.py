"""Every demo plays to its end, every step has a narrative in three languages, and what the
narratives claim really happens in the engine."""
import numpy as np
import pytest

from kvviz.views import demo_catalogue as demos
from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID
from kvviz.texts.i18n import LANGS, missing_translations
from kvviz.texts.demos import STRINGS

REQUIRED = {"prefix", "fork", "preempt", "chunked", "condense", "cudagraph", "hybrid",
            "kernel_block", "dcp", "pcie", "v1_vs_v2", "where_stale"}
# demos whose narratives speak of V1 operations (rows that move, the commit, the mirror)
V1_ONLY = {"condense", "pcie", "hybrid"}


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
    r3 = run.history[3]   # step 3: B alone, first in the batch, grows into block 5
    assert [(s.req_id, s.row) for s in r3.scheduled] == [("B", 0)]
    assert [e["blocks"] for e in _events(run, 3, "alloc") if e["req"] == "B"] == [[5]]
    (free,) = _events(run, 3, "free")
    assert free["to_front"] == [5] and set(free["to_back"]) == {1, 2, 4}
    assert set(r3.cached_blocks) >= {1, 2, 4} and 5 not in r3.cached_blocks


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


def test_preemption_narrative_holds_under_either_runner():
    """preempt.step3/4: B leaves the batch; the batch then has a single row (A)."""
    run = demos.play("preempt")
    r3, r4 = run.history[3], run.history[4]
    assert "B" not in [s.req_id for s in r3.scheduled] and "B" not in r3.rows
    assert r4.num_reqs == 1 and [s.req_id for s in r4.scheduled] == ["A"]
    assert r4.requests["B"]["state"] == "preempted"
    for lang in LANGS:
        assert "commit" not in STRINGS["preempt.step4"][lang]


def test_chunked_prefill_crosses_a_block_boundary():
    run = demos.play("chunked")
    kinds = [[s.kind for s in r.scheduled] for r in run.history]
    assert kinds == [["chunk"], ["chunk"], ["prefill"], ["decode"]]
    r1 = run.history[1]
    assert r1.inputs[0].positions.tolist() == list(range(6, 12))
    assert r1.inputs[0].slot_mapping.tolist() == [10, 11, 12, 13, 14, 15]
    assert r1.inputs[0].block_table[0, :3].tolist() == [1, 2, 3]
    # "the newly appended block 3": appended to A's row, under whichever runner the demo shows
    if r1.runner == "v1":
        assert [e["blocks"] for e in _events(run, 1, "append_row")] == [[[3]]]
    else:
        assert [(e["blocks"], e["overwrite"]) for e in _events(run, 1, "stage_write")] == [([[3]], False)]
        row = r1.requests["A"]["row"]
        assert r1.cpu_tables[0][row, :3].tolist() == [1, 2, 3]


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
    assert r0.cpu_tables[0][r0.requests["A"]["row"], :4].tolist() == [2, 3, 4, 5]   # A's row, either runner
    assert r0.inputs[0].block_table[0, :4].tolist() == [2, 3, 4, 5]                  # what attention reads
    sm = r0.inputs[0].slot_mapping
    manager = run.scenario.config.block_size
    for pos in range(13):
        m = r0.requests["A"]["blocks"][0][pos // manager]
        assert sm[pos] == m * manager + pos % manager
    assert sm[9] == 17
    r2 = run.history[2]   # A has finished, B is alone in the batch (its first row)
    assert r2.requests["A"]["state"] == "finished"
    assert [(s.req_id, s.row) for s in r2.scheduled] == [("B", 0)]
    assert r2.requests["B"]["blocks"][0] == [3] and r2.inputs[0].block_table[0, :2].tolist() == [6, 7]
    assert r2.inputs[0].slot_mapping.tolist() == [29] == [7 * 4 + 1]


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
    row = demos.commit_bytes_per_step(1, c.max_model_len, c.block_size)   # one full-width row
    assert row == 65536 * 4 == 256 * 1024
    assert [r.commit_bytes for r in run.history] == [row, 2 * row, 2 * row]
    assert demos.commit_bytes_per_step(256, 1 << 20, 16) == 64 * 2**20
    assert demos.pcie_rate(256, 32 * 1024, 16, 50) == 100 * 2**20
    assert demos.pcie_rate(256, 1 << 20, 16, 50) == 3.125 * 2**30


def test_every_event_has_a_sentence_in_every_language():
    from kvviz.views.report import describe_event as describe
    from kvviz.texts.events import STRINGS as EVENTS
    for key in demos.DEMO_KEYS:
        for vi in range(len(demos.DEMOS[key].variants)):
            for r in demos.play(key, vi).history:
                for e in r.events:
                    assert e["kind"] in EVENTS, e["kind"]
                    for lang in LANGS:
                        assert describe(e, lang) and "{" not in describe(e, lang)


# --- what the page shows agrees with what the narratives say --------------------------------------

LEFT_RIGHT = {  # how the condense narratives name the two columns, with the run each one holds
    "en": ("Left, as vLLM does it", "Right, the fault"),
    "zh": ("左列（vLLM 的做法）", "右列（故障）"),
    "es": ("Izquierda, como lo hace vLLM", "Derecha, el fallo"),
}
LEFT_WORD = {"en": ("left", "Left"), "zh": ("左",), "es": ("izquierda", "Izquierda")}
RIGHT_WORD = {"en": ("right", "Right"), "zh": ("右",), "es": ("derecha", "Derecha")}


@pytest.mark.parametrize("lang", list(LANGS))
def test_condense_columns_are_what_the_narrative_says(lang):
    """The narrative says left = vLLM, right = the fault, CPU above device: so does the layout."""
    from kvviz.views.demos import bands, screens_for
    from kvviz.texts.i18n import t

    T = lambda k: t("demos", k, lang)  # noqa: E731
    main, fault = T("variant.main"), T("variant.no_clear")
    for step in range(demos.num_steps("condense")):
        (bt,) = [s for s in screens_for("condense", step, lang) if s.key.startswith("block_table")]
        (band,) = bands(bt)                       # one band: a column per run
        left, right = band
        assert [c[0].split(" — ")[:2] for c in left] == [[main, T("ui.cpu")], [main, T("ui.device")]]
        assert [c[0].split(" — ")[:2] for c in right] == [[fault, T("ui.cpu")], [fault, T("ui.device")]]
        if step == 1:  # and the charts hold the runs they are titled with
            assert left[0][1].data[0].z[2][:3].tolist() == [0, 0, 0]
            assert right[0][1].data[0].z[2][:3].tolist() == [5, 6, 7]
            assert left[1][1].data[0].z[2][:3].tolist() == right[1][1].data[0].z[2][:3].tolist() == [5, 6, 7]
    left_says, right_says = LEFT_RIGHT[lang]
    assert left_says in T("condense.step1") and right_says in T("condense.step1")
    for k in ("intro", "step0", "step1", "step2", "step3"):
        text = T(f"condense.{k}")
        if any(w in text for w in LEFT_WORD[lang]) and k != "intro":
            assert left_says in text, k
        if any(w in text for w in RIGHT_WORD[lang]) and k != "intro":
            assert right_says in text, k
    assert "num_reqs_padded" in T("condense.step2")     # why an uncleared vacated row matters


def test_the_dummy_run_row_the_narrative_talks_about():
    ok, bad = demos.play("condense", 0), demos.play("condense", 1)
    r = ok.history[2]
    assert r.num_reqs == r.commit_rows == 2             # the ordinary commit stops before row 2
    assert ok.history[2].cpu_tables[0][2].tolist() == [0] * ok.history[2].cpu_tables[0].shape[1]
    assert bad.history[2].cpu_tables[0][2, :3].tolist() == [5, 6, 7]


def test_hybrid_sliding_window_block_leaves_when_the_narrative_says():
    """hybrid.step4: block 9 (taken at step 4) leaves the window only once 21 tokens are
    computed; the block freed at step 5 is block 5."""
    import copy

    from kvviz.core.engine import Engine
    from kvviz.core.scenario import parse_scenario

    run = demos.play("hybrid")
    assert run.history[4].requests["A"]["blocks"][1][-1] == 9
    assert [e["blocks"] for e in _events(run, 5, "window_skip")] == [[5]]
    longer = copy.deepcopy(demos.DEMOS["hybrid"].scenario)
    longer["requests"][0]["max_tokens"] = 16
    hist = Engine(parse_scenario(longer)).run(64)
    skips = {tuple(e["blocks"]): [s.num_computed for s in r.scheduled][0]
             for r in hist for e in r.events if e["kind"] == "window_skip"}
    assert skips[(9,)] == 21
    assert run.history[-1].scheduled[0].seq_len < 21          # A finishes before that
    for lang in LANGS:
        text = STRINGS["hybrid.step4"][lang]
        assert "21" in text and "two steps" not in text


def test_hashed_blocks_are_marked_without_hovering():
    """The pool's ref-count chart marks every block that holds a hash (a star and an outline, with
    a legend entry), and the narratives that say "look at the pool" point at that mark."""
    from kvviz.views.demos import pool_screen, runs_of
    from kvviz.texts.i18n import t

    for key, step, blocks in (("prefix", 0, [1, 2]), ("chunked", 0, [1]), ("hybrid", 3, [1, 2, 3, 4, 5, 6])):
        for lang in LANGS:
            fig = pool_screen(runs_of(key), step, lang).charts[0][1]
            (star,) = [tr for tr in fig.data if tr.name == t("figures", "hashed", lang)]
            assert list(star.x) == blocks and star.marker.symbol == "star"
            outline = [tr for tr in fig.data if tr.type == "bar" and tr.marker.line.color == "black"]
            assert outline and list(outline[0].x) == blocks
            assert fig.layout.showlegend is not False
        for lang in LANGS:
            assert "★" in STRINGS[f"{key}.step{step}"][lang], (key, lang)


def test_dcp_local_seq_lens_are_on_screen():
    from kvviz.views.demos import screens_for
    from kvviz.texts.i18n import t

    for lang in LANGS:
        (slots,) = [s for s in screens_for("dcp", 0, lang) if s.key.startswith("slots")]
        titles = [c[0] for c in slots.charts]
        assert t("demos", "ui.local_seq_lens", lang, v=[6]) in titles[0]
        assert t("demos", "ui.local_seq_lens", lang, v=[5]) in titles[1]
        assert "6" in STRINGS["dcp.step0"][lang] and "5" in STRINGS["dcp.step0"][lang]


def test_cudagraph_intro_does_not_claim_the_prefill_is_padded():
    run = demos.play("cudagraph")
    assert run.history[0].num_tokens_padded == run.history[0].num_tokens   # step 0: eager, unpadded
    assert "every step" not in STRINGS["cudagraph.intro"]["en"]
    for lang in LANGS:
        assert "14" in STRINGS["cudagraph.intro"][lang]


def test_fork_lesson_says_what_vllm_v1_does():
    for lang in LANGS:
        text = STRINGS["fork.intro"][lang]
        assert "V1" in text and "V0" in text and "n > 1" in text


def test_presenter_shows_one_chart_per_screen():
    from kvviz.views.demos import presenter_screens, screens_for

    for key in demos.DEMO_KEYS:
        for step in range(demos.num_steps(key)):
            screens = screens_for(key, step, "en")
            one = presenter_screens(screens)
            assert all(len(s.charts) == 1 for s in one)
            assert sum(len(s.charts) for s in screens) == len(one)
            assert len({s.key for s in one}) == len(one)


# --- no English left in the other languages ---------------------------------------------------------

ENGLISH_LEFTOVERS = ["full attention", "sliding window", "Mamba-like", "block table only", "(dummy)",
                     "cell with pos", "its page", "= block ", "runs over", "-token pages", " of 1024",
                     "free queue", "ref count", "physical block", "local seq_lens", "request-state",
                     "batch position", "batch order", "input block table", "commit skipped", "gather skipped"]


def _chart_strings(fig) -> list[str]:
    d = fig.to_plotly_json()
    lay = d["layout"]
    out = [lay.get("title", {}).get("text") or ""]
    for ax in [k for k in lay if k.startswith(("xaxis", "yaxis"))]:
        out.append(((lay[ax] or {}).get("title") or {}).get("text") or "")
    out += [a.get("text", "") for a in lay.get("annotations", [])]
    out += [tr.get("name") or "" for tr in d["data"]]
    return out


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_demo_screens_have_no_english_left(lang):
    from kvviz.views.demos import scheduled_frame, screens_for
    from kvviz.texts.i18n import t

    for key in demos.DEMO_KEYS:
        for step in range(demos.num_steps(key)):
            shown = []
            for s in screens_for(key, step, lang):
                shown.append(s.title)
                for caption, fig in s.charts:
                    shown += [caption, *_chart_strings(fig)]
            text = "\n".join(shown)
            for en in ENGLISH_LEFTOVERS:
                assert en not in text, (key, step, en)
            kinds = scheduled_frame(key, step, lang)["kind"].tolist()
            assert not {"prefill", "chunk", "decode"} & set(kinds), (key, step, kinds)
            assert set(kinds) <= {t("demos", f"kind.{k}", lang) for k in ("prefill", "chunk", "decode")}


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_notation_tables_have_no_english_left(lang):
    from kvviz.notations import models as nt
    from kvviz.views.notations import lookup_text, tables

    from kvviz.texts.i18n import t
    from kvviz.views.notations import round_trip_report

    c = nt.example_batch()
    for page_size in (16, 128):
        rt = round_trip_report(c, page_size, lang)
        assert (rt.index.name, rt.columns.name) == (t("notations", "v.from", lang), t("notations", "v.to", lang))
        forms = nt.all_forms(c, page_size)
        for name, form in forms.items():
            for i, r in enumerate(c.requests):
                for pos in (0, r.seq_len - 1):
                    shown = [lookup_text(name, form, i, pos, lang)]
                    for label, df, marks in tables(name, form, i, pos, lang):
                        shown += [label, *map(str, df.index), *map(str, df.columns)]
                        for row, col in marks:                  # every mark names a real cell
                            assert row in df.index and col in df.columns, (name, row, col)
                    text = "\n".join(shown)
                    for en in ENGLISH_LEFTOVERS + ["row ", "cell ", "run ", "request", "positions"]:
                        assert en not in text, (name, i, pos, en)


@pytest.mark.parametrize("lang", list(LANGS))
def test_presenter_says_which_run_a_compared_chart_is(lang):
    """One chart per screen loses the columns, so each compared chart's screen title names its run
    (not "left column": no column is on screen), the first run (vLLM / DCP rank 0) first."""
    from kvviz.views.demos import presenter_screens, screens_for
    from kvviz.texts.i18n import t

    for key, release in (("condense", demos.NARRATIVE_RELEASE), ("dcp", demos.DEFAULT_RELEASE),
                         ("where_stale", "v0.33.0")):
        names = [t("demos", f"variant.{v.key}", lang) for v in demos.DEMOS[key].variants]
        one = presenter_screens(screens_for(key, 1, lang, release), lang)
        compared = [s for s in one if not s.key.startswith("pool")]
        runs = [next(n for n in names if s.title.endswith(" — " + n)) for s in compared]
        for s, run in zip(compared, runs):
            assert run in s.charts[0][0], (key, s.title, s.charts[0][0])    # the chart is that run's
        tables = [r for s, r in zip(compared, runs) if s.key.startswith("block_table")]
        assert tables == [n for n in names for _ in range(len(tables) // len(names))]   # run by run, in order
        assert not any(t("demos", "ui.col_left", lang) in s.title or t("demos", "ui.col_right", lang) in s.title
                       for s in one)


def test_every_figure_has_its_own_sentence_saying_what_its_colour_encodes():
    """Each chart of every demo step, on the narrative's release and the newest it plays on, has a
    sentence of its own (what that chart shows at this step, read from the run) ending with what
    its colour encodes; the sentences of one step differ from each other."""
    from kvviz.views.demos import screens_for
    from kvviz.texts.i18n import t

    colour = {"en": "Colour: ", "zh": "颜色：", "es": "Color: "}
    for key in demos.DEMO_KEYS:
        for release in {demos.NARRATIVE_RELEASE, demos.nearest_playable(key, demos.DEFAULT_RELEASE)}:
            for step in range(demos.num_steps(key)):
                for lang in LANGS:
                    screens = screens_for(key, step, lang, release)
                    notes = [n for s in screens for n in s.notes]
                    assert len(notes) == sum(len(s.charts) for s in screens), (key, release, step)
                    assert all(colour[lang] in n and "{" not in n for n in notes), (key, release, step, lang)
    # the sentence is about the figure, from the run: prefix step 2 (A and B share blocks 1, 2)
    (pool,) = [s for s in screens_for("prefix", 1, "en") if s.key == "pool"]
    assert "shared by two or more (ref count > 1): 1–2" in pool.notes[0]
    (slots,) = [s for s in screens_for("prefix", 1, "en") if s.key.startswith("slots")]
    assert "B position 8–10 → slot 16–18" in slots.notes[0]
    assert t("demos", "note.colour_slots", "en") in slots.notes[0]


def test_each_release_plays_every_demo_it_can_and_refuses_the_rest():
    """A demo plays on every release that has its runner(s), with the same steps; on the others it
    says why (V1 gone from v0.34.0; V2 not yet before v0.12.0), and names the nearest release."""
    from kvviz.core.versions import VERSIONS
    from kvviz.errors import BadInput

    for key in demos.DEMO_KEYS:
        for release in VERSIONS:
            why = demos.missing_runner(key, release)
            if why is None:
                assert demos.play(key, len(demos.DEMOS[key].variants) - 1, release=release).num_steps == demos.num_steps(key)
            else:
                refused = 0
                for vi in range(len(demos.DEMOS[key].variants)):
                    try:
                        demos.play(key, vi, release=release)
                    except BadInput:
                        refused += 1
                assert refused, (key, release)          # the run that needs the missing runner
                assert demos.missing_runner(key, demos.nearest_playable(key, release)) is None
    assert demos.missing_runner("condense", "v0.34.0") == "v1" and demos.nearest_playable("condense", "v0.34.0") == "v0.33.0"
    assert demos.missing_runner("where_stale", "v0.11.0") == "v2" and demos.nearest_playable("where_stale", "v0.11.0") == "v0.12.0"
    assert demos.missing_runner("prefix", "v0.34.0") is None
    assert demos.differs("prefix", 1, demos.NARRATIVE_RELEASE) == ()
    assert "runner" in demos.differs("prefix", 1, "v0.11.0")            # V1 there: the narrative's V2 differs
    with pytest.raises(BadInput):
        demos.play("prefix", release="v9.9.9")


def test_slot_charts_have_integer_axes():
    """A one-token chart reads slot 13, not 12.5 … 13.5: integer ticks on both axes."""
    from kvviz.views.demos import screens_for

    for key, step in (("hybrid", 2), ("dcp", 1), ("prefix", 0)):
        for s in screens_for(key, step, "en"):
            if s.key.startswith("slots"):
                for _, fig in s.charts:
                    assert fig.layout.xaxis.dtick == 1 and fig.layout.yaxis.tickformat == "d"
                    if len(fig.layout.yaxis.range or ()) == 2:
                        assert fig.layout.yaxis.dtick == 1


# --- runners: which demos show which runner, and the two runner lessons ---------------------------

def _runner_of(key, vi=0):
    runners = {r.runner for r in demos.play(key, vi).history}
    assert len(runners) == 1
    return runners.pop()


def test_demos_say_which_runner_they_show():
    from kvviz.views.demos import runner_caption
    from kvviz.texts.i18n import t

    for key in demos.DEMO_KEYS:
        runners = [_runner_of(key, vi) for vi in range(len(demos.DEMOS[key].variants))]
        if key in V1_ONLY:
            assert set(runners) == {"v1"}, key
        for lang in LANGS:
            caption = runner_caption(key, lang)
            for r in runners:
                assert t("demos", f"runner.{r}", lang) in caption, (key, lang)
            assert f"vLLM {demos.play(key).scenario.config.vllm}" in caption
            # a demo of V1's mechanics names the releases that have them (V1 deleted in v0.34.0)
            assert ("v0.33.0" in caption) == ("v1" in runners), (key, lang)
    assert set(_runner_of(k) for k in ("prefix", "chunked", "kernel_block", "fork")) == {"v2"}   # vLLM main's default


def _tokens(rec, gid=0) -> dict:
    """{(request, position): slot} of one step, from the scheduled requests in batch order."""
    inp = rec.inputs[gid]
    out, t = {}, 0
    for s in rec.scheduled:
        for k in range(s.num_tokens):
            assert inp.positions[t] == s.num_computed + k
            out[(s.req_id, s.num_computed + k)] = int(inp.slot_mapping[t])
            t += 1
    return out


def _said(key, items, langs=LANGS):
    """Every narrative of ``key`` in ``langs`` lists ``items`` (", " or the Chinese "、")."""
    for lang in langs:
        text = STRINGS[key][lang]
        assert any(sep.join(map(str, items)) in text for sep in (", ", "、")), (key, lang, items)


def _state_of(run, step, kind):
    return {e["req"]: e["state"] for e in _events(run, step, kind)}


def test_v1_vs_v2_plays_each_runner():
    assert demos.DEMOS["v1_vs_v2"].scenario is demos.DEMOS["where_stale"].scenario
    assert [_runner_of("v1_vs_v2", 0), _runner_of("v1_vs_v2", 1)] == ["v1", "v2"]


def test_v1_vs_v2_slot_mappings_are_identical_every_step():
    v1, v2 = demos.play("v1_vs_v2", 0), demos.play("v1_vs_v2", 1)
    bs = v1.scenario.config.block_size
    assert bs == 4 and all("× 4" in STRINGS["v1_vs_v2.step0"][lang] for lang in LANGS)
    for a, b in zip(v1.history, v2.history):
        ta, tb = _tokens(a), _tokens(b)
        assert ta and ta == tb, a.index
        for (rid, pos), slot in ta.items():     # same blocks, same arithmetic
            assert a.requests[rid]["blocks"][0] == b.requests[rid]["blocks"][0]
            assert slot == a.requests[rid]["blocks"][0][pos // bs] * bs + pos % bs


def test_v1_vs_v2_step_claims():
    v1, v2 = demos.play("v1_vs_v2", 0), demos.play("v1_vs_v2", 1)
    order = lambda run, k: [s.req_id for s in run.history[k].scheduled]  # noqa: E731
    n = v2.scenario.config.max_num_reqs
    # step 0: V1 rows in arrival order; V2 indices popped from the end of [0, 1, 2, 3]
    assert {e["req"]: e["row"] for e in _events(v1, 0, "add_row")} == {"A": 0, "B": 1, "C": 2}
    assert v1.history[0].commit_rows == 3
    assert list(range(n)) == [0, 1, 2, 3]
    free = list(range(n))
    expect = {rid: free.pop() for rid in ("A", "B", "C")}
    assert _state_of(v2, 0, "add_state") == expect == {"A": 3, "B": 2, "C": 1}
    r0 = v2.history[0]
    assert order(v2, 0) == ["B", "C", "A"] and order(v1, 0) == ["A", "B", "C"]
    counts = [s.num_tokens for s in r0.scheduled]
    assert counts == sorted(counts)                         # fewest scheduled tokens first
    assert r0.idx_mapping == [expect[rid] for rid in order(v2, 0)] == [2, 1, 3]
    for run in (v1, v2):
        assert [e["req"] for e in _events(run, 0, "finish")] == ["A"]
    _said("v1_vs_v2.step0", [0, 1, 2, 3])
    _said("v1_vs_v2.step0", ["B", "C", "A"])
    _said("v1_vs_v2.step0", [2, 1, 3])
    # step 1: V1 clears A's row and moves C from row 2 to row 0; V2 moves nothing
    assert [e["row"] for e in _events(v1, 1, "clear_row") if e["req"] == "A"] == [0]
    assert [(e["req"], e["src"], e["dst"]) for e in _events(v1, 1, "move_row")] == [("C", 2, 0)]
    assert order(v1, 1) == ["C", "B"]
    r1 = v2.history[1]
    assert _state_of(v2, 1, "free_state") == {"A": 3} and not _events(v2, 1, "move_row")
    a_blocks = v2.history[0].requests["A"]["blocks"][0]
    assert r1.cpu_tables[0][3, :3].tolist() == a_blocks == [1, 2, 3]       # left as it was
    assert r1.idx_mapping == [2, 1] and r1.state_rows[2] == "B" and r1.state_rows[1] == "C"
    _said("v1_vs_v2.step1", [1, 2, 3])
    _said("v1_vs_v2.step1", [2, 1])
    # step 2: D takes V1's row 2 and V2's index 3 (A's), written from column 0
    assert [e["row"] for e in _events(v1, 2, "add_row") if e["req"] == "D"] == [2]
    assert _state_of(v2, 2, "add_state") == {"D": 3}
    (w,) = [e for e in _events(v2, 2, "stage_write") if e["req"] == "D"]
    r2 = v2.history[2]
    assert w["overwrite"] is True and w["blocks"] == [r2.requests["D"]["blocks"][0]] == [[8]]
    assert r2.cpu_tables[0][3, :3].tolist() == [8, 2, 3] and r2.num_blocks_per_row[0][3] == 1
    assert r2.cpu_tables[0][3, 1:3].tolist() == a_blocks[1:]                     # A's leftovers
    assert 3 in r2.requests["C"]["blocks"][0]                                    # block 3 is C's now
    assert r2.idx_mapping == [2, 1, 3] and order(v2, 2).index("D") == 2
    assert r2.device_before_commit[0][2, :3].tolist() == a_blocks                # from A's gather
    assert r2.device_tables[0][2, :3].tolist() == [8, 2, 3]
    assert r2.inputs[0].seq_lens[2] == 3                                         # one block read
    assert order(v1, 2) == ["C", "B", "D"] and order(v2, 2) == ["B", "C", "D"]
    for lang in LANGS:
        assert "[8, 2, 3]" in STRINGS["v1_vs_v2.step2"][lang]
    _said("v1_vs_v2.step2", ["C", "B", "D"])
    _said("v1_vs_v2.step2", ["B", "C", "D"])
    # step 3: three decodes, all three finish
    for run in (v1, v2):
        r3 = run.history[3]
        assert sorted(s.req_id for s in r3.scheduled) == ["B", "C", "D"]
        assert all(s.kind == "decode" for s in r3.scheduled)
        assert sorted(e["req"] for e in _events(run, 3, "finish")) == ["B", "C", "D"]
    assert demos.num_steps("v1_vs_v2") == 4


def _where_stale():
    return [demos.play("where_stale", i) for i in range(4)]


def test_where_stale_faults_strike_one_step_only():
    v1, v1f, v2, v2f = _where_stale()
    assert [_runner_of("where_stale", i) for i in range(4)] == ["v1", "v1", "v2", "v2"]
    k = demos.FAULT_STEP
    assert [s for s, e in _all_events(v1f, "commit") if e["rows"] == 0] == [k]
    assert [s for s, e in _all_events(v2f, "gather") if e.get("fault")] == [k]
    assert not [e for _, e in _all_events(v1, "commit") if e["rows"] == 0]
    assert not [e for _, e in _all_events(v2, "gather") if e.get("fault")]
    for ok, bad in ((v1, v1f), (v2, v2f)):      # before the fault the runs are the same
        for s in range(k):
            for name in ("cpu_tables", "device_tables"):
                assert np.array_equal(getattr(ok.history[s], name)[0], getattr(bad.history[s], name)[0])


def test_where_stale_step_claims():
    from kvviz.core.versions import RULES
    from kvviz.views.demos import stale_rows_v2

    v1, v1f, v2, v2f = _where_stale()
    k = demos.FAULT_STEP
    assert k == 2
    # step 0: nothing stale anywhere
    for run in (v1, v1f):
        r = run.history[0]
        assert np.array_equal(r.cpu_tables[0], r.device_tables[0]) and r.commit_rows == 3
    for run in (v2, v2f):
        assert stale_rows_v2(run, 0, 0) == ([], []) and run.history[0].idx_mapping == [2, 1, 3]
    _said("where_stale.step0", [2, 1, 3])
    # step 1: V1 clears on removal and on move_row; the mirror's row 2 keeps C's ids, never read
    rules = {r.field: r for r in RULES}
    for fld in ("remove_clears_row", "move_row_clears_source"):
        for lang in LANGS:
            text = STRINGS["where_stale.step1"][lang]
            assert f"#{rules[fld].pr}" in text and rules[fld].first_release in text, (fld, lang)
    r1 = v1.history[1]
    c_blocks = r1.requests["C"]["blocks"][0]
    assert [e["row"] for e in _events(v1, 1, "clear_row") if e["req"] == "A"] == [0]
    assert [(e["req"], e["src"], e["dst"]) for e in _events(v1, 1, "move_row")] == [("C", 2, 0)]
    assert not r1.cpu_tables[0][2].any()
    assert r1.device_tables[0][2, :2].tolist() == c_blocks == [6, 7]
    assert r1.commit_rows == r1.num_reqs == 2
    _said("where_stale.step1", [6, 7])
    r1 = v2.history[1]
    assert _state_of(v2, 1, "free_state") == {"A": 3} and 3 not in r1.idx_mapping
    assert r1.cpu_tables[0][3, :3].tolist() == r1.device_tables[0][2, :3].tolist() == [1, 2, 3]
    assert r1.num_reqs == 2 and stale_rows_v2(v2, 1, 0) == ([], [])
    _said("where_stale.step1", [1, 2, 3])
    # step 2, healthy: D's row replaces the stale one (V1); D's state row has a stale tail (V2)
    r2 = v1.history[k]
    assert r2.commit_rows == 3 and r2.device_tables[0][2, :2].tolist() == [8, 0]
    r2 = v2.history[k]
    assert r2.cpu_tables[0][3, :3].tolist() == r2.device_tables[0][2, :3].tolist() == [8, 2, 3]
    assert r2.num_blocks_per_row[0][3] == 1 and stale_rows_v2(v2, k, 0) == ([], [])
    # step 2, commit skipped: the mirror keeps the last step's rows and the kernel reads (and writes) them
    before, bad = v1f.history[k - 1], v1f.history[k]
    assert bad.commit_rows == 0 and np.array_equal(bad.device_tables[0], before.device_tables[0])
    c_blocks = bad.requests["C"]["blocks"][0]
    assert bad.device_tables[0][2, :2].tolist() == c_blocks[:2] == [6, 7]
    assert bad.device_tables[0][0, :3].tolist() == [6, 7, 0] and c_blocks == [6, 7, 3]
    assert bad.rows[:3] == ["C", "B", "D"]
    assert bad.inputs[0].block_table[2, :2].tolist() == [6, 7]
    tok = _tokens(bad)
    d_slots = [tok[("D", p)] for p in range(3)]
    assert d_slots == [24, 25, 26] and {s // 4 for s in d_slots} == {c_blocks[0]}
    assert tok[("C", 8)] == 0 == NULL_BLOCK_ID * 4
    _said("where_stale.step2", [24, 25, 26])
    # step 2, gather skipped: the input keeps the last step's rows; the slots come from the state rows
    before, bad = v2f.history[k - 1], v2f.history[k]
    assert np.array_equal(bad.device_tables[0], before.device_tables[0])
    a_blocks = v2f.history[0].requests["A"]["blocks"][0]
    assert bad.device_tables[0][2, :3].tolist() == a_blocks == [1, 2, 3]
    assert bad.requests["A"]["state"] == "finished" and bad.scheduled[2].req_id == "D"
    assert bad.device_tables[0][1, :3].tolist() == [6, 7, 0] and bad.scheduled[1].req_id == "C"
    assert bad.inputs[0].block_table[2, 0] == 1 and bad.requests["D"]["blocks"][0] == [8]
    tok = _tokens(bad)
    assert tok == _tokens(v2.history[k]) and [tok[("D", p)] for p in range(3)] == [32, 33, 34]
    assert stale_rows_v2(v2f, k, 0) == ([], [1, 2])
    _said("where_stale.step2", [32, 33, 34])
    # step 3: the faults lasted one step; the V1 cache is corrupt, the V2 cache is not
    for ok, bad in ((v1, v1f), (v2, v2f)):
        for name in ("cpu_tables", "device_tables"):
            assert np.array_equal(getattr(ok.history[3], name)[0], getattr(bad.history[3], name)[0])
    c_first = [_tokens(v1f.history[0])[("C", p)] for p in range(3)]
    assert c_first == [24, 25, 26]                                  # C's positions 0-2 ...
    assert [_tokens(v1f.history[k])[("D", p)] for p in range(3)] == c_first   # ... overwritten by D
    d_written = {s for r in v1f.history for (rid, _), s in _tokens(r).items() if rid == "D"}
    assert not {32, 33, 34} & d_written                             # D's block 8 never got them
    for ok, bad in zip(v2.history, v2f.history):
        assert _tokens(ok) == _tokens(bad)                          # V2: the cache written right


def test_where_stale_figures_mark_what_the_narrative_says():
    """Two bands, two columns each (V1 healthy | fault, V2 healthy | fault), and the red outlines
    on the rows the step-2 narrative names."""
    from kvviz.views.demos import bands, screens_for
    from kvviz.texts.i18n import t

    for lang in LANGS:
        (bt,) = [s for s in screens_for("where_stale", demos.FAULT_STEP, lang) if s.key.startswith("block_table")]
        top, bottom = bands(bt)
        names = [[c[0][0].split(" — ")[0] for c in band] for band in (top, bottom)]
        assert names == [[t("demos", "variant.v1", lang), t("demos", "variant.v1_skip_commit", lang)],
                         [t("demos", "variant.v2", lang), t("demos", "variant.v2_skip_gather", lang)]]

        def red(fig):
            return sorted(int(round(s.y0 + 0.5)) for s in fig.layout.shapes if s.line.color == "crimson")

        assert red(top[1][1][1]) == [0, 2]            # the mirror of the skipped commit: C's and D's rows
        assert red(bottom[1][1][1]) == [1, 2]         # the input of the skipped gather: C and D
        assert red(bottom[0][0][1]) == red(bottom[0][1][1]) == []   # stale tails are not read
