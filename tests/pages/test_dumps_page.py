"""AppTest of the dumps page: every injected bug, two simulator steps, example dumps, bad pastes
(one clear error, the earlier dump stays), the three languages, downloads."""
import json
from pathlib import Path

import numpy as np
import pytest

from kvviz.views import dumps as view
from kvviz.dumps.faults import BUGS, make_dump
from kvviz.dumps.check import run_checks
from kvviz.texts.i18n import LANGS, missing_translations, t

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def at(at):
    """The shared app fixture, on the dumps page."""
    at.switch_page("pages/dumps.py").run()
    assert not at.exception
    return at


def finding_tables(at, lang: str = "en") -> list:
    """The findings tables shown (A's first), as frames with their headers in ``lang``."""
    return [tb.value for tb in at.table if t("dumps", "col_title", lang) in tb.value.columns]


def findings(at) -> list[list[str]]:
    """The check ids of each findings table shown (A's first)."""
    return [tb[t("dumps", "col_check", "en")].tolist() for tb in finding_tables(at)]


def first_callouts(at) -> list[str]:
    return [e.value for e in at.error if "first wrong row" in e.value or "no row is wrong" in e.value]


def test_texts_complete():
    from kvviz.dumps.check import CHECKS, CONCEPTS
    from kvviz.core.engine import FAULTS
    from kvviz.texts.dumps import STRINGS

    assert missing_translations(["dumps", "app"]) == []
    keys = ([f"check.{c}" for c in CHECKS] + [f"explain.{c}" for c in CHECKS] + [f"concept.{c}" for c in CONCEPTS]
            + [f"concept_text.{c}" for c in CONCEPTS] + [f"bug.{b}" for b in BUGS] + [f"bugdesc.{b}" for b in BUGS]
            + [f"fault.{f}" for f in FAULTS])
    assert [k for k in keys if k not in STRINGS] == []


def test_injected_bug_is_flagged(at):
    at.selectbox(key="dumps.bug").set_value("commit_too_few_rows").run()
    assert not at.exception
    assert at.success[0].value.startswith("Clean")
    assert "first wrong row: 3** (`mirror-stale`)" in at.error[0].value
    assert findings(at) == [["mirror-stale", "slot-mismatch", "csr-indices"]]
    assert len(at.get("download_button")) == 7        # findings JSON + CSV + .npz per dump, the diff


@pytest.mark.parametrize("bug", list(BUGS))
def test_every_bug_names_its_checks(at, bug):
    at.selectbox(key="dumps.bug").set_value(bug).run()
    assert not at.exception
    assert at.success[0].value.startswith("Clean")       # dump A, the clean step
    (checks,) = findings(at)                             # dump B, the same step with the bug
    assert set(BUGS[bug].expected) <= set(checks)
    assert len(first_callouts(at)) == 1
    assert any(e.label.startswith("Concept broken:") for e in at.expander)


def _faulty_step(source, fault):
    """A step whose dump is flagged with the fault and clean without it."""
    _, records = view.sim_run(source, fault)
    for i in range(len(records)):
        if run_checks(view.sim_dump(source, fault, i)) and not run_checks(view.sim_dump(source, None, i)):
            return i
    raise AssertionError("no step shows the fault")


def test_two_simulator_steps(at):
    at.radio(key="dumps.source").set_value("sim").run()
    assert not at.exception
    assert len(at.success) >= 2                           # a healthy run: both steps clean
    src = "file:shared_prefix_fork.json"
    at.selectbox(key="dumps.sim_sc").set_value(src).run()
    at.selectbox(key="dumps.fault").set_value("commit_too_few_rows").run()
    step = _faulty_step(src, "commit_too_few_rows")
    at.number_input(key="dumps.step_a").set_value(step).run()
    at.number_input(key="dumps.step_b").set_value(step).run()
    assert not at.exception
    assert at.success[0].value.startswith("Clean")       # A: the same step without the fault
    assert "mirror-stale" in findings(at)[0]
    assert len(first_callouts(at)) == 1
    assert any(s.value.startswith("The two dumps are equal") for s in at.success) is False
    at.toggle(key="dumps.a_healthy").set_value(False).run()   # both from the faulty run
    assert not at.exception
    assert len(findings(at)) == 2 and findings(at)[0] == findings(at)[1]
    assert any("equal" in s.value for s in at.success)


