"""Built-in scenarios for the step-through and shared-prefix pages, and their tables.

A scenario is replayed once by the real ``Engine``; every ``StepRecord`` is kept, so
the pages move forward and back by index without re-running anything.
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from .engine import Engine, StepRecord
from .pool import block_hashes_for
from .report import describe_event
from .scenario import Scenario, parse_scenario

SCENARIOS = {
    "lifecycle": {
        "name": "lifecycle",
        "description": "Arrivals, prefill, decode, a finish that leaves a hole (condense moves a row), "
                       "a preemption when the pool runs dry, and a fork.",
        "config": {"num_blocks": 14, "block_size": 4, "max_num_reqs": 4, "max_num_batched_tokens": 32,
                   "max_model_len": 64, "enable_prefix_caching": True, "cudagraph_capture_sizes": [1, 2, 4, 8]},
        "requests": [{"id": "A", "arrival": 0, "prompt_len": 6, "max_tokens": 3},
                     {"id": "B", "arrival": 0, "prompt_len": 9, "max_tokens": 8},
                     {"id": "C", "arrival": 1, "prompt_len": 5, "max_tokens": 7},
                     {"id": "D", "arrival": 4, "prompt_len": 14, "max_tokens": 3}],
        "actions": [{"step": 5, "kind": "fork", "req": "C", "n": 1},
                    {"step": 6, "kind": "preempt", "req": "B"}],
    },
    "prefixes": {
        "name": "prefixes",
        "description": "Three requests with one system prompt: shared full blocks, a cache hit on blocks a "
                       "finished request left in the free queue, an eviction under pressure, and a fork with "
                       "copy-on-write of the partial last block.",
        "config": {"num_blocks": 13, "block_size": 4, "max_num_reqs": 6, "max_num_batched_tokens": 64,
                   "max_model_len": 64, "enable_prefix_caching": True},
        "requests": [{"id": "A", "arrival": 0, "prompt_len": 10, "prefix_group": "sys", "prefix_len": 8,
                      "max_tokens": 2},
                     {"id": "B", "arrival": 1, "prompt_len": 11, "prefix_group": "sys", "prefix_len": 8,
                      "max_tokens": 6},
                     {"id": "C", "arrival": 4, "prompt_len": 9, "prefix_group": "sys", "prefix_len": 8,
                      "max_tokens": 3},
                     {"id": "D", "arrival": 5, "prompt_len": 17, "max_tokens": 2}],
        "actions": [{"step": 2, "kind": "fork", "req": "B", "n": 1}],
    },
}
NAMES = list(SCENARIOS)
MAX_STEPS = 200


MAX_SCENARIO_BYTES = 1 << 20


def load(name_or_json: str) -> Scenario:
    """A built-in name or a JSON scenario text (BadInput on a bad one)."""
    from .errors import BadInput, parse_json

    if name_or_json in SCENARIOS:
        return parse_scenario(SCENARIOS[name_or_json])
    raw = name_or_json.encode()
    if len(raw) > MAX_SCENARIO_BYTES:
        raise BadInput(f"the scenario is {len(raw)} bytes; the limit is {MAX_SCENARIO_BYTES}")
    return parse_scenario(parse_json(raw, "the scenario"))


def replay(scenario: Scenario, max_steps: int = MAX_STEPS) -> list[StepRecord]:
    return Engine(scenario).run(max_steps)


def table_frame(arr: np.ndarray, num_rows: int, rows: list, counts=None, cols: int | None = None) -> pd.DataFrame:
    n = max(num_rows, 1)
    width = arr.shape[1] if cols is None else cols
    df = pd.DataFrame(arr[:n, :width], columns=[f"c{i}" for i in range(width)])
    df.insert(0, "request", [rows[i] if i < len(rows) and rows[i] else "—" for i in range(n)])
    if counts is not None:
        df.insert(1, "count", counts[:n])
    return df


def events_frame(events: list[dict], lang: str = "en") -> pd.DataFrame:
    return pd.DataFrame({"kind": [e["kind"] for e in events],
                         "what happened": [describe_event(e, lang) for e in events]})


def requests_frame(rec: StepRecord) -> pd.DataFrame:
    out = []
    for rid, r in rec.requests.items():
        out.append({"request": rid, "state": r["state"], "row": r["row"], "prompt": r["prompt_len"],
                    "output": r["output_len"], "computed": r["num_computed_tokens"],
                    "blocks": " ".join(map(str, r["blocks"][0])) if r["blocks"] else "",
                    "parent": r["parent"] or "", "preempted": r["preemptions"]})
    return pd.DataFrame(out)


def shown_columns(records: list[StepRecord], gid: int = 0, extra: int = 1) -> int:
    """Columns worth drawing: the widest prefix ever used in the scenario, plus ``extra``."""
    used = max((int(r.num_blocks_per_row[gid].max()) for r in records), default=1)
    width = records[0].cpu_tables[gid].shape[1] if records else 1
    return min(width, max(used + extra, 4))


def rows_shown(records: list[StepRecord]) -> int:
    return max(max((r.num_reqs_padded for r in records), default=1),
               max((len([x for x in r.rows if x]) for r in records), default=1), 1)


# --- shared prefixes ---------------------------------------------------------------------------------

def sharing_matrix(rec: StepRecord, cols: int, gid: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(blocks, ref counts) per [row, column] of the CPU table; -1 where the row has no block."""
    n = max(rec.num_reqs, 1)
    t = rec.cpu_tables[gid][:n, :cols]
    counts = rec.num_blocks_per_row[gid][:n]
    mask = np.arange(cols)[None, :] < counts[:, None]
    refs = np.asarray(rec.ref_counts)
    blocks = np.where(mask, t, -1)
    ref = np.where(mask, refs[np.clip(t, 0, len(refs) - 1)], 0)
    return blocks, ref


def hash_chain_frame(scenario: Scenario, rec: StepRecord) -> pd.DataFrame:
    """Each live request's full prompt blocks: hash = H(parent hash, tokens); where it lives; cached?"""
    specs = {r.req_id: r for r in scenario.requests}
    bs = scenario.config.block_size * scenario.config.dcp_world_size
    out = []
    for rid, r in rec.requests.items():
        if r["state"] not in ("running", "waiting"):
            continue
        root = rid
        while root not in specs and rec.requests.get(root, {}).get("parent"):
            root = rec.requests[root]["parent"]
        spec = specs.get(root)
        if spec is None:
            continue
        hashes = block_hashes_for(spec.prompt, bs, spec.extra_keys)
        blocks = r["blocks"][0] if r["blocks"] else []
        parent = "NONE_HASH"
        for i, h in enumerate(hashes):
            short = h[:4].hex()
            b = blocks[i] if i < len(blocks) else None
            out.append({"request": rid, "block": i, "tokens": f"{i * bs}–{i * bs + bs - 1}",
                        "parent hash": parent, "hash": short, "physical block": b,
                        "in prefix cache": b is not None and rec.cached_blocks.get(b) == short})
            parent = short
    return pd.DataFrame(out, columns=["request", "block", "tokens", "parent hash", "hash", "physical block",
                                      "in prefix cache"])


PREFIX_EVENTS = ("cache", "cache_hit", "evict", "cow", "share", "fork", "free", "alloc")


def prefix_events(records: list[StepRecord], lang: str = "en") -> pd.DataFrame:
    """Every prefix-cache event of the scenario, with its step."""
    out = [{"step": r.index, "kind": e["kind"], "what happened": describe_event(e, lang)}
           for r in records for e in r.events if e["kind"] in PREFIX_EVENTS]
    return pd.DataFrame(out, columns=["step", "kind", "what happened"])
