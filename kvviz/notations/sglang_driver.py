"""SGLang's own bookkeeping, driven by a kvviz schedule (runs in the SGLang venv).

``python -m kvviz.notations.sglang_driver`` reads ``{"schedule": ..., "page_size": P,
"pool_tokens": N, "max_reqs": R}`` on stdin and writes, step by step, what SGLang's own objects
hold. What is SGLang's and what is kvviz's:

* SGLang's (``sglang.srt.mem_cache``, version in the answer): ``ReqToTokenPool`` (its rows and
  their free list), ``MHATokenToKVPool``, ``TokenToKVPoolAllocator`` (page 1) or
  ``PagedTokenToKVPoolAllocator``, ``RadixCache`` (match, insert, node splits, locks, LRU
  eviction) and the allocation helpers ``alloc_token_slots``,
  ``alloc_paged_token_slots_extend`` and ``alloc_paged_token_slots_decode``. Every slot, row
  and match below comes from them.
* kvviz's: the calls between them. SGLang's scheduler (``Req``, ``ScheduleBatch``) imports its
  whole server, so the few lines of it that touch these objects are re-done here, in the order
  0.5.23 does them: ``init_next_round_input`` (match ``tokens[:L-1]``), ``alloc_for_extend`` /
  ``alloc_for_decode`` (row, prefix, slots, ``req_to_token`` writes), ``checkpoint`` (insert the
  page-aligned key, free the duplicate slots, point the row at the tree's copy) after every
  extend, ``release_kv_cache`` when a request finishes (checkpoint, free the tail, unlock, free the
  row) or is retracted (no checkpoint). Each kvviz step runs as SGLang runs one: an extend batch
  (kvviz's prefills and chunks, in its order) then a decode batch (its decodes).
* The schedule's: which request holds how many tokens after each step. SGLang's match is asked
  for ``tokens[:end - 1]``, so a request's first step still ends where kvviz's does.

SGLang's configs package imports two multimodal helpers that need torchvision at module level;
PyPI's torchvision does not load beside torch+cpu, so when it is absent those two modules are
import-only stand-ins (nothing here calls them).
"""
from __future__ import annotations

import json
import sys

from kvviz.notations.sglang_schedule import SGLangRelease, SGLangReq, run_schedule

TORCHVISION_STANDINS = ("sglang.srt.configs.deepseek_ocr", "sglang.srt.multimodal.internvl_utils")


