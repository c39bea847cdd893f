"""`kvviz bench`: a table on stdout, JSON on request, a progress bar on stderr."""
import json

from kvviz.cli import main


def test_bench_quick_writes_table_json_and_progress(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["bench", "--quick", "--json", str(out)]) == 0
    stdout, stderr = capsys.readouterr()
    d = json.loads(out.read_text())
    assert {"label", "date", "quick", "floors", "rows", "goals", "note"} <= set(d)
    assert d["quick"] is True and d["label"]["mode"] in ("interpreter", "compiled")
    kernels = {(r["kernel"], r["variant"]) for r in d["rows"]}
    assert {("slot_mapping", "per-request"), ("slot_mapping", "flat"), ("slot_mapping", "torch"),
            ("csr", "kernel")} <= kernels
    assert {k for k, _ in kernels} >= {"slot_mapping", "csr", "kv_write", "paged_decode"}
    for r in d["rows"]:
        assert r["us"] > 0 and r["bytes"] > 0, r
    # the table names every kernel; the bar counts up to the total on stderr
    for k in ("slot_mapping", "csr", "kv_write", "paged_decode"):
        assert k in stdout
    total = len(d["rows"])
    assert f"{total}/{total}" in stderr or "/" in stderr


def test_bench_bad_output_path_exits_2(capsys):
    assert main(["bench", "--quick", "--no-progress", "--json", "/nonexistent/dir/out.json"]) == 2
    assert "Traceback" not in capsys.readouterr().err
