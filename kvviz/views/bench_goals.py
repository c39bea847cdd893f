"""The kernel lab's speed goals in the page's language (no streamlit here).

A bench file records each goal as an English sentence (``kvviz.gpu.bench.goals``: a handful of
templates) and the figures that decide it. ``goal_text`` / ``figure_text`` read the template's
numbers and names back and write them in ``lang`` (``kvviz/texts/kernel_lab.py``, keys ``g.*`` and
``f.*``); a sentence no template matches (a file from another kvviz) is shown as recorded, as a
code span. Parts of a figure that are free text (a shape list, a variant name) go into code spans
too: they come from a file and are never read as markdown.
"""
from __future__ import annotations

import re

from kvviz.texts.i18n import DEFAULT_LANG, LANGS, t

NUM = r"[\d.]+"
NAME = r"[\w.-]+"
# (pattern, text key): the goal sentences evaluate_goals writes; "how" is one of HOW's endings
GOALS = (
    (rf"slot mapping \((?P<d>{NAME})\) within (?P<x>{NUM})x of an empty launch, every shape(?P<how>.*)", "g.slot_x"),
    (rf"slot mapping \((?P<d>{NAME})\) >= (?P<x>{NUM})x faster than torch indexing", "g.slot_torch"),
    (rf"slot mapping, fastest design per shape, within (?P<x>{NUM})x of an empty launch, every shape(?P<how>.*)",
     "g.slot_best"),
    (rf"CSR repack within (?P<x>{NUM})x of an empty launch \((?P<r>\d+) x (?P<p>\d+) pages\)(?P<how>.*)", "g.csr"),
    (rf"KV write >= (?P<p>\d+)% of device copy bandwidth at >= (?P<k>\d+)K tokens", "g.kv"),
    (rf"fused step, 1 group: <= (?P<x>{NUM})x an empty launch, host hidden, cold L2", "g.fused_dev"),
    (rf"fused step, 1 group: <= (?P<x>{NUM}) us per step in a CUDA graph", "g.fused_graph"),
    (rf"fused step: 4 groups <= (?P<x>{NUM})x 1 group, in a CUDA graph", "g.fused_g4"),
    (rf"fused step <= (?P<x>{NUM})x the separate launches, in a CUDA graph", "g.fused_sep"),
    (rf"fused step <= (?P<x>{NUM})x vLLM's own step kernels, every shape, both runners, in a CUDA graph",
     "g.fused_vllm"),
)
HOW = {"": None, ", in a CUDA graph (device time per launch)": "g.how_graph", ", in a CUDA graph": "g.how_graph",
       ", device-timed with the host hidden (cold L2)": "g.how_cold",
       ", device-timed with the host hidden (warm L2: inputs where the last call left them)": "g.how_warm"}
FIGURES = (
    (rf"worst (?P<x>{NUM})x at (?P<s>{NAME}) \((?P<us>{NUM}) us vs (?P<f>{NUM}) us\)"
     rf"(?:; (?P<n>\d+) of (?P<m>\d+) shapes within)?", "f.worst_vs"),
    (rf"worst (?P<x>{NUM})x at (?P<s>{NAME}); best (?P<b>{NUM})x", "f.worst_best"),
    (rf"worst (?P<x>{NUM})x at (?P<s>{NAME}) \((?P<v>{NAME}), (?P<us>{NUM}) us\); (?P<picks>.+)", "f.worst_pick"),
    (rf"(?P<us>{NUM}) us = (?P<x>{NUM})x", "f.us_x"),
    (rf"worst (?P<p>\d+)% \((?P<gb>{NUM}) GB/s, (?P<what>[^)]+)\) of (?P<c>{NUM}) GB/s", "f.kv"),
    (rf"(?P<n>\d+) of (?P<m>\d+); worst (?P<w>.+?)(?:; missed: (?P<miss>.+))?", "f.n_worst"),
)
FREE = ("picks", "what", "w", "miss")     # figure parts that are free text from the file


def _lang(lang):
    return lang if lang in LANGS else DEFAULT_LANG


def code(text) -> str:
    """Text from a file as a code span (shown as it is, never markdown)."""
    s = " ".join(str(text).split()).replace("`", "'")
    return f"`{s}`" if s else ""


def goal_text(goal: str, lang: str | None = None) -> str:
    """A recorded goal sentence in ``lang`` (markdown), or the sentence as recorded (a code span)."""
    lang = _lang(lang)
    for pattern, key in GOALS:
        m = re.fullmatch(pattern, str(goal))
        if m is None:
            continue
        f = m.groupdict()
        how = f.pop("how", "") or ""
        if how not in HOW:
            break
        text = t("kernel_lab", key, lang, **f)
        return text + (t("kernel_lab", HOW[how], lang) if HOW[how] else "")
    return code(goal)


def figure_text(figure: str, lang: str | None = None) -> str:
    """A recorded goal's figure in ``lang`` (markdown), or as recorded (a code span)."""
    lang = _lang(lang)
    for pattern, key in FIGURES:
        m = re.fullmatch(pattern, str(figure))
        if m is None:
            continue
        f = {k: (code(v) if k in FREE and v is not None else v) for k, v in m.groupdict().items()}
        if key == "f.worst_vs":
            n, total = f.pop("n"), f.pop("m")
            text = t("kernel_lab", key, lang, **f)
            return text + (t("kernel_lab", "f.within", lang, n=n, m=total) if n is not None else "")
        if key == "f.n_worst":
            miss = f.pop("miss")
            text = t("kernel_lab", key, lang, **f)
            return text + (t("kernel_lab", "f.missed", lang, miss=miss) if miss else "")
        return t("kernel_lab", key, lang, **f)
    return code(figure)


# the notes kvviz.gpu.bench.run writes (a longer note, e.g. a recorded run's own words, stays as recorded)
NOTES = {"compiled on the GPU; µs are medians of CUDA-event-timed calls with a cold L2": "note.gpu",
         "Triton interpreter on the CPU: µs are Python emulation wall times, not kernel speeds; "
         "shapes are scaled down": "note.cpu"}


def note_text(note: str, lang: str | None = None) -> tuple[str, bool]:
    """(a bench file's note in ``lang``, True) when it is one of the notes kvviz writes, else (the
    note as recorded, a code span, False)."""
    key = NOTES.get(" ".join(str(note).split()))
    return (t("kernel_lab", key, _lang(lang)), True) if key else (code(note), False)


def on_gpu(result: dict) -> bool:
    """Whether a bench result was timed by compiled kernels on a GPU (its goals mean something)."""
    return (result.get("label") or {}).get("mode") != "interpreter"


def goal_rows(result: dict, lang: str | None = None, reference: dict | None = None) -> list[dict]:
    """One row a goal: {"status": "met" | "not_met" | "not_measured", "goal", "figure"} (markdown,
    in ``lang``). A result with no goals (the CPU interpreter's: its µs are Python emulation) lists
    the goals of ``reference`` (a GPU run) as not measured here, without their figures."""
    if result.get("goals"):
        return [{"status": "met" if g.get("met") else "not_met", "goal": goal_text(g.get("goal", ""), lang),
                 "figure": figure_text(g.get("figure", ""), lang)} for g in result["goals"]]
    if reference and reference.get("goals"):
        return [{"status": "not_measured", "goal": goal_text(g.get("goal", ""), lang), "figure": ""}
                for g in reference["goals"]]
    return []
