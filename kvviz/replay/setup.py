"""A captured run turned into a kvviz scenario: its engine config from the manifest, its requests from
requests.json (prompts, arrival steps, aborts, how many tokens each generated), or one sentence naming
the knob kvviz does not model.

Every field of the run is untrusted: the scenario is built as a dict and read by
``kvviz.core.scenario.parse_scenario`` (the same checks and limits as a scenario file), and the
generated token ids are checked here.

Which attention backends reorder V1's persistent batch (decodes first): the backend's metadata builder
sets ``reorder_batch_threshold`` (``v1/attention/backend.py`` ``AttentionMetadataBuilder``: None by
default; ``_init_reorder_batch_threshold(1)`` in FlashInfer's and the Mamba / linear-attention
builders) and ``GPUModelRunner._may_reorder_batch`` reorders when any group's threshold is set
(``calculate_reorder_batch_threshold``). Read in the v0.28.0 and v0.32.0 wheels; captured runs exist
from v0.28.0 (``kvviz.capture``). A backend in neither list is refused: kvviz cannot tell what it does.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kvviz.core.scenario import Scenario, parse_scenario
from kvviz.core.versions import resolve_version
from kvviz.errors import BadInput

NO_REORDER = ("FLASH_ATTN", "TRITON_ATTN", "FLEX_ATTENTION", "CPU_ATTN")
REORDER_DECODES_FIRST = ("FLASHINFER", "MAMBA1_ATTN", "MAMBA2_ATTN", "SHORT_CONV_ATTN", "LINEAR_ATTN",
                         "GDN_ATTN")
GROUP_KINDS = {"attention": "full", "sliding_window": "sliding_window", "state": "state"}
MAX_TOKEN_ID = 1 << 31
MAX_REQUEST_ID = 32          # a scenario's id limit; longer captured ids get a stand-in


@dataclass
class ReplaySetup:
    """The scenario to simulate and what it needs beyond a scenario: each request's generated token
    ids, and the captured id of every kvviz request id (and back)."""
    scenario: Scenario
    outputs: dict[str, list[int]]                       # kvviz id -> generated token ids, in order
    captured_id: dict[str, str]                         # kvviz id -> captured req_id
    kvviz_id: dict[str, str]                            # captured req_id -> kvviz id
    notes: list[str] = field(default_factory=list)


def _get(d: dict, key: str, kind, where: str):
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, kind):
        raise BadInput(f"{where}: {key!r} is missing or not {'an integer' if kind is int else 'of its type'}")
    return v


def section(manifest: dict, key: str) -> dict:
    """One of the manifest's knob objects ({} when absent or not an object)."""
    v = manifest.get(key)
    return v if isinstance(v, dict) else {}


def _count(v, default: int = 1) -> int:
    """A knob that counts something (a size, a number of ranks): its integer, else ``default``."""
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def unmodelled(manifest: dict) -> str | None:
    """The first setting of the run kvviz does not simulate, as one sentence; None when all are
    modelled."""
    s, c, p = section(manifest, "scheduler"), section(manifest, "cache"), section(manifest, "parallel")
    checks = (
        (s.get("async_scheduling") is True, "async_scheduling is on: the scheduler runs a step ahead of the worker "
         "(placeholder tokens, a request's blocks freed a step late), which kvviz does not simulate"),
        (manifest.get("speculative") not in (False, None), "speculative decoding is on: kvviz schedules no draft "
         "tokens and computes no lookahead slots"),
        (s.get("policy", "fcfs") != "fcfs", f"the scheduling policy is {str(s.get('policy'))[:20]!r}: kvviz "
         "schedules first come, first served only"),
        (s.get("enable_chunked_prefill", True) is not True, "chunked prefill is off: kvviz always splits a long "
         "prompt over steps"),
        (_count(s.get("max_num_partial_prefills")) > 1, "max_num_partial_prefills > 1: kvviz does not limit "
         "concurrent partial prefills"),
        (s.get("max_num_active_seqs") is not None, "max_num_active_seqs is set: kvviz does not model a cap on the "
         "running requests below max_num_seqs"),
        (s.get("long_prefill_token_threshold_adaptive") is True, "long_prefill_token_threshold_adaptive is on: kvviz "
         "applies only a fixed long_prefill_token_threshold"),
        (c.get("mamba_cache_mode", "none") not in ("none", None), f"mamba_cache_mode is "
         f"{str(c.get('mamba_cache_mode'))[:12]!r}: kvviz caches no Mamba state blocks"),
        (c.get("kv_sharing_fast_prefill") is True, "kv_sharing_fast_prefill is on: kvviz does not model "
         "cross-layer KV sharing"),
        (_count(p.get("pipeline_parallel_size")) > 1, "pipeline_parallel_size > 1: kvviz does not model several "
         "batches in flight"),
        (_count(p.get("data_parallel_size")) > 1, "data_parallel_size > 1: each data-parallel rank has its own "
         "scheduler and kvviz simulates one"),
    )
    return next((why for bad, why in checks if bad), None) or _unmodelled_groups(manifest, c)


