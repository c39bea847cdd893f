"""Drive llama.cpp (llama-cpp-python) through a kvviz schedule and read its cells from its own
debug log. Runs in the engine's venv: ``python -m kvviz.notations.llamacpp_driver`` reads
``{"schedule": ..., "kv_unified": bool, "n_ctx": int?, "n_ubatch": int?}`` on stdin and writes
the answer (JSON) on stdout. ``llama_cpp`` and ``gguf`` are imported inside the functions, so
this module (and its log parser) imports anywhere.

The model is a random-weight tiny Llama written as GGUF at run time (fixed seed; hidden 256,
512-token vocabulary, 2 layers): only the cache's bookkeeping matters here.

How the cells are read. llama.cpp has no per-cell API; with ``LLAMA_KV_CACHE_DEBUG=3`` its
``find_slot`` (``src/llama-kv-cache.cpp``) logs, before it places a ubatch, the stream's
header (``n``, ``used``, ``head``, ``size``), one character per cell and each cell's position.
After every step a *probe* asks for cells that cannot all be free: a ``llama_decode`` of a
whole stream's worth of tokens for a live sequence (at its next positions). ``find_slot`` logs
the stream as the step left it, finds too few empty cells, ``prepare`` undoes what it tried,
and ``llama_decode`` returns 1: the cache is unchanged. One probe for the unified cache, one
per live sequence's stream otherwise. ``llama_memory_seq_pos_min/max`` give each sequence's
range.
"""
from __future__ import annotations

import json
import os
import re
import sys
import tempfile

from kvviz.errors import BadInput

HEADER = re.compile(r"find_slot: stream\[(\d+)\], n = *(\d+), used = *(\d+), head = *(\d+), "
                    r"size = *(\d+)")
SEED = 1234
TINY = {"hidden": 256, "vocab": 512, "layers": 2, "heads": 4, "kv_heads": 2, "ffn": 512}


def parse_find_slot(text: str) -> list[dict]:
    """Every stream block of ``find_slot``'s debug log in ``text``, in order:
    ``{"stream", "used", "head", "size", "strip", "pos"}`` (``pos``: -1 for an empty cell)."""
    out = []
    for m in HEADER.finditer(text):
        size = int(m.group(5))
        eol = text.find("\n", m.end())
        rest = text[eol + 1:] if eol >= 0 else ""          # past the header's own line
        strip, k = [], 0
        while len(strip) < size and k < len(rest):        # the strip: one character a cell
            ch = rest[k]
            if ch in "0123456789M.":
                strip.append(ch)
            elif ch == "*" or ch.isspace():
                pass
            elif strip:                                   # something else inside the strip
                raise BadInput(f"llama.cpp's cell strip holds {ch!r}")
            k += 1
        pos = []
        for word in rest[k:].split():                      # the positions, 5 characters a cell
            if len(pos) == size:
                break
            if word == "*":
                continue
            pos.append(-1 if word == "." else int(word))
        if len(strip) != size or len(pos) != size:
            raise BadInput(f"llama.cpp's debug log of stream {m.group(1)} is cut short")
        for ch, p in zip(strip, pos):
            if (ch == ".") != (p == -1):
                raise BadInput("llama.cpp's cell strip and positions disagree")
        out.append({"stream": int(m.group(1)), "used": int(m.group(3)), "head": int(m.group(4)),
                    "size": size, "strip": "".join(strip), "pos": pos})
    return out


def stream_answer(block: dict) -> dict:
    cells = [{"cell": i, "pos": p, "mark": ch}
             for i, (ch, p) in enumerate(zip(block["strip"], block["pos"])) if ch != "."]
    return {"stream": block["stream"], "head": block["head"], "used": block["used"],
            "strip": block["strip"], "cells": cells}


