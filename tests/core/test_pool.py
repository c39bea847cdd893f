import pytest

from kvviz.core.pool import NONE_HASH, BlockPool, block_hashes_for, hash_block_tokens
from kvviz.core.versions import V2025_11


def test_null_block_is_taken_out_first():
    p = BlockPool(5)
    assert p.null_block.block_id == 0 and p.null_block.is_null
    assert p.free_block_ids() == [1, 2, 3, 4]
    assert [b.block_id for b in p.get_new_blocks(2)] == [1, 2]
    assert p.free_block_ids() == [3, 4]


def test_free_unhashed_to_front_hashed_to_back_in_given_order():
    p = BlockPool(8)
    blocks = p.get_new_blocks(4)  # 1 2 3 4; free queue now 5 6 7
    h = block_hashes_for(list(range(8)), 4)
    p.cache_full_blocks(h, blocks, 0, 2, 4)  # 1 and 2 cached
    p.free_blocks(list(reversed(blocks)))    # tail first: 4 3 2 1
    # unhashed 4, 3 go to the front in that order; hashed 2, 1 to the back
    assert p.free_block_ids() == [4, 3, 5, 6, 7, 2, 1]


def test_free_order_2025_11_appends_everything():
    p = BlockPool(8, profile=V2025_11)
    blocks = p.get_new_blocks(4)
    p.cache_full_blocks(block_hashes_for(list(range(8)), 4), blocks, 0, 2, 4)
    p.free_blocks(list(reversed(blocks)))
    assert p.free_block_ids() == [5, 6, 7, 4, 3, 2, 1]


def test_lazy_eviction_on_reallocation():
    p = BlockPool(3)
    [b] = p.get_new_blocks(1)
    h = block_hashes_for([1, 2, 3, 4], 4)
    p.cache_full_blocks(h, [b], 0, 1, 4)
    p.free_blocks([b])
    assert p.get_cached_block(h[0], 0) is b   # still findable while queued
    p.get_new_blocks(1)                        # block 2 comes first
    assert p.get_cached_block(h[0], 0) is b
    p.get_new_blocks(1)                        # now block 1 is reused: evicted
    assert p.get_cached_block(h[0], 0) is None
    assert any(e["kind"] == "evict" and e["block"] == 1 for e in p.events)


def test_touch_removes_from_queue_and_counts():
    p = BlockPool(4)
    [b] = p.get_new_blocks(1)
    p.free_blocks([b])
    assert 1 in p.free_block_ids()
    p.touch([b])
    assert b.ref_cnt == 1 and 1 not in p.free_block_ids()
    p.touch([b])
    assert b.ref_cnt == 2
    p.free_blocks([b])
    assert 1 not in p.free_block_ids()
    p.free_blocks([b])
    assert p.free_block_ids()[0] == 1


def test_overallocation_and_double_free_raise():
    p = BlockPool(3)
    with pytest.raises(ValueError):
        p.get_new_blocks(3)
    [b] = p.get_new_blocks(1)
    p.free_blocks([b])
    with pytest.raises(ValueError):
        p.free_blocks([b])


def test_null_block_never_freed():
    p = BlockPool(3)
    p.free_blocks([p.null_block])
    assert 0 not in p.free_block_ids()


def test_hash_chain():
    toks = list(range(10))
    hs = block_hashes_for(toks, 4)
    assert len(hs) == 2  # the partial third block has no hash
    assert hs[0] == hash_block_tokens(None, toks[:4])
    assert hs[1] == hash_block_tokens(hs[0], toks[4:8])
    assert hash_block_tokens(None, toks[:4]) == hash_block_tokens(NONE_HASH, toks[:4])
    # same tokens, different parent -> different hash; extra keys change the first block
    assert hash_block_tokens(hs[0], toks[:4]) != hs[0]
    assert block_hashes_for(toks, 4, ("lora-a",))[0] != hs[0]


def test_group_id_separates_caches():
    p = BlockPool(4)
    [b] = p.get_new_blocks(1)
    h = block_hashes_for([1, 2], 2)
    p.cache_full_blocks(h, [b], 0, 1, 2, group_id=1)
    assert p.get_cached_block(h[0], 1) is b and p.get_cached_block(h[0], 0) is None
