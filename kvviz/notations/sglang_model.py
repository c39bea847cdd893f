"""kvviz's SGLang: the same walk as ``kvviz.notations.sglang_driver``, on kvviz's model of SGLang's
objects (``kvviz.notations.sglang_pools``), so it answers in the driver's format without SGLang
installed. ``compare_sglang`` names the first place the model and SGLang's own answer differ.
"""
from __future__ import annotations

from kvviz.notations.sglang_pools import (PagedAllocator, PoolFull, RadixTree, RowPool,
                                          TokenAllocator)
from kvviz.notations.sglang_schedule import SGLangRelease, SGLangReq, check_knobs, run_schedule

SGLANG_VERSION = "0.5.23"
"""The SGLang release the model was read from and is tested against."""


class SGLangModel(SGLangRelease):
    def __init__(self, page_size: int, pool_tokens: int, max_reqs: int, max_context: int):
        self.ps = page_size
        self.req_pool = RowPool(max_reqs, max_context)
        self.alloc = TokenAllocator(pool_tokens) if page_size == 1 else PagedAllocator(pool_tokens, page_size)
        self.tree = RadixTree(self.alloc, page_size)
        self.reqs: dict[str, SGLangReq] = {}

    def admit(self, r: SGLangReq, end: int) -> None:
        n, node = self.tree.match(r.tokens[:end - 1])
        r.node, r.prefix_len, r.protected, r.matched = node, n, n, n
        self.tree.lock(node)
        r.lock = node

    def checkpoint(self, r: SGLangReq, up_to: int) -> None:
        toks = r.tokens[:up_to]
        row = self.req_pool.req_to_token[r.row, :len(toks)]
        key = toks[: len(toks) // self.ps * self.ps]
        values = [int(x) for x in row[:len(key)]]
        had = self.tree.insert(key, values)
        r.inserted = max(r.inserted, len(key))
        prompt_key = toks[:len(r.prompt)][: len(toks[:len(r.prompt)]) // self.ps * self.ps]
        if 0 < len(prompt_key) < len(key):
            self.tree.insert(prompt_key, values[:len(prompt_key)])
        if had > r.protected:
            self.alloc.free_segment(row[r.protected:had], r.protected)
        _, node = self.tree.match(key)
        new = self.tree.path(node)
        self.req_pool.write((r.row, slice(r.protected, len(new))), new[r.protected:])
        r.protected = len(new)
        self.tree.unlock(r.lock)
        self.tree.lock(node)
        r.lock = r.node = node

    def extend(self, entries: list) -> list:
        reqs = [self.reqs[e["req"]] for e in entries]
        ends = [e["end"] for e in entries]
        for r, end in zip(reqs, ends):
            r.matched = None
            if r.row is None:
                self.admit(r, end)
        prefixes = [[int(x) for x in self.req_pool.req_to_token[r.row, :r.prefix_len]]
                    if r.row is not None else self.tree.path(r.node)[:r.prefix_len] for r in reqs]
        fresh = [r for r in reqs if r.row is None]
        rows = self.req_pool.alloc_rows(len(fresh))
        if rows is None:
            raise PoolFull("ReqToTokenPool has no free row")
        for r, row in zip(fresh, rows):
            r.row = row
        n = sum(end - r.prefix_len for r, end in zip(reqs, ends))
        if self.ps == 1:
            self.tree.evict_for(n)
            out = self.alloc.alloc(n)
        else:
            self.tree.evict_for(n + len(reqs) * self.ps)
            out = self.alloc.alloc_extend([r.prefix_len for r in reqs], ends,
                                          [p[-1] if p else -1 for p in prefixes])
        pt = 0
        for r, p, end in zip(reqs, prefixes, ends):
            self.req_pool.write((r.row, slice(0, r.prefix_len)), p)
            k = end - r.prefix_len
            self.req_pool.write((r.row, slice(r.prefix_len, end)), out[pt:pt + k])
            pt += k
        return out

    def decode(self, entries: list) -> list:
        reqs = [self.reqs[e["req"]] for e in entries]
        starts = [e["start"] for e in entries]
        self.tree.evict_for(len(reqs) * self.ps)
        if self.ps == 1:
            out = self.alloc.alloc(len(reqs))
        else:
            out = self.alloc.alloc_decode([s + 1 for s in starts],
                                          [int(self.req_pool.req_to_token[r.row, s - 1])
                                           for r, s in zip(reqs, starts)])
        for r, s, x in zip(reqs, starts, out):
            self.req_pool.write((r.row, s), x)
        return out


def model_answer(schedule: dict, *, page_size: int = 1, pool_tokens: int,
                 max_reqs: int | None = None) -> dict:
    """kvviz's prediction of the SGLang driver's answer for the same request."""
    check_knobs({"page_size": page_size, "pool_tokens": pool_tokens, "max_reqs": max_reqs})
    longest = max((len(r["tokens"]) for r in schedule["requests"].values()), default=1)
    m = SGLangModel(page_size, pool_tokens, max_reqs or len(schedule["requests"]) or 1, longest + 1)
    try:
        steps = run_schedule(m, schedule)
    except PoolFull as e:
        return {"engine": "sglang", "version": SGLANG_VERSION, "model": "kvviz",
                "error": "out of memory: " + str(e)}
    return {"engine": "sglang", "version": SGLANG_VERSION, "model": "kvviz", "page_size": page_size,
            "pool_tokens": pool_tokens, "steps": steps}


def driver_request(schedule: dict, *, page_size: int = 1, pool_tokens: int,
                   max_reqs: int | None = None) -> dict:
    req = {"schedule": schedule, "page_size": page_size, "pool_tokens": pool_tokens}
    if max_reqs:
        req["max_reqs"] = max_reqs
    return req


STEP_FIELDS = ("req_pool_indices", "extend", "decode", "req_to_token", "available", "evictable")


def compare_sglang(real: dict, model: dict) -> list[str]:
    """Plain-words differences between SGLang's answer and the model's (empty when equal):
    the first differing field of each differing step, at most 10 lines."""
    if "error" in real or "error" in model:
        if ("error" in real) != ("error" in model):
            return [f"SGLang: {real.get('error', 'ran every step')}; kvviz: {model.get('error', 'ran every step')}"]
        return []
    out = []
    rs, ms = real.get("steps", []), model.get("steps", [])
    if len(rs) != len(ms):
        out.append(f"SGLang ran {len(rs)} steps, the model {len(ms)}")
    for a, b in zip(rs, ms):
        for f in STEP_FIELDS:
            if a.get(f) != b.get(f):
                out.append(f"step {a.get('index', '?') + 1}: {f} differs: SGLang {_short(a.get(f))}, "
                           f"kvviz {_short(b.get(f))}")
                break
        if len(out) >= 10:
            break
    return out


def _short(v) -> str:
    s = repr(v)
    return s if len(s) <= 160 else s[:157] + "..."
