"""Scenario files: arrivals, prompts, decode lengths and actions, replayed deterministically.

{
  "name": "two requests sharing a system prompt",
  "config": {"num_blocks": 32, "block_size": 4, "kernel_block_size": 4, "max_num_reqs": 8,
             "max_num_batched_tokens": 64, "max_model_len": 256, "enable_prefix_caching": true,
             "profile": "current", "groups": [{"kind": "full"}],
             "dcp_world_size": 1, "dcp_rank": 0, "cp_kv_cache_interleave_size": 1,
             "cudagraph_capture_sizes": [1, 2, 4, 8]},
  "requests": [{"id": "A", "arrival": 0, "prompt_len": 10, "prefix_group": "sys",
                "prefix_len": 8, "max_tokens": 3},
               {"id": "B", "arrival": 1, "prompt": [5, 6, 7], "max_tokens": 2}],
  "actions": [{"step": 3, "kind": "finish", "req": "A"},
              {"step": 4, "kind": "preempt", "req": "B"},
              {"step": 2, "kind": "fork", "req": "A", "n": 2}]
}
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field, replace

import numpy as np

from kvviz.core.geometry import Geometry
from kvviz.core.knobs import parse_knobs
from kvviz.core.manager import GROUP_KINDS, GroupSpec
from kvviz.core.versions import RUNNERS, resolve_runner, resolve_version, rules_for
from kvviz.errors import BadInput

VOCAB = 32000
MAX_TABLE_ENTRIES = 1 << 22   # per KV-cache group: 16 MiB of int32, copied into every step's record
LIMITS = {"num_blocks": 1 << 20, "block_size": 1 << 12, "max_num_reqs": 4096,
          "max_num_batched_tokens": 1 << 20, "max_model_len": 1 << 21, "requests": 4096,
          "prompt_len": 1 << 20, "max_tokens": 1 << 16, "actions": 4096, "steps": 100000,
          "total_tokens": 1 << 21}   # prompts + outputs of all requests: bounds the token lists built


def token_stream(key: str, n: int, offset: int = 0) -> list[int]:
    """Deterministic pseudo token ids for a key (a request id or a shared-prefix group)."""
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    return [int(t) for t in rng.integers(1, VOCAB, size=offset + n)[offset:]]


def sampled_token(req_id: str, position: int) -> int:
    return 1 + zlib.crc32(f"{req_id}@{position}".encode()) % (VOCAB - 1)


@dataclass
class EngineConfig:
    num_blocks: int = 32
    block_size: int = 4
    kernel_block_size: int | None = None
    max_num_reqs: int = 8
    max_num_batched_tokens: int = 64
    max_model_len: int = 256
    enable_prefix_caching: bool = True
    profile: str = "current"
    groups: list[GroupSpec] = field(default_factory=lambda: [GroupSpec()])
    dcp_world_size: int = 1
    dcp_rank: int = 0
    cp_kv_cache_interleave_size: int = 1
    cudagraph_capture_sizes: list[int] = field(default_factory=list)
    # Attention backends that want decodes before prefills (FlashInfer, MLA, ...) reorder the
    # persistent batch each step by swapping rows; FlashAttention does not (the default).
    reorder_decodes_first: bool = False
    # the vLLM release whose rules are followed (resolved: a tag or "main"); ``profile`` is the name
    # as given (an old alias like "current" or a version)
    vllm: str = "main"
    runner: str | None = None                       # v1 | v2; None: what the release picks
    scheduler_reserve_full_isl: bool | None = None  # None: the release's default
    long_prefill_token_threshold: int = 0           # 0: no cap (kvviz/core/knobs.py)
    max_num_active_seqs: int | None = None          # v0.31.0+; None: max_num_reqs

    def __post_init__(self):
        if self.profile == "current" and self.vllm != "main":   # built in code with only vllm= given
            self.profile = self.vllm

    @property
    def geometry(self) -> Geometry:
        """The block sizes and DCP layout of the config (kernel blocks as configured)."""
        return Geometry(self.block_size, self.kernel_block_size, self.dcp_world_size, self.dcp_rank,
                        self.cp_kv_cache_interleave_size)

    @property
    def kbs(self) -> int:
        return self.geometry.kernel_block_size

    def group_geometry(self, group: GroupSpec) -> Geometry:
        """A group's geometry: a state group's table holds one state index per block, never
        split into kernel blocks."""
        geo = self.geometry
        return replace(geo, kernel_block_size=geo.block_size) if group.kind == "state" else geo


@dataclass
class RequestSpec:
    req_id: str
    arrival: int
    prompt: list[int]
    max_tokens: int
    prefix_group: str | None = None
    extra_keys: tuple | None = None


@dataclass
class Action:
    step: int
    kind: str  # finish | preempt | fork
    req: str
    n: int = 1


@dataclass
class Scenario:
    name: str
    config: EngineConfig
    requests: list[RequestSpec]
    actions: list[Action]
    description: str = ""


def _get_int(d: dict, key: str, default, lo: int, hi: int, where: str) -> int:
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadInput(f"{where}: {key!r} must be an integer, got {_json_type(v)}")
    if not lo <= v <= hi:
        raise BadInput(f"{where}: {key!r} must be in [{lo}, {hi}], got {v}")
    return v


def _get_bool(d: dict, key: str, default: bool, where: str) -> bool:
    v = d.get(key, default)
    if not isinstance(v, bool):
        raise BadInput(f"{where}: {key!r} must be true or false, got {_json_type(v)}")
    return v


def _json_type(v) -> str:
    """The JSON name of a decoded value's type, for messages ("a string", "true", "null")."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    for t, name in ((int, "an integer"), (float, "a number with a fraction"), (str, "a string"),
                    (list, "a list"), (dict, "an object")):
        if isinstance(v, t):
            return name
    return type(v).__name__


