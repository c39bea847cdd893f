from kvviz.core.manager import GroupSpec, KVCacheManager, Request


def req(rid, tokens, max_tokens=4):
    return Request(rid, list(tokens), max_tokens)


def test_prefill_and_decode_allocation():
    m = KVCacheManager(10, 4)
    a = req("a", range(10))
    assert m.allocate_slots(a, 10) == [[1, 2, 3]]
    a.num_computed_tokens = 10
    a.output.append(99)
    assert m.allocate_slots(a, 1) == [[]]  # token 10 fits in block 3
    a.num_computed_tokens = 11
    a.output.append(98)
    assert m.allocate_slots(a, 1) == [[]]
    a.num_computed_tokens = 12
    a.output.append(97)
    assert m.allocate_slots(a, 1) == [[4]]  # token 12 starts a new block


def test_chunked_prefill_crosses_block_boundary():
    m = KVCacheManager(10, 4)
    a = req("a", range(10))
    assert m.allocate_slots(a, 6) == [[1, 2]]
    a.num_computed_tokens = 6
    assert m.allocate_slots(a, 4) == [[3]]


def test_prefix_hit_is_capped_one_token_short():
    m = KVCacheManager(10, 4)
    a = req("a", range(8))
    m.allocate_slots(a, 8)
    b = req("b", range(8))  # identical 8 tokens: 2 full blocks cached, but the last token recomputes
    hits, n = m.get_computed_blocks(b)
    assert n == 4 and [x.block_id for x in hits[0]] == [1]
    c = req("c", list(range(8)) + [50])
    hits, n = m.get_computed_blocks(c)
    assert n == 8 and [x.block_id for x in hits[0]] == [1, 2]
    ids = m.allocate_slots(c, 1, hits, n)
    assert ids == [[1, 2, 3]]
    assert m.pool.blocks[1].ref_cnt == 2 and m.pool.blocks[3].ref_cnt == 1


def test_hit_stops_at_first_miss():
    m = KVCacheManager(10, 2)
    a = req("a", [1, 2, 3, 4, 5, 6])
    m.allocate_slots(a, 6)
    b = req("b", [1, 2, 9, 9, 5, 6, 7])
    hits, n = m.get_computed_blocks(b)
    assert n == 2  # block [5,6] has a different parent, so it does not match


def test_free_returns_blocks_tail_first():
    m = KVCacheManager(6, 4)
    a = req("a", range(10))
    m.allocate_slots(a, 10)  # blocks 1 2 3; 1 and 2 hashed
    m.free(a)
    assert m.pool.free_block_ids() == [3, 4, 5, 2, 1]


def test_short_pool_returns_none_and_changes_nothing():
    m = KVCacheManager(3, 4)
    a = req("a", range(12))
    assert m.allocate_slots(a, 12) is None
    assert m.pool.num_free == 2


def test_fork_shares_full_blocks_and_copies_partial():
    m = KVCacheManager(10, 4)
    p = req("p", range(6))
    m.allocate_slots(p, 6)        # blocks 1 (full) 2 (2 tokens)
    p.num_computed_tokens = 6
    c = Request("c", list(p.prompt), 4)
    c.num_computed_tokens = 6
    ids = m.fork(p, c)
    assert ids == [[1, 3]]
    assert m.pool.blocks[1].ref_cnt == 2 and m.pool.blocks[2].ref_cnt == 1
    cow = [e for e in m.events if e["kind"] == "cow"]
    assert cow == [{"kind": "cow", "req": "c", "group": 0, "src": 2, "dst": 3, "tokens": 2}]


def test_fork_at_block_boundary_copies_nothing():
    m = KVCacheManager(10, 4)
    p = req("p", range(8))
    m.allocate_slots(p, 8)
    p.num_computed_tokens = 8
    c = Request("c", list(p.prompt), 4)
    c.num_computed_tokens = 8
    assert m.fork(p, c) == [[1, 2]]
    assert not [e for e in m.events if e["kind"] == "cow"]


def test_sliding_window_replaces_skipped_blocks_with_null():
    m = KVCacheManager(12, 4, [GroupSpec("sliding_window", sliding_window=4)])
    a = req("a", range(16))
    m.allocate_slots(a, 16)            # blocks 1..4
    a.num_computed_tokens = 16
    a.output.append(1)
    m.allocate_slots(a, 1)             # skipped = 16-4+1 = 13 -> 3 whole blocks
    assert [b.block_id for b in m.blocks_of("a")[0]] == [0, 0, 0, 4, 5]
    skip = [e for e in m.events if e["kind"] == "window_skip"][0]
    assert skip["blocks"] == [3, 2, 1]  # walked high to low


def test_hybrid_groups_and_state_group():
    m = KVCacheManager(20, 4, [GroupSpec("full"), GroupSpec("sliding_window", sliding_window=8),
                               GroupSpec("state")])
    a = req("a", range(9))
    ids = m.allocate_slots(a, 9)
    assert [len(g) for g in ids] == [3, 3, 1]
    a.num_computed_tokens = 9
    a.output.append(5)
    ids = m.allocate_slots(a, 1)
    assert [len(g) for g in ids] == [0, 0, 0]  # state group keeps its single block


def test_dcp_block_covers_world_times_block_size():
    m = KVCacheManager(10, 4, dcp_world_size=2)
    a = req("a", range(9))
    assert m.allocate_slots(a, 9) == [[1, 2]]  # 8 positions per block id