def _unmodelled_groups(manifest: dict, cache: dict) -> str | None:
    groups = manifest.get("groups")
    if not isinstance(groups, list) or not groups or not all(isinstance(g, dict) for g in groups):
        return "the manifest lists no KV-cache groups"
    sizes = {(g.get("block_size"), g.get("kernel_block_size")) for g in groups}
    if len(sizes) > 1:
        return "the KV-cache groups have different block sizes: kvviz keeps one manager block size for all groups"
    for i, g in enumerate(groups):
        if g.get("kind") not in GROUP_KINDS:
            return f"KV-cache group {i} is of kind {str(g.get('kind'))[:30]!r}, which kvviz does not model"
        backend = g.get("attn_backend")
        if g.get("kind") != "state" and backend not in NO_REORDER + REORDER_DECODES_FIRST:
            return (f"KV-cache group {i}'s attention backend is {str(backend)[:30]!r}: kvviz does not know "
                    "whether it reorders the batch")
    if cache.get("enable_prefix_caching") and any(g["kind"] != "attention" for g in groups):
        return ("prefix caching is on in a model with sliding-window or state groups: kvviz looks up no "
                "prefix-cache hits for those models")
    return None


def _config(manifest: dict) -> dict:
    """The scenario's 'config' from the manifest (the kvviz names of vLLM's knobs)."""
    s, c, p = section(manifest, "scheduler"), section(manifest, "cache"), section(manifest, "parallel")
    groups = manifest["groups"]
    bs = _get(manifest, "block_size", int, "manifest.json")
    kbs = groups[0].get("kernel_block_size")
    backends = {g.get("attn_backend") for g in groups}
    cfg = {"num_blocks": manifest["num_blocks"], "block_size": bs,
           "kernel_block_size": kbs if kbs != bs else None,
           "max_num_reqs": _get(s, "max_num_seqs", int, "manifest.json scheduler"),
           "max_num_batched_tokens": _get(s, "max_num_batched_tokens", int, "manifest.json scheduler"),
           "max_model_len": _get(s, "max_model_len", int, "manifest.json scheduler"),
           "enable_prefix_caching": c.get("enable_prefix_caching") is True,
           "groups": [{"kind": GROUP_KINDS[g["kind"]], **({"sliding_window": g.get("sliding_window")}
                                                           if g["kind"] == "sliding_window" else {})}
                      for g in groups],
           "dcp_world_size": _count(p.get("decode_context_parallel_size")),
           "cp_kv_cache_interleave_size": _count(p.get("cp_kv_cache_interleave_size")),
           "reorder_decodes_first": any(b in REORDER_DECODES_FIRST for b in backends)
           or any(g["kind"] == "state" for g in groups),
           "vllm": manifest["vllm"], "runner": manifest["runner"]}
    if isinstance(s.get("scheduler_reserve_full_isl"), bool):
        cfg["scheduler_reserve_full_isl"] = s["scheduler_reserve_full_isl"]
    if s.get("long_prefill_token_threshold"):
        cfg["long_prefill_token_threshold"] = s["long_prefill_token_threshold"]
    return cfg


def _tokens(v, where: str, key: str) -> list[int]:
    if not isinstance(v, list) or not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < MAX_TOKEN_ID
                                          for t in v):
        raise BadInput(f"{where}: {key!r} is not a list of token ids")
    return v


def _step_or_none(r: dict, key: str, where: str) -> int | None:
    v = r.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise BadInput(f"{where}: {key!r} must be a step number")
    return v


