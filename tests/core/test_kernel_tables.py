"""The tables the attention backend is handed, per release: v0.32.0's per-group kernel-block table
and FlashInfer's CSR under DCP (v0.30.0's rank-local lengths). Every expectation is computed here
with plain loops from the rule, not with kvviz's helpers."""
from __future__ import annotations

import numpy as np

from kvviz.core.kernel_tables import kernel_block_table, num_decodes
from kvviz.core.step import build_step_from_batch

BATCH = {"block_size": 16, "kernel_block_size": 4, "num_reqs_padded": 3, "num_tokens_padded": 8,
         "requests": [{"block_ids": [7, 2], "seq_len": 20, "query_len": 1},
                      {"block_ids": [5], "seq_len": 6, "query_len": 6}]}


def _kernel_loop(manager, r):
    """vLLM 0.32.0 v1/worker/utils.py AttentionGroup.map_to_kernel_block_table: out[i][c*r+j] =
    r*table[i][c] + j for every column of every row passed in."""
    return [[r * int(b) + j for b in row for j in range(r)] for row in manager]


def test_kernel_block_table_every_column():
    """0.32.0 worker/utils.py map_to_kernel_block_table (torch.add over the whole [rows, cols*r])."""
    manager = np.array([[7, 2, 0], [0, 0, 0]], dtype=np.int32)
    assert kernel_block_table(manager, 4).tolist() == _kernel_loop(manager.tolist(), 4)


