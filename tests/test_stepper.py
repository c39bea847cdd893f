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
