"""Strict input: scenario files (`kvviz run`) and batch files (`kvviz compute`) refuse what they
would otherwise misread — unknown keys (with the closest known key suggested), values of the wrong
JSON type, requests without a prompt, actions on requests that never exist, and files of the
wrong kind — with one sentence (BadInput in the core, exit 2 in the CLI)."""
import copy
import json
from pathlib import Path

import numpy as np
import pytest

from kvviz.cli import main
from kvviz.core.engine import Engine
import kvviz.core.scenario as scenario_module
from kvviz.errors import BadInput
from kvviz.core.scenario import parse_scenario
from kvviz.core.step import build_step_from_batch

ROOT = Path(__file__).resolve().parents[2]
BASE = {"name": "base", "config": {"num_blocks": 16, "block_size": 4, "max_model_len": 64},
        "requests": [{"id": "A", "arrival": 0, "prompt_len": 6, "max_tokens": 4},
                     {"id": "B", "arrival": 1, "prompt": [5, 6, 7], "max_tokens": 2}],
        "actions": [{"step": 2, "kind": "fork", "req": "A", "n": 1}]}


def scenario(**edits):
    """BASE with dotted-path edits: scenario(**{"requests.0.promt": [1]}); a value of DELETE removes."""
    d = copy.deepcopy(BASE)
    for path, value in edits.items():
        *head, last = path.split(".")
        node = d
        for k in head:
            node = node[int(k)] if isinstance(node, list) else node[k]
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
    return d


DELETE = object()