def check_keys(d: dict, known, where: str, hints: dict | None = None) -> None:
    """BadInput naming the first key of ``d`` that is not in ``known``, with the closest known key
    (or the list of known keys) as a suggestion; ``hints`` maps a key to a sentence tail of its own."""
    import difflib

    for key in d:
        if key in known:
            continue
        shown = repr(key[:60] + "…" if len(key) > 60 else key)
        if hints and key in hints:
            raise BadInput(f"{where}: unknown key {shown} ({hints[key]})")
        close = difflib.get_close_matches(key, sorted(known), n=1)
        tail = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(sorted(known))}"
        raise BadInput(f"{where}: unknown key {shown}; {tail}")


SCENARIO_KEYS = ("name", "description", "config", "requests", "actions")
CONFIG_KEYS = tuple(EngineConfig.__dataclass_fields__)
GROUP_KEYS = ("kind", "sliding_window", "name")
REQUEST_KEYS = ("id", "arrival", "prompt", "prompt_len", "prefix_group", "prefix_len", "max_tokens",
                "extra_keys")
ACTION_KEYS = ("step", "kind", "req", "n")
ACTION_KINDS = ("finish", "preempt", "fork")
EXPECTED = "expected a scenario (an object with 'config', 'requests' and 'actions')"


def fork_child_ids(parent: str, n: int, existing) -> list[str]:
    """The ids the engine gives a fork's children (``A.1``, ``A.2``…; a ``'`` appended while taken)."""
    out = []
    for k in range(1, n + 1):
        cid = f"{parent}.{k}"
        while cid in existing or cid in out:
            cid += "'"
        out.append(cid)
    return out


def _refuse_other_kinds(data: dict) -> None:
    """A table dump or a `compute` batch handed over as a scenario: say what was expected."""
    if "kvviz_dump_version" in data or "block_table" in data:
        raise BadInput(f"{EXPECTED}, but this is a table dump; read it with `kvviz check` or `kvviz diff`")
    reqs = data.get("requests")
    reqs = reqs if isinstance(reqs, list) else []
    batch_req = any(isinstance(r, dict) and ("block_ids" in r or "seq_len" in r) for r in reqs)
    scenario_req = any(isinstance(r, dict) and ("prompt" in r or "prompt_len" in r) for r in reqs)
    if batch_req or ("block_size" in data and "config" not in data and not scenario_req):
        raise BadInput(f"{EXPECTED}, but this is a `compute` batch (requests with 'block_ids' and "
                       f"'seq_len'); compute its tables with `kvviz compute`")