def test_v032_block_table_is_manager_ids_and_kernel_table_is_mapped():
    """0.32.0 worker/block_table.py BlockTable.append_row stores manager ids (no map_to_kernel_blocks),
    width get_block_table_width without x blocks_per_kv_block; gpu_model_runner.py passes
    block_table_tensor = get_device_tensor(num_reqs_padded) with rows [num_reqs, num_reqs_padded) = 0,
    and the attention group maps every row of it."""
    new = build_step_from_batch(BATCH, kernel_block_table_per_group=True)
    old = build_step_from_batch(BATCH)
    manager_width = 8          # 128-token alignment of 16-token blocks: 8 manager blocks
    want = [[7, 2] + [0] * 6, [5] + [0] * 7, [0] * 8]
    assert new.manager_block_table.tolist() == want
    assert new.block_table.tolist() == _kernel_loop(want, 4)
    assert new.block_table.shape == (3, manager_width * 4) == old.block_table.shape
    assert new.block_table[2].tolist() == [0, 1, 2, 3] * manager_width     # padded row: not 0
    # slot = manager block * 16 + offset (0.32.0 _compute_slot_mappings_kernel): the old numbers
    slots = []
    for ids, s, q in ((BATCH["requests"][0]["block_ids"], 20, 1), (BATCH["requests"][1]["block_ids"], 6, 6)):
        slots += [ids[p // 16] * 16 + p % 16 for p in range(s - q, s)]
    assert new.slot_mapping.tolist() == slots + [-1] * (8 - len(slots)) == old.slot_mapping.tolist()
    # the CSR reads the kernel-block table's used columns: the same pages as before
    assert new.paged_kv_indices.tolist() == old.paged_kv_indices.tolist() == [28, 29, 30, 31, 8, 20, 21]
    assert "kernel_block_table" in new.to_json("x") and "kernel_block_table" not in old.to_json("x")


def test_v032_no_split_keeps_one_table():
    """0.32.0 worker/utils.py AttentionGroup: kernel_block_size stays None when the backend takes
    the manager block size, and _with_kernel_block_table returns the metadata unchanged."""
    spec = {**BATCH, "kernel_block_size": 16}
    new = build_step_from_batch(spec, kernel_block_table_per_group=True)
    assert new.manager_block_table is None
    assert new.block_table.tolist() == build_step_from_batch(spec).block_table.tolist()


def _local_len(n, world, rank, inter):
    """Positions p < n that DCP rank ``rank`` stores: (p // inter) % world == rank."""
    return sum(1 for p in range(n) if (p // inter) % world == rank)


DCP = {"block_size": 4, "dcp_world_size": 2, "dcp_rank": 1, "cp_kv_cache_interleave_size": 2,
       "requests": [{"block_ids": [3, 4], "seq_len": 13, "query_len": 1},
                    {"block_ids": [6, 1], "seq_len": 11, "query_len": 3}]}


def _csr_loop(bt, page_lens, last_lens, page):
    """indptr = cumsum(ceil(len/page)); indices read row-major from each row's start
    (_copy_page_indices_kernel has no width mask); last = len % page, page when 0 and len != 0."""
    flat = [b for row in bt for b in row]
    indptr, indices, last = [0], [], []
    for r, (n, m) in enumerate(zip(page_lens, last_lens)):
        pages = -(-n // page)
        indices += flat[r * len(bt[0]): r * len(bt[0]) + pages]
        indptr.append(indptr[-1] + pages)
        last.append(0 if m == 0 else (m % page or page))
    return indptr, indices, last


def test_csr_dcp_global_lengths_before_v030():
    """0.29.0 (and 0.27.1, 0.28.0) v1/attention/backends/flashinfer.py FlashInferMetadataBuilder.build:
    num_blocks_np from the global seq_lens before the DCP conversion; seq_lens_np is a view of
    seq_lens_cpu, whose prefill rows are then cut in place to seq_len - query_len, so those rows'
    last_page_len is from the global context length."""
    step = build_step_from_batch(DCP, csr_under_dcp=True)
    want = _csr_loop(step.block_table.tolist(), [13, 11], [13, 11 - 3], 4)
    assert (step.paged_kv_indptr.tolist(), step.paged_kv_indices.tolist(),
            step.paged_kv_last_page_len.tolist()) == want
    assert want[0] == [0, 4, 7] and want[2] == [1, 4]


def test_csr_dcp_local_lengths_from_v030():
    """0.30.0 flashinfer.py FlashInferMetadataBuilder.build: seq_lens_cpu (prefill rows: context
    only) goes through get_dcp_local_seq_lens, then num_blocks_np and seq_lens_np are read."""
    step = build_step_from_batch(DCP, csr_under_dcp=True, csr_dcp_local_lengths=True)
    lens = [_local_len(13, 2, 1, 2), _local_len(11 - 3, 2, 1, 2)]
    assert lens == [6, 4]
    want = _csr_loop(step.block_table.tolist(), lens, lens, 4)
    assert (step.paged_kv_indptr.tolist(), step.paged_kv_indices.tolist(),
            step.paged_kv_last_page_len.tolist()) == want


def test_num_decodes_split():
    """0.30.0 v1/attention/backends/utils.py split_decodes_and_prefills (threshold 1, uniform)."""
    assert num_decodes([1, 1, 3, 1]) == 2
    assert num_decodes([4, 1]) == 0
    assert num_decodes([1, 1, 0]) == 3


def test_csr_global_pages_past_the_table_are_left_out():
    """Before v0.30.0 a global page count can run past the last row's end: kvviz leaves the CSR out
    instead of inventing what lies past the tensor."""
    spec = {"block_size": 4, "dcp_world_size": 4, "dcp_rank": 0,
            "requests": [{"block_ids": list(range(1, 10)), "seq_len": 140, "query_len": 1}]}
    old = build_step_from_batch(spec, csr_under_dcp=True)
    assert old.paged_kv_indptr is None                 # 35 pages, a row of 32
    new = build_step_from_batch(spec, csr_under_dcp=True, csr_dcp_local_lengths=True)
    assert new.paged_kv_indptr.tolist() == [0, -(-_local_len(140, 4, 0, 1) // 4)]


def _run(version):
    from kvviz.core.engine import Engine
    from kvviz.core.scenario import parse_scenario

    cfg = {"vllm": version, "runner": "v1", "num_blocks": 32, "block_size": 8, "kernel_block_size": 4,
           "max_num_reqs": 4, "max_model_len": 64, "cudagraph_capture_sizes": [1, 2, 4]}
    reqs = [{"id": "A", "prompt_len": 10, "max_tokens": 3}, {"id": "B", "prompt_len": 5, "max_tokens": 3},
            {"id": "C", "prompt_len": 3, "max_tokens": 3}]
    e = Engine(parse_scenario({"config": cfg, "requests": reqs}))
    return e, e.run()


def test_engine_v032_tables_in_manager_ids_backend_table_mapped():
    """vLLM 0.32.0 v1/worker/block_table.py BlockTable.append_row (manager ids, aligned manager width:
    64 tokens of 8 -> 8 blocks, 128-token alignment -> 16), gpu_model_runner.py:2305 padded rows NULL
    then worker/utils.py:389 map_to_kernel_block_table over rows [0, num_reqs_padded)."""
    from kvviz.dumps.capture import dump_from_step
    from kvviz.dumps.check import run_checks

    e, hist = _run("v0.32.0")
    _, old = _run("v0.31.0")
    assert e.batch.tables[0].width == 16 and e.batch.tables[0].kernel_width == 32
    for rec, was in zip(hist, old):
        inp = rec.inputs[0]
        for row, rid in enumerate(rec.rows[: rec.num_reqs]):
            blocks = rec.requests[rid]["blocks"][0]
            assert rec.cpu_tables[0][row, : len(blocks)].tolist() == blocks
        manager = [list(r) for r in rec.device_tables[0][: rec.num_reqs_padded].tolist()]
        for row in range(rec.num_reqs, rec.num_reqs_padded):
            manager[row] = [0] * len(manager[row])
        assert inp.manager_block_table.tolist() == manager
        assert inp.block_table.tolist() == _kernel_loop(manager, 2)
        assert inp.slot_mapping.tolist() == was.inputs[0].slot_mapping.tolist()
        assert inp.paged_kv_indices.tolist() == was.inputs[0].paged_kv_indices.tolist()
        d = dump_from_step(rec, e.config)
        assert d.kernel_block_table is not None and run_checks(d) == []
    assert any(r.num_reqs_padded > r.num_reqs for r in hist)       # a padded row was read
