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
    """V1 where the release still has it (v0.34.0 runs V2 only)."""
    cfg = {"vllm": version, "runner": "v1" if rules_for(version).has_runner_v1 else "v2", **config}
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
    if fam in ("LBHNC", "LBNHC", "LHBNC", "BLHNC", "BLNHC", "BHLNC"):
        return "standardized"
    return {"flash_attn": "kv_first", "flashinfer": "blocks_first", "flashinfer_packed": "packed"}.get(fam, fam)


def probe_extensible_kv_cache(v):
    """`kvviz offset` with no extensible flag, two layers: is layer 1's region padded to the 2 MiB
    granule (layer_stride 2097152 instead of 48 blocks x 256-byte pages)?"""
    import json
    import contextlib
    import io
    from kvviz.cli import main
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["offset", "--layout", "NHD", "--block-size", "4", "--num-kv-heads", "2", "--head-dim", "8",
                   "--dtype", "float16", "--num-blocks", "48", "--slot", "0", "--head", "0", "--dim", "0",
                   "--vllm", v, *(["--num-layers", "2", "--layer", "1"] if rules_for(v).cache_layout_era == "standardized" else [])])
    out = json.loads(buf.getvalue())
    return rc == 0 and out.get("byte_offset") == 2 << 20


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


def probe_v2_for_every_model(v):
    """A hybrid scenario (a full and a sliding-window group) without a runner: which does it replay?"""
    e = Engine(parse_scenario({"config": {"vllm": v, "num_blocks": 32, "block_size": 4,
                                          "groups": [{"kind": "full"}, {"kind": "sliding_window", "sliding_window": 8}]},
                               "requests": [{"id": "A", "prompt_len": 6, "max_tokens": 2}]}))
    return e.runner == "v2"


def probe_has_runner_v1(v):
    """Can a scenario be replayed on V1 at all (``"runner": "v1"``)?"""
    from kvviz.errors import BadInput
    try:
        e = Engine(parse_scenario({"config": {"vllm": v, "runner": "v1", "num_blocks": 16},
                                   "requests": [{"id": "A", "prompt_len": 5, "max_tokens": 1}]}))
    except BadInput:
        return False
    return e.runner == "v1"

def probe_null_block_ref_counted(v):
    """A sliding window swaps three of A's blocks for the null block; A finishes and frees them: does
    block 0's ref count move (v1/core/block_pool.py BlockPool.free_blocks, skipped from v0.33.0)?"""
    e = _engine(v, {"num_blocks": 16, "block_size": 4,
                    "groups": [{"kind": "full"}, {"kind": "sliding_window", "sliding_window": 4}]},
                [{"id": "A", "prompt_len": 16, "max_tokens": 2}])
    return e.run()[-1].ref_counts_after[0] != 0


def probe_null_block_in_capacity(v):
    """max_model_len 32 needs all 8 blocks of size 4: does the start-up check count one fewer
    (v1/core/kv_cache_utils.py get_kv_cache_configs, check_enough_kv_cache_memory)?"""
    return not _engine(v, {"num_blocks": 8, "block_size": 4, "max_model_len": 32}, []).capacity["fits"]


def probe_has_max_num_active_seqs(v):
    """max_num_active_seqs 1: is B kept waiting while A runs (v1/core/sched/scheduler.py schedule)?
    Before v0.31.0 the knob is refused."""
    from kvviz.errors import BadInput
    try:
        e = _engine(v, {"num_blocks": 16, "block_size": 4, "max_num_active_seqs": 1},
                    [{"id": "A", "prompt_len": 5, "max_tokens": 2}, {"id": "B", "prompt_len": 5, "max_tokens": 2}])
    except BadInput:
        return False
    return e.step().requests["B"]["state"] == "waiting"


def probe_long_prefill_lone_request_exempt(v):
    """A lone 12-token prompt, long_prefill_token_threshold 4: all 12 tokens in step 0?"""
    e = _engine(v, {"num_blocks": 16, "block_size": 4, "long_prefill_token_threshold": 4},
                [{"id": "A", "prompt_len": 12, "max_tokens": 2}])
    return e.step().num_tokens == 12


def probe_none_hash_seed(v):
    """A's first full block's hash, as the engine cached it: chained from hash_fn("vllm-none-hash")
    (v1/core/kv_cache_utils.py init_none_hash, v0.29.0) or from a per-process draw (kvviz pins one)?"""
    import hashlib
    from kvviz.core.pool import block_hashes_for, with_group
    e = _engine(v, {"num_blocks": 8, "block_size": 4}, [{"id": "A", "prompt": [1, 2, 3, 4, 5], "max_tokens": 1}])
    fixed = block_hashes_for([1, 2, 3, 4], 4, none_hash=hashlib.sha256(b"vllm-none-hash").digest())[0]
    return "fixed" if e.step().cached_blocks[1] == with_group(fixed, 0)[:4].hex() else "urandom"