def write_tiny_gguf(path: str) -> str:
    import gguf
    import numpy as np

    h, v, nl, nh, nkv, ff = (TINY[k] for k in ("hidden", "vocab", "layers", "heads", "kv_heads", "ffn"))
    hd = h // nh
    w = gguf.GGUFWriter(path, "llama")
    w.add_context_length(1 << 16)
    w.add_embedding_length(h)
    w.add_block_count(nl)
    w.add_feed_forward_length(ff)
    w.add_head_count(nh)
    w.add_head_count_kv(nkv)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(hd)
    w.add_file_type(0)
    w.add_tokenizer_model("llama")
    w.add_token_list([f"<t{i}>".encode() for i in range(v)])
    w.add_token_scores([0.0] * v)
    w.add_token_types([1] * v)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    rng = np.random.default_rng(SEED)

    def t(name, *shape, one=False):
        a = np.ones(shape, np.float32) if one else rng.standard_normal(shape).astype(np.float32) * 0.02
        w.add_tensor(name, a)

    t("token_embd.weight", v, h)
    t("output_norm.weight", h, one=True)
    t("output.weight", v, h)
    for i in range(nl):
        p = f"blk.{i}."
        t(p + "attn_norm.weight", h, one=True)
        t(p + "attn_q.weight", h, h)
        t(p + "attn_k.weight", nkv * hd, h)
        t(p + "attn_v.weight", nkv * hd, h)
        t(p + "attn_output.weight", h, h)
        t(p + "ffn_norm.weight", h, one=True)
        t(p + "ffn_gate.weight", ff, h)
        t(p + "ffn_up.weight", ff, h)
        t(p + "ffn_down.weight", h, ff)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


class Engine:
    """One llama.cpp context, its log captured, and the calls of :func:`plan_calls`."""

    def __init__(self, model_path: str, n_seq: int, n_ctx: int, kv_unified: bool, n_ubatch: int):
        import ctypes

        import llama_cpp as lc

        os.environ["LLAMA_KV_CACHE_DEBUG"] = "3"   # read when the cache is built
        self.lc, self.log = lc, []

        @lc.llama_log_callback
        def _cb(level, text, user):
            self.log.append(text.decode(errors="replace"))

        self._cb = _cb                              # keep the callback alive
        lc.llama_log_set(_cb, ctypes.c_void_p())
        lc.llama_backend_init()
        self.model = lc.llama_model_load_from_file(model_path.encode(), lc.llama_model_default_params())
        if not self.model:
            raise BadInput("llama.cpp could not load the tiny model")
        cp = lc.llama_context_default_params()
        cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = n_ctx, n_ctx, n_ubatch, n_seq
        cp.kv_unified, cp.n_threads, cp.n_threads_batch = bool(kv_unified), 1, 1
        self.ctx = lc.llama_init_from_model(self.model, cp)
        if not self.ctx:
            raise BadInput("llama.cpp could not make a context")
        self.n_ctx = int(lc.llama_n_ctx(self.ctx))
        self.mem = lc.llama_get_memory(self.ctx)
        self.batch = lc.llama_batch_init(self.n_ctx, 0, 1)
        self.n_seq, self.kv_unified = n_seq, bool(kv_unified)

    def decode(self, toks: list, logits: bool = True) -> int:
        """``toks``: (token, pos, seq); the last token of each sequence asks for logits."""
        b = self.batch
        b.n_tokens = len(toks)
        last = {s: i for i, (_, _, s) in enumerate(toks)}
        for i, (tok, pos, seq) in enumerate(toks):
            b.token[i], b.pos[i], b.n_seq_id[i] = tok, pos, 1
            b.seq_id[i][0] = seq
            b.logits[i] = 1 if logits and last[seq] == i else 0
        return int(self.lc.llama_decode(self.ctx, b))

    def seq_rm(self, seq, p0=-1, p1=-1):
        self.lc.llama_memory_seq_rm(self.mem, seq, p0, p1)

    def seq_cp(self, src, dst, p0=-1, p1=-1):
        self.lc.llama_memory_seq_cp(self.mem, src, dst, p0, p1)

    def seq_pos(self, seq):
        lo = int(self.lc.llama_memory_seq_pos_min(self.mem, seq))
        return None if lo < 0 else (lo, int(self.lc.llama_memory_seq_pos_max(self.mem, seq)))

    def probe(self) -> dict:
        """The cells as the last step left them, from find_slot's own log (see the module)."""
        live = [s for s in range(self.n_seq) if self.seq_pos(s) is not None]
        streams = []
        for s in (live[:1] if self.kv_unified else live):
            # unified: a whole cache's worth (the undo of a failed prepare is right for one
            # stream); streams: one token more than a stream holds, refused by the first
            # ubatch before anything is placed (an undo there would put another stream's head)
            one = self.kv_unified or self.n_seq == 1
            n = self.n_ctx if one else self.n_ctx // self.n_seq + 1
            nxt = self.seq_pos(s)[1] + 1
            at = len(self.log)
            rc = self.decode([(3, nxt + k, s) for k in range(n)], logits=False)
            if rc != 1:
                raise BadInput(f"the probe of stream {s} was not refused (llama_decode -> {rc})")
            blocks = parse_find_slot("".join(self.log[at:]))
            if not blocks:
                raise BadInput("llama.cpp logged no cells: is LLAMA_KV_CACHE_DEBUG read?")
            streams.append(stream_answer(blocks[0]))
        return {"streams": streams, "seq_pos": {str(s): list(self.seq_pos(s)) for s in live}}


