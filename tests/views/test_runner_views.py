"""The view-models of the table pages under both model runners: the version and runner choices, the
scenario overrides, V2's tables (request-state rows, gathered rows, idx_mapping, stale tails), the
batch's V2 tables (shared with `kvviz compute`) and the figures' V2 labels."""
import json

import numpy as np
import pytest

from kvviz.core.runner_v2 import batch_v2_tables
from kvviz.core.versions import RELEASES
from kvviz.errors import BadInput
from kvviz.texts.i18n import missing_translations
from kvviz.views import batch as ex
from kvviz.views import csr as csr_vm
from kvviz.views import figures
from kvviz.views import runners as rv
from kvviz.views import scenarios as stepper


def test_version_and_runner_choices():
    assert rv.VERSION_CHOICES[0] == RELEASES[-1] == "v0.34.0"                # newest first
    assert [v for v in rv.VERSION_CHOICES if v != "main"] == list(reversed(RELEASES))
    assert rv.VERSION_CHOICES.index("main") == rv.VERSION_CHOICES.index("v0.28.0") + 1
    assert rv.runner_choices("v0.11.2") == ("auto", "v1")
    assert rv.runner_choices("v0.12.0") == ("auto", "v1", "v2")
    assert rv.pick_runner("main").runner == "v2" and rv.pick_runner("v0.24.0").runner == "v1"
    assert rv.pick_runner("v0.25.0", "auto").runner == "v2"
    assert rv.pick_runner("v0.12.0", "v2").runner == "v2"
    old = rv.pick_runner("v0.11.0", "v2")
    assert old.runner == "v1" and old.refused and old.override == "v1"
    hybrid = [type("G", (), {"kind": "full"})(), type("G", (), {"kind": "sliding_window"})()]
    forced = rv.pick_runner("main", "v2", groups=hybrid)
    assert forced.runner == "v1" and forced.forced_v1
    assert rv.pick_runner("main", "auto", groups=hybrid).runner == "v1"
    assert rv.pick_runner("main", "v1").override == "v1" and rv.pick_runner("main").override is None


def test_runner_choices_from_v0_29_and_v0_34():
    """config/vllm.py use_v2_model_runner (0.29.0, #53183): every model on V2, so a hybrid model is no
    longer held on V1; v0.34.0 deleted the V1 runner: the selector offers only V2, and a v1 choice
    (e.g. from a link) is refused and runs V2."""
    hybrid = [type("G", (), {"kind": "full"})(), type("G", (), {"kind": "sliding_window"})()]
    assert rv.pick_runner("v0.28.0", "auto", groups=hybrid).runner == "v1"
    assert rv.pick_runner("v0.29.0", "auto", groups=hybrid).runner == "v2"
    assert not rv.pick_runner("v0.29.0", "v2", groups=hybrid).forced_v1
    assert rv.runner_choices("v0.33.0") == ("auto", "v1", "v2")
    assert rv.runner_choices("v0.34.0") == ("auto", "v2")
    gone = rv.pick_runner("v0.34.0", "v1")
    assert gone.runner == "v2" and gone.refused and gone.override == "v2"


def test_scenario_overrides():
    assert stepper.replay(stepper.load("lifecycle"))[0].runner == "v2"          # the default: main -> V2
    assert stepper.replay(stepper.load("lifecycle", runner="v1"))[0].runner == "v1"
    sc = stepper.load("lifecycle", vllm="v0.11.0", runner="auto")
    assert sc.config.vllm == "v0.11.0" and stepper.replay(sc)[0].runner == "v1"
    assert stepper.load("lifecycle", vllm="v0.11.0", runner="v2").config.runner == "v1"   # no V2 there
    own = json.dumps({"config": {"vllm": "v0.19.1", "runner": "v2"},
                      "requests": [{"id": "A", "prompt_len": 5, "max_tokens": 2}]})
    assert stepper.load(own).config.runner == "v2"
    assert stepper.load(own, vllm="main", runner="auto").config.runner is None     # the selectors win
    assert stepper.selectors_for(own, "main", "auto") == ("v0.19.1", "v2")
    assert stepper.selectors_for(json.dumps({"config": {"vllm": "0.25.3"}}), "main", "v1") == ("v0.25.1", "auto")
    assert stepper.selectors_for(json.dumps({"config": {}}), "v0.22.0", "v1") == ("v0.22.0", "v1")
    with pytest.raises(BadInput, match="v0.12.0"):
        stepper.selectors_for(json.dumps({"config": {"vllm": "v0.11.0", "runner": "v2"}}), "main", "auto")
    hybrid = json.dumps({"config": {"groups": [{"kind": "full"}, {"kind": "sliding_window", "sliding_window": 8}]},
                         "requests": [{"id": "A", "prompt_len": 5, "max_tokens": 2}]})
    sc = stepper.load(hybrid, runner="v2")
    assert stepper.is_v1_only(sc) and stepper.replay(sc)[0].runner == "v1"
    with pytest.raises(BadInput):      # a bad version still names itself
        stepper.load(json.dumps({"config": {"vllm": "banana"}}), runner="v2")