# --- Model Runner V2 (vllm/v1/worker/gpu/block_table.py) ---------------------------------------------------

def _v2(version: str, config: dict, requests: list, actions=()) -> Engine:
    return _engine(version, {**config, "runner": "v2"}, requests, actions)


def probe_mrv2_dcp_slots(v):
    """DCP 2, rank 0, block 8, kernel block 4, interleave 8 (above the kernel block): to v0.28.x the
    slot kernel deals each 4-token kernel block out on its own (rank 0 keeps all 8 tokens of a
    virtual block, local offsets 0..7 run into the next kernel block); v0.29 deals 16-token KV
    blocks (V1's arithmetic, Geometry.slots); from v0.32 the state rows hold manager ids."""
    from kvviz.core.geometry import Geometry
    e = _v2(v, {"num_blocks": 32, "block_size": 8, "kernel_block_size": 4, "dcp_world_size": 2,
                "cp_kv_cache_interleave_size": 8}, [{"id": "A", "prompt_len": 20, "max_tokens": 3}])
    rec = e.step()
    ids = e.manager.block_ids("A")[0]
    s = int(rec.idx_mapping[0])
    row = rec.cpu_tables[0][s]
    if list(row[:len(ids)]) == ids and len(ids) > 1:
        return "manager_ids"
    geo = Geometry(8, 4, 2, 0, 8)
    pos = np.arange(20)
    v1 = geo.slots(pos, np.zeros(20, int), row[None, :])
    return "kv_block" if (rec.inputs[0].slot_mapping[:20] == v1).all() else "kernel_block"


def probe_mrv2_slot_mapping_enabled(v):
    """A group without slots (vLLM's CircularBufferSpec: kvviz's slot arithmetic with
    enabled=False): PAD for every token from v0.29.0, its slots computed as any group's before."""
    from kvviz.core.geometry import Geometry
    from kvviz.core.slots_v2 import mrv2_slot_mapping
    rows = np.array([[5, 6]], np.int32)
    out = mrv2_slot_mapping(rules_for(v), rows, [0], [0, 3], np.arange(3), 4, geometry=Geometry(4),
                            enabled=False)
    return bool((out == -1).all())


def probe_mrv2_row_overflow_error(v):
    """A state row written past its width: RuntimeError from v0.29.0; before, the write runs on
    into the next row (an event in kvviz)."""
    from kvviz.core.geometry import Geometry
    from kvviz.core.runner_v2 import GroupTables, RequestStates
    st = RequestStates(2, [GroupTables(Geometry(4), 2, max_num_reqs=2)], rules=rules_for(v))
    st.add_request("B", [[1]])              # state 1
    try:
        st.add_request("A", [[3, 4, 5]])    # state 0, one id past the row
    except RuntimeError:
        return True
    st.apply_staged_writes()
    assert any(x["kind"] == "row_overflow" for x in st.events)
    assert st.groups[0].state.tolist() == [[3, 4], [5, 0]]
    return False


def probe_mrv2_dcp_sharded(v):
    """An unsharded group under DCP 2 on rank 1 (global positions, local on every rank) and a
    batch row with idx_mapping -1 (PAD) from v0.31.0."""
    from kvviz.core.geometry import Geometry
    from kvviz.core.slots_v2 import mrv2_slot_mapping
    rows = np.array([[5, 6, 7, 8]], np.int32)
    out = mrv2_slot_mapping(rules_for(v), rows, [0, -1], [0, 4, 6], np.array([0, 1, 2, 3, 0, 1]), 6,
                            geometry=Geometry(4, 4, 2, 1, 1), sharded=False)
    return out.tolist() == [20, 21, 22, 23, -1, -1]


def probe_mrv2_swa_gather_zero(v):
    """A sliding window of 4 over 4-token blocks, 13 tokens computed: the gather nulls columns
    below (13 - 3) // 4 = 2 from v0.33.0."""
    e = _v2(v, {"num_blocks": 64, "block_size": 4, "max_num_batched_tokens": 13,
                "groups": [{"kind": "sliding_window", "sliding_window": 4}]},
            [{"id": "A", "prompt_len": 13, "max_tokens": 3}])
    e.step()
    rec = e.step()
    s = int(rec.idx_mapping[0])
    state, inp = rec.cpu_tables[0][s], rec.device_tables[0][0]
    assert state[2] != 0
    return bool((inp[:2] == 0).all() and (state[:2] != 0).any())


def probe_mrv2_zero_dirty_rows(v):
    """Three requests, then one (no CUDA-graph padding): from v0.33.0 the gather also zeroes the
    rows the larger batch left (rows 1 and 2)."""
    e = _v2(v, {"num_blocks": 64, "block_size": 4, "cudagraph_capture_sizes": []},
            [{"id": r, "prompt_len": 5, "max_tokens": 1 if r != "A" else 3} for r in "ABC"])
    e.step()
    rec = e.step()
    assert rec.num_reqs == 1 and rec.num_reqs_padded == 1
    return not rec.device_tables[0][1:3].any()

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


