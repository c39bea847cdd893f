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
    # device-timed (host hidden) columns: figures on a GPU, empty in the interpreter
    from kvviz.gpu.bench.timing import sanitized

    compiled = d["label"]["mode"] == "compiled" and not sanitized()   # the sanitizer leaves them out
    for r in d["rows"]:
        if r["kernel"] == "slot_mapping":
            assert (r["dev_us"] > 0 and r["dev_warm_us"] > 0) if compiled else (
                r["dev_us"] is None and r["dev_warm_us"] is None), r
    assert "dev_us" in stdout and "warm_us" in stdout
    # the table names every kernel; the bar counts up to the total on stderr
    for k in ("slot_mapping", "csr", "kv_write", "paged_decode"):
        assert k in stdout
    import re

    steps = [(int(a), int(b)) for a, b in re.findall(r"\] (\d+)/(\d+) ", stderr)]
    assert steps, stderr
    done, total = steps[-1]
    assert done == total == len(d["rows"]) + 1            # one step per row, plus the floors
    assert [a for a, _ in steps] == sorted(a for a, _ in steps)


def test_bench_bad_output_path_exits_2(capsys):
    assert main(["bench", "--quick", "--no-progress", "--json", "/nonexistent/dir/out.json"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_goals_judge_the_device_timed_figures():
    """The host-hidden figures get their own goal lines, judged on their own floor."""
    from kvviz.gpu.bench.goals import evaluate_goals

    floors = {"empty_us": 4.0, "empty_graph_us": 1.0, "empty_dev_us": 2.0, "empty_dev_warm_us": 1.8,
              "copy_gbps": 4000.0}

    def row(variant, shape, us, dev, warm):
        return {"kernel": "slot_mapping", "variant": variant, "shape": shape, "us": us, "x_empty": us / 4.0,
                "graph_us": None, "graph_x_empty": None, "dev_us": dev, "dev_x_empty": round(dev / 2.0, 2),
                "dev_warm_us": warm, "dev_warm_x_empty": round(warm / 1.8, 2)}

    rows = [row("flat", "1x1", 8.0, 2.8, 2.5), row("flat", "16x8192", 9.0, 3.2, 2.6),
            row("torch", "1x1", 400.0, 300.0, 300.0), row("torch", "16x8192", 400.0, 300.0, 300.0)]
    goals = {g["goal"]: g for g in evaluate_goals(rows, floors)}
    cold = goals["slot mapping (flat) within 1.5x of an empty launch, every shape, device-timed with the host "
                 "hidden (cold L2)"]
    assert cold["met"] is False and "worst 1.6x at 16x8192" in cold["figure"] and "1 of 2 shapes" in cold["figure"]
    warm = [g for k, g in goals.items() if k.startswith("slot mapping (flat)") and "warm L2" in k][0]
    assert warm["met"] is True and "2 of 2 shapes" in warm["figure"]
    event = goals["slot mapping (flat) within 1.5x of an empty launch, every shape"]
    assert event["met"] is False
