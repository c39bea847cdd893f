"""Built-in scenarios for the step-through and shared-prefix pages, and their tables.

A scenario is replayed once by the real ``Engine``; every ``StepRecord`` is kept, so
the pages move forward and back by index without re-running anything.
"""
from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pandas as pd

from kvviz.core.engine import Engine
from kvviz.core.records import StepRecord
from kvviz.core.pool import block_hashes_for, none_hash_for
from kvviz.errors import BadInput
from kvviz.views.report import describe_event
from kvviz.core.manager import GroupSpec
from kvviz.core.scenario import EngineConfig, Scenario, parse_scenario
from kvviz.core.versions import RUNNERS, resolve_version, rules_for
from kvviz.views.runners import pick_runner, v1_only

SCENARIOS = {
    "lifecycle": {
        "name": "lifecycle",
        "description": "Arrivals, prefill, decode, a finish that leaves a hole (condense moves a row), "
                       "a preemption when the pool runs dry, and a fork.",
        "config": {"num_blocks": 14, "block_size": 4, "max_num_reqs": 4, "max_num_batched_tokens": 32,
                   "max_model_len": 48, "enable_prefix_caching": True, "cudagraph_capture_sizes": [1, 2, 4, 8]},
        "requests": [{"id": "A", "arrival": 0, "prompt_len": 6, "max_tokens": 3},
                     {"id": "B", "arrival": 0, "prompt_len": 9, "max_tokens": 8},
                     {"id": "C", "arrival": 1, "prompt_len": 5, "max_tokens": 7},
                     {"id": "D", "arrival": 4, "prompt_len": 14, "max_tokens": 3}],
        "actions": [{"step": 5, "kind": "fork", "req": "C", "n": 1},
                    {"step": 6, "kind": "preempt", "req": "B"}],
    },
    "prefixes": {
        "name": "prefixes",
        "description": "Three requests with one system prompt. A and B share its full blocks; B forks (copy-on-write "
                       "of the partial last block). B and its fork finish: the prompt's blocks stay cached in the "
                       "free queue, freed last so evicted last. D, a long unrelated prompt, runs the pool dry and "
                       "evicts a cached block; then C arrives and hits the system prompt's blocks that the finished "
                       "requests left free but cached (and evicts one more to allocate its own).",
        "config": {"num_blocks": 13, "block_size": 4, "max_num_reqs": 6, "max_num_batched_tokens": 64,
                   "max_model_len": 48, "enable_prefix_caching": True},
        "requests": [{"id": "A", "arrival": 0, "prompt_len": 10, "prefix_group": "sys", "prefix_len": 8,
                      "max_tokens": 2},
                     {"id": "B", "arrival": 1, "prompt_len": 11, "prefix_group": "sys", "prefix_len": 8,
                      "max_tokens": 3},
                     {"id": "D", "arrival": 4, "prompt_len": 34, "max_tokens": 2},
                     {"id": "C", "arrival": 5, "prompt_len": 9, "prefix_group": "sys", "prefix_len": 8,
                      "max_tokens": 3}],
        "actions": [{"step": 2, "kind": "fork", "req": "B", "n": 1}],
    },
}
NAMES = list(SCENARIOS)
MAX_STEPS = 200


MAX_SCENARIO_BYTES = 1 << 20


def load(name_or_json: str, *, vllm: str | None = None, runner: str | None = None) -> Scenario:
    """A built-in name or a JSON scenario text (BadInput on a bad one). ``vllm`` and ``runner``
    (a page's selectors) replace the config's own ``vllm`` and ``runner`` keys when given
    (``runner="auto"``: the version picks; a model that must stay on V1 keeps V1)."""
    raw_dict = scenario_dict(name_or_json)
    if (vllm is not None or runner is not None) and isinstance(raw_dict, dict):
        cfg = raw_dict.get("config", {})
        if isinstance(cfg, dict):
            cfg = dict(cfg)
            if vllm is not None:
                cfg.pop("profile", None)
                cfg["vllm"] = vllm
            if runner is not None:
                cfg.pop("runner", None)
                try:
                    chosen = pick_runner(cfg.get("vllm", cfg.get("profile")), runner, groups=_groups_of(cfg))
                    if chosen.override is not None:
                        cfg["runner"] = chosen.override
                except (ValueError, TypeError, KeyError):   # a bad version: parse_scenario names it
                    if runner in RUNNERS:
                        cfg["runner"] = runner
            raw_dict = {**raw_dict, "config": cfg}
    return parse_scenario(raw_dict)


