"""Step records as JSON and as text (the `run` command, dumps, downloads)."""
from __future__ import annotations

from .engine import StepRecord
from .scenario import EngineConfig


def _rows(a, n):
    return a[:n].tolist()


def step_to_json(r: StepRecord, config: EngineConfig) -> dict:
    n_rows = max(r.num_reqs_padded, r.num_reqs)
    groups = []
    for gid, g in enumerate(config.groups):
        inp = r.inputs[gid]
        d = {"group": gid, "kind": g.kind, "label": g.label,
             "block_table_cpu": _rows(r.cpu_tables[gid], max(r.num_reqs, 1)),
             "block_table_device": _rows(r.device_tables[gid], max(r.num_reqs, 1)),
             "num_blocks_per_row": r.num_blocks_per_row[gid][: max(r.num_reqs, 1)].tolist()}
        d.update(inp.to_json(backend="reference (numpy)"))
        d.pop("backend")
        groups.append(d)
    return {
        "step": r.index,
        "scheduled": [{"req": s.req_id, "row": s.row, "num_tokens": s.num_tokens,
                       "num_computed": s.num_computed, "seq_len": s.seq_len, "kind": s.kind}
                      for s in r.scheduled],
        "num_reqs": r.num_reqs, "num_reqs_padded": r.num_reqs_padded,
        "num_tokens": r.num_tokens, "num_tokens_padded": r.num_tokens_padded,
        "commit_rows": r.commit_rows, "commit_bytes": r.commit_bytes,
        "rows": r.rows[:n_rows], "groups": groups,
        "free_queue": r.free_queue, "ref_counts": r.ref_counts,
        "cached_blocks": {str(k): v for k, v in r.cached_blocks.items()},
        "requests": r.requests, "events": r.events,
    }


def describe_event(e: dict) -> str:
    k = e["kind"]
    g = f" (group {e['group']})" if e.get("group") else ""
    if k == "arrive":
        return f"{e['req']} arrives with {e['prompt_len']} prompt tokens"
    if k == "alloc":
        return f"{e['req']} gets new block(s) {e['blocks']} from the front of the free queue{g}"
    if k == "cache":
        return f"block(s) {e['blocks']} of {e['req']} are full: their hashes enter the prefix cache{g}"
    if k == "cache_hit":
        return f"{e['req']} reuses cached block(s) {e['blocks']} ({e['tokens']} tokens not recomputed){g}"
    if k == "evict":
        return f"block {e['block']} is reallocated, so its old hash leaves the prefix cache"
    if k == "free":
        return (f"{e['req']} releases block(s) {e['blocks']}{g}: to the front {e['to_front']}, "
                f"to the back {e['to_back']}")
    if k == "cow":
        return (f"{e['req']} gets a private copy of block {e['src']} as block {e['dst']} "
                f"(copy-on-write of a partial block){g}")
    if k == "share":
        return f"{e['req']} shares full block(s) {e['blocks']} with its parent{g}"
    if k == "fork":
        return f"{e['req']} forks into {e['child']}"
    if k == "fork_failed":
        return f"fork of {e['req']} into {e['child']} failed: {e['why']}"
    if k == "window_skip":
        return f"{e['req']}: block(s) {e['blocks']} slid out of the window and became the null block{g}"
    if k == "preempt":
        return f"{e['req']} is preempted ({e['why']}): all blocks freed, {e['recompute_tokens']} tokens to recompute"
    if k == "finish":
        return f"{e['req']} finishes ({e['why']})"
    if k == "add_row":
        return f"{e['req']} is added at row {e['row']} with blocks {e['blocks']}"
    if k == "append_row":
        return f"row {e['row']} ({e['req']}) appends blocks {e['blocks']}"
    if k == "clear_row":
        return f"row {e['row']} ({e['req']}) is cleared"
    if k == "move_row":
        return f"{e['req']} moves from row {e['src']} to row {e['dst']} (condense)"
    if k == "swap_row":
        return f"rows {e['rows'][0]} and {e['rows'][1]} swap"
    if k == "commit":
        return f"commit: rows [0, {e['rows']}) copied to the device mirror, {e['bytes']} bytes"
    return str(e)


def step_to_text(r: StepRecord, config: EngineConfig) -> str:
    lines = [f"\n== step {r.index}: {r.num_reqs} request(s), {r.num_tokens} token(s)"
             f" (padded to {r.num_reqs_padded} rows, {r.num_tokens_padded} tokens)"]
    for s in r.scheduled:
        lines.append(f"  row {s.row}: {s.req_id} {s.kind} {s.num_tokens} token(s), "
                     f"positions {s.num_computed}..{s.seq_len - 1}")
    for gid, g in enumerate(config.groups):
        inp = r.inputs[gid]
        n = max(r.num_reqs, 1)
        lines.append(f"  group {gid} ({g.label}):")
        for row in range(min(n, len(r.cpu_tables[gid]))):
            cnt = int(r.num_blocks_per_row[gid][row])
            cpu = r.cpu_tables[gid][row][: max(cnt, 1)].tolist()
            dev = r.device_tables[gid][row][: max(cnt, 1)].tolist()
            stale = "" if cpu == dev else "   <- mirror stale"
            lines.append(f"    row {row}: cpu {cpu} device {dev}{stale}")
        if inp.slot_mapping is not None:
            lines.append(f"    slot_mapping {inp.slot_mapping.tolist()}")
        if inp.paged_kv_indptr is not None:
            lines.append(f"    paged_kv_indptr {inp.paged_kv_indptr.tolist()} indices "
                         f"{inp.paged_kv_indices.tolist()} last_page_len {inp.paged_kv_last_page_len.tolist()}")
    lines.append(f"  free queue (front first): {r.free_queue}")
    lines.append("  events:")
    lines.extend("    - " + describe_event(e) for e in r.events)
    return "\n".join(lines)
