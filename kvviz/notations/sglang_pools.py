"""kvviz's model of SGLang's memory bookkeeping (``sglang.srt.mem_cache``, 0.5.23), in plain
Python: where SGLang puts each token, so kvviz's SGLang notation follows SGLang's own placement
rather than vLLM's slots. ``tests/engines/test_sglang_notation.py`` holds it against SGLang's own
objects on random scenarios.

The rules, each read in SGLang's code (file names under ``sglang/srt/mem_cache/``):

* Rows (``memory_pool.py``, ``ReqToTokenPool``): rows ``1 .. size`` are free at start (row 0 is
  never handed out); a request takes the row at the *tail* of the free list, and a freed row goes
  back to the tail, so the last row freed is the next one used.
* Slots, page size 1 (``allocator/token.py``): slot 0 is held back for padded tokens; slots are
  handed out from the head of the free list and freed ones are appended at its end (first freed,
  last reused).
* Slots, pages (``allocator/paged.py``): page 0 is held back. An extend first fills the rest of
  the request's last page, then takes whole new pages from the head of the free list, in batch
  order; a decode takes a new page only when its token is the first of one. Freed pages are put
  back at the *head* (last freed, first reused).
* The radix cache (``radix_cache.py``): keys are page-aligned; a match that ends inside a node
  splits it; every node on a matched or inserted path is touched (its LRU time); a node a request
  locks cannot be evicted; eviction frees least-recently-used unlocked leaves, whole, until enough
  tokens are free, and a parent left childless becomes a leaf.
* Eviction runs before an allocation that may not fit: page size 1 asks for the tokens needed;
  pages ask for the tokens plus one page per request (``allocation.py``).
"""
from __future__ import annotations

import heapq

import numpy as np


class PoolFull(RuntimeError):
    """SGLang's allocator returned None: out of memory even after eviction."""


class TokenAllocator:
    """Page size 1."""

    def __init__(self, size: int):
        self.ps = 1
        self.free_pages = list(range(1, size + 1))

    def available_size(self) -> int:
        return len(self.free_pages)

    def alloc(self, n: int) -> list:
        if n > len(self.free_pages):
            raise PoolFull(f"{n} slots asked, {len(self.free_pages)} free")
        out, self.free_pages = self.free_pages[:n], self.free_pages[n:]
        return out

    def free_segment(self, idx, start_pos: int = 0) -> None:
        self.free_pages.extend(int(x) for x in idx)

    def free_segments(self, segments) -> None:
        for idx, start in segments:
            self.free_segment(idx, start)