def scenario_dict(name_or_json: str):
    """The scenario as JSON data (a built-in's copy, or the text parsed); BadInput on bad text."""
    from kvviz.errors import parse_json

    if name_or_json in SCENARIOS:
        return copy.deepcopy(SCENARIOS[name_or_json])
    raw = name_or_json.encode()
    if len(raw) > MAX_SCENARIO_BYTES:
        raise BadInput(f"the scenario is {len(raw)} bytes; the limit is {MAX_SCENARIO_BYTES}")
    return parse_json(raw, "the scenario")


def _groups_of(cfg: dict) -> list:
    """The KV-cache groups of a config as given (only their kinds matter here)."""
    groups = cfg.get("groups", [{"kind": "full"}])
    if not isinstance(groups, list):
        return [GroupSpec()]
    return [SimpleNamespace(kind=g.get("kind", "full") if isinstance(g, dict) else "full") for g in groups]


def own_version_keys(name_or_json: str) -> dict:
    """The ``vllm`` (resolved to a known version) and ``runner`` a scenario's config names itself,
    for the keys it has: what a page's selectors start from when the scenario is loaded."""
    out = {}
    d = scenario_dict(name_or_json)
    cfg = d.get("config") if isinstance(d, dict) else None
    if not isinstance(cfg, dict):
        return out
    name = cfg.get("vllm", cfg.get("profile"))
    if isinstance(name, str):
        try:
            out["vllm"] = resolve_version(name)
        except ValueError:
            pass
    if cfg.get("runner") in RUNNERS:
        out["runner"] = cfg["runner"]
    return out


def version_note(name_or_json: str) -> str | None:
    """The warning a page shows when a scenario names a vLLM newer than every release kvviz knows
    (it runs the newest release's rules), else None."""
    from kvviz.core.versions import beyond_newest_note, newer_than_known

    try:
        d = scenario_dict(name_or_json)
    except BadInput:
        return None
    cfg = d.get("config") if isinstance(d, dict) else None
    name = cfg.get("vllm", cfg.get("profile")) if isinstance(cfg, dict) else None
    return beyond_newest_note(name) if newer_than_known(name) else None


def selectors_for(name_or_json: str, vllm: str | None, runner: str | None) -> tuple[str, str]:
    """The (version, runner) selector values a page shows once this scenario is loaded: its own
    config keys where it has them (a ``vllm`` without a ``runner`` means "auto": that version
    picks), else the page's current ones (default main, auto). BadInput on a bad scenario text."""
    from kvviz.core.versions import no_v1_sentence
    from kvviz.views.runners import AUTO, DEFAULT_VERSION, VERSION_CHOICES, runner_choices

    own = own_version_keys(name_or_json)
    version = own.get("vllm", vllm if vllm in VERSION_CHOICES else DEFAULT_VERSION)
    if "runner" in own:
        chosen = own["runner"]
    elif "vllm" in own:
        chosen = AUTO
    else:
        chosen = runner or AUTO
    if chosen not in runner_choices(version):
        if "runner" in own:   # the scenario's own runner does not exist in its own version
            parse_scenario(scenario_dict(name_or_json))   # BadInput naming it
            if own["runner"] == "v1":
                raise BadInput(f"config: {no_v1_sentence(version)}")
            raise BadInput(f"config: Model Runner V2 first shipped in vLLM v0.12.0; {version} has only V1")
        chosen = AUTO
    return version, chosen


def is_v1_only(scenario: Scenario) -> bool:
    """A scenario vLLM keeps on Model Runner V1 (a state group, or several KV-cache groups, before
    v0.29.0)."""
    return v1_only(scenario.config.groups, scenario.config.vllm)


