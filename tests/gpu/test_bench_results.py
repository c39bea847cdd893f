"""Recorded bench results read back: `kvviz bench --json` output is untrusted input to the kernel lab."""
import json

import pytest

from kvviz.gpu.bench import goals, results
from kvviz.cli import main
from kvviz.errors import BadInput


def _good():
    return json.loads((results.EXAMPLE_RUNS_DIR / f"{results.example_runs()[0]}.json").read_text())


def test_recorded_runs_load_and_keep_every_figure():
    raw = _good()
    d = results.load_example_run(results.example_runs()[0])
    assert d["label"]["mode"] == "compiled" and d["label"]["device"] == raw["label"]["device"]
    assert len(d["rows"]) == len(raw["rows"]) and len(d["goals"]) == len(raw["goals"])
    for got, want in zip(d["rows"], raw["rows"]):
        assert {k: v for k, v in got.items() if v is not None} == {k: v for k, v in want.items() if v is not None}
    assert goals.available_timings(d["rows"]) == ["us", "graph_us", "dev_us", "dev_warm_us"]


def test_this_machines_bench_output_loads(tmp_path, capsys):
    out = tmp_path / "b.json"
    assert main(["bench", "--quick", "--no-progress", "--json", str(out)]) == 0
    capsys.readouterr()
    d = results.load_bench_json(out.read_bytes())
    assert d["rows"] and all(r["us"] > 0 for r in d["rows"])
    assert "us" in goals.available_timings(d["rows"])


def test_unknown_keys_are_dropped():
    raw = _good()
    raw["rows"][0]["evil"] = "<script>"
    raw["label"]["extra"] = "x"
    raw["surprise"] = [1, 2]
    d = results.load_bench_json(json.dumps(raw).encode())
    assert "evil" not in d["rows"][0] and "extra" not in d["label"] and "surprise" not in d


def _mutations():
    def rows(f):
        def m(d):
            f(d["rows"][0])
        return m
    return [
        (lambda d: d.pop("rows"), "needs 'label', 'floors' and 'rows'"),
        (lambda d: d.update(rows=[]), "1 to 20000 measurements"),
        (lambda d: d.update(rows=d["rows"] * 300), "1 to 20000 measurements"),
        (lambda d: d.update(floors=[1]), "must be objects"),
        (lambda d: d["floors"].update(empty_us=None), "floors.empty_us"),
        (lambda d: d["floors"].update(copy_gbps="fast"), "floors.copy_gbps must be a finite number"),
        (lambda d: d["label"].update(mode="quantum"), "label.mode"),
        (rows(lambda r: r.update(us=True)), "row 0.us must be a finite number"),
        (rows(lambda r: r.update(us=-1)), "row 0.us must be a finite number"),
        (rows(lambda r: r.update(us=None)), "row 0.us must be a number"),
        (rows(lambda r: r.update(dev_us=float("inf"))), "row 0.dev_us"),
        (rows(lambda r: r.pop("kernel")), "row 0 needs 'kernel'"),
        (rows(lambda r: r.update(shape=["1x1"])), "row 0.shape must be text"),
        (rows(lambda r: r.update(variant="v" * 1000)), "row 0.variant must be text of at most 300"),
        (lambda d: d["goals"][0].update(met="yes"), "goal 0 needs"),
        (lambda d: d.update(goals={"a": 1}), "'goals' must be a list"),
    ]


@pytest.mark.parametrize("mutate,msg", _mutations())
def test_bad_bench_files_are_one_clear_message(mutate, msg):
    raw = _good()
    mutate(raw)
    with pytest.raises(BadInput, match=msg.replace("(", r"\(").replace(".", r"\.")):
        results.load_bench_json(json.dumps(raw).encode(), "b.json")


@pytest.mark.parametrize("raw,msg", [(b"\xff\xfe", "not UTF-8"), (b"{nope", "not valid JSON"),
                                     (b"[" * 100000, "nested too deeply"), (b"[1, 2]", "not a kvviz bench result"),
                                     (b" " * (9 << 20), "at most 8 MiB")])
def test_unreadable_bench_files(raw, msg):
    with pytest.raises(BadInput, match=msg):
        results.load_bench_json(raw, "b.json")


def test_unknown_recorded_run():
    with pytest.raises(BadInput, match="no recorded run"):
        results.load_example_run("../../etc/passwd")


def test_huge_integers_and_lone_surrogates_are_one_message():
    raw = json.dumps(_good()).replace('"us": 5.472', '"us": 1' + "0" * 400, 1).encode()
    with pytest.raises(BadInput, match="too large a number"):
        results.load_bench_json(raw, "b.json")
    raw = json.dumps(_good()).replace('"NVIDIA H200"', '"\\ud800"', 1).encode()
    with pytest.raises(BadInput, match="lone surrogate"):
        results.load_bench_json(raw, "b.json")


def test_plot_guides_pick_the_floor_timed_like_the_column():
    """The kernel lab draws a kernel's x-empty goal over the empty-launch floor timed the same way."""
    floors = {"empty_us": 4.0, "empty_graph_us": 1.0, "empty_dev_us": 2.0, "empty_dev_warm_us": 1.8}
    assert goals.plot_guides("slot_mapping", "us", floors) == (4.0, goals.GOAL_SLOT_X_EMPTY)
    assert goals.plot_guides("csr", "dev_warm_us", floors) == (1.8, goals.GOAL_CSR_X_EMPTY)
    assert goals.plot_guides("kv_write", "graph_us", floors) == (None, None)
