"""The scheduler's side of SGLang's bookkeeping, shared by the driver that runs SGLang's own
objects (``kvviz.notations.sglang_driver``) and kvviz's model of them
(``kvviz.notations.sglang_model``): one request's fields between the objects, and the walk through
a schedule (retractions, then an extend batch, then a decode batch, then checkpoints and
releases), so the two differ only in the objects they call.
"""
from __future__ import annotations

from kvviz.errors import BadInput

MAX_POOL_TOKENS = 1 << 20
MAX_PAGE_SIZE = 256
MAX_REQS = 4096


class SGLangReq:
    """One request's bookkeeping between SGLang's objects (SGLang's ``Req.kv`` fields)."""

    def __init__(self, rid: str, prompt: list, tokens: list):
        self.rid, self.prompt, self.tokens = rid, prompt, tokens
        self.row = None          # req_pool_idx
        self.prefix_len = 0      # tokens already in the row before this extend
        self.protected = 0       # cache_protected_len: the tree owns row[:protected]
        self.inserted = 0        # cache_inserted_len
        self.lock = None
        self.node = None
        self.matched = None      # this admission's prefix match


class SGLangRelease:
    """``release_kv_cache``, shared by the driver (SGLang's own objects) and kvviz's model (its
    stand-ins, with the same methods): checkpoint when asked, free the row's tail past what the tree
    owns, unlock, give the row back."""

    def release(self, r: SGLangReq, owned: int, *, checkpoint: bool) -> None:
        if checkpoint:
            self.checkpoint(r, owned)
        if r.protected < owned:
            row = self.req_pool.req_to_token[r.row]
            self.alloc.free_segments([(row[r.protected:owned], r.protected)])
        self.tree.unlock(r.lock)
        self.req_pool.free_rows([r.row])
        r.row, r.lock, r.node, r.inserted = None, None, None, 0


def _is_decode(entry: dict, req: SGLangReq) -> bool:
    return req.row is not None and entry["end"] - entry["start"] == 1 \
        and entry["start"] >= len(req.prompt)


def run_schedule(run, schedule: dict) -> list:
    """Drive ``run`` through the schedule; one record per step."""
    for rid, r in schedule["requests"].items():
        run.reqs[rid] = SGLangReq(rid, list(r["prompt"]), list(r["tokens"]))
    out = []
    for st in schedule["steps"]:
        for rid in st.get("preempted", []):
            r = run.reqs[rid]
            if r.row is not None:
                run.release(r, r.prefix_len, checkpoint=False)
        ext = [e for e in st["batch"] if not _is_decode(e, run.reqs[e["req"]])]
        dec = [e for e in st["batch"] if _is_decode(e, run.reqs[e["req"]])]
        ext_loc = run.extend(ext) if ext else []
        matched = {e["req"]: run.reqs[e["req"]].matched for e in ext
                   if run.reqs[e["req"]].matched is not None}
        prefix_lens = [run.reqs[e["req"]].prefix_len for e in ext]
        dec_loc = run.decode(dec) if dec else []
        rows = {e["req"]: run.reqs[e["req"]].row for e in st["batch"]}
        rtt = {e["req"]: [int(x) for x in run.req_pool.req_to_token[rows[e["req"]], :e["end"]]]
               for e in st["batch"]}
        for e in st["batch"]:
            r = run.reqs[e["req"]]
            r.prefix_len = e["end"]
            if e["req"] in st.get("finished", []):
                run.release(r, e["end"], checkpoint=True)
            elif e in ext:
                run.checkpoint(r, e["end"])
        out.append({"index": st["index"], "extend": {"reqs": [e["req"] for e in ext],
                    "out_cache_loc": ext_loc, "matched": matched,
                               "prefix_lens": prefix_lens},
                    "decode": {"reqs": [e["req"] for e in dec], "out_cache_loc": dec_loc},
                    "req_pool_indices": rows, "req_to_token": rtt,
                    "available": int(run.alloc.available_size()),
                    "evictable": int(run.tree.evictable_size())})
    return out




def check_knobs(req: dict) -> None:
    """The engine's knobs in a driver request, bounded before anything is allocated."""
    ps, pool, rows = req.get("page_size", 1), req.get("pool_tokens"), req.get("max_reqs") or 1
    for name, v, lo, hi in (("page_size", ps, 1, MAX_PAGE_SIZE), ("pool_tokens", pool, 1, MAX_POOL_TOKENS),
                            ("max_reqs", rows, 1, MAX_REQS)):
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise BadInput(f"{name} must be an integer in [{lo}, {hi}], not {v!r}")
    if pool < ps:
        raise BadInput(f"pool_tokens {pool} holds no page of {ps}")