def run(request: dict) -> dict:
    import llama_cpp

    from kvviz.notations.engine_schedule import check_schedule
    from kvviz.notations.llamacpp_rules import default_n_ctx, geometry, plan_calls, seq_ids

    sched = check_schedule(request.get("schedule"))
    unified = bool(request.get("kv_unified", True))
    ids = seq_ids(sched)
    n_ctx, size, n_ubatch = geometry(len(ids), int(request.get("n_ctx") or default_n_ctx(sched, unified)),
                                     unified, request.get("n_ubatch"))
    toks = [sched["requests"][rid]["tokens"] for rid in ids]
    with tempfile.TemporaryDirectory(prefix="kvviz-llamacpp-") as tmp:
        eng = Engine(write_tiny_gguf(os.path.join(tmp, "tiny.gguf")), len(ids), n_ctx, unified,
                     n_ubatch)
        if eng.n_ctx != n_ctx:
            raise BadInput(f"llama.cpp made {eng.n_ctx} cells (n_ctx), kvviz expected {n_ctx}")
        steps = []
        for plan in plan_calls(sched, eng.n_ctx):
            for op in plan["pre"]:
                _op(eng, op)
            rc = 0
            for call in plan["decode"]:
                rc = eng.decode([(_vocab(toks[s][p]), p, s) for s, a, b in call for p in range(a, b)])
                if rc != 0:
                    break
            step = {"index": plan["index"], "failed": rc != 0, **eng.probe()}
            if unified and step["streams"]:
                step["strip"], step["cells"] = step["streams"][0]["strip"], step["streams"][0]["cells"]
            steps.append(step)
            if rc != 0:
                break
            for op in plan["post"]:
                _op(eng, op)
    return {"engine": "llamacpp", "version": llama_cpp.__version__, "kv_unified": unified,
            "n_ctx": eng.n_ctx, "n_ubatch": n_ubatch, "steps": steps}


def _vocab(tok: int) -> int:
    """kvviz's token ids inside the tiny model's vocabulary (the cells do not depend on them;
    which requests share a prefix is decided on kvviz's ids)."""
    return 3 + tok % (TINY["vocab"] - 3)


def _op(eng: Engine, op: list) -> None:
    if op[0] == "rm":
        eng.seq_rm(op[1])
    elif eng.kv_unified:                     # ["cp", src, dst, n]
        eng.seq_cp(op[1], op[2], 0, op[3])
    else:                                    # across streams llama.cpp copies whole sequences
        eng.seq_cp(op[1], op[2])
        eng.seq_rm(op[2], op[3], -1)


def main() -> int:
    raw = sys.stdin.buffer.read(64 << 20)
    try:
        answer = run(json.loads(raw))
    except (BadInput, ValueError, TypeError, KeyError, AttributeError) as e:
        print(f"kvviz: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
