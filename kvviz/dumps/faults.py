"""The classic bookkeeping bugs, injected into a small simulated run.

Each bug gives two dumps of the same step of the same scenario: the clean one
(the checker finds nothing) and the broken one (the checker names the bug).
Three bugs are faults of the step engine itself (``kvviz.core.engine.FAULTS``); the
other four corrupt one table of a clean step the way the buggy code would
have written it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID
from kvviz.core.engine import Engine
from kvviz.core.scenario import parse_scenario
from kvviz.core.step import build_step, compute_slot_mapping
from kvviz.dumps.capture import dump_from_step
from kvviz.dumps.format import Dump

# Four requests, block size 4, CUDA-graph sizes 1/2/4/8. Step 0 prefills them
# (22 tokens, no padding); step 1 decodes 4 tokens; at step 2 B is finished, D
# moves from row 3 to row 1 and 3 decode tokens are padded to 4 (row 3 padded);
# at step 4 A forks while its last block holds 1 of 4 tokens.
SCENARIO = {
    "name": "four requests, one finishes, one forks",
    "config": {"num_blocks": 32, "block_size": 4, "max_num_reqs": 8, "max_num_batched_tokens": 64,
               "max_model_len": 64, "enable_prefix_caching": True,
               "cudagraph_capture_sizes": [1, 2, 4, 8], "runner": "v1"},   # the classic bugs are V1's
    "requests": [{"id": "A", "prompt_len": 6, "max_tokens": 8},
                 {"id": "B", "prompt_len": 5, "max_tokens": 8},
                 {"id": "C", "prompt_len": 8, "max_tokens": 8},
                 {"id": "D", "prompt_len": 3, "max_tokens": 8}],
    "actions": [{"step": 2, "kind": "finish", "req": "B"},
                {"step": 4, "kind": "fork", "req": "A", "n": 1}],
}


@dataclass(frozen=True)
class Bug:
    id: str
    title: str
    description: str
    step: int                 # the scenario step whose dump shows it
    expected: tuple           # check ids the broken dump must raise (and the clean one must not)


BUGS: dict[str, Bug] = {b.id: b for b in [
    Bug("move_row_no_clear", "move_row without clearing the source",
        "Condense moves the last row into a hole but leaves the vacated row's blocks behind; that "
        "row is now padding, and a commit of the padded rows hands the stale ids to the kernel.",
        2, ("pad-row",)),
    Bug("commit_too_few_rows", "Commit of too few rows",
        "The step copies num_reqs - 1 rows to the device, so the last live row reaches the kernel "
        "as it was before (here: all zeros).", 0, ("mirror-stale", "slot-mismatch", "csr-indices")),
    Bug("skip_commit", "Skipped commit",
        "The step forgets to commit, so every row changed this step (here the row D moved into) is "
        "stale on the device. (Its slots happen to come out right: position 4 lands in block 4 in "
        "both the old and the new row; the attention still reads the wrong pages.)", 2,
        ("mirror-stale", "csr-indices")),
    Bug("last_page_len_no_full_rule", "last_page_len without the full-page rule",
        "last_page_len is computed as seq_len % page_size, so a request whose last page is full "
        "gets 0 instead of page_size.", 0, ("csr-last-page-len",)),
    Bug("pad_swap", "-1 and 0 swapped in padding",
        "Padding tokens get slot 0 (a real slot of block 0) instead of -1, and padded rows are "
        "filled with -1 instead of the null block 0.", 2, ("pad-slot", "pad-row")),
    Bug("shared_partial_block", "Shared partial block (no copy-on-write)",
        "A fork shares all of the parent's blocks, including its partially filled last block, "
        "instead of giving the child a private copy; both requests then write the same slots.",
        4, ("shared-partial-block",)),
    Bug("wrong_block_size_slot", "Slot computed with the wrong block size",
        "The slot mapping uses block size 8 while the table's blocks hold 4 tokens.",
        1, ("slot-mismatch",)),
]}

_ENGINE_FAULTS = {"move_row_no_clear", "commit_too_few_rows", "skip_commit"}


def _run_to(step: int, fault: str | None = None):
    # move_row's behaviour is fixed when the engine is built; the commit faults strike at
    # this step only, so the earlier steps are healthy
    early = {fault} if fault == "move_row_no_clear" else set()
    engine = Engine(parse_scenario(SCENARIO), faults=early)
    for _ in range(step):
        engine.step()
    if fault:
        engine.faults.add(fault)
    return engine, engine.step()


def make_dump(bug_id: str, *, buggy: bool = True) -> Dump:
    """The dump of the bug's step, with the bug injected (``buggy``) or not."""
    bug = BUGS.get(bug_id)
    if bug is None:
        raise KeyError(f"unknown bug {bug_id!r}; known: {sorted(BUGS)}")
    fault = bug_id if buggy and bug_id in _ENGINE_FAULTS else None
    engine, record = _run_to(bug.step, fault)
    dump = dump_from_step(record, engine.config)
    if not buggy or fault:
        return dump
    return _CORRUPT[bug_id](dump, record)