def parse_scenario(data) -> Scenario:
    """Validate an untrusted scenario dict; BadInput with one clear message on any problem.

    Strict: unknown keys (top level, config, group, request, action) are refused with the
    closest known key suggested, every value must have its documented JSON type, a request needs
    'prompt' or 'prompt_len', and an action must name a request of the scenario or a fork child
    made by an earlier action.
    """
    if not isinstance(data, dict):
        raise BadInput(f"{EXPECTED}; a scenario must be a JSON object")
    _refuse_other_kinds(data)
    check_keys(data, SCENARIO_KEYS, "scenario",
               hints={k: f"{k!r} belongs inside 'config'" for k in CONFIG_KEYS})
    config = _parse_config(data.get("config", {}))
    requests = _parse_requests(data.get("requests", []), config)
    actions = _parse_actions(data.get("actions", []))
    _check_action_targets(requests, actions)
    _check_fork_tokens(requests, actions)
    name = data.get("name", "scenario")
    desc = data.get("description", "")
    for k, v in (("name", name), ("description", desc)):
        if not isinstance(v, str):
            raise BadInput(f"scenario: {k!r} must be a string, got {_json_type(v)}")
    return Scenario(name[:120], config, requests, actions, desc[:2000])


def _parse_config(cfg) -> EngineConfig:
    """The 'config' object: geometry first, then the switches, the groups and the sizes."""
    if not isinstance(cfg, dict):
        raise BadInput(f"'config' must be an object, got {_json_type(cfg)}")
    check_keys(cfg, CONFIG_KEYS, "config")
    geo = _config_geometry(cfg)
    profile, vllm = _config_version(cfg)
    runner = cfg.get("runner")
    if runner is not None and runner not in RUNNERS:
        raise BadInput(f"config: 'runner' must be \"v1\" or \"v2\", not {str(runner)[:20]!r}")
    reserve = cfg.get("scheduler_reserve_full_isl")
    if reserve is not None:
        reserve = _get_bool(cfg, "scheduler_reserve_full_isl", True, "config")
    caching = _get_bool(cfg, "enable_prefix_caching", True, "config")
    reorder = _get_bool(cfg, "reorder_decodes_first", False, "config")
    groups = _parse_groups(cfg.get("groups", [{"kind": "full"}]))
    caps = cfg.get("cudagraph_capture_sizes", [])
    if not isinstance(caps, list) or not all(isinstance(c, int) and not isinstance(c, bool) and 0 < c <= 1 << 16
                                             for c in caps):
        raise BadInput("config: 'cudagraph_capture_sizes' must be a list of positive integers")
    config = EngineConfig(
        num_blocks=_get_int(cfg, "num_blocks", 32, 2, LIMITS["num_blocks"], "config"),
        block_size=geo.block_size, kernel_block_size=cfg.get("kernel_block_size"),
        max_num_reqs=_get_int(cfg, "max_num_reqs", 8, 1, LIMITS["max_num_reqs"], "config"),
        max_num_batched_tokens=_get_int(cfg, "max_num_batched_tokens", 64, 1,
                                        LIMITS["max_num_batched_tokens"], "config"),
        max_model_len=_get_int(cfg, "max_model_len", 256, 1, LIMITS["max_model_len"], "config"),
        enable_prefix_caching=caching,
        profile=profile, groups=groups, dcp_world_size=geo.dcp_world_size, dcp_rank=geo.dcp_rank,
        cp_kv_cache_interleave_size=geo.interleave, cudagraph_capture_sizes=sorted(set(caps)),
        reorder_decodes_first=reorder, vllm=vllm, runner=runner, scheduler_reserve_full_isl=reserve)
    try:
        resolve_runner(rules_for(vllm), runner, state_groups=any(g.kind == "state" for g in groups),
                       hybrid=len(groups) > 1)
    except ValueError as e:
        raise BadInput(f"config: {e}") from None
    _check_table_size(config)
    return replace(config, **parse_knobs(cfg, config))


