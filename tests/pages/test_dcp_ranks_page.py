""""Run on W ranks" on the DCP demo and the Batch page (AppTest, real gloo ranks on the CPU).

A click starts the ranks in the background; the test reruns the page (what the fragment's timer
does in a browser) until the outcome is shown. Checked on the rendered page: the merged error
against its tolerance, one cache per rank in the figure, and — read back from the figure's cells —
that every position of every request is stored on exactly one rank; a W that does not match the
batch, and a rank killed mid-run, give exactly one st.error and no traceback, no rank left.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import streamlit as st

from page_support import batch_labels, chart_figures, app_test, frames, open_page, plotly_array

RUN_TIMEOUT = 240


def _wait_outcome(at, timeout=RUN_TIMEOUT, seen_pids=None):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if seen_pids is not None:
            seen_pids |= set(_rank_pids())
        if _outcome(at):
            return at
        time.sleep(0.3)
        at.run()
        assert not at.exception, at.exception
    raise AssertionError("no outcome shown within the timeout")


def _outcome(at) -> list:
    """The run's outcome on the page: its verdict (success or error) or its one error line (the
    Batch page has a success of its own, the kernels' check)."""
    return [e for e in [*at.success, *at.error] if "dense attention" in e.value or " ranks" in e.value]


def _rank_pids() -> list[int]:
    import os

    me = os.getpid()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
            cmd = Path(f"/proc/{d}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me and b"spawn_main" in cmd and b"resource_tracker" not in cmd:
            out.append(int(d))
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _caches(at) -> dict:
    """Read the W caches back from the plotly figure: per rank (subplot), the (request, position)
    of every filled cell."""
    figs = chart_figures(at)
    fig = next(f for f in figs if any("rank 0 ·" in (a.get("text") or "") for a in f["layout"].get("annotations", [])))
    titles = [a["text"] for a in fig["layout"]["annotations"] if re.match(r"rank \d+ ·", a.get("text") or "")]
    ranks: dict[int, list[tuple[int, int]]] = {}
    for tr in fig["data"]:
        if tr["type"] != "heatmap" or "text" not in tr or tr.get("text") is None:
            continue
        axis = tr.get("xaxis", "x")
        rank = int(axis[1:] or 1) - 1
        z = tr["z"]
        if isinstance(z, dict):       # plotly's typed 2-D array
            import numpy as np

            rows = np.array(plotly_array(z)).reshape([int(n) for n in str(z["shape"]).split(",")]).tolist()
        else:
            rows = [plotly_array(r) for r in z]
        text = tr["text"]
        cells = ranks.setdefault(rank, [])
        for i, line in enumerate(text):
            for j, pos in enumerate(line):
                if pos != "":
                    cells.append((int(rows[i][j]), int(pos)))
    return {"titles": titles, "ranks": ranks}


def _frame(at, column: str):
    """The (last) table on the page with ``column``: a dataframe, or one of the Batch page's small
    markdown tables (headers mapped back to their keys)."""
    return [f for f in frames(at, batch_labels()) if column in f.columns][-1]


def _merged(at) -> tuple[float, float]:
    line = next(e.value for e in at.success if "dense attention" in e.value)
    m = re.search(r"max error ([0-9.e+-]+) ≤ tolerance ([0-9.e+-]+)", line)
    assert m, line
    return float(m.group(1)), float(m.group(2))


def _check_stored_once(caches: dict, seq_lens: list[int], world: int) -> None:
    assert len(caches["titles"]) == world and sorted(caches["ranks"]) == list(range(world))
    every = [cell for cells in caches["ranks"].values() for cell in cells]
    want = [(r, p) for r, s in enumerate(seq_lens) for p in range(s)]
    assert sorted(every) == sorted(want), "a position is missing, or stored on two ranks"
    for r, cells in caches["ranks"].items():   # the figure's title counts what the cells show
        assert f"rank {r} · {len(cells)} tokens" in caches["titles"]


@pytest.fixture
def demo():
    st.cache_resource.clear()
    # the home page's address holds only its own state (ui/links.py): the demo is chosen in the session
    at = app_test()
    at.session_state["demos_demo"], at.session_state["demos_step"] = "dcp", 1
    return open_page(at, "demos")


def test_the_dcp_demo_runs_on_two_ranks(demo):
    at = demo
    assert "Run on W ranks" in [s.value for s in at.subheader]
    at.button(key="dcp_ranks.demos.run").click().run()
    assert not at.exception, at.exception
    assert at.button(key="dcp_ranks.demos.run").disabled, "the run button must be off while the ranks run"
    _wait_outcome(at)
    assert not at.error, [e.value for e in at.error]
    err, tol = _merged(at)
    assert err <= tol and tol == 2e-3
    # step 1 of the demo: request A decodes position 11, 12 positions in all (prompt 11 + 1)
    _check_stored_once(_caches(at), [12], 2)
    assert list(_frame(at, "tokens held")["tokens held"]) == [6, 6]    # interleave 1 over 2 ranks
    lse = _frame(at, "merged LSE")
    assert abs(lse["weight rank 0"][0] + lse["weight rank 1"][0] - 1) < 1e-4   # the weights sum to 1
    assert any("exactly one rank" in m.value for m in at.markdown)
    assert not at.button(key="dcp_ranks.demos.run").disabled


def test_the_batch_page_runs_its_dcp_preset(at):
    open_page(at, "batch")
    at.selectbox(key="batch.preset").set_value("dcp").run()
    assert not at.exception
    at.button(key="dcp_ranks.batch.run").click().run()
    assert not at.exception, at.exception
    _wait_outcome(at)
    assert not at.error, [e.value for e in at.error]
    err, tol = _merged(at)
    assert err <= tol
    # the preset: rows of 13 (prefill), 10 and 7 positions (decodes), W = 2
    _check_stored_once(_caches(at), [13, 10, 7], 2)
    assert int(_frame(at, "tokens held")["tokens held"].sum()) == 30
    assert len(_frame(at, "merged LSE")) == 3


def test_four_ranks_on_the_batch_page(at):
    """The default batch laid out for W = 4: four caches side by side, every position on one of them."""
    open_page(at, "batch")
    at.selectbox(key="batch.preset").set_value("default").run()
    at.number_input(key="batch.dcp").set_value(4).run()
    assert not at.exception, at.exception
    seq_lens = [int(s) for s in _frame(at, "seq_len")["seq_len"]]      # the page's own requests table
    at.button(key="dcp_ranks.batch.run").click().run()
    _wait_outcome(at)
    assert not at.error, [e.value for e in at.error]
    err, tol = _merged(at)
    assert err <= tol
    _check_stored_once(_caches(at), seq_lens, 4)


def test_a_world_size_that_does_not_match_the_batch_is_one_error(at):
    open_page(at, "batch")
    at.selectbox(key="batch.preset").set_value("dcp").run()
    at.number_input(key="dcp_ranks.batch.w.2").set_value(3).run()
    at.button(key="dcp_ranks.batch.run").click().run()
    assert not at.exception, at.exception
    assert len(at.error) == 1 and "DCP world size of 2" in at.error[0].value, [e.value for e in at.error]
    assert "Traceback" not in at.error[0].value
    assert not [e for e in at.success if "dense attention" in e.value]
    from kvviz.dist import jobs

    assert jobs.active_runs() == 0            # nothing was started


def test_a_killed_rank_is_one_error_and_leaves_no_process(demo, monkeypatch):
    monkeypatch.setenv("KVVIZ_DCP_FAULT", "kill:1:all_gather")
    at = demo
    at.button(key="dcp_ranks.demos.run").click().run()
    seen: set[int] = set(_rank_pids())
    _wait_outcome(at, seen_pids=seen)
    assert len(at.error) == 1, [e.value for e in at.error]
    msg = at.error[0].value
    assert "failed" in msg and "rank 1 was killed by SIGKILL" in msg and "Traceback" not in msg
    assert not at.success
    time.sleep(0.5)
    assert seen and not [p for p in seen if _alive(p)], "a rank outlived the failed run"


def test_another_session_is_not_blocked_and_the_server_bounds_the_runs(demo, monkeypatch):
    """While session A's ranks run, A's run button is off, and session B's page (the Batch page
    with its kernels) runs as usual; a run past the server's bound is one error in B."""
    from kvviz.dist import jobs

    monkeypatch.setattr(jobs, "MAX_ACTIVE", 1)
    a = demo
    a.button(key="dcp_ranks.demos.run").click().run()
    assert jobs.active_runs() == 1 and a.button(key="dcp_ranks.demos.run").disabled
    t0 = time.monotonic()
    b = app_test()
    open_page(b, "batch")
    b.selectbox(key="batch.preset").set_value("dcp").run()
    assert not b.exception and time.monotonic() - t0 < 60
    if jobs.active_runs() == 1:        # A still runs (it usually does): B's run is refused, in one line
        b.button(key="dcp_ranks.batch.run").click().run()
        errors = [e.value for e in b.error]
        assert len(errors) == 1 and "under way" in errors[0], errors
    _wait_outcome(a)
    assert len(_outcome(a)) == 1 and jobs.active_runs() == 0
    assert [e for e in a.success if "dense attention" in e.value]


# --- the page's pieces without a page ------------------------------------------------------------

def test_the_texts_have_every_language():
    from kvviz.texts.i18n import TEXT_MODULES, missing_translations

    assert "dcp_ranks" in TEXT_MODULES and missing_translations(["dcp_ranks"]) == []


@pytest.mark.parametrize("preset", ["default", "decode", "prefix", "kernel", "dcp"])
def test_a_batch_page_step_round_trips_through_the_batch_it_hands_to_the_ranks(preset):
    """What the ranks get (``batch_from_step``) rebuilds the page's own step: the same slots,
    positions, seq_lens and table rows (kernel blocks of 8 under blocks of 16 included)."""
    import numpy as np

    from kvviz.core.step import build_step_from_batch
    from kvviz.views import batch as ex
    from kvviz.views.dcp_ranks import batch_from_step

    step = ex.explore(*ex.preset(preset)).step
    spec = batch_from_step(step)
    again = build_step_from_batch({**spec, "dcp_rank": step.dcp_rank})
    assert np.array_equal(again.slot_mapping, step.slot_mapping)
    assert np.array_equal(again.positions, step.positions)
    assert np.array_equal(again.seq_lens, step.seq_lens)
    n = step.num_reqs
    w = again.block_table.shape[1]
    assert np.array_equal(again.block_table[:n], step.block_table[:n, :w])


def test_the_app_bounds_refuse_before_anything_starts():
    from kvviz.dist import jobs
    from kvviz.errors import BadInput
    from kvviz.views import dcp_ranks as V

    spec = {"block_size": 4, "requests": [{"block_ids": list(range(1, 600)), "seq_len": 2300}]}
    with pytest.raises(BadInput, match="2300 positions"):
        V.prepare(spec, 1, backend="gloo", gpus=0)
    with pytest.raises(BadInput, match="between 1 and 4"):
        V.prepare({"block_size": 4, "requests": [{"block_ids": [1], "seq_len": 2}]}, 5, backend="gloo", gpus=0)
    with pytest.raises(BadInput, match="interleave"):
        V.prepare({"block_size": 4, "cp_kv_cache_interleave_size": 3, "requests": [{"block_ids": [1], "seq_len": 2}]},
                  2, backend="gloo", gpus=0)
    assert V.max_world(0) == 4 and V.max_world(1) == 4 and V.max_world(8) == 8
    assert jobs.active_runs() == 0


def test_the_cache_owners_store_every_position_once():
    """Independently of the figure: with interleave 2 over 3 ranks, position p of a request lives
    on rank (p // 2) % 3."""
    from kvviz.dist import plan
    from kvviz.views import dcp_ranks as V

    norm, _ = plan.dcp_batch({"block_size": 4, "cp_kv_cache_interleave_size": 2,
                              "requests": [{"block_ids": [2, 9], "seq_len": 19, "query_len": 3},
                                           {"block_ids": [4], "seq_len": 5}]}, 3)
    o = V.cache_owners(norm, 3)
    assert V.stored_once(o)
    for r, rk in enumerate(o["ranks"]):
        held = rk["pos"][rk["row"] >= 0]
        assert all((p // 2) % 3 == r for p in held)
    assert sum(rk["tokens_held"] for rk in o["ranks"]) == 24
    assert o["blocks"] == [2, 4, 9]
