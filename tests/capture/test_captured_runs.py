"""Captured runs without vLLM: the knobs, the writer's ring, check and diff of run directories and zips."""
import json
import os
import subprocess
import sys

import pytest

from kvviz.capture.config import CaptureConfig
from kvviz.capture.report import check_run, diff_runs, external_id
from kvviz.capture.run import load_run, load_run_bytes
from kvviz.errors import BadInput
from run_fixtures import ROOT, write_run, zip_dir


def kvviz(*args):
    return subprocess.run([sys.executable, "-m", "kvviz", *args], capture_output=True, text=True, cwd=ROOT)


def test_knobs_from_the_environment():
    assert CaptureConfig.from_env({}) is None
    c = CaptureConfig.from_env({"KVVIZ_CAPTURE_DIR": "/x", "KVVIZ_CAPTURE_STEPS": "5", "KVVIZ_CAPTURE_MB": "2",
                                "KVVIZ_CAPTURE_RANGE": "10:20", "KVVIZ_CAPTURE_EVERY": "3", "KVVIZ_CAPTURE_POOL": "0"})
    assert (c.max_steps, c.max_bytes, c.first, c.last, c.every, c.pool) == (5, 2 << 20, 10, 20, 3, False)
    assert [s for s in range(30) if c.wants(s)] == [10, 13, 16, 19]
    assert [s for s in range(5) if CaptureConfig.from_env({"KVVIZ_CAPTURE_DIR": "/x", "KVVIZ_CAPTURE_RANGE": "3:"}).wants(s)] == [3, 4]
    for bad in ({"KVVIZ_CAPTURE_STEPS": "many"}, {"KVVIZ_CAPTURE_RANGE": "9:3"}, {"KVVIZ_CAPTURE_EVERY": "0"}):
        with pytest.raises(BadInput):
            CaptureConfig.from_env({"KVVIZ_CAPTURE_DIR": "/x", **bad})


def test_a_clean_run_checks_clean_and_equals_itself(tmp_path):
    a = write_run(tmp_path / "a")
    run = load_run(a)
    assert run.steps == list(range(8)) and run.vllm == "v0.32.0" and run.runner == "v1"
    assert check_run(run).bad == []
    r = kvviz("check", a)
    assert r.returncode == 0 and "8 captured step(s)" in r.stdout and ": clean" in r.stdout
    d = kvviz("diff", a, write_run(tmp_path / "b"))
    assert d.returncode == 0 and d.stdout.startswith("equal: 8 step(s)")


def test_a_fault_names_its_first_step_row_and_request(tmp_path):
    bad = write_run(tmp_path / "bad", faults=["commit_too_few_rows"])
    r = kvviz("check", bad, "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["vllm"] == "v0.32.0" and out["runner"] == "v1"
    first = out["first"]
    assert (first["step"], first["group"], first["row"], first["check"]) == (0, 0, 3, "mirror-stale")
    assert first["req_id"] == "D-0123abcd"
    assert out["steps_with_findings"][0] == 0 and all(f["step"] in out["steps_with_findings"] for f in out["findings"])
    human = kvviz("check", bad)
    assert human.returncode == 1 and "first wrong: step 0 group 0 row 3 (request D-0123abcd)" in human.stdout
    d = kvviz("diff", write_run(tmp_path / "good"), bad, "--json")
    res = json.loads(d.stdout)
    assert d.returncode == 1 and res["first"]["step"] == 0 and res["first"]["table"] == "block_table_device"
    assert res["first"]["row"] == 3 and (res["first"]["a"], res["first"]["b"]) == (7, 0)


def test_the_ring_keeps_the_newest_steps(tmp_path):
    run = load_run(write_run(tmp_path / "r", env={"KVVIZ_CAPTURE_STEPS": "3"}))
    assert run.steps == [5, 6, 7]
    assert sorted(os.listdir(tmp_path / "r" / "steps")) == [f"0000000{s}.{x}" for s in (5, 6, 7) for x in ("g0.npz", "json")]
    stride = load_run(write_run(tmp_path / "s", env={"KVVIZ_CAPTURE_RANGE": "1:6", "KVVIZ_CAPTURE_EVERY": "2"}))
    assert stride.steps == [1, 3, 5]
    small = load_run(write_run(tmp_path / "m", env={"KVVIZ_CAPTURE_MB": "0"}))
    assert small.steps == list(range(8))


def test_a_zip_of_a_run_reads_like_the_directory(tmp_path):
    d = write_run(tmp_path / "a")
    for prefix in ("", "myrun/"):
        run = load_run_bytes(zip_dir(d, prefix), "up.zip")
        assert run.steps == list(range(8)) and check_run(run).bad == []
    path = tmp_path / "run.zip"
    path.write_bytes(zip_dir(d))
    assert kvviz("check", str(path)).returncode == 0


def _zip(members: dict, *, symlink: str | None = None) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (0o120777 << 16)
            zf.writestr(info, "/etc/passwd")
    return buf.getvalue()


def _bomb() -> bytes:
    """A zip whose central directory declares a 1 TB manifest (never read)."""
    data = bytearray(_zip({"manifest.json": "{}"}))
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24: cd + 28] = (1 << 40 & 0xFFFFFFFF or 0xFFFFFFF0).to_bytes(4, "little")
    return bytes(data)