def _request(i: int, r: dict, kid: str, max_model_len: int) -> tuple[dict, list[int], int | None]:
    """One captured request as a scenario request, its generated ids and its abort step."""
    where = f"requests.json request {i}"
    prompt = _tokens(r.get("prompt_token_ids"), where, "prompt_token_ids")
    out = _tokens(r.get("output_token_ids", []), where, "output_token_ids")
    arrival = _step_or_none(r, "arrival_step", where)
    if arrival is None:
        raise BadInput(f"{where}: 'arrival_step' is missing")
    aborted = _step_or_none(r, "aborted_step", where)
    finished = _step_or_none(r, "finished_step", where) is not None
    if finished or aborted is not None:
        # it generated exactly these tokens (an aborted one: never its last, so one more is allowed)
        n = len(out) + (1 if aborted is not None and not finished else 0)
    else:                                  # still running when the capture ended: its own limit
        n = r.get("max_tokens") if isinstance(r.get("max_tokens"), int) else len(out) + 1
    n = max(1, min(n, max_model_len - len(prompt))) if len(prompt) < max_model_len else 1
    spec = {"id": kid, "arrival": arrival, "prompt": prompt, "max_tokens": n}
    return spec, out, (aborted if not finished else None)


def _abort_order(r: dict, i: int) -> int:
    """The capture's count of aborts before this one (``aborted_order``); runs without it: listing order."""
    v = r.get("aborted_order")
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else i


def _kvviz_ids(requests: list) -> list[str]:
    """The captured ids where a scenario takes them (short, unique), else ``R<i>``."""
    ids, seen = [], set()
    for i, r in enumerate(requests):
        rid = r.get("req_id")
        if not isinstance(rid, str) or not rid:
            raise BadInput(f"requests.json request {i} has no req_id")
        if rid in seen:
            raise BadInput(f"requests.json lists request {rid[:60]!r} twice")
        seen.add(rid)
    for i, r in enumerate(requests):
        rid = r["req_id"]
        ids.append(rid if len(rid) <= MAX_REQUEST_ID and not (rid.startswith("R") and rid[1:].isdigit())
                   else f"R{i}")
    return ids


def build_setup(run) -> ReplaySetup:
    """The scenario that replays ``run`` (a ``kvviz.capture.run.CapturedRun``); BadInput with one
    sentence when the run asks for something kvviz does not model or cannot be read."""
    m = run.manifest
    why = unmodelled(m)
    if why is not None:
        raise BadInput(f"{run.label}: {why}; replay refused")
    try:
        resolve_version(m["vllm"])
    except ValueError as e:
        raise BadInput(f"{run.label}: manifest.json's vllm: {e}") from None
    if run.steps and not run.requests:
        raise BadInput(f"{run.label} lists no request (requests.json is missing or empty): replay needs the "
                       "run's prompts")
    cfg = _config(m)
    ids = _kvviz_ids(run.requests)
    specs, outputs, actions = [], {}, []
    order = sorted(range(len(run.requests)), key=lambda i: (run.requests[i].get("arrival_step") or 0, i))
    for i in order:
        spec, out, aborted = _request(i, run.requests[i], ids[i], cfg["max_model_len"])
        specs.append(spec)
        outputs[ids[i]] = out
        if aborted is not None:
            actions.append((aborted, _abort_order(run.requests[i], i), {"step": aborted, "kind": "finish", "req": ids[i]}))
    # aborts of one step in the order vLLM took them (finish_requests frees each request's blocks at once)
    actions = [a for *_, a in sorted(actions, key=lambda x: x[:2])]
    try:
        scenario = parse_scenario({"name": f"replay of {run.label}"[:120], "config": cfg, "requests": specs,
                                   "actions": actions})
    except BadInput as e:
        raise BadInput(f"{run.label}: the run does not make a scenario kvviz can simulate: {e}") from None
    captured = {kid: run.requests[i]["req_id"] for i, kid in enumerate(ids)}
    notes = []
    if _count(section(m, "parallel").get("tensor_parallel_size")) > 1:
        notes.append("tensor parallelism: every rank holds the same tables; the capture is rank 0's")
    if m.get("finished") is False:
        notes.append("the capture did not finish (its process ended first): the last steps may be missing")
    return ReplaySetup(scenario, outputs, captured, {v: k for k, v in captured.items()}, notes)