def _config_version(cfg: dict) -> tuple[str, str]:
    """(the name given, the vLLM version it resolves to) from 'vllm' or its old name 'profile'."""
    keys = [k for k in ("vllm", "profile") if k in cfg]
    given = [cfg[k] for k in keys]
    if len(given) == 2 and given[0] != given[1]:
        raise BadInput(f"config: 'vllm' ({str(given[0])[:40]!r}) and its old name 'profile' "
                       f"({str(given[1])[:40]!r}) disagree; give one")
    name = given[0] if given else "current"
    if not isinstance(name, str):
        raise BadInput(f"config: {keys[0]!r} must be a version like \"v0.25.1\", got {_json_type(name)}")
    try:
        return name, resolve_version(name)
    except ValueError as e:
        raise BadInput(f"config: {e}") from None


def _config_geometry(cfg: dict) -> Geometry:
    """The config's block sizes and DCP layout. Keys are read in the order a user fixes them, so
    the first problem is the one named; Geometry refuses what does not fit, prefixed 'config:'."""
    bs = _get_int(cfg, "block_size", 4, 1, LIMITS["block_size"], "config")
    kbs = cfg.get("kernel_block_size")
    if kbs is not None:
        kbs = _get_int(cfg, "kernel_block_size", None, 1, bs, "config")
    geo = _in_config(Geometry, bs, kbs)
    world = _get_int(cfg, "dcp_world_size", 1, 1, 64, "config")
    rank = _get_int(cfg, "dcp_rank", 0, 0, world - 1, "config")
    inter = _get_int(cfg, "cp_kv_cache_interleave_size", 1, 1, bs, "config")
    return _in_config(replace, geo, dcp_world_size=world, dcp_rank=rank, interleave=inter)


def _in_config(make, *args, **kw):
    """``make(*args, **kw)``, a refusal naming the 'config' object it came from."""
    try:
        return make(*args, **kw)
    except BadInput as e:
        raise BadInput(f"config: {e}") from None


def _parse_groups(groups_raw) -> list[GroupSpec]:
    """The KV-cache groups: 1 to 8, each a full, sliding-window or state group."""
    if not isinstance(groups_raw, list) or not groups_raw or len(groups_raw) > 8:
        raise BadInput("config: 'groups' must be a list of 1 to 8 group objects")
    groups = []
    for i, g in enumerate(groups_raw):
        where = f"config group {i}"
        if not isinstance(g, dict):
            raise BadInput(f"{where} must be an object, got {_json_type(g)}")
        check_keys(g, GROUP_KEYS, where)
        if g.get("kind") not in GROUP_KINDS:
            raise BadInput(f"{where} needs 'kind' in {list(GROUP_KINDS)}")
        win = None
        if g["kind"] == "sliding_window":
            win = _get_int(g, "sliding_window", None, 1, LIMITS["max_model_len"], where)
        elif "sliding_window" in g:
            raise BadInput(f"{where}: 'sliding_window' only applies to a group of kind 'sliding_window', "
                           f"not {g['kind']!r}")
        name = g.get("name", "")
        if not isinstance(name, str):
            raise BadInput(f"{where}: 'name' must be a string, got {_json_type(name)}")
        groups.append(GroupSpec(kind=g["kind"], sliding_window=win, name=name[:40]))
    return groups


def _check_table_size(config: EngineConfig) -> None:
    """Every step's record copies each group's table: refuse one too large to keep (state groups
    hold one entry a row)."""
    if all(g.kind == "state" for g in config.groups):
        return
    geo = config.geometry
    width = geo.table_width(geo.blocks_for(config.max_model_len))
    if config.max_num_reqs * width > MAX_TABLE_ENTRIES:
        raise BadInput(f"config: a block table of {config.max_num_reqs} rows x {width} columns "
                       f"(max_num_reqs x max_model_len / block_size) exceeds {MAX_TABLE_ENTRIES} "
                       f"entries; lower max_num_reqs or max_model_len")