def test_simulator_group_and_demo(at):
    at.radio(key="dumps.source").set_value("sim").run()
    at.selectbox(key="dumps.sim_sc").set_value("file:hybrid.json").run()
    assert not at.exception
    groups = at.selectbox(key="dumps.group")
    assert groups.options == ["0: full attention", "1: sliding window 8", "2: mamba state"]
    groups.set_value(1).run()
    assert not at.exception
    assert len(at.success) >= 2
    groups.set_value(2).run()                  # a state group: one state block per request, clean
    assert not at.exception
    assert len(at.success) >= 2 and not findings(at)
    demos = [k for k in view.sim_sources() if k.startswith("demo:")]
    assert demos, "the guided demos should be offered as scenarios"
    at.selectbox(key="dumps.sim_sc").set_value(demos[0]).run()
    assert not at.exception


def test_step_is_clamped_when_the_scenario_shrinks(at):
    at.radio(key="dumps.source").set_value("sim").run()
    at.selectbox(key="dumps.sim_sc").set_value("file:preemption.json").run()
    at.number_input(key="dumps.step_b").set_value(15).run()
    at.selectbox(key="dumps.sim_sc").set_value("demo:dcp").run()
    assert not at.exception
    assert at.number_input(key="dumps.step_b").value == len(view.sim_run("demo:dcp")[1]) - 1


def test_example_dumps(at):
    at.radio(key="dumps.source").set_value("examples").run()
    at.selectbox(key="dumps.ex_a").set_value("clean.json").run()
    at.selectbox(key="dumps.ex_b").set_value("commit_too_few_rows.json").run()
    assert not at.exception
    assert "first wrong row: 3" in at.error[0].value
    assert at.success[0].value.startswith("Clean")


def test_bad_paste_shows_error_and_keeps_previous(at):
    at.radio(key="dumps.source").set_value("upload").run()
    assert any("Give one dump" in i.value for i in at.info)
    good = json.dumps(make_dump("pad_swap").to_json())
    at.text_area(key="dumps.paste_a").input(good).run()
    assert any("Only one dump" in i.value for i in at.info)
    assert len(findings(at)) == 1                        # one dump: checked on its own
    at.text_area(key="dumps.paste_b").input(good).run()
    assert not at.exception and not at.error[:0]
    at.text_area(key="dumps.paste_a").input('{"kvviz_dump_version": 1').run()
    assert not at.exception
    errors = [e.value for e in at.error if e.value.startswith("Dump A was not loaded")]
    assert len(errors) == 1 and "not valid JSON" in errors[0]
    assert any("equal" in s.value for s in at.success)     # A is still the earlier dump
    assert len(findings(at)) == 2                          # and is still checked and shown


