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


def _fused_row(variant, shape, us, graph, dev):
    return {"kernel": "fused_step", "variant": variant, "shape": shape, "us": us, "graph_us": graph, "dev_us": dev,
            "dev_x_empty": round(dev / 4.0, 2)}


def test_fused_step_goals_name_the_worst_case():
    rows = [_fused_row("v1 fused", "1x1 G1", 30.0, 1.8, 5.0), _fused_row("v1 separate", "1x1 G1", 40.0, 6.0, 9.0),
            _fused_row("v1 fused", "1x1 G4", 31.0, 2.7, 6.0), _fused_row("v1 separate", "1x1 G4", 50.0, 5.0, 9.0),
            _fused_row("v1 fused", "8x1 G1", 30.0, 2.5, 7.0), _fused_row("v1 separate", "8x1 G1", 40.0, 4.0, 9.0)]
    got = {g["goal"]: g for g in goals.evaluate_goals(rows, {"copy_gbps": 1.0})}
    dev = got["fused step, 1 group: <= 1.5x an empty launch, host hidden, cold L2"]
    assert not dev["met"] and dev["figure"].startswith("1 of 2; worst v1 fused 8x1 G1 7.0 us = 1.75x")
    graph = got["fused step, 1 group: <= 2.0 us per step in a CUDA graph"]
    assert not graph["met"] and "1 of 2" in graph["figure"] and "8x1 G1 2.5 us" in graph["figure"]
    g4 = got["fused step: 4 groups <= 1.3x 1 group, in a CUDA graph"]
    assert not g4["met"] and g4["figure"] == "0 of 1; worst v1 fused 1x1 G4 1.50x"      # 2.7 / 1.8
    sep = got["fused step <= 0.5x the separate launches, in a CUDA graph"]
    assert not sep["met"] and sep["figure"] == "1 of 3; worst v1 fused 8x1 G1 0.62x"     # 2.5 / 4.0


def test_step_timeline_frame_takes_each_timing_against_its_own_floor():
    pytest.importorskip("plotly")          # a view module: the GPU machine has no plotly
    from kvviz.views import fused_timeline as ft

    rows = [_fused_row("v2 fused", "4x1 G2", 30.0, 3.0, 8.0), _fused_row("v2 separate", "4x1 G2", 60.0, 9.0, 16.0),
            _fused_row("v1 fused", "4x1 G2", 1.0, 1.0, 1.0),
            {"kernel": "fused_step", "variant": "v9 odd", "shape": "4x1 G2", "us": 1.0},      # unknown: skipped
            {"kernel": "fused_step", "variant": "v1 fused", "shape": "<b>x</b>", "us": 1.0}]  # not a shape: skipped
    kept = ft.fused_rows({"rows": rows})
    assert len(kept) == 3
    assert ft.choices(kept) == {"shapes": ["4x1"], "groups": [2], "runners": ["v1", "v2"]}
    floors = {"empty_us": 3.0, "empty_graph_us": 0.5, "empty_dev_us": 4.0}
    f = ft.timeline_frame(kept, floors, "4x1", 2, "v2")
    got = {(r.timing, r.what): (r.us, r.x_empty, r.vs_separate) for r in f.itertuples()}
    assert got[("graph_us", "fused")] == (3.0, 6.0, 0.33)
    assert got[("graph_us", "separate")][:2] == (9.0, 18.0)
    assert got[("dev_us", "empty")][:2] == (4.0, 1.0)
    assert len(got) == 9
    fig = ft.timeline_figure(f, lambda k, **kw: f"{k}|{kw.get('n', '')}", runner="v2", groups=2, title="t")
    assert [t.name for t in fig.data] == ["tl_fused|", "tl_separate|3", "tl_empty|"]
    assert ft.separate_launches("v1", 4) == 5
