"""Pool, capacity check and scheduler rules of vLLM v0.29.0 .. v0.33.0, each with numbers computed
by hand from the wheel's code (named in each test)."""
from __future__ import annotations

import pytest

from kvviz.core.capacity import blocks_for_one_request, capacity_check
from kvviz.core.engine import Engine
from kvviz.core.pool import BlockPool
from kvviz.core.scenario import parse_scenario
from kvviz.core.versions import rules_for
from kvviz.errors import BadInput

HYBRID = [{"kind": "full"}, {"kind": "sliding_window", "sliding_window": 4}]


def _run(v, config, requests):
    e = Engine(parse_scenario({"config": {"vllm": v, **config}, "requests": requests}))
    return e, e.run()


def test_null_block_count_falls_by_each_freed_null_entry_up_to_v0_32():
    """0.32.0 block_pool.py free_blocks: ``ref_cnt -= 1`` for every block passed, the null block too
    (only the queue step is skipped). A's 16 prompt tokens + 1 decode in a window of 4 (block size 4):
    remove_skipped_blocks nulls blocks 0..2 of the window group (skipped = 16 - 4 + 1 = 13 tokens, 3
    full blocks), so A's free passes 3 null entries: 0 - 3 = -3. 0.33.0 skips the null block: 0."""
    for v, want in (("v0.32.0", -3), ("v0.33.0", 0)):
        _, h = _run(v, {"num_blocks": 16, "block_size": 4, "groups": HYBRID},
                    [{"id": "A", "prompt_len": 16, "max_tokens": 2}])
        assert h[-1].ref_counts_after[0] == want
        nulls = [x for r in h for x in r.events if x["kind"] == "null_ref"]
        assert nulls == ([{"kind": "null_ref", "req": "A", "group": 1, "delta": -3, "ref_cnt": -3}] if want else [])


def test_touch_counts_the_null_block_only_up_to_v0_32():
    """0.32.0 BlockPool.touch: ``ref_cnt += 1`` for every block (queue removal skipped for null)."""
    for v, want in (("v0.32.0", 2), ("v0.33.0", 0)):
        p = BlockPool(4, profile=rules_for(v))
        p.touch([p.null_block, p.null_block])
        assert p.null_block.ref_cnt == want and 0 not in p.free_block_ids()
        p.check_invariants()


def test_capacity_check_keeps_the_null_block_from_v0_29():
    """get_kv_cache_configs 0.29.0: check memory = (num_blocks - 1) x bytes_per_block. 8 blocks of 4:
    max_model_len 28 needs cdiv(28, 4) = 7 blocks (passes both); 32 needs 8 (passes 0.28.0 only)."""
    for mml, old, new in ((28, True, True), (32, True, False)):
        cfg = parse_scenario({"config": {"num_blocks": 8, "block_size": 4, "max_model_len": mml}}).config
        assert capacity_check(cfg, rules_for("v0.28.0"))["fits"] is old
        assert capacity_check(cfg, rules_for("v0.29.0"))["fits"] is new
    refused = capacity_check(cfg, rules_for("v0.29.0"))
    assert refused["counted"] == 7 and refused["estimated_max_model_len"] == 28


def test_blocks_for_one_request_per_group_kind():
    """kv_cache_interface.py max_memory_usage_bytes / page: full cdiv(256, 4) = 64; sliding window
    4 with 64 batched tokens: cdiv(min(4 - 1 + 64, 256), 4) + 1 = 17 + 1 = 18; state 1."""
    cfg = parse_scenario({"config": {"num_blocks": 8, "block_size": 4, "max_model_len": 256,
                                     "groups": [*HYBRID, {"kind": "state"}]}}).config
    assert blocks_for_one_request(cfg) == 64 + 18 + 1


def test_long_prefill_threshold_chunks_unless_alone_from_v0_31():
    """scheduler.py 0.31.0: the threshold is 0 when running + waiting <= 1. Two 12-token prompts,
    threshold 4: each gets 4 tokens a step in both releases; a lone one gets 12 in 0.31.0 only."""
    two = [{"id": "A", "prompt_len": 12, "max_tokens": 1}, {"id": "B", "prompt_len": 12, "max_tokens": 1}]
    for v in ("v0.30.0", "v0.31.0"):
        e, _ = _run(v, {"num_blocks": 32, "block_size": 4, "long_prefill_token_threshold": 4}, two)
        assert [s.num_tokens for s in e.history[0].scheduled] == [4, 4]
    e, _ = _run("v0.31.0", {"num_blocks": 32, "block_size": 4, "long_prefill_token_threshold": 4}, two[:1])
    assert e.history[0].num_tokens == 12


def test_max_num_active_seqs_holds_admission():
    """max_num_active_seqs 2 of 8 rows: C waits until A or B finishes (both finish at step 1)."""
    reqs = [{"id": r, "prompt_len": 4, "max_tokens": 2} for r in "ABC"]
    e, h = _run("v0.31.0", {"num_blocks": 32, "block_size": 4, "max_num_active_seqs": 2}, reqs)
    assert [s.req_id for s in h[0].scheduled] == ["A", "B"]
    assert any(x == {"kind": "active_cap", "req": "C", "cap": 2} for x in h[0].events)
    assert "C" in [s.req_id for s in h[2].scheduled]


@pytest.mark.parametrize("config,msg", [
    ({"vllm": "v0.30.0", "max_num_active_seqs": 1}, "first shipped in vLLM v0.31.0"),
    ({"vllm": "v0.31.0", "max_num_active_seqs": 9}, r"in \[1, 8\]"),
    ({"vllm": "v0.31.0", "max_num_active_seqs": True}, "must be an integer"),
    ({"long_prefill_token_threshold": 257}, r"in \[0, 256\]"),
    ({"long_prefill_token_threshold": -1}, "must be an integer"),
])
def test_knobs_are_validated(config, msg):
    with pytest.raises(BadInput, match=msg):
        parse_scenario({"config": config})


def test_none_hash_is_fixed_from_v0_29_and_the_hash_chain_view_follows():
    """kv_cache_utils.py 0.29.0 init_none_hash: NONE_HASH = hash_fn("vllm-none-hash") (sha256, no
    PYTHONHASHSEED); 0.28.0 drew os.urandom(32), kvviz's stand-in is sha256(b"kvviz-none-hash")."""
    import hashlib
    from kvviz.core.pool import NONE_HASH, none_hash_for
    assert none_hash_for(rules_for("v0.29.0")) == hashlib.sha256(b"vllm-none-hash").digest()
    assert none_hash_for(rules_for("v0.28.0")) == NONE_HASH == hashlib.sha256(b"kvviz-none-hash").digest()
    e, h = _run("v0.29.0", {"num_blocks": 8, "block_size": 4}, [{"id": "A", "prompt": [1, 2, 3, 4, 5], "max_tokens": 1}])
    assert e.manager.pool.none_hash == none_hash_for(rules_for("v0.29.0"))


def test_ref_count_chart_draws_a_negative_null_count_below_zero():
    from kvviz.views.figures import ref_count_figure
    fig = ref_count_figure([-3, 1, 0, 0], [2, 3], {})
    assert fig.layout.yaxis.range[0] == -3.5
    null_bar = next(d for d in fig.data if d.type == "bar" and 0 in list(d.x))
    assert list(null_bar.y) == [-3]
