"""The kernel lab's speed goals read back from their recorded English into the page's language."""
import re

import pytest

from kvviz.gpu.bench import results
from kvviz.views.bench_goals import GOALS, code, figure_text, goal_rows, goal_text, note_text

RUNS = [results.load_example_run(n) for n in results.example_runs()]
RECORDED = [g for r in RUNS for g in r["goals"]]


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?", text)


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_every_recorded_goal_and_figure_is_translated(lang):
    assert len({g["goal"] for g in RECORDED}) >= 30
    kinds = set()
    for g in RECORDED:
        goal, fig = goal_text(g["goal"], lang), figure_text(g["figure"], lang)
        assert not goal.startswith("`") and not fig.startswith("`"), (g["goal"], g["figure"])
        assert goal != goal_text(g["goal"], "en")
        # every number of the recorded sentence and figure survives the translation
        assert sorted(_numbers(g["goal"])) == sorted(_numbers(goal)), goal
        assert sorted(_numbers(g["figure"])) == sorted(_numbers(fig)), fig
        kinds |= {k for p, k in GOALS if re.fullmatch(p, g["goal"])}
    assert kinds == {k for _, k in GOALS}          # the recorded runs hold every kind of goal


def test_english_reads_as_sentences_and_unknown_text_stays_as_recorded():
    g = "slot mapping (flat) within 1.5x of an empty launch, every shape, in a CUDA graph (device time per launch)"
    assert goal_text(g, "en") == ("slot mapping (flat): within 1.5× an empty launch, every shape, in a CUDA graph "
                                  "(device time per launch)")
    assert goal_text(g, "zh") == "槽位映射（flat）：每种形状都不超过空启动的 1.5 倍，CUDA 图中（每次启动的设备时间）"
    odd = "a goal from *another* kvviz"
    assert goal_text(odd, "zh") == code(odd) == "`a goal from *another* kvviz`"
    assert figure_text("worst 3x at **x**; best 1x", "es") == "`worst 3x at **x**; best 1x`"
    # free text inside a figure goes into a code span
    fig = "3 of 4; worst v1 *b* 1.2x; missed: v1 *b* 1.2"
    assert figure_text(fig, "en") == "3 of 4; worst `v1 *b* 1.2x`; missed: `v1 *b* 1.2`"


def test_a_cpu_run_lists_the_goals_as_not_measured_and_notes_are_translated():
    gpu = RUNS[0]
    cpu = {"label": {"mode": "interpreter"}, "goals": [], "note": "Triton interpreter on the CPU: µs are Python "
           "emulation wall times, not kernel speeds; shapes are scaled down"}
    rows = goal_rows(cpu, "zh", gpu)
    assert len(rows) == len(gpu["goals"]) and {r["status"] for r in rows} == {"not_measured"}
    assert all(r["figure"] == "" for r in rows)
    shown = goal_rows(gpu, "es")
    assert [r["status"] for r in shown] == ["met" if g["met"] else "not_met" for g in gpu["goals"]]
    assert note_text(cpu["note"], "zh") == ("CPU 上的 Triton 解释器：µs 是 Python 模拟的实际耗时，不是内核速度；形状已缩小。", True)
    assert note_text("my own words", "zh") == ("`my own words`", False)