def _stand_in_torchvision_users() -> None:
    import importlib.util
    import types

    if importlib.util.find_spec("torchvision") is not None:
        return

    class _Meta(type):
        def __getattr__(cls, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return _Placeholder

    class _Placeholder(metaclass=_Meta):
        def __init__(self, *a, **k):
            pass

    def _attr(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder

    for name in TORCHVISION_STANDINS:
        mod = types.ModuleType(name)
        mod.__getattr__ = _attr
        sys.modules.setdefault(name, mod)


class SGLangRun(SGLangRelease):
    def __init__(self, page_size: int, pool_tokens: int, max_reqs: int, max_context: int):
        import torch
        from sglang.srt.mem_cache.allocator import (PagedTokenToKVPoolAllocator,
                                                    TokenToKVPoolAllocator)
        from sglang.srt.mem_cache.cache_init_params import CacheInitParams
        from sglang.srt.mem_cache.memory_pool import MHATokenToKVPool, ReqToTokenPool
        from sglang.srt.mem_cache.radix_cache import RadixCache

        self.torch, self.ps = torch, page_size
        self.req_pool = ReqToTokenPool(size=max_reqs, max_context_len=max_context, device="cpu",
                                       enable_memory_saver=False)
        kv = MHATokenToKVPool(pool_tokens, page_size=page_size, dtype=torch.bfloat16, head_num=1,
                              head_dim=8, layer_num=1, device="cpu", enable_memory_saver=False)
        if page_size == 1:
            self.alloc = TokenToKVPoolAllocator(pool_tokens, torch.bfloat16, "cpu", kv, need_sort=False)
        else:
            self.alloc = PagedTokenToKVPoolAllocator(pool_tokens, page_size, torch.bfloat16, "cpu",
                                                     kv, need_sort=False)
        self.tree = RadixCache(CacheInitParams(disable=False, req_to_token_pool=self.req_pool,
                                               token_to_kv_pool_allocator=self.alloc,
                                               page_size=page_size))
        self.reqs: dict[str, SGLangReq] = {}

    # --- the radix cache, as SGLang's scheduler calls it ---------------------------------
    def _key(self, toks):
        from array import array

        from sglang.srt.mem_cache.radix_cache import RadixKey
        return RadixKey(token_ids=array("q", toks), extra_key=None)

    def admit(self, r: SGLangReq, end: int) -> None:
        from sglang.srt.mem_cache.base_prefix_cache import MatchPrefixParams
        res = self.tree.match_prefix(MatchPrefixParams(key=self._key(r.tokens[:end - 1])))
        r.node = res.last_device_node
        r.prefix_len = r.protected = r.matched = int(res.device_prefix_len)
        r.lock = self.tree.lock(r.node)

    def checkpoint(self, r: SGLangReq, up_to: int) -> None:
        from sglang.srt.mem_cache.base_prefix_cache import InsertParams, MatchPrefixParams
        toks = r.tokens[:up_to]
        row = self.req_pool.req_to_token[r.row, :len(toks)]
        key = self._key(toks).page_aligned(self.ps)
        values = row[:len(key)].to(dtype=self.torch.int64, copy=True)
        res = self.tree.insert(InsertParams(key=key, value=values, inserted_len=r.inserted, priority=0))
        r.inserted = max(r.inserted, len(key))
        prompt_key = self._key(toks[:len(r.prompt)]).page_aligned(self.ps)
        if 0 < len(prompt_key) < len(key):   # the leaf split at the prompt's end
            self.tree.insert(InsertParams(key=prompt_key, value=values[:len(prompt_key)],
                                          inserted_len=len(prompt_key), priority=1))
        self.alloc.free_segment(row[r.protected:res.prefix_len], start_pos=r.protected)
        node = self.tree.match_prefix(MatchPrefixParams(key=key)).last_device_node
        new = self.tree.path_device_indices(node)
        self.req_pool.write((r.row, slice(r.protected, len(new))), new[r.protected:])
        r.protected = len(new)
        self.tree.unlock(r.lock)
        r.lock, r.node = self.tree.lock(node), node

    # --- the two kinds of batch ----------------------------------------------------------
    def extend(self, entries: list) -> list:
        from sglang.srt.mem_cache.allocation import (alloc_paged_token_slots_extend,
                                                     alloc_token_slots)
        torch = self.torch
        reqs = [self.reqs[e["req"]] for e in entries]
        ends = [e["end"] for e in entries]
        for r, end in zip(reqs, ends):
            r.matched = None
            if r.row is None:
                self.admit(r, end)
        prefixes = []
        for r in reqs:
            if r.row is not None:
                prefixes.append(self.req_pool.req_to_token[r.row, :r.prefix_len].to(torch.int64))
            else:
                prefixes.append(self.tree.path_device_indices(r.node)[:r.prefix_len])
        fresh = [r for r in reqs if r.row is None]
        rows = self.req_pool.alloc_rows(len(fresh)) if fresh else []
        if rows is None:
            raise RuntimeError("ReqToTokenPool has no free row")
        for r, row in zip(fresh, rows):
            r.row = int(row)
        plen = torch.tensor([r.prefix_len for r in reqs], dtype=torch.int64)
        slen = torch.tensor(ends, dtype=torch.int64)
        n = int((slen - plen).sum())
        if self.ps == 1:
            out = alloc_token_slots(self.tree, n)
        else:
            last = torch.tensor([int(p[-1]) if len(p) else -1 for p in prefixes], dtype=torch.int64)
            out = alloc_paged_token_slots_extend(self.tree, plen, plen, slen, slen, last, n)
        pt = 0
        for r, p, end in zip(reqs, prefixes, ends):
            self.req_pool.write((r.row, slice(0, r.prefix_len)), p.to(torch.int32))
            k = end - r.prefix_len
            self.req_pool.write((r.row, slice(r.prefix_len, end)), out[pt:pt + k].to(torch.int32))
            pt += k
        return [int(x) for x in out]

    def decode(self, entries: list) -> list:
        from sglang.srt.mem_cache.allocation import (alloc_paged_token_slots_decode,
                                                     alloc_token_slots)
        torch = self.torch
        reqs = [self.reqs[e["req"]] for e in entries]
        starts = [e["start"] for e in entries]
        if self.ps == 1:
            out = alloc_token_slots(self.tree, len(reqs))
        else:
            last = torch.tensor([int(self.req_pool.req_to_token[r.row, s - 1]) for r, s in
                                 zip(reqs, starts)], dtype=torch.int64)
            nxt = torch.tensor([s + 1 for s in starts], dtype=torch.int64)
            out = alloc_paged_token_slots_decode(self.tree, nxt, nxt, last)
        for r, s, x in zip(reqs, starts, out):
            self.req_pool.write((r.row, s), int(x))
        return [int(x) for x in out]


def _put_fault(name: str):
    """A wrong rule put into SGLang's own allocator for one run, to show the comparison catches it:
    ``paged_free_at_tail`` puts freed pages at the tail of the free list instead of its head.
    Returns the function that takes it out again."""
    import torch
    from sglang.srt.mem_cache.allocator import PagedTokenToKVPoolAllocator
    if name != "paged_free_at_tail":
        raise ValueError(f"unknown fault {name!r}")
    own = PagedTokenToKVPoolAllocator.__dict__["_release_page_ids"]

    def release_at_tail(self, *page_ids):
        self.free_pages = torch.cat((self.free_pages, *page_ids))
    PagedTokenToKVPoolAllocator._release_page_ids = release_at_tail

    def take_out():
        PagedTokenToKVPoolAllocator._release_page_ids = own
    return take_out


def _one(req: dict) -> dict:
    from kvviz.notations.engine_schedule import check_schedule
    from kvviz.notations.sglang_schedule import check_knobs
    import sglang
    schedule = check_schedule(req["schedule"])
    check_knobs(req)
    take_out = _put_fault(req["fault"]) if req.get("fault") else None
    longest = max((len(r["tokens"]) for r in schedule["requests"].values()), default=1)
    run = SGLangRun(int(req.get("page_size", 1)), int(req["pool_tokens"]),
                    int(req.get("max_reqs") or len(schedule["requests"]) or 1), longest + 1)
    try:
        steps = run_schedule(run, schedule)
    except RuntimeError as e:   # SGLang's own out-of-memory
        return {"engine": "sglang", "version": sglang.__version__, "error": str(e).splitlines()[0]}
    finally:
        if take_out is not None:   # the next run of this call gets SGLang's own rule back
            take_out()
    return {"engine": "sglang", "version": sglang.__version__, "page_size": run.ps,
            "pool_tokens": int(req["pool_tokens"]), "steps": steps}


def main() -> int:
    """One request, or ``{"runs": [request, ...]}`` (SGLang is imported once for all)."""
    req = json.loads(sys.stdin.read())
    answer_to, sys.stdout = sys.stdout, sys.stderr   # SGLang prints (its tree, on out-of-memory)
    _stand_in_torchvision_users()
    answer = {"runs": [_one(r) for r in req["runs"]]} if "runs" in req else _one(req)
    json.dump(answer, answer_to)
    answer_to.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