def probe_mrv2_idx_mapping_bytes(v):
    """Bytes MRV2 copies per request for idx_mapping in a step of 3 decodes (kvviz.core.step_bytes)."""
    from kvviz.core import step_bytes as sb
    return sb.step_bytes(v, "v2", sb.steady_rows(3, 9, 1, 4), sb.Sizes(4, None, 64, 8)).part("idx_mapping") // 3


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
    assert resolve_version("v0.31.2") == "v0.31.0" and resolve_version("latest") == "v0.34.0"
    for bad in ("v0.10.2", "0.9", "banana", "v1", ""):
        with pytest.raises(ValueError, match="v0.11.0 to v0.34.0"):
            resolve_version(bad)
    assert RELEASES[0] == "v0.11.0" and RELEASES[-1] == "v0.34.0"


def test_a_release_newer_than_the_newest_follows_it_and_says_so():
    from kvviz.core.versions import beyond_newest_note, newer_than_known
    assert resolve_version("v9.0.0") == "v0.34.0" and resolve_version("0.35") == "v0.34.0"
    assert newer_than_known("v9.0.0") and newer_than_known("v0.34.1")
    assert not newer_than_known("v0.34.0") and not newer_than_known("main") and not newer_than_known("v0.28.0")
    assert "v0.34.0" in beyond_newest_note("v9.0.0") and "v9.0.0" in beyond_newest_note("v9.0.0")


def test_main_sits_between_v0_27_1_and_v0_28_0():
    """main is the mirror's commit of 2026-08-18: v0.27.1 (2026-08-13) + #51482, before v0.28.0."""
    i = VERSIONS.index("main")
    assert VERSIONS[i - 1] == "v0.27.1" and VERSIONS[i + 1] == "v0.28.0"
    assert [version_key(v) for v in VERSIONS] == sorted(version_key(v) for v in VERSIONS)


@pytest.mark.parametrize("model, dense_v2, all_v2", [
    ({}, "v0.25.0", "v0.29.0"), ({"hybrid": True}, None, "v0.29.0"), ({"state_groups": True}, None, "v0.29.0"),
    ({"moe": True}, None, "v0.29.0"), ({"pooling": True}, None, "v0.29.0")])
def test_default_runner_per_model_kind(model, dense_v2, all_v2):
    """config/vllm.py use_v2_model_runner: dense generate models from v0.25.0, every model from v0.29.0
    (#53183, the architecture list removed); v0.34.0 deleted V1 (gpu_worker.py builds only
    worker/gpu/model_runner.GPUModelRunner)."""
    first = dense_v2 or all_v2
    for v in RELEASES:
        want = "v2" if version_key(v) >= version_key(first) else "v1"
        assert rules_for(v).runner_for(**model) == want, v


def test_v1_refused_from_v0_34_0_in_one_sentence():
    for v in ("v0.34.0", "v9.0.0"):
        with pytest.raises(ValueError, match=r"v0\.33\.0 is the last release with V1") as e:
            resolve_runner(rules_for(v), "v1")
        assert "\n" not in str(e.value)
    assert resolve_runner(rules_for("v0.33.0"), "v1") == "v1"
    assert resolve_runner(rules_for("v0.34.0"), None, hybrid=True) == "v2"


def test_every_release_replays_a_scenario_under_both_runners():
    spec = {"requests": [{"id": "A", "prompt_len": 9, "max_tokens": 3}, {"id": "B", "arrival": 1, "prompt_len": 5,
                                                                        "max_tokens": 2}]}
    for v in VERSIONS:
        rules = rules_for(v)
        for runner in [r for r in ("v1", "v2") if (r == "v1" and rules.has_runner_v1) or (r == "v2" and rules.has_runner_v2)]:
            e = Engine(parse_scenario({"config": {"vllm": v, "runner": runner, "num_blocks": 16}, **spec}))
            h = e.run(50)
            assert e.done() and e.runner == runner
            slots = np.concatenate([r.inputs[0].slot_mapping[:r.num_tokens] for r in h])
            assert (slots >= 4).all()


def test_releases_table_lists_every_rule_with_its_pr_and_release():
    """The table by release (docs/releases.md) is RULES (each row's behaviour is pinned by the probes above)."""
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "releases.md").read_text()
    rows = set(re.findall(r"^\| `(\w+)` = `([^`]*)` \|.*\| (?:#(\d+)|—) \| (?:[\d-]+|—) \| (v[\d.]+|main) \|$",
                          text, re.M))
    want = {(r.field, str(r.value), str(r.pr) if r.pr else "", r.first_release) for r in RULES}
    assert rows == want