def bug_pair(bug_id: str) -> tuple[Dump, Dump]:
    return make_dump(bug_id, buggy=False), make_dump(bug_id, buggy=True)


# --- the four table-level bugs ------------------------------------------------------------

def _last_page_len_mod(d: Dump, record) -> Dump:
    s = d.seq_lens.astype(np.int64)
    return dataclasses.replace(d, paged_kv_last_page_len=(s % d.kbs).astype(np.int32))


def _pad_swap(d: Dump, record) -> Dump:
    slots = d.slot_mapping.copy()
    slots[d.num_tokens:] = NULL_BLOCK_ID          # 0 where -1 belongs
    dev = d.block_table_device.copy()
    dev[d.num_reqs:d.padded_reqs] = PAD_SLOT_ID   # -1 where 0 belongs
    return dataclasses.replace(d, slot_mapping=slots, block_table_device=dev)


def _wrong_block_size(d: Dump, record) -> Dump:
    slots = compute_slot_mapping(d.query_start_loc, d.positions, d.block_table_device,
                                 num_reqs=d.num_reqs, num_tokens_padded=d.slot_mapping.size,
                                 block_size=2 * d.block_size)
    return dataclasses.replace(d, slot_mapping=slots)


def _no_copy_on_write(d: Dump, record) -> Dump:
    """Undo the fork's copy: the child points at the parent's partial block instead."""
    cow = next(e for e in record.events if e["kind"] == "cow")
    src, dst = cow["src"], cow["dst"]
    child_row = record.requests[cow["req"]]["row"]
    cpu, dev = d.block_table.copy(), d.block_table_device.copy()
    for t in (cpu, dev):
        t[child_row][t[child_row] == dst] = src
    ref = d.ref_cnt.copy()
    ref[src] += 1
    ref[dst] -= 1
    free = np.concatenate(([dst], d.free_block_ids)).astype(np.int32)   # hash-less: to the front
    q = np.diff(d.query_start_loc[: d.num_reqs + 1])
    step = build_step(dev[: d.padded_reqs], d.seq_lens[: d.num_reqs], q, block_size=d.block_size,
                      num_reqs_padded=d.padded_reqs, num_tokens_padded=d.slot_mapping.size)
    return dataclasses.replace(d, block_table=cpu, block_table_device=dev, ref_cnt=ref,
                               free_block_ids=free, slot_mapping=step.slot_mapping,
                               paged_kv_indices=step.paged_kv_indices)


_CORRUPT = {"last_page_len_no_full_rule": _last_page_len_mod, "pad_swap": _pad_swap,
            "wrong_block_size_slot": _wrong_block_size, "shared_partial_block": _no_copy_on_write}