def run_cli(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def refused(capsys, cmd, path, match):
    rc, out, err = run_cli(capsys, cmd, str(path))
    assert rc == 2 and out == "", (rc, out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert match in err, err
    return err


# --- scenarios: unknown keys -----------------------------------------------------------------

@pytest.mark.parametrize("edits, msg", [
    ({"reqests": []}, r"scenario: unknown key 'reqests'; did you mean 'requests'\?"),
    ({"action": []}, r"scenario: unknown key 'action'; did you mean 'actions'\?"),
    ({"num_blocks": 8}, r"scenario: unknown key 'num_blocks' \('num_blocks' belongs inside 'config'\)"),
    ({"zzz": 1}, r"scenario: unknown key 'zzz'; known keys: actions, config, description, name, requests"),
    ({"config.enable_prefix_cache": False}, r"config: unknown key 'enable_prefix_cache'; did you mean "
                                            r"'enable_prefix_caching'\?"),
    ({"requests.0.promt": [1]}, r"request 0 \(A\): unknown key 'promt'; did you mean 'prompt'\?"),
    ({"requests.1.max_token": 3}, r"request 1 \(B\): unknown key 'max_token'; did you mean 'max_tokens'\?"),
    ({"requests.0.arival": 2}, r"request 0 \(A\): unknown key 'arival'; did you mean 'arrival'\?"),
    ({"actions.0.request": "A"}, r"action 0: unknown key 'request'"),
    ({"actions.0.steps": 3}, r"action 0: unknown key 'steps'; did you mean 'step'\?"),
    ({"config.groups": [{"kind": "sliding_window", "window": 4}]},
     r"config group 0: unknown key 'window'; did you mean 'sliding_window'\?"),
])
def test_scenario_unknown_keys_are_refused_with_a_suggestion(edits, msg):
    with pytest.raises(BadInput, match=msg):
        parse_scenario(scenario(**edits))


# --- scenarios: strict types -----------------------------------------------------------------

@pytest.mark.parametrize("edits, msg", [
    # "no" used to be read with bool() and turned caching ON
    ({"config.enable_prefix_caching": "no"}, "'enable_prefix_caching' must be true or false, got a string"),
    ({"config.enable_prefix_caching": 0}, "'enable_prefix_caching' must be true or false, got an integer"),
    ({"config.enable_prefix_caching": None}, "'enable_prefix_caching' must be true or false, got null"),
    ({"config.num_blocks": 16.0}, "'num_blocks' must be an integer"),
    ({"config.num_blocks": True}, "'num_blocks' must be an integer, got true"),
    ({"config.block_size": "4"}, "'block_size' must be an integer, got a string"),
    ({"config.kernel_block_size": 2.0}, "'kernel_block_size' must be an integer"),
    ({"config.profile": ["current"]}, "'profile' must be a version like \"v0.25.1\", got a list"),
    ({"config.profile": 1}, "'profile' must be a version like \"v0.25.1\", got an integer"),
    ({"config.vllm": 0.25}, "'vllm' must be a version like \"v0.25.1\", got a number"),
    ({"config.vllm": "v0.10.2"}, "v0.11.0"),
    ({"config.groups": [{"kind": "full", "name": 7}]}, "'name' must be a string"),
    ({"config.groups": [{"kind": "full", "sliding_window": 4}]}, "'sliding_window' only applies"),
    ({"requests.0.arrival": 1.5}, "'arrival' must be an integer"),
    ({"requests.0.max_tokens": True}, "'max_tokens' must be an integer"),
    ({"requests.0.prompt_len": "6"}, "'prompt_len' must be an integer"),
    ({"requests.0.prefix_group": "sys", "requests.0.prefix_len": 2.0}, "'prefix_len' must be an integer"),
    ({"requests.0.prefix_group": 3}, "'prefix_group' must be a non-empty string"),
    ({"requests.0.extra_keys": [{"lora": 1}]}, "'extra_keys' must be a list"),
    ({"requests.0.extra_keys": "lora"}, "'extra_keys' must be a list"),
    ({"requests.1.prompt": [5, True]}, "'prompt' must be a non-empty list of token ids"),
    ({"requests.1.prompt": [5.0]}, "'prompt' must be a non-empty list of token ids"),
    ({"actions.0.step": "2"}, "'step' must be an integer"),
    ({"actions.0.n": 1.0}, "'n' must be an integer"),
    ({"name": 5}, "'name' must be a string"),
    ({"description": ["x"]}, "'description' must be a string"),
    ({"config": []}, "'config' must be an object"),
])
def test_scenario_values_must_have_their_documented_type(edits, msg):
    with pytest.raises(BadInput, match=msg):
        parse_scenario(scenario(**edits))


def test_enable_prefix_caching_false_is_read_as_false():
    assert parse_scenario(scenario(**{"config.enable_prefix_caching": False})).config.enable_prefix_caching is False
    assert parse_scenario(scenario()).config.enable_prefix_caching is True


# --- scenarios: prompts ----------------------------------------------------------------------

@pytest.mark.parametrize("edits, msg", [
    # used to get a silent 1-token prompt
    ({"requests.0.prompt_len": DELETE}, r"request 0 \(A\): needs 'prompt' \(token ids\) or 'prompt_len'"),
    ({"requests.1.prompt_len": 3}, "'prompt_len' cannot be combined with 'prompt'"),
    ({"requests.1.prefix_group": "sys"}, "'prefix_group' cannot be combined with 'prompt'"),
    ({"requests.1.prefix_len": 2}, "'prefix_len' cannot be combined with 'prompt'"),
    ({"requests.0.prefix_len": 4}, "'prefix_len' needs a 'prefix_group'"),
])
def test_every_request_has_exactly_one_prompt(edits, msg):
    with pytest.raises(BadInput, match=msg):
        parse_scenario(scenario(**edits))


def test_duplicate_ids_are_found_before_a_later_request_is_read():
    with pytest.raises(BadInput, match="duplicate id 'A'"):
        parse_scenario({"requests": [{"id": "A"}, {"id": "A"}]})


# --- scenarios: actions name real requests ---------------------------------------------------

@pytest.mark.parametrize("actions, msg", [
    ([{"step": 1, "kind": "finish", "req": "Z"}],
     r"action 0: request 'Z' is neither a request of the scenario nor a fork child made by an earlier "
     r"action; the requests are 'A', 'B'"),
    ([{"step": 1, "kind": "preempt", "req": "a"}], r"did you mean 'A'\?"),
    # the child of a fork exists only after the fork
    ([{"step": 1, "kind": "finish", "req": "A.1"}, {"step": 2, "kind": "fork", "req": "A"}], "'A.1' is neither"),
    ([{"step": 2, "kind": "finish", "req": "A.1"}, {"step": 2, "kind": "fork", "req": "A"}], "'A.1' is neither"),
    ([{"step": 2, "kind": "fork", "req": "A", "n": 2}, {"step": 3, "kind": "finish", "req": "A.3"}],
     "'A.3' is neither"),
])
def test_actions_on_requests_that_never_exist_are_refused(actions, msg):
    with pytest.raises(BadInput, match=msg):
        parse_scenario(scenario(actions=actions))


def test_actions_on_fork_children_are_accepted_and_run():
    sc = scenario(**{"requests.0.max_tokens": 20},
                  actions=[{"step": 4, "kind": "finish", "req": "A.2"},        # listed first, runs later
                           {"step": 2, "kind": "fork", "req": "A", "n": 2},
                           {"step": 3, "kind": "fork", "req": "A.1"},           # a grandchild: A.1.1
                           {"step": 4, "kind": "preempt", "req": "A.1.1"}])
    events = [e for r in Engine(parse_scenario(sc)).run(40) for e in r.events]
    assert {e["child"] for e in events if e["kind"] == "fork"} == {"A.1", "A.2", "A.1.1"}
    assert any(e["kind"] == "finish" and e["req"] == "A.2" and e["why"] == "scenario" for e in events)
    assert any(e["kind"] == "preempt" and e["req"] == "A.1.1" for e in events)


def test_fork_child_ids_follow_the_engine_when_a_request_already_has_the_name():
    # a request called "A.1" has arrived: the engine names A's child "A.1'"
    sc = scenario(requests=[dict(BASE["requests"][0], max_tokens=20), BASE["requests"][1],
                            {"id": "A.1", "arrival": 0, "prompt_len": 3, "max_tokens": 6}],
                  actions=[{"step": 2, "kind": "fork", "req": "A"},
                           {"step": 3, "kind": "finish", "req": "A.1'"}])
    events = [e for r in Engine(parse_scenario(sc)).run(40) for e in r.events]
    assert [e["child"] for e in events if e["kind"] == "fork"] == ["A.1'"]
    assert any(e["kind"] == "finish" and e["req"] == "A.1'" and e["why"] == "scenario" for e in events)


# --- scenarios: files of another kind --------------------------------------------------------

def test_a_compute_batch_or_a_dump_is_not_a_scenario():
    batch = json.loads((ROOT / "examples" / "batches" / "two_requests_padded.json").read_text())
    with pytest.raises(BadInput, match=r"expected a scenario .*, but this is a `compute` batch"):
        parse_scenario(batch)
    dump = json.loads((ROOT / "examples" / "dumps" / "clean.json").read_text())
    with pytest.raises(BadInput, match=r"expected a scenario .*, but this is a table dump"):
        parse_scenario(dump)
    with pytest.raises(BadInput, match="expected a scenario"):
        parse_scenario([1, 2])


def test_cli_run_refuses_a_batch_and_dumps(tmp_path, capsys):
    refused(capsys, "run", ROOT / "examples" / "batches" / "two_requests_padded.json",
            "expected a scenario (an object with 'config', 'requests' and 'actions'), but this is a "
            "`compute` batch")
    for p in sorted((ROOT / "examples" / "dumps").glob("*.json")):
        refused(capsys, "run", p, "but this is a table dump")
    npz = tmp_path / "d.npz"
    np.savez(npz, block_table=np.zeros((2, 2), np.int32))
    refused(capsys, "run", npz, "but this is a .npz table dump")


def test_cli_run_refuses_typos_and_mistyped_values(tmp_path, capsys):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(scenario(**{"requests.1.promt": [1]})))
    refused(capsys, "run", p, "request 1 (B): unknown key 'promt'; did you mean 'prompt'?")
    p.write_text(json.dumps(scenario(**{"config.enable_prefix_caching": "no"})))
    refused(capsys, "run", p, "'enable_prefix_caching' must be true or false")
    p.write_text(json.dumps(scenario(actions=[{"step": 1, "kind": "finish", "req": "Q"}])))
    refused(capsys, "run", p, "'Q' is neither a request of the scenario")


# --- every shipped scenario still loads ------------------------------------------------------

def shipped_scenarios():
    from kvviz.dumps import faults as bugs
    from kvviz.views import demo_catalogue as demos
    from kvviz.notations import models as notations
    from kvviz.views import scenarios as stepper

    out = {f"examples/{p.name}": json.loads(p.read_text())
           for p in sorted((ROOT / "examples" / "scenarios").glob("*.json"))}
    out.update({f"stepper:{k}": v for k, v in stepper.SCENARIOS.items()})
    for key, demo in demos.DEMOS.items():
        for i, v in enumerate(demo.variants):
            out[f"demo:{key}:{i}"] = demos.scenario_dict(demo, v)
    out["bugs"] = bugs.SCENARIO
    out["notations"] = notations.EXAMPLE_SCENARIO
    doc = scenario_module.__doc__
    out["the kvviz/scenario.py docstring"] = json.loads(doc[doc.index("{"): doc.rindex("}") + 1])
    return out


def test_every_shipped_scenario_loads():
    shipped = shipped_scenarios()
    assert len(shipped) >= 10
    for name, d in shipped.items():
        try:
            parse_scenario(d)
        except BadInput as e:
            pytest.fail(f"{name}: {e}")


def test_the_documented_scenario_loads():
    text = (ROOT / "docs" / "cli.md").read_text()
    block = text.split("### `run` and the scenario format", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    sc = parse_scenario(json.loads(block))
    assert [a.req for a in sc.actions] == ["A", "A", "B"]


# --- compute batches -------------------------------------------------------------------------

GOOD_BATCH = {"block_size": 16, "requests": [{"block_ids": [3, 7], "seq_len": 20, "query_len": 5}]}


@pytest.mark.parametrize("bad, msg", [
    ({**GOOD_BATCH, "bogus": 2}, r"batch: unknown key 'bogus'; known keys: block_size, "),
    ({**GOOD_BATCH, "num_req_padded": 4}, r"batch: unknown key 'num_req_padded'; did you mean 'num_reqs_padded'\?"),
    ({**GOOD_BATCH, "blocksize": 16}, r"did you mean 'block_size'\?"),
    ({**GOOD_BATCH, "profile": "2025-11"}, r"unknown key 'profile' \(the profile is chosen with `kvviz compute "
                                           r"--profile P`\)"),
    ({"block_size": 16, "requests": [{"block_ids": [3], "seq_len": 5, "bogus": 1}]},
     r"request 0: unknown key 'bogus'"),
    # used to fall back to query_len 1 silently
    ({"block_size": 16, "requests": [{"block_ids": [3], "seq_len": 5, "query_length": 5}]},
     r"request 0: unknown key 'query_length'; did you mean 'query_len'\?"),
    ({"block_size": 16, "requests": [{"block_ids": [3], "seq_length": 5}]},
     r"request 0: unknown key 'seq_length'; did you mean 'seq_len'\?"),
    ({"block_size": 16, "requests": [{"block_id": [3], "seq_len": 5}]}, r"did you mean 'block_ids'\?"),
    (BASE, r"expected a `compute` batch .*, but this is a scenario; replay it with `kvviz run`"),
    ({"requests": [{"id": "A", "prompt_len": 4}]}, r"but this is a scenario"),
    ({"kvviz_dump_version": 1, "block_size": 4}, r"but this is a table dump"),
])
def test_compute_batch_unknown_keys_are_refused(bad, msg):
    with pytest.raises(BadInput, match=msg):
        build_step_from_batch(bad)


def test_compute_accepts_every_documented_key():
    s = build_step_from_batch({"block_size": 8, "kernel_block_size": 4, "dcp_world_size": 2, "dcp_rank": 1,
                               "cp_kv_cache_interleave_size": 2, "num_reqs_padded": 3, "num_tokens_padded": 8,
                               "requests": [{"block_ids": [3, 5], "seq_len": 20, "query_len": 4},
                                            {"block_ids": [7], "seq_len": 3}]})
    assert s.num_reqs == 2 and s.num_tokens_padded == 8


def test_cli_compute_refuses_the_audit_example(tmp_path, capsys):
    p = tmp_path / "b.json"
    p.write_text('{"requests":[{"block_ids":[3],"seq_len":5,"bogus":1}],"bogus":2}')
    refused(capsys, "compute", p, "batch: unknown key 'bogus'")
    p.write_text('{"block_size":4,"requests":[{"block_ids":[3],"seq_len":5,"bogus":1}]}')
    refused(capsys, "compute", p, "request 0: unknown key 'bogus'")
    refused(capsys, "compute", ROOT / "examples" / "scenarios" / "hybrid.json", "but this is a scenario")
    refused(capsys, "compute", ROOT / "examples" / "dumps" / "clean.json", "but this is a table dump")


def test_a_scenario_asking_for_billions_of_tokens_is_refused_before_building_them():
    import time

    from kvviz.errors import BadInput
    from kvviz.core.scenario import parse_scenario

    sc = {"config": {"max_model_len": 1 << 21, "num_blocks": 1 << 20, "block_size": 16},
          "requests": [{"id": f"R{i}", "prompt_len": 1 << 20, "max_tokens": 1} for i in range(4096)]}
    t0 = time.perf_counter()
    with pytest.raises(BadInput, match="ask for 4294971392 tokens in all"):
        parse_scenario(sc)
    assert time.perf_counter() - t0 < 2      # refused before 4 G token ids were generated
