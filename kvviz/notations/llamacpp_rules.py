"""kvviz's model of llama.cpp's KV *cells*, written from llama.cpp's own code (llama-cpp-python
0.3.36's vendored llama.cpp), step by step over a kvviz schedule.

Pure python, standard library only: the driver (``kvviz.notations.llamacpp_driver``) imports
:func:`plan_calls` from here in the engine's venv, so the real engine and this model make the
same calls; what is compared is where llama.cpp puts the tokens.

**The calls (kvviz's rule, not llama.cpp's).** Request ``k`` of the schedule (in its order) is
sequence ``k``. A step does, in order: ``seq_rm(s, -1, -1)`` for each request preempted while
scheduling it; for each request of the batch that holds no cell yet, a *prefix copy*: among
the sequences holding cells, the one whose tokens share the longest common prefix with the
request's (lowest id on a tie), at most ``end - 1`` tokens so at least one token is decoded;
one ``llama_decode`` of every request's tokens ``[held, end)`` in batch order; and after the
step ``seq_rm(s, -1, -1)`` for each finished request. A copy of ``n`` tokens is
``seq_cp(src, dst, 0, n)`` in the unified cache; across streams llama.cpp only copies whole
sequences, so there it is ``seq_cp(src, dst, -1, -1)`` then ``seq_rm(dst, n, -1)``.

**llama.cpp's rules modelled** (file names in ``src/`` of llama.cpp):

* ``llama-context.cpp``: ``n_ctx`` is padded to a multiple of 256; with ``kv_unified`` one
  stream of ``n_ctx`` cells, else ``n_seq_max`` streams of ``pad256(n_ctx / n_seq_max)``
  cells, sequence ``s`` in stream ``s``. ``n_batch`` is at most ``n_ctx``.
* ``llama-kv-cache.cpp`` ``init_batch``: one stream splits the batch with
  ``split_simple`` (``n_ubatch`` tokens at a time, batch order); several streams with
  ``split_equal(sequential)`` (``llama-batch.cpp``): a ubatch takes a run of consecutive
  sequence ids in the order their tokens first appear, the same number of tokens of each.
* ``find_slot`` (not contiguous): start at the stream's ``head``, but at cell 0 when
  ``head > used + 2 * n_tokens``; test cells one by one, wrapping at the end, and take the
  empty ones until the ubatch's tokens have a cell each; fail after testing every cell.
  ``prepare`` places every ubatch in turn (and undoes it): a batch fails as a whole. Its
  undo gives stream ``strm[s]`` the saved head of stream ``s`` (``s`` the stream's place in
  the ubatch): after a failed batch over several streams a stream can get another's head.
* ``llama-batch.cpp`` ``init``: a sequence holding cells goes on from its last position + 1,
  else the batch is refused.
* ``apply_ubatch``: a token's cell gets its position and sequence; the head moves just
  past the ubatch's last cell.
* ``seq_rm``: the sequence leaves the cells in ``[p0, p1)``; a cell left with no
  sequence is empty, and the head moves back to the first cell emptied if that is lower.
* ``seq_cp`` in one stream adds the sequence to the source's cells in ``[p0, p1)`` (no new
  cell); across streams it resets the destination stream, copies every cell of the source
  at the same index, and takes the source's head.
* The debug strip (``LLAMA_KV_CACHE_DEBUG`` >= 3, logged by ``find_slot``): per cell ``.``
  empty, the sequence id, or ``M`` for several; then each cell's position.

What follows for these calls: every cell below the head is taken (``seq_rm`` moves the head
back to the first cell it empties, a placement moves it past cells it filled in order), so a
batch gets the lowest-numbered empty cells, in order, and neither the wrap-around nor the
restart at cell 0 ever changes a placement; only a failed batch across streams (above) breaks
that, and then the restart rule matters.
"""
from __future__ import annotations

from kvviz.errors import BadInput

EMPTY = -1
MAX_SEQS = 10          # the debug strip writes one character per cell only for ids 0..9
N_UBATCH = 512         # llama_context_default_params().n_ubatch
MAX_N_CTX = 8192       # the strip's positions are 5 characters wide
CHECKED_AGAINST = ("llama.cpp (llama-cpp-python 0.3.36): its find_slot debug log "
                   "(LLAMA_KV_CACHE_DEBUG=3) after every step, on random scenarios")


