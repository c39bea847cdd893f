"""Untrusted input files are read only when regular (no device, FIFO or directory is opened for a
read that could block or never end), and every file kvviz writes replaces the old one atomically."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kvviz.cli import main
from kvviz.dumps.format import load_dump, save_dump
from kvviz.errors import BadInput
from kvviz.files import read_bounded

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "scenarios" / "preemption.json")
DUMP = str(ROOT / "examples" / "dumps" / "clean.json")


def _cli(*argv, timeout=60):
    """The CLI in a child process, so a read that blocked would fail the test instead of hanging it."""
    return subprocess.run([sys.executable, "-m", "kvviz", *argv], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


@pytest.mark.parametrize("command", [["compute"], ["run"], ["check"], ["diff", DUMP]])
def test_a_fifo_is_refused_without_blocking(tmp_path, command):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    r = _cli(*command, str(fifo), timeout=30)
    assert r.returncode == 2, r.stderr
    assert "is a FIFO, not a regular file" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("path,what", [("/dev/zero", "a character device"), ("/dev/urandom", "a character device"),
                                       ("examples", "a directory")])
@pytest.mark.parametrize("command", ["compute", "check", "run"])
def test_special_files_are_one_sentence(capsys, path, what, command):
    assert main([command, path]) == 2
    err = capsys.readouterr().err
    assert f"is {what}, not a regular file" in err and len(err.strip().splitlines()) == 1


def test_the_byte_bound_is_counted_not_taken_from_the_size(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 101)
    with pytest.raises(BadInput, match="101 bytes; the limit is 100"):
        read_bounded(str(big), 100)
    assert read_bounded(str(big), 101) == b" " * 101


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_an_interrupted_save_keeps_the_old_dump(tmp_path, monkeypatch, suffix):
    dump = load_dump(DUMP)
    path = tmp_path / f"d{suffix}"
    save_dump(dump, str(path))
    before = path.read_bytes()

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr("kvviz.dumps.format.json.dump" if suffix == ".json" else "kvviz.dumps.format.np.savez", boom)
    with pytest.raises(KeyboardInterrupt):
        save_dump(dump, str(path))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]   # no temporary file left
    monkeypatch.undo()
    save_dump(dump, str(path))
    assert load_dump(str(path)).to_json() == dump.to_json()


def test_an_interrupted_bench_keeps_the_old_json(tmp_path, monkeypatch):
    out = tmp_path / "bench.json"
    out.write_text('{"old": true}')

    def interrupted(**kw):
        raise KeyboardInterrupt

    monkeypatch.setattr("kvviz.gpu.bench.run.run_bench", interrupted)
    assert main(["bench", "--quick", "--no-progress", "--json", str(out)]) == 130
    assert json.loads(out.read_text()) == {"old": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.json"]


def test_run_says_when_max_steps_cut_it_short(capsys):
    assert main(["run", SCENARIO, "--max-steps", "2"]) == 3
    captured = capsys.readouterr()
    assert "stopped at --max-steps 2 with" in captured.err and "not finished" in captured.err
    assert captured.out.startswith("# ")          # the partial replay is still printed
    assert main(["run", SCENARIO]) == 0
    assert "stopped at" not in capsys.readouterr().err


def test_compute_output_is_bounded_before_it_is_built(tmp_path, capsys):
    """A few bytes of batch cannot buy gigabytes: a 65536-token block split into 1-token kernel blocks
    makes 65536 columns a row; 1000 padded rows would print 65 M numbers."""
    batch = tmp_path / "b.json"
    batch.write_text(json.dumps({"block_size": 65536, "kernel_block_size": 1, "num_reqs_padded": 1000,
                                 "requests": [{"block_ids": [1], "seq_len": 1}]}))
    assert main(["compute", str(batch)]) == 2
    assert "1000 x 65536 entries; the limit is 4194304 entries" in capsys.readouterr().err
    batch.write_text(json.dumps({"block_size": 16, "num_tokens_padded": 1 << 22,
                                 "requests": [{"block_ids": [1], "seq_len": 1}]}))
    assert main(["compute", str(batch)]) == 2     # 4 M padded tokens, each a position and a slot
    assert "the output would hold" in capsys.readouterr().err