BAD = {
    "truncated": lambda good: good[: len(good) // 2],
    "object array": lambda good: good.replace('"block_table": [[', '"block_table": [["x", ', 1),
    "float dtype": lambda good: good.replace('"block_table": [[', '"block_table": [[1.5, ', 1),
    "negative dim": lambda good: json.dumps({**json.loads(good), "num_reqs": -3}),
    "huge dim": lambda good: json.dumps({**json.loads(good), "num_blocks": 1 << 40}),
    "wrong shape": lambda good: json.dumps({**json.loads(good), "num_blocks_per_row": [1, 2]}),
    "not an object": lambda good: "[1, 2, 3]",
    "integer past 4300 digits": lambda good: good.replace('"num_blocks": ', '"num_blocks": ' + "9" * 5000
                                                          + ', "x": ', 1),
}


@pytest.mark.parametrize("kind", list(BAD))
def test_bad_input_one_error(at, kind):
    at.radio(key="dumps.source").set_value("upload").run()
    good = json.dumps(make_dump("skip_commit").to_json())
    at.text_area(key="dumps.paste_a").input(good).run()
    at.text_area(key="dumps.paste_a").input(BAD[kind](good)).run()
    assert not at.exception
    errors = [e.value for e in at.error if e.value.startswith("Dump A was not loaded")]
    assert len(errors) == 1, [e.value for e in at.error]
    assert any("The results below are still those of the pasted JSON" in c.value for c in at.caption)
    assert len(findings(at)) == 1                          # the earlier dump is still checked
    at.run()                                               # a plain rerun: the same error, still once
    assert not at.exception
    assert len([e for e in at.error if e.value.startswith("Dump A was not loaded")]) == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_refused_scenario_is_named_and_the_results_say_whose_they_are(at, lang):
    """A scenario pasted as dump A is recognised as one (where to open it, not "lacks required keys");
    the dump loaded before stays, and its results say they are that one's, not the refused input's."""
    at.selectbox(key="lang.widget").set_value(lang).run()
    at.radio(key="dumps.source").set_value("upload").run()
    at.text_area(key="dumps.paste_a").input(json.dumps(make_dump("pad_swap").to_json())).run()
    assert len(finding_tables(at, lang)) == 1 and not at.error[:0]
    scenario = Path(APP).parent / "examples" / "scenarios" / "four_requests.json"
    at.text_area(key="dumps.paste_a").input(scenario.read_text()).run()
    assert not at.exception
    name = t("dumps", "pasted", lang)
    errors = [e.value for e in at.error if e.value.startswith(t("dumps", "is_scenario", lang, side="A", name=name)[:8])]
    assert errors == [view.refusal_text("A", name, "x: this is a kvviz scenario, not a table dump", lang)]
    assert "required key" not in errors[0] and "kvviz run" in errors[0]
    captions = [c.value for c in at.caption]
    assert t("dumps", "kept_previous", lang, name=name) in captions
    assert captions.count(t("dumps", "results_of", lang, name=name, refused=name)) == 2   # findings and table
    assert len(finding_tables(at, lang)) == 1                          # the earlier dump is still checked


@pytest.mark.parametrize("lang", list(LANGS))
def test_languages(at, lang):
    at.selectbox(key="lang.widget").set_value(lang).run()
    assert not at.exception
    assert at.title[0].value == t("dumps", "title", lang)
    for source in ("bug", "sim", "examples", "upload"):
        at.radio(key="dumps.source").set_value(source).run()
        assert not at.exception, (lang, source)
        assert at.title[0].value == t("dumps", "title", lang)
    at.radio(key="dumps.source").set_value("bug").run()
    concept = [e.label for e in at.expander]
    assert concept and all(c.startswith(t("dumps", "concept_label", lang, name="")) for c in concept)


def test_finding_messages_follow_the_language(at):
    import re
    at.selectbox(key="lang.widget").set_value("zh").run()
    at.selectbox(key="dumps.bug").set_value("commit_too_few_rows").run()
    assert not at.exception
    first = view.first_finding(run_checks(make_dump("commit_too_few_rows")))
    (callout,) = [e.value for e in at.error if f"`{first.check}`" in e.value]
    assert first.message not in callout and first.text("zh") in callout
    assert re.search(r"[\u4e00-\u9fff]", first.text("zh"))
    (table,) = finding_tables(at, "zh")
    msgs = table[t("dumps", "col_message", "zh")].tolist()
    assert first.message not in msgs and first.text("zh") in msgs
    # the downloads keep the English messages of `kvviz check`
    assert view.findings_csv_frame([first])["message"][0] == first.message


def _old_profile_dump_json(profile: str, keep_key: bool) -> str:
    """Step 2 of the bugs scenario run under an older profile (a vacated row keeps its blocks)."""
    import copy
    from kvviz.dumps.faults import SCENARIO
    from kvviz.dumps.capture import dump_from_step
    from kvviz.core.engine import Engine
    from kvviz.core.scenario import parse_scenario
    sc = copy.deepcopy(SCENARIO)
    sc["config"]["profile"] = profile
    engine = Engine(parse_scenario(sc))
    j = dump_from_step(engine.run(40)[2], engine.config).to_json()
    if not keep_key:
        j.pop("profile")
        j.pop("vllm")
    return json.dumps(j)


def test_profile_choice(at):
    """Default: each dump's own profile, else current; the choice overrides both."""
    at.radio(key="dumps.source").set_value("upload").run()
    at.text_area(key="dumps.paste_a").input(_old_profile_dump_json("2025-11", keep_key=True)).run()
    at.text_area(key="dumps.paste_b").input(_old_profile_dump_json("2025-11", keep_key=False)).run()
    assert not at.exception
    assert at.selectbox(key="dumps.profile").value == "auto"
    captions = [c.value for c in at.caption]
    assert "Checked under vLLM v0.11.1." in captions and "Checked under vLLM main." in captions
    assert not any("profile" in c or "current" in c for c in captions)   # no profile, no alias on the page
    assert at.success[0].value.startswith("Clean")           # A names its profile: clean
    # B has no key: current rules flag the vacated row and v0.11's last_page_len 1 on the padded row
    assert findings(at) == [["pad-row", "csr-last-page-len"]]
    assert not any(s.value.startswith("The two dumps are equal") for s in at.success)   # a key in A only
    at.selectbox(key="dumps.profile").set_value("v0.11.1").run()
    assert not at.exception
    assert len([s for s in at.success if s.value.startswith("Clean")]) == 2 and findings(at) == []
    at.selectbox(key="dumps.profile").set_value("main").run()
    assert findings(at) == [["pad-row", "csr-last-page-len"], ["pad-row", "csr-last-page-len"]]
    for lang in LANGS:
        assert t("dumps", "profile.auto", lang) and t("dumps", "checked_under", lang, profile="x")


def test_a_table_in_one_dump_only_is_a_difference(at):
    at.radio(key="dumps.source").set_value("upload").run()
    j = make_dump("pad_swap").to_json()
    at.text_area(key="dumps.paste_a").input(json.dumps(j)).run()
    j.pop("block_table_device")
    at.text_area(key="dumps.paste_b").input(json.dumps(j)).run()
    assert not at.exception
    assert not any(s.value.startswith("The two dumps are equal") for s in at.success)
    assert "Only A has: block_table_device." in [c.value for c in at.caption]


# --- the view-model the page lays out (no AppTest: plain functions) ----------------------------------

def test_view_sim_choices():
    assert view.fault_of("none") is None and view.fault_of(None) is None
    assert view.fault_of("skip_commit") == "skip_commit" and view.FAULT_OPTIONS[0] == view.NO_FAULT
    assert [view.clamp_step(s, 5) for s in (-2, 0, 3, 9)] == [0, 0, 3, 4]
    assert view.kept_choice(2, {0: "a", 1: "b"}) == 0 and view.kept_choice(1, {0: "a", 1: "b"}) == 1
    src = "file:shared_prefix_fork.json"
    n = view.sim_step_count(src, "commit_too_few_rows")
    assert n == min(len(view.sim_run(src)[1]), len(view.sim_run(src, "commit_too_few_rows")[1]))
    pair = view.sim_pair(src, "skip_commit", (0, 1), 0, a_healthy=True)
    assert [(side, i, f) for side, i, f, _ in pair] == [("A", 0, None), ("B", 1, "skip_commit")]
    assert pair[1][3].to_json() == view.sim_dump(src, "skip_commit", 1).to_json()
    assert [f for _, _, f, _ in view.sim_pair(src, "skip_commit", (0, 1), 0, a_healthy=False)] == \
        ["skip_commit", "skip_commit"]
    w = view.widget_defaults()
    assert (w["source"], w["bug"], w["fault"], w["table"], w["profile"]) == \
        ("bug", next(iter(BUGS)), "none", "block_table", view.AUTO_PROFILE)
    assert w["ex_a"] in view.example_names() and w["sim_sc"] in view.sim_sources()


def test_view_read_upload():
    good = json.dumps(make_dump("pad_swap").to_json()).encode()
    d, err = view.read_upload(good, "a.json")
    assert err is None and d.to_json() == make_dump("pad_swap").to_json()
    d, err = view.read_upload(b'{"kvviz_dump_version": 1', "a.json")
    assert d is None and "not valid JSON" in err
    assert view.content_digest(good) == view.content_digest(bytes(good)) != view.content_digest(b"x")


def test_view_tables_and_diff():
    a, b = make_dump("skip_commit", buggy=False), make_dump("skip_commit")
    dumps = [("A", "clean", a), ("B", "bug", b)]
    assert view.other_dump(dumps, "A") is b and view.other_dump(dumps[:1], "A") is None
    assert view.table_choice(None) == "block_table" and view.table_choice("block_table_device") == "block_table_device"
    assert view.frame_height(2, 400) == 108 and view.frame_height(100, 400) == 400
    frame = view.table_frame(b, "block_table", None, (2, 3))
    assert view.cut_counts(frame, b, "block_table") == {"r": 2, "rows": b.rows, "c": 3, "w": b.width}
    whole = view.table_frame(b, "block_table", None, (b.rows, b.width))
    assert view.cut_counts(whole, b, "block_table") is None
    assert view.stale_rows_text(a) == "" and view.stale_rows_text(b) == ", ".join(map(str, view.stale_rows(b)))
    assert view.stale_rows(b)
    res = view.diff_pair(dumps)
    assert not res.equal and view.diff_pair(dumps[:1]) is None
    j = b.to_json()
    j.pop("block_table_device")
    from kvviz.dumps.format import dump_from_mapping, load_dump_bytes
    res = view.diff_pair([("A", "", a), ("B", "", dump_from_mapping(j))])
    assert view.only_in(res) == [("A", "block_table_device")]
    assert load_dump_bytes(view.npz_bytes(b)).to_json() == b.to_json()
    md = view.concept_checks_markdown([("pad-row", "Padded row", "Why."), ("pad-slot", "Pad slot", "Because.")])
    assert md == "- `pad-row` **Padded row**: Why.\n- `pad-slot` **Pad slot**: Because."


def _wide_dump(seed: int, rows: int = 64, width: int = 200, wrong_row: int | None = None):
    """A dump of ``rows`` x ``width`` live rows (every block held), row ``wrong_row`` stale at column 30."""
    import numpy as np

    from kvviz.dumps.format import Dump

    bt = np.arange(1, rows * width + 1, dtype=np.int32).reshape(rows, width)
    cnt = np.full(rows, width, dtype=np.int32)
    dev = bt.copy()
    if wrong_row is not None:
        dev[wrong_row, 30] += 1
    bt[seed % rows, width - 1] = 0
    cnt[seed % rows] -= 1
    return Dump(block_size=16, num_blocks=rows * width + 1, num_reqs=rows, block_table=bt, num_blocks_per_row=cnt,
                block_table_device=dev, num_reqs_padded=rows)


def test_table_window_is_around_the_first_wrong_row_and_keeps_its_marks():
    """Issue 11: the styled windows draw WINDOW_ROWS x WINDOW_COLS cells by default, the same cells on
    both sides, from just above the first wrong row and left of its marked cell; the marks inside
    are the ones of the whole table, and the Styler colours only the marked cells."""
    a, b = _wide_dump(0, wrong_row=40), _wide_dump(1)
    dumps = [("A", "a", a), ("B", "b", b)]
    found = {s: view.check_dump(d) for s, _, d in dumps}
    size = view.shown_size([a, b], "block_table")
    assert size == (view.MAX_SHOWN_ROWS, view.MAX_SHOWN_COLS)
    (r0, r1), (c0, c1) = view.focus_window(dumps, found, "block_table", size)
    assert view.first_wrong_row(found["A"]) == 40 and view.first_wrong_row(found["B"]) is None
    assert (r0, r1) == (38, 38 + view.WINDOW_ROWS)            # two rows above the first wrong row
    assert (c0, c1) == (26, 26 + view.WINDOW_COLS)            # four columns left of its stale cell (30)
    frame = view.table_frame(a, "block_table", view.first_wrong_row(found["A"]), size)
    marks = view.cell_marks(a, "block_table", b, size)
    styler = view.window(frame, marks, (r0, r1), (c0, c1))
    shown = styler.data
    assert list(shown.columns) == ["n"] + [str(c) for c in range(c0, c1)]
    assert list(shown.index) == list(frame.index[r0:r1])
    assert (shown.iloc[:, 1:].to_numpy() == a.block_table[r0:r1, c0:c1]).all()
    styler._compute()
    styled_cells = {(r, c) for (r, c), css in styler.ctx.items() if css}
    want = {(r, c + 1) for r, c in zip(*np.nonzero(marks[r0:r1, c0:c1]))}
    assert styled_cells == want and want                 # every marked cell, and only those
    # the whole table on demand: every shown cell
    assert view.window(frame, marks).data.shape == frame.shape


def test_big_paste_is_read_once_and_taken_out_of_the_box(at):
    """Issue 11: a paste of CLEAR_PASTE_BYTES or more is parsed, then the box is emptied (the browser
    no longer re-sends it on each rerun); the dump, its findings and a bad one's error stay."""
    text = json.dumps(_wide_dump(0, rows=64, width=400, wrong_row=3).to_json())
    assert len(text) >= view.CLEAR_PASTE_BYTES
    at.radio(key="dumps.source").set_value("upload").run()
    at.text_area(key="dumps.paste_a").input(text).run()
    assert not at.exception and not at.error[:0]
    assert at.text_area(key="dumps.paste_a").value == ""
    assert at.session_state["dumps.up_dump_a"].num_reqs == 64 and "dumps.pasted_a" not in at.session_state
    assert any("taken out of the box" in c.value for c in at.caption)
    assert len(findings(at)) == 1
    at.selectbox(key="dumps.profile").set_value(at.selectbox(key="dumps.profile").options[-1]).run()
    assert not at.exception and at.session_state["dumps.up_dump_a"].num_reqs == 64   # not re-sent, still there
    # a big broken paste: one error, kept across reruns, and the earlier dump is still the one shown
    at.text_area(key="dumps.paste_a").input(text[:-10]).run()            # still big, cut short
    errors = lambda: [e.value for e in at.error if e.value.startswith("Dump A was not loaded")]  # noqa: E731
    assert len(errors()) == 1 and at.text_area(key="dumps.paste_a").value == ""
    at.run()
    assert len(errors()) == 1 and at.session_state["dumps.up_dump_a"].num_reqs == 64
    # a small paste stays in its box, to be edited
    small = json.dumps(make_dump("pad_swap").to_json())
    at.text_area(key="dumps.paste_b").input(small).run()
    assert at.text_area(key="dumps.paste_b").value == small and len(findings(at)) == 2


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_the_commonest_refusals_read_in_the_page_language(at, lang):
    """A paste that is not JSON, or JSON without a dump's keys: the reason in the page's language
    (the English reader's sentence read back), the pasted name and the parser's words kept as text."""
    from kvviz.views.dumps_refusal import reason_text

    at.selectbox(key="lang.widget").set_value(lang).run()
    at.radio(key="dumps.source").set_value("upload").run()
    name = t("dumps", "pasted", lang)
    for text, english in (('{"kvviz_dump_version": 1', f"{name} is not valid JSON"),
                          ('{"kvviz_dump_version": 1}', f"{name}: the dump lacks the required keys")):
        at.text_area(key="dumps.paste_a").input(text).run()
        assert not at.exception
        (err,) = [e.value for e in at.error if e.value.startswith(t("dumps", "bad_input", lang, side="A", msg="")[:6])]
        assert english not in err and name in err
    assert reason_text("big.npz is 65.4 MiB; the limit is 64 MiB", "zh") == "big.npz 大小为 65.4 MiB，上限是 64 MiB"
    assert reason_text("x is **odd**", "es") == "x is \\*\\*odd\\*\\*"              # unknown: as written, as text
