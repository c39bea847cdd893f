"""The block pool: physical blocks, the free queue, ref counts and the prefix cache.

Block 0 is the null block: taken out of the queue at start, never handed out,
never queued again. Up to v0.32.x ``touch`` and ``free_blocks`` still count its
references: nothing adds one when a sliding window swaps a block for it, but every
null entry a request frees takes one away, so its ref count only falls (below 0);
from v0.33.0 both skip it and it stays 0 (``null_block_ref_counted``). Allocation pops from the front of the
free queue; a block with no hash that drops to ref 0 goes back to the front
(reused first), a hashed one to the back (least recently used evicted first).
A cached block stays findable while it sits in the queue and loses its hash
only when it is reallocated (lazy eviction).
"""
from __future__ import annotations

import gc
import hashlib
from contextlib import contextmanager
from dataclasses import dataclass

from kvviz.constants import NULL_BLOCK_ID
from kvviz.core.versions import CURRENT, Rules

NONE_HASH = hashlib.sha256(b"kvviz-none-hash").digest()
"""Parent hash of a request's first block up to vLLM v0.28.x, where a process without PYTHONHASHSEED
draws ``os.urandom(32)`` (chains differ from process to process): kvviz pins this one stand-in draw
so replays stay reproducible."""
FIXED_NONE_HASH = hashlib.sha256(b"vllm-none-hash").digest()
"""From v0.29.0 (#51875) NONE_HASH = hash_fn(seed), the seed "vllm-none-hash" for sha256 unless
PYTHONHASHSEED is set (v1/core/kv_cache_utils.py ``init_none_hash``): the same in every process.
kvviz's chain hashes raw bytes (not vLLM's pickled tuples), so this is the seed's hash in kvviz's own
scheme: what matches vLLM is that the chain is fixed from v0.29.0 on, not the bytes."""


def none_hash_for(rules) -> bytes:
    """The release's NONE_HASH (``Rules.none_hash_seed``: "urandom" or "fixed")."""
    return FIXED_NONE_HASH if rules.none_hash_seed == "fixed" else NONE_HASH


def hash_block_tokens(parent: bytes | None, tokens, extra_keys=None, none_hash: bytes = NONE_HASH) -> bytes:
    """Chained hash of one full block: H(parent or NONE_HASH, token ids, extra keys)."""
    h = hashlib.sha256()
    h.update(parent if parent is not None else none_hash)
    h.update(b"|tokens:" + ",".join(str(int(t)) for t in tokens).encode())
    if extra_keys:
        h.update(b"|extra:" + repr(tuple(extra_keys)).encode())
    return h.digest()


def block_hashes_for(tokens, block_size: int, extra_keys=None, none_hash: bytes = NONE_HASH) -> list[bytes]:
    """Hashes of every *full* block of ``tokens``; a partial tail block gets none."""
    out: list[bytes] = []
    parent = None
    for start in range(0, len(tokens) - block_size + 1, block_size):
        parent = hash_block_tokens(parent, tokens[start : start + block_size],
                                   extra_keys if start == 0 else None, none_hash)
        out.append(parent)
    return out


def with_group(block_hash: bytes, group_id: int) -> bytes:
    return block_hash + group_id.to_bytes(4, "big")


@contextmanager
def _gc_paused():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(eq=False, slots=True)
class Block:
    block_id: int
    ref_cnt: int = 0
    block_hash: bytes | None = None   # hash + group id, set while the block is cached
    hash_num_tokens: int = 0
    is_null: bool = False
    prev: "Block | None" = None
    next: "Block | None" = None

    def __repr__(self) -> str:
        return f"Block({self.block_id}, ref={self.ref_cnt}{', cached' if self.block_hash else ''})"


