"""Step through's figures are built once for every session (issue 11): a class on one scenario pays
each step once (``ui.step_figures``, a cross-session cache), and the cache is bounded."""
import json
import threading

import pytest
import streamlit as st

import ui
from kvviz.views import scenarios as stepper
from kvviz.views.live_chart import chart_payload
from page_support import chart_specs, app_test, open_page


@pytest.fixture
def builds(monkeypatch):
    """Count the figure builds (the real builders still run); ``built_by`` lists (part, step, thread
    name) of each."""
    n = {"tables": 0, "pool": 0}
    built_by.clear()
    real_tables, real_pool = stepper.step_table_figures, stepper.step_pool_figures

    def tables(*a, **k):
        n["tables"] += 1
        built_by.append(("tables", a[2], threading.current_thread().name))
        return real_tables(*a, **k)

    def pool(*a, **k):
        n["pool"] += 1
        built_by.append(("pool", a[1], threading.current_thread().name))
        return real_pool(*a, **k)

    monkeypatch.setattr(stepper, "step_table_figures", tables)
    monkeypatch.setattr(stepper, "step_pool_figures", pool)
    st.cache_resource.clear()
    return n


built_by: list = []


def _plotly_specs(at):
    return chart_specs(at)


def test_two_sessions_on_one_scenario_build_each_step_once(builds):
    a, b = open_page(app_test(), "step_through"), open_page(app_test(), "step_through")
    ui.prefetched()
    # step 0: built by a, shared with b; step 1 built ahead once (the next Next finds it)
    assert builds == {"tables": 2, "pool": 2}
    assert _plotly_specs(a) == _plotly_specs(b) and len(_plotly_specs(a)) == 4
    for at in (a, b):                                     # both students press Next twice
        for _ in range(2):
            at.button(key="step.next").click().run()
            assert not at.exception, at.exception
            ui.prefetched()
    assert a.session_state["step.idx"] == b.session_state["step.idx"] == 2
    assert builds == {"tables": 4, "pool": 4}            # steps 1, 2 and 3 built once, for both
    assert _plotly_specs(a) == _plotly_specs(b)
    b.toggle(key="step.after_v2").set_value(False).run()  # another view of the same step: its own entry
    ui.prefetched()
    assert builds["tables"] == 6 and not b.exception      # step 2 and, ahead, step 3 in that view
    assert _plotly_specs(a) != _plotly_specs(b)


def test_next_finds_the_step_built_ahead(builds):
    """Showing step i builds step i + 1's figures in the background (both parts, the options on
    screen): the Next press that shows it builds nothing on the script thread."""
    at = open_page(app_test(), "step_through")
    ui.prefetched()
    assert [(p, i) for p, i, th in built_by if th.startswith("kvviz-ahead")] == [("tables", 1), ("pool", 1)]
    built_by.clear()
    at.button(key="step.next").click().run()
    assert not at.exception and at.session_state["step.idx"] == 1
    ui.prefetched()
    assert [(p, i) for p, i, _ in built_by] == [("tables", 2), ("pool", 2)]   # step 1 was there already
    assert all(th.startswith("kvviz-ahead") for _, _, th in built_by)


def test_the_shared_figures_match_a_fresh_build_and_are_one_object():
    st.cache_resource.clear()
    src, idx = stepper.NAMES[0], 3
    scenario, records = ui.replay(src, None, None)
    one = ui.step_figures("tables", src, None, None, idx, "en", True, scenario, records)
    again = ui.step_figures("tables", src, None, None, idx, "en", True, *ui.replay(src, None, None))
    assert again is one                                                  # shared, not copied
    fresh = stepper.step_table_figures(scenario, records, idx, "en", after=True)
    assert one["cpu"] == chart_payload(fresh["cpu"]) and one["dev"] == chart_payload(fresh["dev"])
    zh = ui.step_figures("tables", src, None, None, idx, "zh", True, scenario, records)
    assert zh["cpu"] != one["cpu"]


def test_a_pasted_scenario_s_figures_are_not_kept():
    """Figures grow with the scenario: a pasted one's are built for the caller, never cached."""
    st.cache_resource.clear()
    text = json.dumps({"config": {"num_blocks": 8, "block_size": 4},
                       "requests": [{"id": "A", "prompt_len": 6, "max_tokens": 3}]})
    scenario, records = ui.replay(text, None, None)
    one = ui.step_figures("pool", text, None, None, 1, "en", "after", scenario, records)
    two = ui.step_figures("pool", text, None, None, 1, "en", "after", scenario, records)
    assert one is not two and one["refs"] == two["refs"]


def test_the_cache_is_bounded(monkeypatch):
    st.cache_resource.clear()
    monkeypatch.setattr(stepper, "step_pool_figures", lambda records, idx, lang, when: {"when": when})
    src = stepper.NAMES[0]
    scenario, records = ui.replay(src, None, None)

    def get(i):
        return ui.step_figures("pool", src, None, None, 0, "en", str(i), scenario, records)

    first = get(0)
    kept = [get(i) for i in range(1, ui.STEP_FIGURES_MAX + 1)]
    # the newest STEP_FIGURES_MAX entries are the cached objects; the oldest one was dropped
    assert all(get(i) is kept[i - 1] for i in range(ui.STEP_FIGURES_MAX, 1, -1))
    again = get(0)
    assert again == first and again is not first
