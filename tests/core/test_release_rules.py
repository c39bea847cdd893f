"""Every rule in kvviz.core.versions.RULES (the README's table by release) is checked against what
the simulator *does*: each field has a probe that runs kvviz and reads the behaviour back as the
rule's value. For every rule, the release just before its first release behaves the old way and
the first release the new way, so a wrong PR boundary or a rule the engine ignores fails here."""
from __future__ import annotations

import numpy as np
import pytest

from kvviz.core.engine import Engine
from kvviz.core.scenario import parse_scenario
from kvviz.core.step import build_step_from_batch
from kvviz.core.versions import RELEASES, RULES, VERSIONS, resolve_runner, resolve_version, rules_for, version_key


def _engine(version: str, config: dict, requests: list, actions=(), faults=None) -> Engine:
    cfg = {"vllm": version, "runner": "v1", **config}
    return Engine(parse_scenario({"config": cfg, "requests": requests, "actions": list(actions)}), faults=faults)


def _events(engine: Engine, steps: int) -> list[dict]:
    out = []
    for _ in range(steps):
        if engine.done():
            break
        out += engine.step().events
    return out


def probe_prepend_unhashed_on_free(v):
    """A finished request's partial (hash-less) block: reused first or last?"""
    e = _engine(v, {"num_blocks": 8, "block_size": 4}, [{"id": "A", "prompt_len": 6, "max_tokens": 1}])
    frees = [x for x in _events(e, 3) if x["kind"] == "free"]
    return bool(frees[0]["to_front"])


def probe_prepend_when_caching_off(v):
    e = _engine(v, {"num_blocks": 8, "block_size": 4, "enable_prefix_caching": False},
                [{"id": "A", "prompt_len": 6, "max_tokens": 1}])
    frees = [x for x in _events(e, 3) if x["kind"] == "free"]
    return bool(frees[0]["to_front"])


def probe_reserve_full_prompt(v):
    """B's first 4-token chunk fits in the one free block, its 12-token prompt does not."""
    e = _engine(v, {"num_blocks": 5, "block_size": 4, "max_num_batched_tokens": 5},
                [{"id": "A", "prompt_len": 8, "max_tokens": 20}, {"id": "B", "arrival": 1, "prompt_len": 12,
                                                                   "max_tokens": 1}])
    e.step()
    rec = e.step()
    return rec.requests["B"]["state"] != "running"


def probe_remove_clears_row(v):
    e = _engine(v, {"num_blocks": 16, "block_size": 4},
                [{"id": "A", "prompt_len": 5, "max_tokens": 1}, {"id": "B", "prompt_len": 5, "max_tokens": 4}])
    return any(x["kind"] == "clear_row" for x in _events(e, 4))


def probe_move_row_clears_source(v):
    """A leaves row 0; condense moves C from row 2 to row 0: is row 2 zeroed?"""
    e = _engine(v, {"num_blocks": 32, "block_size": 4},
                [{"id": r, "prompt_len": 5, "max_tokens": 6} for r in "ABC"], [{"step": 2, "kind": "finish", "req": "A"}])
    for _ in range(3):
        rec = e.step()
    assert any(x["kind"] == "move_row" and x["src"] == 2 for x in rec.events)
    return not rec.cpu_tables[0][2].any()


def probe_reorder(v):
    """Rows [1-token chunk with context, extend, prefill, decode] after the reorder: the pairwise
    swap moves only the decode forward, three regions count the chunk as a decode, four put it
    after the decodes (short_extend)."""
    e = _engine(v, {"num_blocks": 64, "block_size": 4, "reorder_decodes_first": True},
                [{"id": r, "prompt_len": 12, "max_tokens": 4} for r in "SEPD"])
    lens = {"S": (4, 1), "E": (4, 3), "P": (0, 3), "D": (12, 1)}   # computed before, scheduled
    for r, (done, _) in lens.items():
        e.requests[r] = type("Req", (), {"prompt": [0] * 12})()
        e.batch.add_request(r, [[1]], done)
    e._reorder({r: n for r, (_, n) in lens.items()})
    order = "".join(e.batch.req_ids[:4])
    return {"SDPE": "pairs", "SDEP": "regions3", "DSEP": "regions4"}[order]