def _parse_requests(reqs_raw, config: EngineConfig) -> list[RequestSpec]:
    """The requests: ids first (actions and duplicates refer to them), then the token total a
    scenario may ask for, then each request."""
    if not isinstance(reqs_raw, list) or len(reqs_raw) > LIMITS["requests"]:
        raise BadInput(f"'requests' must be a list of at most {LIMITS['requests']} requests")
    ids = _request_ids(reqs_raw)
    _check_claimed_tokens(reqs_raw)
    return [_parse_request(r, rid, f"request {i} ({rid})", config)
            for i, (r, rid) in enumerate(zip(reqs_raw, ids))]


def _request_ids(reqs_raw: list) -> list[str]:
    """Each request's id (default ``R<i>``): short, non-empty, unique."""
    ids, seen = [], set()
    for i, r in enumerate(reqs_raw):
        where = f"request {i}"
        if not isinstance(r, dict):
            raise BadInput(f"{where} must be an object, got {_json_type(r)}")
        rid = r.get("id", f"R{i}")
        if not isinstance(rid, str) or not rid or len(rid) > 32:
            raise BadInput(f"{where}: 'id' must be a short non-empty string")
        if rid in seen:
            raise BadInput(f"{where}: duplicate id {rid!r}")
        seen.add(rid)
        ids.append(rid)
    return ids


def _check_claimed_tokens(reqs_raw: list) -> None:
    """Before any token list is built: the total a scenario may ask for (each length is checked
    with its request)."""
    claimed = 0
    for r in reqs_raw:
        n = r.get("prompt_len") if "prompt" not in r else r.get("prompt")
        n = len(n) if isinstance(n, list) else n
        m = r.get("max_tokens", 1)
        claimed += (n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0) + \
            (m if isinstance(m, int) and not isinstance(m, bool) and m > 0 else 0)
    if claimed > LIMITS["total_tokens"]:
        raise BadInput(f"the requests ask for {claimed} tokens in all (prompts + max_tokens); the limit is "
                       f"{LIMITS['total_tokens']}")


def _parse_request(r: dict, rid: str, where: str, config: EngineConfig) -> RequestSpec:
    """One request: arrival, decode length, prompt, extra keys; it must fit max_model_len."""
    check_keys(r, REQUEST_KEYS, where)
    arrival = _get_int(r, "arrival", 0, 0, LIMITS["steps"], where)
    max_tokens = _get_int(r, "max_tokens", 1, 1, LIMITS["max_tokens"], where)
    group = r.get("prefix_group")
    prompt = _prompt_of(r, rid, group, where)
    if len(prompt) + max_tokens > config.max_model_len:
        raise BadInput(f"{where}: prompt + max_tokens = {len(prompt) + max_tokens} exceeds "
                       f"max_model_len {config.max_model_len}")
    extra = r.get("extra_keys")
    if extra is not None and (not isinstance(extra, list) or len(extra) > 8 or not all(
            isinstance(x, str) or (isinstance(x, int) and not isinstance(x, bool)) for x in extra)):
        raise BadInput(f"{where}: 'extra_keys' must be a list of at most 8 strings or integers")
    return RequestSpec(rid, arrival, prompt, max_tokens, group, tuple(map(str, extra)) if extra else None)