def test_v2_tables_of_the_lifecycle_scenario():
    recs = stepper.replay(stepper.load("lifecycle", runner="v2"))
    cols, rows = stepper.shown_columns(recs), stepper.rows_shown(recs)
    r0 = recs[0]
    assert stepper.is_v2(recs) and stepper.is_v2(r0)
    assert r0.idx_mapping == [3, 2]                       # the LIFO free list hands out 3, then 2
    assert stepper.state_row_names(r0) == ["", "", "B", "A"]
    assert stepper.state_rows_window(recs) == (0, 4)
    frame = stepper.idx_mapping_frame(r0)
    assert list(frame.columns) == ["batch position", "state index", "request", "num_blocks"]
    assert frame.values.tolist() == [[0, 3, "A", 2], [1, 2, "B", 3]]
    assert list(stepper.gathered_counts(r0)[:2]) == [2, 3]
    assert stepper.gather_changed_rows(r0, rows, cols) == [0, 1]
    # step 3: C sits at batch row 1 with 2 blocks; the row held B's 3 the step before: a stale tail
    r3 = recs[3]
    assert stepper.stale_tails(r3, rows, cols) == {1: 2}
    assert r3.device_tables[0][1, 2] != 0
    # every gathered row's first num_blocks entries equal its state row's
    for r in recs:
        counts = stepper.gathered_counts(r)
        for b, s in enumerate(r.idx_mapping):
            n = counts[b]
            assert (r.device_tables[0][b, :n] == r.cpu_tables[0][s, :n]).all()
    sched = stepper.scheduled_rows(r0)
    assert sched[0]["batch position"] == 0 and sched[0]["state index"] == 3
    assert "state index" in stepper.requests_frame(r0).columns
    kinds = {e["kind"] for r in recs for e in r.events}
    assert {"add_state", "free_state", "stage_write", "apply_staged_writes", "gather"} <= kinds
    assert not kinds & {"move_row", "commit", "add_row"}


def test_v1_tables_keep_their_shape():
    recs = stepper.replay(stepper.load("lifecycle", runner="v1"))
    assert not stepper.is_v2(recs)
    assert "row" in stepper.requests_frame(recs[0]).columns
    assert set(stepper.scheduled_rows(recs[0])[0]) == {"row", "request", "kind", "tokens", "computed before",
                                                       "seq_len"}


def test_sharing_matrix_is_the_same_sharing_under_both_runners():
    for runner in ("v1", "v2"):
        recs = stepper.replay(stepper.load("prefixes", runner=runner))
        blocks, ref = stepper.sharing_matrix(recs[1], 4)
        assert stepper.shared_blocks(blocks, ref) == [1, 2], runner
        assert blocks.shape[0] == recs[1].num_reqs


@pytest.mark.parametrize("name", ex.PRESETS[:-1])
def test_batch_v2_tables(name):
    eb = ex.explore(*ex.preset(name))
    t = eb.v2
    step = eb.step
    r = step.num_reqs_padded
    assert t["idx_mapping"].tolist() == [r - 1 - i for i in range(step.num_reqs)]
    assert t["state_block_table"].shape == (r, step.block_table.shape[1])
    for i, s in enumerate(t["idx_mapping"]):
        assert (t["state_block_table"][s] == step.block_table[i]).all()
        # MRV2's num_blocks counts the kernel blocks of every manager block the request holds
        # (append_block_ids expands each block id into blocks_per_kv_block entries)
        per_block = step.block_size // step.kernel_block_size
        manager_blocks = -(-int(step.seq_lens[i]) // (step.block_size * step.dcp_world_size))
        assert t["state_num_blocks"][s] == manager_blocks * per_block
    # the same numbers `kvviz compute --runner v2` prints
    raw = batch_v2_tables(step)
    assert raw["idx_mapping"] == t["idx_mapping"].tolist()
    assert raw["state_block_table"] == t["state_block_table"].tolist()
    assert eb.to_json("v2")["step"]["idx_mapping"] == raw["idx_mapping"]
    assert "idx_mapping" not in eb.to_json()["step"]
    holders = eb.state_holders()
    assert [holders[s] for s in t["idx_mapping"]] == list(range(step.num_reqs))
    assert eb.idx_mapping_frame()["state index"].tolist() == t["idx_mapping"].tolist()


def test_compute_keeps_its_v2_tables():
    from kvviz.cli import compute

    assert compute.v2_tables is batch_v2_tables


def test_short_list_and_csr_titles():
    assert ex.short_list([3, 2]) == "[3, 2]"
    assert ex.short_list(range(20), limit=3) == "[0, 1, 2, … (20 in all)]"
    tr = lambda key, **f: key + (str(sorted(f.items())) if f else "")  # noqa: E731
    assert csr_vm.table_title(tr, False, None, 5) == "table"
    assert csr_vm.table_title(tr, True, None, 5) == "table_v2"
    assert csr_vm.table_title(tr, True, (2, 4), 9).startswith("table_window_v2")


def test_block_table_figure_v2_labels_and_stale_tail():
    from kvviz.core.geometry import Geometry

    bt = np.array([[5, 6, 7, 0], [8, 9, 3, 0]], dtype=np.int32)
    fig = figures.block_table_heatmap(bt, num_reqs=2, num_blocks=12, geometry=Geometry(4), counts=[3, 2],
                                      row_title="batch position", row_names=["A", "<a href='x'>B</a>"],
                                      stale_tails={1: 2})
    assert fig.layout.yaxis.title.text == "batch position"
    assert fig.layout.yaxis.ticktext[0] == "0: A" and "<" not in fig.layout.yaxis.ticktext[1]
    tails = [tr for tr in fig.data if tr.type == "scatter"]
    # the cross sits in the cell's top right corner, off the block id written in its centre
    assert len(tails) == 1 and list(tails[0].x) == [2 + 0.3] and list(tails[0].y) == [1 - 0.3]
    assert tails[0].marker.size <= 10
    plain = figures.block_table_heatmap(bt, num_reqs=2, num_blocks=12, geometry=Geometry(4))
    assert len(plain.data) == 1 and plain.layout.yaxis.title.text == "request row"
    share = figures.sharing_figure(np.array([[1, 2]]), np.array([[2, 1]]), ["A"], row_title="x")
    assert share.layout.yaxis.title.text == "x"


def test_no_missing_translations():
    assert missing_translations(["batch", "step_through", "prefixes", "csr", "figures"]) == []
