"""The KV-cache manager: which physical blocks each request holds, per KV-cache group.

Groups share one block pool and one manager block size. A group is
  "full"            full attention: every block kept,
  "sliding_window"  blocks wholly outside the window are freed and replaced by the null block,
  "state"           one block per request holding a recurrent state index (Mamba-like): no slots.
With decode context parallelism each block id covers ``geometry.virtual_block_size`` positions
(block_size per rank): each rank stores its share of those positions in its own copy of the block.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kvviz.core.geometry import Geometry
from kvviz.core.pool import Block, BlockPool, block_hashes_for
from kvviz.core.versions import CURRENT, Rules

GROUP_KINDS = ("full", "sliding_window", "state")


@dataclass(frozen=True)
class GroupSpec:
    kind: str = "full"
    sliding_window: int | None = None
    name: str = ""

    def __post_init__(self):
        if self.kind not in GROUP_KINDS:
            raise ValueError(f"group kind must be one of {GROUP_KINDS}, not {self.kind!r}")
        if self.kind == "sliding_window" and not (self.sliding_window and self.sliding_window > 0):
            raise ValueError("a sliding_window group needs a positive window")

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        return f"sliding window {self.sliding_window}" if self.kind == "sliding_window" else self.kind


@dataclass
class Request:
    req_id: str
    prompt: list[int]
    max_tokens: int = 1
    output: list[int] = field(default_factory=list)
    num_computed_tokens: int = 0
    extra_keys: tuple | None = None
    num_preemptions: int = 0
    parent: str | None = None

    @property
    def tokens(self) -> list[int]:
        return self.prompt + self.output

    @property
    def num_tokens(self) -> int:
        return len(self.prompt) + len(self.output)

    @property
    def finished(self) -> bool:
        return len(self.output) >= self.max_tokens


class KVCacheManager:
    """Which blocks each request holds. One manager block id stands for
    ``geometry.virtual_block_size`` positions; ``block_size`` and ``dcp_world_size`` are a
    shorthand for ``Geometry(block_size, dcp_world_size=dcp_world_size)``."""

    def __init__(self, num_blocks: int, block_size: int | None = None, groups: list[GroupSpec] | None = None,
                 *, geometry: Geometry | None = None, enable_caching: bool = True, profile: Rules = CURRENT,
                 dcp_world_size: int = 1, events: list | None = None):
        self.geometry = geometry or Geometry(block_size, dcp_world_size=dcp_world_size)
        self.groups = list(groups or [GroupSpec()])
        self.events = events if events is not None else []
        self.pool = BlockPool(num_blocks, enable_caching=enable_caching, profile=profile,
                              events=self.events)
        self.req_blocks: dict[str, list[list[Block]]] = {}
        self.num_cached_blocks: dict[str, list[int]] = {}
        self._hashes: dict[str, list[bytes]] = {}

    # --- helpers ----------------------------------------------------------------------
    @property
    def caching_hits_supported(self) -> bool:
        """Prefix-cache hits are looked up for full-attention-only models (see README)."""
        return self.pool.enable_caching and all(g.kind == "full" for g in self.groups)

    def block_hashes(self, req: Request) -> list[bytes]:
        known = self._hashes.get(req.req_id, [])
        n_full = self.geometry.full_blocks(req.num_tokens)
        if len(known) < n_full:
            known = block_hashes_for(req.tokens, self.geometry.virtual_block_size, req.extra_keys,
                                     self.pool.none_hash)
            self._hashes[req.req_id] = known
        return known[:n_full]

    def blocks_of(self, req_id: str) -> list[list[Block]]:
        return self.req_blocks.get(req_id, [[] for _ in self.groups])

    def block_ids(self, req_id: str) -> list[list[int]]:
        return [[b.block_id for b in g] for g in self.blocks_of(req_id)]

    def _required(self, group: GroupSpec, num_tokens: int) -> int:
        if group.kind == "state":
            return 1 if num_tokens > 0 else 0
        return self.geometry.blocks_for(num_tokens)

    # --- prefix cache -----------------------------------------------------------------------
    def get_computed_blocks(self, req: Request) -> tuple[list[list[Block]], int]:
        """Longest run of cached full blocks from the start, capped so at least one token
        (the last) is recomputed to produce logits."""
        empty = [[] for _ in self.groups]
        if not self.caching_hits_supported:
            return empty, 0
        max_blocks = self.geometry.full_blocks(req.num_tokens - 1)
        hashes = self.block_hashes(req)[:max_blocks]
        hit_per_group = []
        n_hit = len(hashes)
        for gid in range(len(self.groups)):
            run = []
            for h in hashes[:n_hit]:
                b = self.pool.get_cached_block(h, gid)
                if b is None:
                    break
                run.append(b)
            n_hit = min(n_hit, len(run))
            hit_per_group.append(run)
        hit_per_group = [run[:n_hit] for run in hit_per_group]
        return hit_per_group, self.geometry.tokens_held(n_hit)

    # --- allocation ----------------------------------------------------------------------------
    def remove_skipped_blocks(self, req: Request, num_computed_tokens: int) -> None:
        for gid, g in enumerate(self.groups):
            if g.kind != "sliding_window":
                continue
            blocks = self.blocks_of(req.req_id)[gid]
            skipped = max(0, num_computed_tokens - g.sliding_window + 1)
            k = min(self.geometry.full_blocks(skipped), len(blocks))
            removed = []
            for i in range(k - 1, -1, -1):  # walk back; stop at the first already-null block
                if blocks[i].is_null:
                    break
                removed.append(blocks[i])
                blocks[i] = self.pool.null_block
            if removed:
                self.events.append({"kind": "window_skip", "req": req.req_id, "group": gid,
                                    "blocks": [b.block_id for b in removed]})
                self.pool.free_blocks(removed, req_id=req.req_id, group_id=gid)

    def allocate_slots(self, req: Request, num_new_tokens: int,
                       hit_blocks: list[list[Block]] | None = None,
                       num_hit_tokens: int = 0, *, full_sequence_must_fit: bool = False
                       ) -> list[list[int]] | None:
        """Make room for ``num_new_tokens`` more tokens after the computed ones (and the hit).
        Returns the ids added to each group's list (hits first), or None if the pool is short.
        ``full_sequence_must_fit`` (vLLM's scheduler_reserve_full_isl, v0.19.0+): refuse unless the
        request's whole sequence so far would fit, not just this chunk."""
        if req.req_id not in self.req_blocks:
            self.req_blocks[req.req_id] = [[] for _ in self.groups]
            self.num_cached_blocks[req.req_id] = [0] * len(self.groups)
        self.remove_skipped_blocks(req, req.num_computed_tokens)
        hit_blocks = hit_blocks or [[] for _ in self.groups]
        total = req.num_computed_tokens + num_hit_tokens + num_new_tokens
        have = self.req_blocks[req.req_id]
        need_new = []
        from_queue = sum(1 for g in hit_blocks for b in g if b.ref_cnt == 0 and not b.is_null)
        for gid, g in enumerate(self.groups):
            need_new.append(max(0, self._required(g, total) - len(have[gid]) - len(hit_blocks[gid])))
        if sum(need_new) + from_queue > self.pool.num_free:
            return None
        if full_sequence_must_fit:
            whole = max(total, req.num_tokens)
            need_whole = sum(max(0, self._required(g, whole) - len(have[gid]) - len(hit_blocks[gid]))
                             for gid, g in enumerate(self.groups))
            if need_whole + from_queue > self.pool.num_free:
                return None
        added = []
        for gid, g in enumerate(self.groups):
            if hit_blocks[gid]:
                self.pool.touch(hit_blocks[gid], req_id=req.req_id)
                self.events.append({"kind": "cache_hit", "req": req.req_id, "group": gid,
                                    "blocks": [b.block_id for b in hit_blocks[gid]],
                                    "tokens": num_hit_tokens})
                have[gid].extend(hit_blocks[gid])
                self.num_cached_blocks[req.req_id][gid] = len(have[gid])
            new = self.pool.get_new_blocks(need_new[gid], req_id=req.req_id, group_id=gid)
            have[gid].extend(new)
            added.append([b.block_id for b in hit_blocks[gid]] + [b.block_id for b in new])
        self._cache_blocks(req, min(total, req.num_tokens))
        return added

    def _cache_blocks(self, req: Request, num_tokens: int) -> None:
        if not self.pool.enable_caching:
            return
        hashes = self.block_hashes(req)
        num_full = min(self.geometry.full_blocks(num_tokens), len(hashes))
        for gid, g in enumerate(self.groups):
            if g.kind == "state":
                continue
            done = self.num_cached_blocks[req.req_id][gid]
            if num_full > done:
                self.pool.cache_full_blocks(hashes, self.req_blocks[req.req_id][gid], done, num_full,
                                            self.geometry.virtual_block_size, gid, req.req_id)
                self.num_cached_blocks[req.req_id][gid] = num_full

    def free(self, req: Request) -> None:
        blocks = self.req_blocks.pop(req.req_id, None)
        self.num_cached_blocks.pop(req.req_id, None)
        if blocks is None:
            return
        for gid, g in enumerate(blocks):
            self.pool.free_blocks(list(reversed(g)), req_id=req.req_id, group_id=gid)

    def fork(self, parent: Request, child: Request) -> list[list[int]] | None:
        """Child shares the parent's full blocks; the partial last block (and a state block)
        is copied (copy-on-write). Returns the child's block ids per group, or None if short."""
        pblocks = self.blocks_of(parent.req_id)
        n_computed = parent.num_computed_tokens
        n_full = self.geometry.full_blocks(n_computed)
        tail = n_computed - self.geometry.tokens_held(n_full)   # tokens in the partial last block
        copies = []
        for gid, g in enumerate(self.groups):
            if g.kind == "state":
                copies.append(1 if pblocks[gid] else 0)
            else:
                copies.append(1 if tail and len(pblocks[gid]) > n_full else 0)
        if sum(copies) > self.pool.num_free:
            return None
        cblocks, out = [], []
        for gid, g in enumerate(self.groups):
            src = pblocks[gid]
            shared = [] if g.kind == "state" else src[:n_full]
            self.pool.touch(shared, req_id=child.req_id)
            mine = list(shared)
            if copies[gid]:
                new = self.pool.get_new_blocks(1, req_id=child.req_id, group_id=gid)[0]
                source = src[0] if g.kind == "state" else src[n_full]
                self.events.append({"kind": "cow", "req": child.req_id, "group": gid,
                                    "src": source.block_id, "dst": new.block_id,
                                    "tokens": tail if g.kind != "state" else 0})
                mine.append(new)
            if shared:
                self.events.append({"kind": "share", "req": child.req_id, "group": gid,
                                    "blocks": [b.block_id for b in shared if not b.is_null]})
            cblocks.append(mine)
            out.append([b.block_id for b in mine])
        self.req_blocks[child.req_id] = cblocks
        self.num_cached_blocks[child.req_id] = [min(n_full, len(c)) if g.kind != "state" else 0
                                                for c, g in zip(cblocks, self.groups)]
        self._hashes[child.req_id] = list(self.block_hashes(parent))
        return out

    def live_references(self) -> dict[int, int]:
        refs: dict[int, int] = {}
        for groups in self.req_blocks.values():
            for g in groups:
                for b in g:
                    if not b.is_null:
                        refs[b.block_id] = refs.get(b.block_id, 0) + 1
        return refs
