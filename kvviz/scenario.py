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
from dataclasses import dataclass, field

import numpy as np

from .errors import BadInput
from .manager import GROUP_KINDS, GroupSpec
from .profiles import PROFILES

VOCAB = 32000
MAX_TABLE_ENTRIES = 1 << 22   # per KV-cache group: 16 MiB of int32, copied into every step's record
LIMITS = {"num_blocks": 1 << 20, "block_size": 1 << 12, "max_num_reqs": 4096,
          "max_num_batched_tokens": 1 << 20, "max_model_len": 1 << 21, "requests": 4096,
          "prompt_len": 1 << 20, "max_tokens": 1 << 16, "actions": 4096, "steps": 100000}


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

    @property
    def kbs(self) -> int:
        return self.kernel_block_size or self.block_size


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
        raise BadInput(f"{where}: {key!r} must be an integer")
    if not lo <= v <= hi:
        raise BadInput(f"{where}: {key!r} must be in [{lo}, {hi}], got {v}")
    return v


def parse_scenario(data) -> Scenario:
    """Validate an untrusted scenario dict; BadInput with one clear message on any problem."""
    if not isinstance(data, dict):
        raise BadInput("a scenario must be a JSON object")
    cfg = data.get("config", {})
    if not isinstance(cfg, dict):
        raise BadInput("'config' must be an object")
    known = set(EngineConfig.__dataclass_fields__)
    unknown = set(cfg) - known
    if unknown:
        raise BadInput(f"config: unknown key(s) {sorted(unknown)}")
    bs = _get_int(cfg, "block_size", 4, 1, LIMITS["block_size"], "config")
    kbs = cfg.get("kernel_block_size")
    if kbs is not None:
        kbs = _get_int(cfg, "kernel_block_size", None, 1, bs, "config")
        if bs % kbs:
            raise BadInput(f"config: kernel_block_size {kbs} does not divide block_size {bs}")
    world = _get_int(cfg, "dcp_world_size", 1, 1, 64, "config")
    rank = _get_int(cfg, "dcp_rank", 0, 0, world - 1, "config")
    inter = _get_int(cfg, "cp_kv_cache_interleave_size", 1, 1, bs, "config")
    if bs % inter:
        raise BadInput(f"config: cp_kv_cache_interleave_size {inter} does not divide block_size {bs}")
    profile = cfg.get("profile", "current")
    if profile not in PROFILES:
        raise BadInput(f"config: unknown profile {profile!r}; choose one of {sorted(PROFILES)}")
    groups_raw = cfg.get("groups", [{"kind": "full"}])
    if not isinstance(groups_raw, list) or not groups_raw or len(groups_raw) > 8:
        raise BadInput("config: 'groups' must be a list of 1 to 8 group objects")
    groups = []
    for i, g in enumerate(groups_raw):
        if not isinstance(g, dict) or g.get("kind") not in GROUP_KINDS:
            raise BadInput(f"config: group {i} needs 'kind' in {list(GROUP_KINDS)}")
        win = g.get("sliding_window")
        if g["kind"] == "sliding_window":
            win = _get_int(g, "sliding_window", None, 1, LIMITS["max_model_len"], f"config group {i}")
        name = g.get("name", "")
        groups.append(GroupSpec(kind=g["kind"], sliding_window=win, name=str(name)[:40]))
    caps = cfg.get("cudagraph_capture_sizes", [])
    if not isinstance(caps, list) or not all(isinstance(c, int) and not isinstance(c, bool) and 0 < c <= 1 << 16
                                             for c in caps):
        raise BadInput("config: 'cudagraph_capture_sizes' must be a list of positive integers")
    config = EngineConfig(
        num_blocks=_get_int(cfg, "num_blocks", 32, 2, LIMITS["num_blocks"], "config"),
        block_size=bs, kernel_block_size=kbs,
        max_num_reqs=_get_int(cfg, "max_num_reqs", 8, 1, LIMITS["max_num_reqs"], "config"),
        max_num_batched_tokens=_get_int(cfg, "max_num_batched_tokens", 64, 1,
                                        LIMITS["max_num_batched_tokens"], "config"),
        max_model_len=_get_int(cfg, "max_model_len", 256, 1, LIMITS["max_model_len"], "config"),
        enable_prefix_caching=bool(cfg.get("enable_prefix_caching", True)),
        profile=profile, groups=groups, dcp_world_size=world, dcp_rank=rank,
        cp_kv_cache_interleave_size=inter, cudagraph_capture_sizes=sorted(set(caps)))

    from .block_table import cdiv, get_block_table_width

    for i, g in enumerate(groups):
        if g.kind == "state":
            continue
        width = get_block_table_width(cdiv(config.max_model_len, bs * world), bs, config.kbs)
        if config.max_num_reqs * width > MAX_TABLE_ENTRIES:
            raise BadInput(f"config: a block table of {config.max_num_reqs} rows x {width} columns "
                           f"(max_num_reqs x max_model_len / block_size) exceeds {MAX_TABLE_ENTRIES} "
                           f"entries; lower max_num_reqs or max_model_len")

    reqs_raw = data.get("requests", [])
    if not isinstance(reqs_raw, list) or len(reqs_raw) > LIMITS["requests"]:
        raise BadInput(f"'requests' must be a list of at most {LIMITS['requests']} requests")
    requests, seen = [], set()
    for i, r in enumerate(reqs_raw):
        where = f"request {i}"
        if not isinstance(r, dict):
            raise BadInput(f"{where} must be an object")
        rid = r.get("id", f"R{i}")
        if not isinstance(rid, str) or not rid or len(rid) > 32:
            raise BadInput(f"{where}: 'id' must be a short non-empty string")
        if rid in seen:
            raise BadInput(f"{where}: duplicate id {rid!r}")
        seen.add(rid)
        arrival = _get_int(r, "arrival", 0, 0, LIMITS["steps"], where)
        max_tokens = _get_int(r, "max_tokens", 1, 1, LIMITS["max_tokens"], where)
        group = r.get("prefix_group")
        if "prompt" in r:
            p = r["prompt"]
            if not isinstance(p, list) or not p or len(p) > LIMITS["prompt_len"] or not all(
                    isinstance(t, int) and not isinstance(t, bool) and 0 <= t < 1 << 31 for t in p):
                raise BadInput(f"{where}: 'prompt' must be a non-empty list of token ids")
            prompt = list(p)
        else:
            n = _get_int(r, "prompt_len", None if "prompt_len" in r else 1, 1, LIMITS["prompt_len"], where)
            if group is not None:
                if not isinstance(group, str) or not group:
                    raise BadInput(f"{where}: 'prefix_group' must be a non-empty string")
                k = _get_int(r, "prefix_len", n, 0, n, where)
                prompt = token_stream("prefix:" + group, k) + token_stream("req:" + rid, n - k)
            else:
                prompt = token_stream("req:" + rid, n)
        if len(prompt) + max_tokens > config.max_model_len:
            raise BadInput(f"{where}: prompt + max_tokens = {len(prompt) + max_tokens} exceeds "
                           f"max_model_len {config.max_model_len}")
        extra = r.get("extra_keys")
        if extra is not None and (not isinstance(extra, list) or len(extra) > 8):
            raise BadInput(f"{where}: 'extra_keys' must be a short list")
        requests.append(RequestSpec(rid, arrival, prompt, max_tokens, group,
                                    tuple(map(str, extra)) if extra else None))

    acts_raw = data.get("actions", [])
    if not isinstance(acts_raw, list) or len(acts_raw) > LIMITS["actions"]:
        raise BadInput(f"'actions' must be a list of at most {LIMITS['actions']} actions")
    actions = []
    for i, a in enumerate(acts_raw):
        where = f"action {i}"
        if not isinstance(a, dict) or a.get("kind") not in ("finish", "preempt", "fork"):
            raise BadInput(f"{where}: 'kind' must be finish, preempt or fork")
        req = a.get("req")
        if not isinstance(req, str) or not req:
            raise BadInput(f"{where}: 'req' must name a request")
        actions.append(Action(step=_get_int(a, "step", None, 0, LIMITS["steps"], where),
                              kind=a["kind"], req=req,
                              n=_get_int(a, "n", 1, 1, 64, where) if a["kind"] == "fork" else 1))
    name = data.get("name", "scenario")
    desc = data.get("description", "")
    return Scenario(str(name)[:120], config, requests, actions, str(desc)[:2000])


def config_to_json(c: EngineConfig) -> dict:
    return {"num_blocks": c.num_blocks, "block_size": c.block_size,
            "kernel_block_size": c.kernel_block_size, "max_num_reqs": c.max_num_reqs,
            "max_num_batched_tokens": c.max_num_batched_tokens, "max_model_len": c.max_model_len,
            "enable_prefix_caching": c.enable_prefix_caching, "profile": c.profile,
            "groups": [{"kind": g.kind, **({"sliding_window": g.sliding_window} if g.sliding_window else {}),
                        **({"name": g.name} if g.name else {})} for g in c.groups],
            "dcp_world_size": c.dcp_world_size, "dcp_rank": c.dcp_rank,
            "cp_kv_cache_interleave_size": c.cp_kv_cache_interleave_size,
            "cudagraph_capture_sizes": list(c.cudagraph_capture_sizes)}
