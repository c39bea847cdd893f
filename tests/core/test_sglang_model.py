"""kvviz's model of SGLang's pools and radix cache (kvviz/notations/sglang_pools.py), without SGLang:
the rules it was read from (tests/engines/test_sglang_notation.py holds it against SGLang itself)."""
from kvviz.notations.engine_schedule import schedule_from_scenario
from kvviz.notations.sglang_model import model_answer
from kvviz.notations.sglang_pools import PagedAllocator, RadixTree, RowPool, TokenAllocator


def _sched(reqs, blocks=64, bs=4):
    return schedule_from_scenario({"name": "t", "config": {"num_blocks": blocks, "block_size": bs,
                                   "max_num_reqs": 4, "max_num_batched_tokens": 64, "max_model_len": 64},
                                   "requests": reqs})


def test_slot_zero_and_page_zero_are_held_back():
    s = _sched([{"id": "A", "arrival": 0, "prompt_len": 5, "max_tokens": 2}])
    assert model_answer(s, page_size=1, pool_tokens=64)["steps"][0]["extend"]["out_cache_loc"] == [1, 2, 3, 4, 5]
    assert model_answer(s, page_size=16, pool_tokens=64)["steps"][0]["extend"]["out_cache_loc"] == list(range(16, 21))


def test_rows_come_from_the_tail_of_the_free_list():
    rows = RowPool(4, 8)
    assert rows.alloc_rows(1) == [4] and rows.alloc_rows(2) == [2, 3]
    rows.free_rows([4])
    assert rows.alloc_rows(1) == [4]


def test_freed_pages_go_to_the_head_and_freed_tokens_to_the_tail():
    paged = PagedAllocator(64, 16)
    assert paged.alloc_extend([0], [20], [-1]) == list(range(16, 36))
    paged.free_segment(list(range(16, 32)))
    assert paged.free_pages[:2] == [1, 3]
    tok = TokenAllocator(8)
    tok.alloc(3)
    tok.free_segment([2])
    assert tok.free_pages == [4, 5, 6, 7, 8, 2]


def test_prefix_match_is_page_aligned_and_splits_the_node():
    tree = RadixTree(PagedAllocator(256, 4), 4)
    tree.insert(list(range(10)), list(range(100, 110)))   # 8 tokens kept: two pages
    n, node = tree.match([0, 1, 2, 3, 4, 9, 9, 9, 9])
    assert n == 4 and tree.path(node) == [100, 101, 102, 103]
    assert len(tree.root.children) == 1 and len(node.children) == 1   # split at the page boundary


def test_shared_prefix_reuses_the_first_requests_slots():
    s = _sched([{"id": "A", "arrival": 0, "prompt_len": 12, "prefix_group": "p", "prefix_len": 9, "max_tokens": 3},
                {"id": "B", "arrival": 3, "prompt_len": 12, "prefix_group": "p", "prefix_len": 9, "max_tokens": 2}])
    for ps, want in ((1, 9), (4, 8)):
        steps = model_answer(s, page_size=ps, pool_tokens=128)["steps"]
        first = next(st for st in steps if "B" in st["extend"]["matched"])
        assert first["extend"]["matched"]["B"] == want
        a_row = next(st["req_to_token"]["A"] for st in steps if "A" in st["req_to_token"])
        assert first["req_to_token"]["B"][:want] == a_row[:want]


def test_eviction_frees_the_least_recently_used_leaf_first():
    alloc = TokenAllocator(6)
    tree = RadixTree(alloc, 1)
    a, b = alloc.alloc(3), alloc.alloc(3)
    tree.insert([1, 2, 3], a)
    tree.insert([7, 8, 9], b)
    tree.match([1, 2, 3, 4])          # touches the first leaf: the second is now the older
    tree.evict(1)
    assert alloc.free_pages == b and tree.evictable_size() == 3