class FreeBlockQueue:
    """Doubly linked list with O(1) remove, as the prefix cache needs when a queued block is hit."""

    def __init__(self, blocks: list[Block]):
        self.head = Block(-1)
        self.tail = Block(-1)
        chain = [self.head, *blocks, self.tail]
        for a, b in zip(chain, chain[1:]):  # link in one pass (pools run to 10^6 blocks)
            a.next, b.prev = b, a
        self.num_free = len(blocks)

    def _link_before(self, anchor: Block, b: Block) -> None:
        b.prev, b.next = anchor.prev, anchor
        anchor.prev.next = b
        anchor.prev = b
        self.num_free += 1

    def popleft(self) -> Block:
        b = self.head.next
        if b is self.tail:
            raise ValueError("No free blocks available")
        self.remove(b)
        return b

    def popleft_n(self, n: int) -> list[Block]:
        if n > self.num_free:
            raise ValueError(f"asked for {n} blocks, {self.num_free} free")
        out = []
        b = self.head.next
        for _ in range(n):  # unlink a run from the front in one pass
            out.append(b)
            b.prev, b = None, b.next
            out[-1].next = None
        self.head.next, b.prev = b, self.head
        self.num_free -= n
        return out

    def remove(self, b: Block) -> None:
        if b.prev is None or b.next is None:
            raise ValueError(f"block {b.block_id} is not in the free queue")
        b.prev.next, b.next.prev = b.next, b.prev
        b.prev = b.next = None
        self.num_free -= 1

    def append_n(self, blocks) -> None:
        for b in blocks:
            self._link_before(self.tail, b)

    def prepend_n(self, blocks) -> None:
        first = self.head.next
        for b in blocks:  # keeps the given order at the front
            self._link_before(first, b)

    def ids(self) -> list[int]:
        out, b = [], self.head.next
        while b is not self.tail:
            out.append(b.block_id)
            b = b.next
        return out