def _prompt_of(r: dict, rid: str, group, where: str) -> list[int]:
    """A request's token ids: given ('prompt'), or generated from a length ('prompt_len'), the
    first 'prefix_len' of them shared with the other requests of its 'prefix_group'."""
    if "prompt" in r:
        for k in ("prompt_len", "prefix_group", "prefix_len"):
            if r.get(k) is not None:
                raise BadInput(f"{where}: {k!r} cannot be combined with 'prompt' (explicit token ids); "
                               f"give either 'prompt' or 'prompt_len'")
        p = r["prompt"]
        if not isinstance(p, list) or not p or len(p) > LIMITS["prompt_len"] or not all(
                isinstance(t, int) and not isinstance(t, bool) and 0 <= t < 1 << 31 for t in p):
            raise BadInput(f"{where}: 'prompt' must be a non-empty list of token ids")
        return list(p)
    if "prompt_len" not in r:
        raise BadInput(f"{where}: needs 'prompt' (token ids) or 'prompt_len' (a length)")
    n = _get_int(r, "prompt_len", None, 1, LIMITS["prompt_len"], where)
    if group is not None:
        if not isinstance(group, str) or not group:
            raise BadInput(f"{where}: 'prefix_group' must be a non-empty string")
        k = _get_int(r, "prefix_len", n, 0, n, where)
        return token_stream("prefix:" + group, k) + token_stream("req:" + rid, n - k)
    if "prefix_len" in r:
        raise BadInput(f"{where}: 'prefix_len' needs a 'prefix_group' to share the prefix with")
    return token_stream("req:" + rid, n)


def _parse_actions(acts_raw) -> list[Action]:
    """The actions: finish, preempt or fork (``n`` children) a request at a step."""
    if not isinstance(acts_raw, list) or len(acts_raw) > LIMITS["actions"]:
        raise BadInput(f"'actions' must be a list of at most {LIMITS['actions']} actions")
    actions = []
    for i, a in enumerate(acts_raw):
        where = f"action {i}"
        if not isinstance(a, dict):
            raise BadInput(f"{where} must be an object, got {_json_type(a)}")
        check_keys(a, ACTION_KEYS, where)
        if a.get("kind") not in ACTION_KINDS:
            raise BadInput(f"{where}: 'kind' must be finish, preempt or fork")
        req = a.get("req")
        if not isinstance(req, str) or not req:
            raise BadInput(f"{where}: 'req' must name a request")
        n = _get_int(a, "n", 1, 1, 64, where)  # a fork's children; type-checked, unused by finish/preempt
        actions.append(Action(step=_get_int(a, "step", None, 0, LIMITS["steps"], where),
                              kind=a["kind"], req=req, n=n if a["kind"] == "fork" else 1))
    return actions


def _check_fork_tokens(requests: list[RequestSpec], actions: list[Action]) -> None:
    """Fork children copy their parent's prompt and may generate as much: counted against the same
    token limit as the requests (64 x 64 forks of a long prompt would otherwise exhaust memory)."""
    tokens = {r.req_id: len(r.prompt) + r.max_tokens for r in requests}
    total = sum(tokens.values())
    for a in sorted(actions, key=lambda a: a.step):
        if a.kind != "fork" or a.req not in tokens:
            continue
        total += a.n * tokens[a.req]
        for child in fork_child_ids(a.req, a.n, set(tokens)):
            tokens[child] = tokens[a.req]
        if total > LIMITS["total_tokens"]:
            raise BadInput(f"the requests and their forks ask for more than {LIMITS['total_tokens']} tokens "
                           f"in all (prompts + max_tokens, each fork child counted as its parent)")


def _check_action_targets(requests: list[RequestSpec], actions: list[Action]) -> None:
    """Every action names a request of the scenario or a fork child an earlier action (earlier step,
    or earlier in the list at the same step, the engine's order) creates."""
    import difflib

    ids = {r.req_id for r in requests}
    children: set[str] = set()
    for i, a in sorted(enumerate(actions), key=lambda ia: (ia[1].step, ia[0])):
        if a.req not in ids and a.req not in children:
            known = sorted(ids | children)
            close = [k for k in known if k.casefold() == a.req.casefold()] or \
                difflib.get_close_matches(a.req, known, n=1)
            tail = (f"; did you mean {close[0]!r}?" if close
                    else f"; the requests are {', '.join(map(repr, known[:12]))}" if known
                    else "; the scenario has no request")
            raise BadInput(f"action {i}: request {a.req!r} is neither a request of the scenario nor a "
                           f"fork child made by an earlier action{tail}")
        if a.kind == "fork":
            arrived = {r.req_id for r in requests if r.arrival <= a.step}
            children.update(fork_child_ids(a.req, a.n, arrived | children))
