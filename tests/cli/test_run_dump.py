"""`kvviz run SCENARIO --dump STEP --out FILE [--fault F] [--group G]`: the dump of one step, written
atomically; the example dumps are what it writes."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvviz.dumps.check import run_checks
from kvviz.dumps.faults import SCENARIO
from kvviz.dumps.format import load_dump

ROOT = Path(__file__).resolve().parents[2]
FOUR = "examples/scenarios/four_requests.json"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "kvviz", *args], cwd=ROOT, capture_output=True, text=True)


def test_the_scenario_file_is_the_bug_catalogue_scenario():
    d = json.loads((ROOT / FOUR).read_text())
    d.pop("description")
    assert d == SCENARIO


@pytest.mark.parametrize("name,fault", [("clean", None), ("commit_too_few_rows", "commit_too_few_rows")])
def test_example_dumps_are_what_run_dump_writes(tmp_path, name, fault):
    out = tmp_path / f"{name}.json"
    r = cli("run", FOUR, "--dump", "0", "--out", str(out), *(["--fault", fault] if fault else []))
    assert r.returncode == 0 and r.stdout == "" and "wrote" in r.stderr
    assert out.read_bytes() == (ROOT / "examples" / "dumps" / f"{name}.json").read_bytes()


def test_npz_dump_of_a_v2_step_and_a_group(tmp_path):
    out = tmp_path / "s3.npz"
    r = cli("run", FOUR, "--dump", "3", "--out", str(out), "--runner", "v2")
    assert r.returncode == 0, r.stderr
    d = load_dump(str(out))
    assert d.runner == "v2" and d.idx_mapping is not None and run_checks(d) == []
    hy = tmp_path / "hy.json"
    assert cli("run", "examples/scenarios/hybrid.json", "--dump", "2", "--out", str(hy), "--group", "1").returncode == 0
    assert load_dump(str(hy)).sliding_window is not None or load_dump(str(hy)).group_kind is not None


@pytest.mark.parametrize("args,msg", [
    (["--dump", "99", "--out", "x.json"], "the replay has steps 0 .. 7"),
    (["--dump", "1"], "--dump STEP and --out FILE go together"),
    (["--out", "x.json"], "--dump STEP and --out FILE go together"),
    (["--dump", "1", "--out", "x.txt"], "must end in .npz or .json"),
    (["--dump", "1", "--out", "x.json", "--group", "3"], "groups 0 .. 0"),
    (["--dump", "1", "--out", "/nonexistent-dir/x.json"], "cannot write /nonexistent-dir/x.json"),
])
def test_bad_dump_arguments_exit_2_with_one_line(tmp_path, args, msg):
    args = [str(tmp_path / a) if a in ("x.json", "x.txt") else a for a in args]
    r = cli("run", FOUR, *args)
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1
    assert msg in r.stderr