class BlockPool:
    def __init__(self, num_blocks: int, *, enable_caching: bool = True, profile: Rules = CURRENT,
                 events: list | None = None):
        if num_blocks < 2:
            raise ValueError("a pool needs at least 2 blocks (block 0 is the null block)")
        self.num_blocks = num_blocks
        self.enable_caching = enable_caching
        self.profile = profile
        self.none_hash = none_hash_for(profile)
        with _gc_paused():  # a million linked blocks would otherwise trigger many full collections
            self.blocks = [Block(i) for i in range(num_blocks)]
            self.free_queue = FreeBlockQueue(self.blocks)
        self.null_block = self.free_queue.popleft()
        self.null_block.is_null = True
        assert self.null_block.block_id == NULL_BLOCK_ID
        self.cached: dict[bytes, dict[int, Block]] = {}  # hash+gid -> {block_id: block}
        self.events = events if events is not None else []

    # --- queries ----------------------------------------------------------------
    @property
    def num_free(self) -> int:
        return self.free_queue.num_free

    def free_block_ids(self) -> list[int]:
        return self.free_queue.ids()

    def ref_counts(self) -> list[int]:
        return [b.ref_cnt for b in self.blocks]

    def get_cached_block(self, block_hash: bytes, group_id: int) -> Block | None:
        entry = self.cached.get(with_group(block_hash, group_id))
        if not entry:
            return None
        return next(iter(entry.values()))

    # --- allocation -----------------------------------------------------------------
    def get_new_blocks(self, n: int, *, req_id: str | None = None, group_id: int = 0) -> list[Block]:
        if n > self.num_free:
            raise ValueError(f"cannot allocate {n} blocks: only {self.num_free} free")
        out = self.free_queue.popleft_n(n)
        for b in out:
            if self.enable_caching and b.block_hash is not None:
                self._evict(b)
            assert b.ref_cnt == 0
            b.ref_cnt = 1
        if out:
            self.events.append({"kind": "alloc", "req": req_id, "group": group_id,
                                "blocks": [b.block_id for b in out]})
        return out

    def _evict(self, b: Block) -> None:
        key = b.block_hash
        entry = self.cached.get(key)
        if entry is not None:
            entry.pop(b.block_id, None)
            if not entry:
                del self.cached[key]
        b.block_hash = None
        b.hash_num_tokens = 0
        self.events.append({"kind": "evict", "block": b.block_id})

    def touch(self, blocks, *, req_id: str | None = None) -> None:
        """A prefix-cache hit or a share: take one more reference. The null block is skipped from
        v0.33.0; before, its count was raised too (vLLM block_pool.py ``BlockPool.touch``)."""
        nulls = 0
        for b in blocks:
            if b.is_null:
                nulls += 1
                continue
            if b.ref_cnt == 0:
                self.free_queue.remove(b)
            b.ref_cnt += 1
        if nulls:
            self._null_ref(nulls, req_id)

    def _null_ref(self, delta: int, req_id: str | None = None, group_id: int = 0) -> None:
        """The null block's count under ``touch`` (+1) or ``free_blocks`` (-1): kept up to v0.32.x
        (never queued, never checked), not maintained from v0.33.0."""
        if not self.profile.null_block_ref_counted:
            return
        self.null_block.ref_cnt += delta
        self.events.append({"kind": "null_ref", "req": req_id, "group": group_id, "delta": delta,
                            "ref_cnt": self.null_block.ref_cnt})

    def _to_front(self, b: Block) -> bool:
        """Whether a block freed to ref 0 is reused first, by the release's free-queue era:
        every block appended (before v0.24.0); hash-less blocks to the front (v0.24.0, #42656);
        with prefix caching off every block appended again (v0.27.0, #48017), to the front on
        main (#51482)."""
        if not self.enable_caching:
            return self.profile.prepend_when_caching_off
        return self.profile.prepend_unhashed_on_free and b.block_hash is None

    def free_blocks(self, ordered_blocks, *, req_id: str | None = None, group_id: int = 0) -> None:
        """Drop one reference from each block, in the order given (callers pass a request's
        blocks tail first, so its deepest cached block is evicted first). A null entry lowers the
        null block's count up to v0.32.x and is skipped from v0.33.0 (``BlockPool.free_blocks``)."""
        first, last, freed = [], [], []
        nulls = 0
        for b in ordered_blocks:
            if b.is_null:
                nulls += 1
                continue
            if b.ref_cnt <= 0:
                raise ValueError(f"block {b.block_id} freed with ref count {b.ref_cnt}")
            b.ref_cnt -= 1
            if b.ref_cnt == 0:
                freed.append(b.block_id)
                if self._to_front(b):
                    first.append(b)
                else:
                    last.append(b)
        if nulls:
            self._null_ref(-nulls, req_id, group_id)
        self.free_queue.prepend_n(first)
        self.free_queue.append_n(last)
        if freed:
            self.events.append({"kind": "free", "req": req_id, "group": group_id, "blocks": freed,
                                "to_front": [b.block_id for b in first],
                                "to_back": [b.block_id for b in last]})

    def cache_full_blocks(self, hashes: list[bytes], blocks: list[Block], num_cached: int,
                          num_full: int, block_size: int, group_id: int = 0,
                          req_id: str | None = None) -> None:
        """Register blocks [num_cached, num_full) of a request under their chained hashes."""
        if not self.enable_caching:
            return
        new = []
        for i in range(num_cached, num_full):
            b = blocks[i]
            if b.is_null or b.block_hash is not None:
                continue
            key = with_group(hashes[i], group_id)
            b.block_hash = key
            b.hash_num_tokens = (i + 1) * block_size
            self.cached.setdefault(key, {})[b.block_id] = b
            new.append(b.block_id)
        if new:
            self.events.append({"kind": "cache", "req": req_id, "group": group_id, "blocks": new})

    # --- invariants (the property tests check them after every step) ---------------------
    def check_invariants(self, live_refs: dict[int, int] | None = None) -> None:
        free_ids = self.free_block_ids()
        assert len(free_ids) == len(set(free_ids)), "a block is twice in the free queue"
        assert NULL_BLOCK_ID not in free_ids, "the null block is in the free queue"
        free = set(free_ids)
        used = {b.block_id for b in self.blocks if b.ref_cnt > 0 and not b.is_null}
        assert not (free & used), f"blocks both free and referenced: {sorted(free & used)}"
        assert len(free) + len(used) + 1 == self.num_blocks, "free + used + null != total"
        if live_refs is not None:
            for b in self.blocks:
                if not b.is_null:
                    assert b.ref_cnt == live_refs.get(b.block_id, 0), (
                        f"block {b.block_id}: ref {b.ref_cnt}, held {live_refs.get(b.block_id, 0)} times")
        for key, entry in self.cached.items():
            for bid, b in entry.items():
                assert b.block_hash == key and b.block_id == bid
