"""`kvviz compute BATCH.json`: one step's tables for a user-defined batch."""
from __future__ import annotations

import sys

from kvviz.cli import dump_json, read_json_file
from kvviz.core.runner_v2 import batch_v2_slot_mapping, batch_v2_state_rows, batch_v2_tables as v2_tables
from kvviz.core.step import build_step_from_batch
from kvviz.cli.versions import add_version_args, requested, rules_from_args, runner_from_args
from kvviz.errors import BadInput


def register(sub) -> None:
    p = sub.add_parser(
        "compute", help="tables of one step for a batch file",
        description="Print one JSON object with query_start_loc, positions, seq_lens, slot_mapping, "
        "block_table (padded rows all 0) and the FlashInfer CSR arrays. From vLLM v0.32.0, when "
        "kernel_block_size < block_size, block_table is the persistent table in KV-manager block ids and "
        "kernel_block_table is what the backend reads (entry c*r+j = r*b+j for every column, r = "
        "block_size/kernel_block_size: unused columns and padded rows read 0..r-1); before, and with "
        "r = 1, block_table is the kernel-block table and there is no kernel_block_table. With DCP > 1 the "
        "CSR is this rank's: page counts and last_page_len from global lengths (prefill rows' last page: "
        "context only) up to v0.29.x, from rank-local lengths from v0.30.0; it is omitted when a global "
        "page count would read past the end of the table. With --runner v2 the output adds idx_mapping, "
        "state_block_table and state_num_blocks, and slot_mapping is MRV2's, from the state rows in the "
        "release's DCP arithmetic (up to v0.28.x the virtual block is the kernel block x DCP: with an "
        "interleave above the kernel block the slots differ from V1's). "
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
                                 width_alignment=profile.width_alignment, max_table_entries=MAX_TABLE_ENTRIES,
                                 kernel_block_table_per_group=profile.kernel_block_table_per_group,
                                 csr_under_dcp=True, csr_dcp_local_lengths=profile.csr_dcp_local_lengths)
    values = sum(a.size for a in (step.block_table, step.positions, step.slot_mapping, step.seq_lens,
                                  step.query_start_loc, step.paged_kv_indices, step.manager_block_table)
                 if a is not None)
    if values > MAX_OUTPUT_VALUES:
        raise BadInput(f"the output would hold {values} numbers; the limit is {MAX_OUTPUT_VALUES}")
    v2 = v2_tables(step) if runner == "v2" else None
    v2_slots = None
    if v2 is not None and step.slot_mapping is not None:
        # MRV2's slot kernel reads the state rows with the release's DCP arithmetic (not V1's)
        step.slot_mapping = batch_v2_slot_mapping(step, profile, v2)
        v2_slots = {"state_rows": batch_v2_state_rows(step, v2),
                    "idx_mapping": v2["idx_mapping"], "era": profile.mrv2_dcp_slots,
                    "pad_unmapped": profile.mrv2_dcp_sharded}
    backend = "reference (numpy)"
    if args.backend != "reference":
        from kvviz.gpu.harness import KernelMismatch, kernel_backend_for_compute

        try:
            backend = kernel_backend_for_compute(
                step, empty_last_page_len_is_zero=profile.empty_last_page_len_is_zero, v2_slots=v2_slots)
        except KernelMismatch as e:  # loud, never hidden: nothing printed on stdout
            print(f"kvviz compute: {e}", file=sys.stderr)
            return 1
    out = step.to_json(backend)
    out.update({"vllm": profile.name, **requested(args.vllm, profile), "runner": runner})
    if v2 is not None:
        out.update(v2)
    print(dump_json(out))
    return 0