def probe_width_alignment(v):
    """Block size 48, three blocks a request: no alignment 3, the power-of-two rule 4, lcm 8."""
    e = _engine(v, {"num_blocks": 16, "block_size": 48, "max_model_len": 144}, [])
    return {3: "none", 4: "pow2", 8: "lcm"}[e.batch.tables[0].width]


def probe_slot_mapping_from_device_table(v):
    """With the commit skipped, do the slots follow the (stale) device mirror?"""
    e = _engine(v, {"num_blocks": 16, "block_size": 4}, [{"id": "A", "prompt_len": 5, "max_tokens": 2}],
                faults={"skip_commit"})
    rec = e.step()
    return bool((rec.inputs[0].slot_mapping[:5] < 4).all())


def _padded_step(v):
    """Three decodes padded to four rows; row 3 last held D's blocks (D finished earlier)."""
    e = _engine(v, {"num_blocks": 32, "block_size": 4, "max_num_reqs": 4, "cudagraph_capture_sizes": [1, 2, 4, 8]},
                [{"id": r, "prompt_len": 4, "max_tokens": 6} for r in "ABCD"], [{"step": 1, "kind": "finish", "req": "D"}])
    for _ in range(3):
        rec = e.step()
    assert rec.num_reqs == 3 and rec.num_reqs_padded == 4
    return rec


def probe_padded_row_fill(v):
    row = _padded_step(v).inputs[0].block_table[3]
    return -1 if (row == -1).all() else 0 if (row == 0).all() else None


def probe_padded_last_page_len_one(v):
    return int(_padded_step(v).inputs[0].paged_kv_last_page_len[3]) == 1


def probe_empty_last_page_len_is_zero(v):
    rules = rules_for(v)
    step = build_step_from_batch({"block_size": 4, "requests": [{"block_ids": [1], "seq_len": 3, "query_len": 1},
                                                                {"block_ids": [], "seq_len": 0, "query_len": 0}]},
                                 empty_last_page_len_is_zero=rules.empty_last_page_len_is_zero)
    return int(step.paged_kv_last_page_len[1]) == 0


def probe_has_runner_v2(v):
    try:
        return resolve_runner(rules_for(v), "v2") == "v2"
    except ValueError:
        return False


def probe_default_runner(v):
    return rules_for(v).runner_for()


def probe_cache_layout_era(v):
    from kvviz.core.layout import cache_layout_for
    fam = cache_layout_for(v, "flash_attn")
    return {"flash_attn": "kv_first", "flashinfer": "blocks_first", "flashinfer_packed": "packed"}.get(fam, fam)


def probe_mamba_align_mode(v):
    """The checker accepts a state row that declares Mamba's align mode (null blocks before the last
    state block) only where that mode exists."""
    import numpy as np
    from kvviz.dumps.check import run_checks
    from kvviz.dumps.format import dump_from_mapping
    bt = np.zeros((2, 4), np.int32)
    bt[0, :3] = [0, 0, 7]
    d = dump_from_mapping({"kvviz_dump_version": 1, "block_size": 4, "num_blocks": 16, "num_reqs": 1,
                           "block_table": bt, "num_blocks_per_row": np.array([3, 0], np.int32),
                           "seq_lens": np.array([10], np.int32), "group_kind": "state",
                           "mamba_cache_mode": "align", "vllm": v})
    return run_checks(d) == []


