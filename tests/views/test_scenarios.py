"""The built-in step-through scenarios do what their descriptions say."""
from kvviz.views import scenarios as stepper


def _replay(name):
    return stepper.replay(stepper.load(name))


def test_prefixes_scenario_hits_blocks_a_finished_request_left_cached_and_evicts():
    recs = _replay("prefixes")
    kinds = {e["kind"] for r in recs for e in r.events}
    assert {"share", "cow", "fork", "cache_hit", "evict"} <= kinds, kinds
    # an eviction: a cached block is reallocated, so its hash leaves the prefix cache
    evicted = [(r.index, e["block"]) for r in recs for e in r.events if e["kind"] == "evict"]
    assert evicted
    for i, b in evicted:
        assert b in recs[i - 1].cached_blocks and b in recs[i - 1].free_queue_after   # was free but cached
    # a hit on blocks that were free but cached (ref count 0, in the free queue) before the step,
    # released by requests that had finished
    free_hits, held = [], {}          # held: the blocks each request last held
    for r in recs:
        prev = recs[r.index - 1] if r.index else None
        done = {rid for rid, q in (prev.requests.items() if prev else ()) if q["state"] == "finished"}
        for e in r.events:
            if e["kind"] != "cache_hit" or prev is None:
                continue
            if all(prev.ref_counts_after[b] == 0 and b in prev.free_queue_after for b in e["blocks"]):
                owners = {rid for rid in done if set(e["blocks"]) <= held.get(rid, set())}
                if owners:
                    free_hits.append((r.index, e["req"], tuple(e["blocks"]), owners))
        for rid, q in r.requests.items():
            if q["blocks"] and q["blocks"][0]:
                held[rid] = set(q["blocks"][0])
    assert free_hits, "no cache hit on a finished request's free-but-cached blocks"
    # the hit came after the eviction pressure: the prompt's blocks were freed last, so they survived
    assert min(i for i, _ in evicted) <= free_hits[0][0]


def test_prefixes_scenario_keeps_its_early_story():
    recs = _replay("prefixes")
    hit1 = [e for e in recs[1].events if e["kind"] == "cache_hit"]
    assert hit1 and hit1[0]["req"] == "B" and hit1[0]["blocks"] == [1, 2]     # B shares A's running blocks
    assert any(e["kind"] == "cow" for e in recs[2].events)                     # the fork's copy-on-write
    assert all(q["state"] == "finished" for q in recs[-1].requests.values())


def test_page_helpers_of_the_lifecycle_scenario():
    sc = stepper.load("lifecycle", runner="v1")    # V1's CPU table and device mirror (stale rows, rows)
    recs = stepper.replay(sc)
    sizes = stepper.table_sizes(sc.config)
    assert sizes["num_blocks"] == 14
    assert (sizes["geometry"].kernel_block_size, sizes["geometry"].blocks_per_kv_block) == (4, 1)
    rows, cols = stepper.rows_shown(recs), stepper.shown_columns(recs)
    # step 0 admits A and B: rows 0 and 1 are new on the CPU, the mirror has not got them yet
    assert stepper.stale_rows(recs[0], rows, cols) == [0, 1]
    assert stepper.stale_rows(recs[2], rows, cols) == []
    assert stepper.scheduled_rows(recs[0])[1] == {"row": 1, "request": "B", "kind": "prefill", "tokens": 9,
                                                   "computed before": 0, "seq_len": 9}


def test_page_helpers_of_the_prefixes_scenario():
    import pytest

    from kvviz.errors import BadInput

    sc = stepper.load("prefixes")
    assert stepper.prompt_blocks(sc) == {"n": 10, "b": 4, "full": [0, 1], "rest": 2}
    blocks, ref = stepper.sharing_matrix(stepper.replay(sc)[1], 4)
    assert stepper.shared_blocks(blocks, ref) == [1, 2]      # A and B share the system prompt's blocks
    with pytest.raises(BadInput, match="no step"):
        stepper.require_steps([])


def test_hash_chain_token_spans_follow_the_language():
    """The part of a block's token span (prompt / output) is in the page's language; the numbers stay."""
    from kvviz.views import scenarios as stepper

    sc = stepper.load("prefixes")
    recs = stepper.replay(sc)
    idx = next(i for i, r in enumerate(recs) if r.cached_blocks)
    spans = {lang: stepper.hash_chain_frame(sc, recs, idx, lang=lang)["tokens"].tolist() for lang in ("en", "zh", "es")}
    assert any(s.endswith("(prompt)") for s in spans["en"])
    assert any(s.endswith("(提示词)") for s in spans["zh"]) and not any("prompt" in s for s in spans["zh"])
    strip = lambda xs: [x.split(" (")[0] for x in xs]  # noqa: E731
    assert strip(spans["en"]) == strip(spans["zh"]) == strip(spans["es"])