@pytest.mark.parametrize("data,match", [
    (b"not a zip at all", "not a readable zip"),
    (_zip({"x/manifest.json": "{}", "y/manifest.json": "{}"}), "no manifest.json"),
    (_zip({"manifest.json": json.dumps({"kvviz_run_version": 9, "runner": "v1"})}), "kvviz_run_version"),
    (_zip({"manifest.json": json.dumps({"kvviz_run_version": 1, "runner": "v3"})}), "runner"),
    (_zip({"manifest.json": "[1, 2"}), "manifest.json"),
    (_bomb(), "declares"),
])
def test_hostile_zips_are_one_sentence(data, match):
    with pytest.raises(BadInput, match=match):
        load_run_bytes(data, "up.zip")


def test_names_outside_the_format_are_never_read(tmp_path):
    d = write_run(tmp_path / "a")
    manifest = (tmp_path / "a" / "manifest.json").read_bytes()
    run = load_run_bytes(_zip({"manifest.json": manifest, "notes.txt": "x", "steps/sub/00000001.json": "{}",
                               "steps/00000002.json.bak": "{}"}), "up.zip")
    assert run.steps == [] and set(run.source.members) == {"manifest.json"}


def test_a_symlinked_step_member_is_refused(tmp_path):
    manifest = (write_run(tmp_path / "a") and (tmp_path / "a" / "manifest.json").read_bytes())
    with pytest.raises(BadInput, match="not a regular file"):
        load_run_bytes(_zip({"manifest.json": manifest}, symlink="steps/00000003.json"), "up.zip")


def test_a_step_naming_a_dump_of_another_step_is_refused(tmp_path):
    d = write_run(tmp_path / "a")
    p = tmp_path / "a" / "steps" / "00000002.json"
    meta = json.loads(p.read_text())
    meta["groups"] = ["00000001.g0.npz"]
    p.write_text(json.dumps(meta))
    r = kvviz("check", d)
    assert r.returncode == 2 and "outside the format" in r.stderr and "Traceback" not in r.stderr


def test_external_ids_drop_vllms_suffix():
    assert external_id("req-7-9648ef26") == "req-7" and external_id("plain") == "plain" and external_id(None) is None


def test_diff_names_a_row_holding_another_request(tmp_path):
    a, b = write_run(tmp_path / "a"), write_run(tmp_path / "b")
    p = tmp_path / "b" / "steps" / "00000004.json"
    meta = json.loads(p.read_text())
    meta["req_ids"][1] = "Z-99999999"
    p.write_text(json.dumps(meta))
    res = diff_runs(load_run(a), load_run(b))
    assert res["first"] == {"step": 4, "group": None, "table": "req_ids", "row": 1,
                            "a": external_id(json.loads((tmp_path / "a" / "steps" / "00000004.json").read_text())["req_ids"][1]),
                            "b": "Z"}


@pytest.mark.parametrize("name", ["../manifest.json", "/manifest.json", "run/../../x.json", "C:/manifest.json"])
def test_a_member_name_that_leaves_the_folder_is_refused(name):
    with pytest.raises(BadInput, match="leaves the run's folder"):
        load_run_bytes(_zip({name: "{}"}), "up.zip")