class PagedAllocator:
    def __init__(self, size: int, page_size: int):
        self.ps = page_size
        self.free_pages = list(range(1, size // page_size + 1))

    def available_size(self) -> int:
        return len(self.free_pages) * self.ps

    def free_segment(self, idx, start_pos: int = 0) -> None:
        if len(idx):
            pages = [int(x) // self.ps for x in list(idx)[::self.ps]]
            self.free_pages = pages + self.free_pages

    def free_segments(self, segments) -> None:
        for idx, start in segments:
            self.free_segment(idx, start)

    def _take(self, n: int) -> list:
        if n > len(self.free_pages):
            raise PoolFull(f"{n} pages asked, {len(self.free_pages)} free")
        out, self.free_pages = self.free_pages[:n], self.free_pages[n:]
        return out

    def alloc_extend(self, prefix_lens, seq_lens, last_locs) -> list:
        ps = self.ps
        new = sum(-(-s // ps) - -(-p // ps) for p, s in zip(prefix_lens, seq_lens))
        pages = iter(self._take(new))
        out = []
        for p, s, last in zip(prefix_lens, seq_lens, last_locs):
            ceil_p = -(-p // ps) * ps
            pos, loc = p, last
            while pos < s:
                if pos < ceil_p:          # the rest of the prefix's last page
                    loc += 1
                elif pos % ps == 0:       # a new page
                    loc = next(pages) * ps
                else:
                    loc += 1
                out.append(loc)
                pos += 1
        return out

    def alloc_decode(self, seq_lens, last_locs) -> list:
        need = [s % self.ps == 1 for s in seq_lens]
        pages = iter(self._take(sum(need)))
        return [next(pages) * self.ps if n else last + 1 for n, last in zip(need, last_locs)]


class Node:
    __slots__ = ("key", "value", "children", "parent", "lock_ref", "time")

    def __init__(self, time: int):
        self.key, self.value, self.children, self.parent = (), [], {}, None
        self.lock_ref, self.time = 0, time


class RadixTree:
    """SGLang's ``RadixCache`` with LRU eviction; times are a counter (SGLang reads a clock)."""

    def __init__(self, allocator, page_size: int):
        self.alloc, self.ps, self.clock = allocator, page_size, 0
        self.root = self._node()
        self.root.lock_ref = 1
        self.leaves: set = set()
        self.evictable = 0

    def _node(self) -> Node:
        self.clock += 1
        return Node(self.clock)

    def _aligned(self, key) -> tuple:
        return tuple(key[: len(key) // self.ps * self.ps])

    def _child_key(self, key) -> tuple:
        return tuple(key[: self.ps])

    def _common(self, a, b) -> int:
        n = 0
        for x, y in zip(a, b):
            if x != y:
                break
            n += 1
        return n // self.ps * self.ps

    def _split(self, child: Node, n: int) -> Node:
        new = self._node()
        new.children = {self._child_key(child.key[n:]): child}
        new.parent, new.lock_ref = child.parent, child.lock_ref
        new.key, new.value = child.key[:n], child.value[:n]
        child.parent, child.key, child.value = new, child.key[n:], child.value[n:]
        new.parent.children[self._child_key(new.key)] = new
        return new

    def match(self, key) -> tuple[int, Node]:
        key = self._aligned(key)
        if not key:
            return 0, self.root
        self.clock += 1
        node, node.time, total = self.root, self.clock, 0
        while key and self._child_key(key) in node.children:
            child = node.children[self._child_key(key)]
            child.time = self.clock
            n = self._common(child.key, key)
            if n < len(child.key):
                node = self._split(child, n)
                total += n
                break
            node, key, total = child, key[n:], total + n
        return total, node

    def insert(self, key, value) -> int:
        key = self._aligned(key)
        value = list(value[: len(key)])
        self.clock += 1
        node, node.time = self.root, self.clock
        total = 0
        while key and self._child_key(key) in node.children:
            node = node.children[self._child_key(key)]
            node.time = self.clock
            n = self._common(node.key, key)
            total, key, value = total + n, key[n:], value[n:]
            if n < len(node.key):
                node = self._split(node, n)
        if key:
            leaf = self._node()
            leaf.parent, leaf.key, leaf.value = node, key, value
            node.children[self._child_key(key)] = leaf
            self.evictable += len(key)
            self._leaf_status(node)
            self._leaf_status(leaf)
        return total

    @staticmethod
    def path(node: Node) -> list:
        out = []
        while node.parent is not None:
            out[:0] = node.value
            node = node.parent
        return out

    def _leaf_status(self, node: Node) -> None:
        if node.lock_ref > 0 or node.children:
            self.leaves.discard(node)
        else:
            self.leaves.add(node)

    def lock(self, node: Node) -> Node:
        while node is not self.root:
            if node.lock_ref == 0:
                self.evictable -= len(node.key)
            node.lock_ref += 1
            self._leaf_status(node)
            node = node.parent
        return node

    def unlock(self, node: Node) -> None:
        while node is not None and node is not self.root:
            if node.lock_ref == 1:
                self.evictable += len(node.key)
            node.lock_ref -= 1
            self._leaf_status(node)
            node = node.parent

    def evict(self, n: int) -> None:
        heap = [(x.time, id(x), x) for x in self.leaves]
        heapq.heapify(heap)
        done = 0
        while done < n and heap:
            _, _, x = heapq.heappop(heap)
            self.alloc.free_segment(x.value, 0)
            done += len(x.value)
            del x.parent.children[self._child_key(x.key)]
            self.evictable -= len(x.key)
            self.leaves.discard(x)
            self._leaf_status(x.parent)
            if not x.parent.children and x.parent.lock_ref == 0:
                heapq.heappush(heap, (x.parent.time, id(x.parent), x.parent))

    def evict_for(self, tokens: int) -> None:
        short = tokens - self.alloc.available_size()
        if short > 0:
            self.evict(short)

    def evictable_size(self) -> int:
        return self.evictable


class RowPool:
    """``ReqToTokenPool``: rows 1..size; the tail of the free list is taken and given back."""

    def __init__(self, size: int, max_context: int):
        self.req_to_token = np.zeros((size + 1, max_context), dtype=np.int64)
        self.free_slots = list(range(1, size + 1))

    def alloc_rows(self, n: int):
        if n > len(self.free_slots):
            return None
        out = self.free_slots[len(self.free_slots) - n:]
        del self.free_slots[len(self.free_slots) - n:]
        return out

    def free_rows(self, rows) -> None:
        self.free_slots.extend(rows)

    def write(self, where, values) -> None:
        self.req_to_token[where] = values