def replay(scenario: Scenario, max_steps: int = MAX_STEPS) -> list[StepRecord]:
    return Engine(scenario).run(max_steps)


def require_steps(records: list[StepRecord]) -> None:
    """BadInput for a scenario that replays to no step at all (nothing to show)."""
    if not records:
        raise BadInput("the scenario has no step (no request ever arrives)")


def events_frame(events: list[dict], lang: str = "en") -> pd.DataFrame:
    return pd.DataFrame({"kind": [e["kind"] for e in events],
                         "what happened": [describe_event(e, lang) for e in events]})


def requests_frame(rec: StepRecord) -> pd.DataFrame:
    """One line per request; its "row" is its persistent-batch row (V1) or, under V2, its
    request-state index (the column is then named "state index")."""
    out = []
    row_key = "state index" if rec.runner == "v2" else "row"
    for rid, r in rec.requests.items():
        out.append({"request": rid, "state": r["state"], row_key: r["row"], "prompt": r["prompt_len"],
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
    """Table rows worth drawing: the most rows any step padded to or held requests in."""
    return max(max((r.num_reqs_padded for r in records), default=1),
               max((len([x for x in r.rows if x]) for r in records), default=1), 1)


def table_sizes(config: EngineConfig, group: GroupSpec | None = None) -> dict:
    """``block_table_heatmap``'s sizes for a scenario's table (of ``group``; default the first
    geometry): kernel blocks in the pool, slots per kernel block, kernel blocks per manager block."""
    geo = config.geometry if group is None else config.group_geometry(group)
    return {"num_blocks": geo.kernel_block_count(config.num_blocks), "geometry": geo}


def stale_rows(rec: StepRecord, num_rows: int, cols: int, gid: int = 0) -> list[int]:
    """Rows (of the first ``num_rows``, first ``cols`` columns) where the device mirror the
    kernels read differs from the CPU table: what this step's commit had not copied yet."""
    cpu, dev = rec.cpu_tables[gid], rec.device_before_commit[gid]
    return [int(r) for r in range(num_rows) if (cpu[r, :cols] != dev[r, :cols]).any()]


# every column key of the step's tables (scheduled_rows, requests_frame, idx_mapping_frame): the page
# labels each one in its language (kvviz.texts.step_through "col.<key>")
STEP_TABLE_COLUMNS = ("batch position", "state index", "request", "kind", "tokens", "computed before", "seq_len",
                      "row", "state", "prompt", "output", "computed", "blocks", "parent", "preempted", "num_blocks")


def scheduled_rows(rec: StepRecord) -> list[dict]:
    """What the step scheduled, one request a line (under V2 its row is the batch position, and
    its request-state index follows)."""
    if rec.runner == "v2":
        return [{"batch position": s.row, "state index": s.state_index, "request": s.req_id, "kind": s.kind,
                 "tokens": s.num_tokens, "computed before": s.num_computed, "seq_len": s.seq_len}
                for s in rec.scheduled]
    return [{"row": s.row, "request": s.req_id, "kind": s.kind, "tokens": s.num_tokens,
             "computed before": s.num_computed, "seq_len": s.seq_len} for s in rec.scheduled]


# --- Model Runner V2's tables --------------------------------------------------------------------------

def is_v2(rec_or_records) -> bool:
    """Whether a step (or a replay, by its first step) ran under Model Runner V2."""
    rec = rec_or_records[0] if isinstance(rec_or_records, list) and rec_or_records else rec_or_records
    return getattr(rec, "runner", "v1") == "v2"


def state_rows_window(records: list[StepRecord], gid: int = 0) -> tuple[int, int]:
    """Rows [lo, hi) of V2's request-state table worth drawing: from the lowest state index any
    step used (the LIFO free list hands out the highest indices first) to the last row."""
    rows = records[0].cpu_tables[gid].shape[0] if records else 1
    used = [i for r in records for i in r.idx_mapping]
    used += [i for r in records for i, rid in enumerate(r.state_rows) if rid]
    return (min(used), rows) if used else (0, rows)


def state_row_names(rec: StepRecord) -> list[str]:
    """The request holding each request-state index in this step ("" where the state is free)."""
    return [rid or "" for rid in rec.state_rows]


def gathered_counts(rec: StepRecord, gid: int = 0) -> np.ndarray:
    """Blocks each batch row of V2's input table holds (its state's count; padded rows 0)."""
    out = np.zeros(max(rec.num_reqs_padded, len(rec.idx_mapping)), dtype=np.int64)
    counts = rec.num_blocks_per_row[gid]
    for b, s in enumerate(rec.idx_mapping):
        out[b] = int(counts[s])
    return out


def stale_tails(rec: StepRecord, num_rows: int, cols: int, gid: int = 0, *, after: bool = True
                ) -> dict[int, int]:
    """V2: batch rows of the input table (after the gather, or before it) whose entries past the
    row's ``num_blocks`` (within ``cols``) still hold ids an earlier step left: {row: num_blocks}.
    Harmless: the kernels read only the first num_blocks entries of a row."""
    table = rec.device_tables[gid] if after else rec.device_before_commit[gid]
    counts = gathered_counts(rec, gid)
    out = {}
    for b in range(min(num_rows, len(rec.idx_mapping), table.shape[0])):
        n = int(counts[b])
        if n < cols and (table[b, n:cols] != 0).any():
            out[b] = n
    return out


def gather_changed_rows(rec: StepRecord, num_rows: int, cols: int, gid: int = 0) -> list[int]:
    """V2: batch rows the gather rewrote (the input table before it differs from after it)."""
    before, after = rec.device_before_commit[gid], rec.device_tables[gid]
    return [int(r) for r in range(min(num_rows, before.shape[0])) if (before[r, :cols] != after[r, :cols]).any()]


def idx_mapping_frame(rec: StepRecord, gid: int = 0) -> pd.DataFrame:
    """V2's idx_mapping: batch position -> request-state index, with the request and its count."""
    counts = rec.num_blocks_per_row[gid]
    return pd.DataFrame({"batch position": list(range(len(rec.idx_mapping))),
                         "state index": list(rec.idx_mapping),
                         "request": [rec.rows[b] if b < len(rec.rows) else "" for b in range(len(rec.idx_mapping))],
                         "num_blocks": [int(counts[s]) for s in rec.idx_mapping]},
                        columns=["batch position", "state index", "request", "num_blocks"])


# --- shared prefixes ---------------------------------------------------------------------------------

def shared_blocks(blocks: np.ndarray, ref: np.ndarray) -> list[int]:
    """The physical blocks of a ``sharing_matrix`` held more than once, ascending."""
    return sorted({int(b) for b, r in zip(blocks.ravel(), ref.ravel()) if r > 1})


def prompt_blocks(scenario: Scenario) -> dict:
    """How the first request's prompt splits into blocks (the prefix cache hashes only the full
    ones): prompt length ``n``, block size ``b``, the ``full`` block indices, ``rest`` tokens."""
    geo = scenario.config.geometry
    n = len(scenario.requests[0].prompt)
    full = geo.full_blocks(n)
    return {"n": n, "b": geo.virtual_block_size, "full": list(range(full)), "rest": n - geo.tokens_held(full)}


def sharing_matrix(rec: StepRecord, cols: int, gid: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(blocks, ref counts) per [row, column] of the table the rows of ``rec.rows`` name: V1's CPU
    table, or V2's gathered input table (batch order, each row's count from its state); -1 where
    the row has no block."""
    n = max(rec.num_reqs, 1)
    if rec.runner == "v2":
        t = rec.device_tables[gid][:n, :cols]
        counts = gathered_counts(rec, gid)[:n]
        if len(counts) < n:
            counts = np.concatenate([counts, np.zeros(n - len(counts), dtype=counts.dtype)])
    else:
        t = rec.cpu_tables[gid][:n, :cols]
        counts = rec.num_blocks_per_row[gid][:n]
    mask = np.arange(cols)[None, :] < counts[:, None]
    refs = np.asarray(rec.ref_counts)
    blocks = np.where(mask, t, -1)
    ref = np.where(mask, refs[np.clip(t, 0, len(refs) - 1)], 0)
    return blocks, ref


POOL_WHEN = ("after", "launch")


def pool_state(rec: StepRecord, when: str = "after") -> tuple[list[int], list[int]]:
    """(free queue, ref counts) "after" this step's finishes (what its events end with) or at the
    kernels' "launch" (the commit; requests that finish in this step still hold their blocks)."""
    if when == "after" and rec.ref_counts_after:
        return rec.free_queue_after, rec.ref_counts_after
    return rec.free_queue, rec.ref_counts


def finished_after_launch(rec: StepRecord) -> list[str]:
    """Requests that finished in this step after the kernels' launch (they change the pool state)."""
    return [rid for rid, q in rec.requests.items() if q["state"] == "finished" and q["blocks"]
            and any(q["blocks"][g] for g in range(len(q["blocks"])))]


HASH_CHAIN_COLUMNS = ["physical block", "hash", "parent hash", "tokens", "request", "block", "cached at step",
                      "held by", "ref count", "in prefix cache"]


def hash_chain_frame(scenario: Scenario, records: list[StepRecord], index: int, when: str = "after",
                     gid: int = 0, lang: str = "en") -> pd.DataFrame:
    """Every block in the prefix cache at step ``index`` (hash = H(parent hash, tokens); the request
    whose ``cache`` event registered it, which of its blocks and tokens; who holds it now and its ref
    count), then the full prompt blocks of live requests whose hash is not cached (yet). The part
    of a block's token span ("prompt", "output") is in ``lang``."""
    from kvviz.texts.i18n import t

    rec = records[index]
    geo = scenario.config.geometry
    _, refs = pool_state(rec, when)
    origin: dict[int, tuple[str, int]] = {}          # block -> (request, step) of its latest cache event
    for r in records[:index + 1]:
        for e in r.events:
            if e["kind"] == "cache" and e.get("group", 0) == gid:
                for b in e["blocks"]:
                    origin[b] = (e["req"], r.index)

    def blocks_of(q):
        return q["blocks"][gid] if q.get("blocks") and len(q["blocks"]) > gid else []

    def span(i, prompt_len):
        lo, hi = geo.tokens_held(i), geo.tokens_held(i + 1) - 1
        part = "prompt" if hi < prompt_len else ("prompt_output" if lo < prompt_len else "output")
        return f"{lo}–{hi} ({t('scenarios', 'span.' + part, lang)})"

    out = []
    for b, short in sorted(rec.cached_blocks.items()):
        req, at = origin.get(b, (None, None))
        q = records[at].requests.get(req) if req is not None else None
        mine = blocks_of(q) if q else []
        i = mine.index(b) if b in mine else None
        if i is None:
            parent, tokens = "?", "?"
        else:
            parent = "NONE_HASH" if i == 0 else records[at].cached_blocks.get(mine[i - 1], "?")
            tokens = span(i, q["prompt_len"])
        held = [rid for rid, r in rec.requests.items() if b in blocks_of(r)
                and (when == "launch" or r["state"] != "finished")]
        out.append({"physical block": b, "hash": short, "parent hash": parent, "tokens": tokens,
                    "request": req or "?", "block": i, "cached at step": at, "held by": " ".join(held),
                    "ref count": int(refs[b]) if b < len(refs) else None, "in prefix cache": True})
    cached_hashes = set(rec.cached_blocks.values())
    specs = {r.req_id: r for r in scenario.requests}
    for rid, r in rec.requests.items():
        if r["state"] not in ("running", "waiting", "preempted"):
            continue
        root = rid
        while root not in specs and rec.requests.get(root, {}).get("parent"):
            root = rec.requests[root]["parent"]
        spec = specs.get(root)
        if spec is None:
            continue
        parent = "NONE_HASH"
        for i, h in enumerate(block_hashes_for(spec.prompt, geo.virtual_block_size, spec.extra_keys,
                                               none_hash_for(rules_for(scenario.config.vllm)))):
            short = h[:4].hex()
            if short not in cached_hashes:
                out.append({"physical block": None, "hash": short, "parent hash": parent,
                            "tokens": span(i, len(spec.prompt)), "request": rid, "block": i,
                            "cached at step": None, "held by": "", "ref count": None, "in prefix cache": False})
            parent = short
    return pd.DataFrame(out, columns=HASH_CHAIN_COLUMNS)


PREFIX_EVENTS = ("cache", "cache_hit", "evict", "cow", "share", "fork", "free", "alloc")


def prefix_events(records: list[StepRecord], lang: str = "en") -> pd.DataFrame:
    """Every prefix-cache event of the scenario, with its step."""
    out = [{"step": r.index, "kind": e["kind"], "what happened": describe_event(e, lang)}
           for r in records for e in r.events if e["kind"] in PREFIX_EVENTS]
    return pd.DataFrame(out, columns=["step", "kind", "what happened"])


# --- Step through's figures: built once per (scenario, version, runner, step, language, view) ------

STEP_TITLE_CELLS = 20   # the two tables share 3/5 of the page: at 1280 px a title line of ~20 letters fits at 16 px

def step_table_figures(scenario: Scenario, records: list[StepRecord], idx: int, lang: str = "en",
                       after: bool = False) -> dict:
    """Step through's two tables of step ``idx`` and what their captions name. V1: the CPU block
    table and the device mirror (before the commit unless ``after``), and the stale rows. V2: the
    request-state table and the gathered input table (after the gather when ``after``, else
    before it), the gathered rows and the stale tails. Returns {"cpu", "dev": figures, "stale",
    "changed", "tails": lists} (read only: a page may share it with other sessions)."""
    from kvviz.texts.i18n import t
    from kvviz.views import figures

    rec = records[idx]
    cols, n_rows, sizes = shown_columns(records), rows_shown(records), table_sizes(scenario.config)
    out = {"stale": [], "changed": [], "tails": {}}
    if is_v2(records):
        out["cpu"] = figures.block_table_heatmap(
            rec.cpu_tables[0], num_reqs=rec.cpu_tables[0].shape[0], **sizes, counts=rec.num_blocks_per_row[0],
            lang=lang, max_cols=cols, showscale=False, title_cells=STEP_TITLE_CELLS,
            row_window=state_rows_window(records), row_title=t("figures", "state_index", lang), row_names=state_row_names(rec))
        dev = rec.device_tables[0] if after else rec.device_before_commit[0]
        out["changed"] = gather_changed_rows(rec, n_rows, cols)
        out["tails"] = stale_tails(rec, n_rows, cols, after=after)
        out["dev"] = figures.block_table_heatmap(
            dev[:n_rows], num_reqs=rec.num_reqs if after else n_rows, pad_until=rec.num_reqs_padded, **sizes,
            counts=gathered_counts(rec) if after else None, stale_rows=[] if after else out["changed"],
            lang=lang, max_cols=cols, showscale=False, title_cells=STEP_TITLE_CELLS,
            row_title=t("figures", "batch_position", lang),
            row_names=rec.rows if after else None, stale_tails=out["tails"] if after else None)
    else:
        out["stale"] = stale_rows(rec, n_rows, cols)
        out["cpu"] = figures.block_table_heatmap(rec.cpu_tables[0][:n_rows], num_reqs=n_rows, **sizes,
                                                 counts=rec.num_blocks_per_row[0], lang=lang, max_cols=cols,
                                                 showscale=False, title_cells=STEP_TITLE_CELLS)
        dev = rec.device_tables[0] if after else rec.device_before_commit[0]
        out["dev"] = figures.block_table_heatmap(dev[:n_rows], num_reqs=n_rows, **sizes,
                                                 stale_rows=[] if after else out["stale"], lang=lang,
                                                 max_cols=cols, showscale=False, title_cells=STEP_TITLE_CELLS)
    return out


def step_pool_figures(records: list[StepRecord], idx: int, lang: str = "en", when: str = "after") -> dict:
    """The free queue and the ref counts of step ``idx`` at ``when`` (POOL_WHEN): {"queue", "refs"}."""
    from kvviz.views import figures

    rec = records[idx]
    queue, refs = pool_state(rec, when)
    return {"queue": figures.free_queue_figure(queue, rec.cached_blocks, lang=lang),
            "refs": figures.ref_count_figure(refs, queue, rec.cached_blocks, lang=lang)}
