"""Shared prefixes page (issue 25): events in cause order: a fork is listed before the block
allocation, copy-on-write and sharing it causes for its child."""
import pytest

from page_support import open_page
from kvviz.views import scenarios as stepper
from kvviz.views.safe_text import plain


def _fork_steps():
    out = []
    for name in stepper.NAMES:
        for rec in stepper.replay(stepper.load(name)):
            if any(e["kind"] == "fork" for e in rec.events):
                out.append((name, rec.index, rec.events))
    return out


def test_every_built_in_fork_comes_before_what_it_causes():
    steps = _fork_steps()
    assert steps, "a built-in scenario forks"
    for name, idx, events in steps:
        for i, e in enumerate(events):
            if e["kind"] != "fork":
                continue
            caused = [j for j, x in enumerate(events) if x.get("req") == e["child"]
                      and x["kind"] in ("alloc", "cow", "share")]
            assert caused, (name, idx)
            assert i < min(caused), (name, idx, [x["kind"] for x in events])


@pytest.mark.parametrize("lang", ["en", "es"])
def test_prefixes_page_lists_the_fork_first(at, lang):
    name, idx, events = [s for s in _fork_steps() if s[0] == "prefixes"][0]
    at.session_state["lang"] = lang
    open_page(at, "prefixes")
    at.selectbox(key="pre.sc").set_value(name).run()
    at.select_slider(key="pre.idx").set_value(idx).run()
    assert not at.exception
    fork = next(e for e in events if e["kind"] == "fork")
    child = fork["child"]
    texts = {k: stepper.describe_event(e, lang) for k, e in (("fork", fork),) + tuple(
        (e["kind"], e) for e in events if e.get("req") == child and e["kind"] in ("cow", "alloc"))}
    lines = [m.value for m in at.markdown]

    def where(text):
        return next(i for i, v in enumerate(lines) if plain(text) in v)
    assert where(texts["fork"]) < where(texts["cow"]) and where(texts["fork"]) < where(texts["alloc"])
    # the scenario's whole log, in the same order
    log = [d.value for d in at.dataframe if "what happened" in d.value.columns][0]
    at_step = list(log[log["step"] == idx + 1]["what happened"])     # shown counted from 1
    assert at_step.index(texts["fork"]) < at_step.index(texts["cow"])