def pad256(n: int) -> int:
    return max(1, -(-int(n) // 256)) * 256


# --- the calls ---------------------------------------------------------------------------

def _common(a, b) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


LLAMA_MAX_SEQ = 256    # llama.h: the most sequence ids a context has


def seq_ids(schedule: dict, strict: bool = True) -> dict:
    """Request id -> sequence id (the schedule's order). ``strict``: at most 10, as a run read
    back from the debug log needs (one character a cell); else llama.cpp's own bound."""
    ids = {rid: k for k, rid in enumerate(schedule["requests"])}
    if len(ids) > LLAMA_MAX_SEQ:
        raise BadInput(f"{len(ids)} requests; llama.cpp holds at most {LLAMA_MAX_SEQ} sequences")
    if strict and len(ids) > MAX_SEQS:
        raise BadInput(f"{len(ids)} requests; llama.cpp's debug strip tells at most {MAX_SEQS} "
                       "sequences apart")
    return ids


def plan_calls(schedule: dict, n_batch: int, strict: bool = True) -> list[dict]:
    """Each step's calls: ``{"index", "pre": [op], "decode": [[[seq, start, end], ...], ...],
    "post": [op]}``; an op is ``["rm", seq]`` or ``["cp", src, dst, n]``. ``decode`` holds one
    entry per ``llama_decode`` (a step over ``n_batch`` tokens takes several)."""
    ids = seq_ids(schedule, strict)
    toks = [schedule["requests"][rid]["tokens"] for rid in ids]
    held = [0] * len(ids)
    out = []
    for st in schedule["steps"]:
        for rid in [*st.get("preempted", []), *st.get("finished", [])]:
            if rid not in ids:
                raise BadInput(f"step {st.get('index')}: {rid!r} is not a request of the schedule")
        pre, batch = [], []
        for rid in st.get("preempted", []):
            pre.append(["rm", ids[rid]])
            held[ids[rid]] = 0
        for b in st["batch"]:          # copies first: they see the cells before the decode
            s, end = ids[b["req"]], int(b["end"])
            if held[s] == 0:
                best, src = 0, -1
                for t in range(len(ids)):
                    if t != s and held[t] > 0:
                        n = min(_common(toks[s][:end], toks[t][:held[t]]), end - 1)
                        if n > best:
                            best, src = n, t
                if best > 0:
                    pre.append(["cp", src, s, best])
                    held[s] = best
        for b in st["batch"]:
            s, end = ids[b["req"]], int(b["end"])
            if held[s] < end:
                batch.append([s, held[s], end])
                held[s] = end
        post = []
        for rid in st.get("finished", []):
            post.append(["rm", ids[rid]])
            held[ids[rid]] = 0
        out.append({"index": st["index"], "pre": pre, "decode": _chunks(batch, n_batch),
                     "post": post})
    return out


def _chunks(batch, n_batch: int) -> list:
    """The batch cut into ``llama_decode`` calls of at most ``n_batch`` tokens."""
    calls, cur, room = [], [], n_batch
    for s, a, b in batch:
        while a < b:
            take = min(b - a, room)
            cur.append([s, a, a + take])
            a += take
            room -= take
            if room == 0:
                calls.append(cur)
                cur, room = [], n_batch
    if cur:
        calls.append(cur)
    return calls


def default_n_ctx(schedule: dict, kv_unified: bool) -> int:
    """Cells enough for every token of every request (unified), or for the longest request in
    each stream."""
    lens = [len(r["tokens"]) for r in schedule["requests"].values()]
    if kv_unified:
        return pad256(sum(lens))
    return len(lens) * pad256(max(lens, default=1))


# --- the cells ----------------------------------------------------------------------------

def geometry(n_seq: int, n_ctx: int, kv_unified: bool, n_ubatch: int | None = None, *,
             strict: bool = True):
    """(``n_ctx``, cells per stream, ``n_ubatch``) as llama.cpp settles them. Per-sequence streams
    need ``n_ubatch`` above the cells of a stream (default: the least above 512), so that the
    driver's probe is refused by its first ubatch (see ``llamacpp_driver``). ``strict``: the
    bounds of a run read back from the debug log (at most 10 sequences, 8192 cells)."""
    if n_seq < 1 or (strict and n_seq > MAX_SEQS):
        raise BadInput(f"{n_seq} sequences; 1 to {MAX_SEQS}")
    n_ctx = pad256(n_ctx)
    size = n_ctx if kv_unified else pad256(n_ctx // n_seq)
    n_ctx = size if kv_unified else size * n_seq
    if strict and n_ctx > MAX_N_CTX:
        raise BadInput(f"n_ctx {n_ctx} is over {MAX_N_CTX} (the debug log's positions run together)")
    several = not kv_unified and n_seq > 1
    if n_ubatch is not None and not 1 <= int(n_ubatch) <= 1 << 20:
        raise BadInput(f"n_ubatch {n_ubatch} outside [1, {1 << 20}]")
    if n_ubatch is None:
        n_ubatch = max(N_UBATCH, size + 1) if several else N_UBATCH
    if several and n_ubatch <= size:
        raise BadInput(f"n_ubatch {n_ubatch} must be over the {size} cells of a stream")
    return n_ctx, size, min(int(n_ubatch), n_ctx)


class _Stream:
    def __init__(self, size: int):
        self.pos = [EMPTY] * size
        self.seqs = [set() for _ in range(size)]
        self.head = 0
        self.used = 0

    def clear(self, i: int) -> None:
        if self.pos[i] != EMPTY:
            self.used -= 1
        self.pos[i] = EMPTY
        self.seqs[i] = set()

    def put(self, i: int, pos: int, seq: int) -> None:
        if self.pos[i] == EMPTY:
            self.used += 1
        self.pos[i] = pos
        self.seqs[i].add(seq)


class LlamaCells:
    """The cell metadata of one ``llama_kv_cache`` (the unified stream or one per sequence)."""

    def __init__(self, n_seq: int, n_ctx: int, kv_unified: bool, n_ubatch: int | None = None, *,
                 strict: bool = True):
        self.kv_unified = bool(kv_unified)
        self.n_ctx, self.size, self.n_ubatch = geometry(n_seq, n_ctx, kv_unified, n_ubatch,
                                                        strict=strict)
        self.stream_of = [0] * n_seq if kv_unified else list(range(n_seq))
        self.streams = [_Stream(self.size) for _ in range(1 if kv_unified else n_seq)]
        self.n_batch = self.n_ctx

    # sequence calls
    def seq_rm(self, seq: int, p0: int = -1, p1: int = -1) -> None:
        st = self.streams[self.stream_of[seq]]
        p0, p1 = max(p0, 0), (p1 if p1 >= 0 else 1 << 62)
        first = None
        for i, p in enumerate(st.pos):
            if p != EMPTY and p0 <= p < p1 and seq in st.seqs[i]:
                st.seqs[i].discard(seq)
                if not st.seqs[i]:
                    st.clear(i)
                    first = i if first is None else first
        if first is not None and first < st.head:
            st.head = first

    def seq_cp(self, src: int, dst: int, p0: int = -1, p1: int = -1) -> None:
        a, b = self.stream_of[src], self.stream_of[dst]
        if a == b:
            st = self.streams[a]
            p0, p1 = max(p0, 0), (p1 if p1 >= 0 else 1 << 62)
            for i, p in enumerate(st.pos):
                if p != EMPTY and p0 <= p < p1 and src in st.seqs[i]:
                    st.seqs[i].add(dst)
            return
        s0, s1 = self.streams[a], _Stream(self.size)
        for i, p in enumerate(s0.pos):
            if p != EMPTY and src in s0.seqs[i]:
                s1.put(i, p, dst)
        s1.head = s0.head
        self.streams[b] = s1

    def share(self, src: int, dst: int, n: int) -> None:
        """The planner's prefix copy of ``n`` tokens (see the module's doc)."""
        if self.kv_unified:
            self.seq_cp(src, dst, 0, n)
        else:
            self.seq_cp(src, dst, -1, -1)
            self.seq_rm(dst, n, -1)

    def seq_pos(self, seq: int):
        st = self.streams[self.stream_of[seq]]
        ps = [p for p, ss in zip(st.pos, st.seqs) if seq in ss]
        return (min(ps), max(ps)) if ps else None

    # a batch
    def split(self, tokens: list) -> list:
        """``tokens``: (seq, pos) in batch order -> the ubatches, as lists of (seq, pos)."""
        if len(self.streams) == 1:
            n = self.n_ubatch
            return [tokens[i:i + n] for i in range(0, len(tokens), n)]
        used = [False] * len(tokens)
        out = []
        while not all(used):
            run = []
            for i, (s, _) in enumerate(tokens):
                if not used[i] and s not in run and (not run or s == run[-1] + 1):
                    run.append(s)
            left = {s: [i for i, (t, _) in enumerate(tokens) if t == s and not used[i]] for s in run}
            take = 0
            while all(take < len(left[s]) for s in run):
                take += 1
                if (take + 1) * len(run) > self.n_ubatch:
                    break
            ub = []
            for s in run:
                for i in left[s][:take]:
                    used[i] = True
                    ub.append(tokens[i])
            out.append(ub)
        return out

    def find_slot(self, ub: list):
        """Cells for one ubatch: [(stream, [cell per token])], or None where none are found."""
        groups: dict = {}
        for s, _ in ub:
            groups.setdefault(s, 0)
            groups[s] += 1
        order = [0] if len(self.streams) == 1 else list(groups)
        n_tok = len(ub) if len(self.streams) == 1 else len(ub) // len(groups)
        res = []
        for g in order:
            st = self.streams[g if len(self.streams) == 1 else self.stream_of[g]]
            head = 0 if st.head > st.used + 2 * n_tok else st.head
            if n_tok > self.size:
                return None
            idxs, tested = [], 0
            while True:
                if head + 1 > self.size:
                    tested += self.size - head
                    head = 0
                    continue
                idx = head
                head += 1
                tested += 1
                if st.pos[idx] == EMPTY:
                    idxs.append(idx)
                if len(idxs) == n_tok:
                    break
                if tested >= self.size:
                    return None
            res.append((self.stream_of[g] if len(self.streams) > 1 else 0, idxs))
        return res

    def apply(self, ub: list, sinfo: list) -> None:
        if len(self.streams) == 1:
            (g, idxs), = sinfo
            for (s, p), i in zip(ub, idxs):
                self.streams[0].put(i, p, s)
            self.streams[0].head = idxs[-1] + 1
            return
        at = 0
        for g, idxs in sinfo:
            for i in idxs:
                s, p = ub[at]
                self.streams[g].put(i, p, s)
                at += 1
            self.streams[g].head = idxs[-1] + 1

    def decode(self, tokens: list) -> bool:
        """One ``llama_decode``. ``prepare`` places the ubatches one by one; where one finds no
        cells it undoes the others, last first, and the decode fails. The undo puts back each
        stream's cells, and as its head the saved head of the stream numbered by the stream's
        place in the ubatch (``v_heads_old[s]`` for stream ``strm[s]``): right for one stream,
        another stream's head otherwise."""
        if len(tokens) > self.n_batch:
            raise BadInput(f"{len(tokens)} tokens in one llama_decode; n_batch is {self.n_batch}")
        first: dict = {}
        for s, p in tokens:
            first.setdefault(s, p)
        for s, p in first.items():     # llama-batch.cpp: a sequence goes on from its last position
            held = self.seq_pos(s)
            if held and p != held[1] + 1:
                return False
        states = []
        for ub in self.split(tokens):
            sinfo = self.find_slot(ub)
            if sinfo is None:
                for old, heads, saved in reversed(states):
                    for k, (g, idxs) in enumerate(old):
                        st = self.streams[g]
                        for i, (p, ss) in zip(idxs, saved[k]):
                            st.clear(i)
                            if p != EMPTY:
                                st.pos[i], st.seqs[i] = p, set(ss)
                                st.used += 1
                        st.head = heads[k]
                return False
            saved = [[(self.streams[g].pos[i], set(self.streams[g].seqs[i])) for i in idxs]
                     for g, idxs in sinfo]
            states.append((sinfo, [st.head for st in self.streams], saved))
            self.apply(ub, sinfo)
        return True

    # what the debug log shows
    def snapshot(self, n_seq: int) -> dict:
        """The streams a probe shows (the unified one, or each holding a sequence) as the debug
        log writes them, and each sequence's [min, max] position."""
        live = [s for s in range(n_seq) if self.seq_pos(s) is not None]
        shown = ([0] if live else []) if self.kv_unified else live
        streams = [stream_view(g, self.streams[g]) for g in shown]
        return {"streams": streams, "seq_pos": {str(s): list(self.seq_pos(s)) for s in live}}


def mark(seqs) -> str:
    if not seqs:
        return "."
    return str(next(iter(seqs))) if len(seqs) == 1 else "M"


def stream_view(g: int, st: _Stream) -> dict:
    cells = [{"cell": i, "pos": p, "mark": mark(ss), "seqs": sorted(ss)}
             for i, (p, ss) in enumerate(zip(st.pos, st.seqs)) if p != EMPTY]
    return {"stream": g, "head": st.head, "used": st.used,
            "strip": "".join(mark(ss) for ss in st.seqs), "cells": cells}
