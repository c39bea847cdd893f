"""`kvviz compute BATCH.json`: one step's tables for a user-defined batch."""
from __future__ import annotations

import sys

from kvviz.cli import dump_json, read_json_file
from kvviz.core.step import build_step_from_batch
from kvviz.cli.versions import add_version_args, rules_from_args, runner_from_args
from kvviz.errors import BadInput


def register(sub) -> None:
    p = sub.add_parser(
        "compute", help="tables of one step for a batch file",
        description="Print one JSON object with query_start_loc, positions, seq_lens, slot_mapping, "
        "block_table (padded rows all 0) and the FlashInfer CSR arrays (omitted with DCP > 1). "
        'BATCH: {"block_size": B, "requests": [{"block_ids": [...], "seq_len": S, "query_len": Q}], '
        '"num_reqs_padded": R?, "num_tokens_padded": T?, "dcp_world_size": 1?, "dcp_rank": 0?, '
        '"cp_kv_cache_interleave_size": 1?, "kernel_block_size": K?}. Any other key (top level or in a request) '
        'is refused (exit 2), naming the closest known key.')
    p.add_argument("batch", metavar="BATCH.json")
    add_version_args(p)
    p.epilog = "Exit codes: 0 ok, 1 a kernel disagreed with the reference, 2 bad input."
    p.add_argument("--backend", default="reference", choices=["reference", "auto", "triton"],
                   help="reference: numpy (default); auto/triton: run the Triton kernels "
                        "(GPU, or the interpreter on a CPU) and cross-check them")
    p.set_defaults(func=run)


MAX_TABLE_ENTRIES = 1 << 22   # what `compute` prints, as JSON: about 10 MB for a full table
MAX_OUTPUT_VALUES = 1 << 23   # every number printed: under about 100 MB of JSON


def run(args) -> int:
    profile = rules_from_args(args)
    runner = runner_from_args(profile, args)
    spec = read_json_file(args.batch)
    step = build_step_from_batch(spec, empty_last_page_len_is_zero=profile.empty_last_page_len_is_zero,
                                 width_alignment=profile.width_alignment, max_table_entries=MAX_TABLE_ENTRIES)
    values = sum(a.size for a in (step.block_table, step.positions, step.slot_mapping, step.seq_lens,
                                  step.query_start_loc, step.paged_kv_indices) if a is not None)
    if values > MAX_OUTPUT_VALUES:
        raise BadInput(f"the output would hold {values} numbers; the limit is {MAX_OUTPUT_VALUES}")
    backend = "reference (numpy)"
    if args.backend != "reference":
        from kvviz.gpu.harness import KernelMismatch, kernel_backend_for_compute

        try:
            backend = kernel_backend_for_compute(
                step, empty_last_page_len_is_zero=profile.empty_last_page_len_is_zero)
        except KernelMismatch as e:  # loud, never hidden: nothing printed on stdout
            print(f"kvviz compute: {e}", file=sys.stderr)
            return 1
    out = step.to_json(backend)
    out.update({"vllm": profile.name, "runner": runner})
    if runner == "v2":
        out.update(v2_tables(step))
    print(dump_json(out))
    return 0


def v2_tables(step) -> dict:
    """Model Runner V2's view of the same batch: request i of the batch took request-state index
    R-1-i from the LIFO free list (R = num_reqs_padded state rows), so ``idx_mapping[i]`` = R-1-i,
    ``state_block_table`` holds the rows by state index and ``block_table`` is the gathered input
    table (the batch's rows, padded rows 0): the same slots, other tables."""
    n, r = step.num_reqs, step.num_reqs_padded
    idx = [r - 1 - i for i in range(n)]
    bt = step.block_table
    state = [[0] * bt.shape[1] for _ in range(r)]
    counts = [0] * r
    for i, s in enumerate(idx):
        state[s] = bt[i].tolist()
        counts[s] = _pages(step, i)
    return {"idx_mapping": idx, "state_block_table": state, "state_num_blocks": counts}


def _pages(step, i: int) -> int:
    """Kernel blocks request ``i`` uses (its row's counted prefix)."""
    seq = int(step.seq_lens[i])
    per = step.kernel_block_size * step.dcp_world_size
    return -(-seq // per)