def _compute(v, batch: dict) -> dict:
    """`kvviz compute` on ``batch`` under vLLM ``v`` (V1 runner), its JSON read back."""
    import contextlib
    import io
    import json
    import tempfile

    from kvviz.cli import main

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(batch, f)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["compute", f.name, "--vllm", v, "--runner", "v2" if v == "v0.34.0" else "v1"]) == 0
    return json.loads(out.getvalue())


def probe_kernel_block_table_per_group(v):
    """16-token manager blocks, 8-token kernel blocks, one padded row: does `compute` give the
    manager ids as block_table and a kernel_block_table whose padded row reads 0, 1, 0, 1 ...?"""
    d = _compute(v, {"block_size": 16, "kernel_block_size": 8, "num_reqs_padded": 2,
                     "requests": [{"block_ids": [3], "seq_len": 5, "query_len": 5}]})
    return (d["block_table"][0][0] == 3 and "kernel_block_table" in d
            and d["kernel_block_table"][1][:4] == [0, 1, 0, 1])


def probe_csr_dcp_local_lengths(v):
    """DCP 2, rank 0, one 9-token decode: 5 tokens are local, so 2 pages of 4 (global: 3)."""
    d = _compute(v, {"block_size": 4, "dcp_world_size": 2, "dcp_rank": 0,
                     "requests": [{"block_ids": [1, 2], "seq_len": 9, "query_len": 1}]})
    return d["paged_kv_indptr"] == [0, 2] and d["paged_kv_last_page_len"] == [1]


PROBES = {name[len("probe_"):]: f for name, f in globals().items() if name.startswith("probe_")}


def _before(release: str) -> str:
    known = [v for v in VERSIONS if version_key(v) < version_key(release)]
    return known[-1]


def test_every_rule_has_a_probe():
    assert {r.field for r in RULES} <= set(PROBES)


@pytest.mark.parametrize("rule", RULES, ids=[f"{r.field}@{r.first_release}#{r.pr}" for r in RULES])
def test_rule_starts_at_its_first_release(rule):
    probe = PROBES[rule.field]
    assert probe(rule.first_release) == rule.value
    old = probe(_before(rule.first_release))
    assert old != rule.value, f"{rule.field} already {rule.value} in {_before(rule.first_release)}"


def test_versions_resolve():
    assert all(resolve_version(v) == v for v in VERSIONS)
    assert resolve_version("v0.21.1") == "v0.21.0" and resolve_version("0.27.9") == "v0.27.1"
    assert resolve_version("current") == "main" and resolve_version("2025-11") == "v0.11.1"
    for bad in ("v0.10.2", "0.9", "banana", "v1", ""):
        with pytest.raises(ValueError, match="v0.11.0 to v0.27.1"):
            resolve_version(bad)
    assert RELEASES[0] == "v0.11.0" and RELEASES[-1] == "v0.27.1"


def test_every_release_replays_a_scenario_under_both_runners():
    spec = {"requests": [{"id": "A", "prompt_len": 9, "max_tokens": 3}, {"id": "B", "arrival": 1, "prompt_len": 5,
                                                                        "max_tokens": 2}]}
    for v in VERSIONS:
        for runner in ("v1", "v2") if rules_for(v).has_runner_v2 else ("v1",):
            e = Engine(parse_scenario({"config": {"vllm": v, "runner": runner, "num_blocks": 16}, **spec}))
            h = e.run(50)
            assert e.done() and e.runner == runner
            slots = np.concatenate([r.inputs[0].slot_mapping[:r.num_tokens] for r in h])
            assert (slots >= 4).all()


def test_readme_table_lists_every_rule_with_its_pr_and_release():
    """The README's table by release is RULES (each row's behaviour is pinned by the probes above)."""
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    rows = set(re.findall(r"^\| `(\w+)` = `([^`]*)` \|.*\| #(\d+) \| [\d-]+ \| (v[\d.]+|main) \|$", text, re.M))
    want = {(r.field, str(r.value), str(r.pr), r.first_release) for r in RULES}
    assert rows == want
