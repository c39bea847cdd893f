"""A small hand-worked dump shared by the dump/check/diff tests.

block_size 4, 16 blocks, a 4 x 4 table, 2 live rows padded to 3.
row 0: blocks [1, 2, 3], 10 tokens; this step decodes positions 8 and 9 -> slots 12, 13
row 1: blocks [4, 5],     5 tokens; this step decodes position 4       -> slot 20
row 2: padding (all 0);   row 3: unused
tokens padded to 4, so slot 3 is -1. FlashInfer over 3 rows (seq 10, 5, 0):
indptr [0, 3, 5, 5], indices [1, 2, 3, 4, 5], last_page_len [2, 1, 0].
Blocks 1..5 have ref 1; the free list is 6..15.
"""
import numpy as np

from kvviz.dumps.format import dump_from_mapping


def base_mapping() -> dict:
    bt = np.array([[1, 2, 3, 0], [4, 5, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], dtype=np.int32)
    ref = np.zeros(16, dtype=np.int32)
    ref[1:6] = 1
    return {
        "kvviz_dump_version": 1, "block_size": 4, "num_blocks": 16, "num_reqs": 2,
        "num_reqs_padded": 3, "block_table": bt, "num_blocks_per_row": np.array([3, 2, 0, 0], np.int32),
        "block_table_device": bt.copy(), "seq_lens": np.array([10, 5, 0], np.int32),
        "query_start_loc": np.array([0, 2, 3, 3], np.int32), "positions": np.array([8, 9, 4, 0]),
        "slot_mapping": np.array([12, 13, 20, -1]), "paged_kv_indptr": np.array([0, 3, 5, 5], np.int32),
        "paged_kv_indices": np.array([1, 2, 3, 4, 5], np.int32),
        "paged_kv_last_page_len": np.array([2, 1, 0], np.int32), "ref_cnt": ref,
        "free_block_ids": np.arange(6, 16, dtype=np.int32),
    }


def base_dump(**changes):
    m = base_mapping()
    m.update(changes)
    return dump_from_mapping(m)


def v2_mapping() -> dict:
    """The same step as base_mapping, as Model Runner V2 holds it: 8 request-state rows; A took state
    7 and B state 6 (the LIFO free list pops from the end), so idx_mapping = [7, 6]; state 5 is a
    finished request's row, left as it was (blocks 9, 10). The gathered input table is the batch in
    order (rows 0, 1), padded row 2 zeroed, row 3 stale from an earlier step (never read); row 0's
    tail past its 3 blocks holds a stale 11 (never read either)."""
    m = base_mapping()
    state = np.zeros((8, 4), np.int32)
    state[7, :3] = [1, 2, 3]
    state[6, :2] = [4, 5]
    state[5, :2] = [9, 10]
    cnt = np.zeros(8, np.int32)
    cnt[7], cnt[6], cnt[5] = 3, 2, 2
    gathered = np.array([[1, 2, 3, 11], [4, 5, 0, 0], [0, 0, 0, 0], [9, 10, 0, 0]], np.int32)
    del m["block_table_device"], m["num_blocks_per_row"]
    m.update(runner="v2", vllm="v0.25.1", block_table=gathered, idx_mapping=np.array([7, 6], np.int32),
             state_block_table=state, state_num_blocks=cnt)
    return m


def v2_dump(**changes):
    m = v2_mapping()
    m.update(changes)
    return dump_from_mapping(m)
