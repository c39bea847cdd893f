"""The Notations page's "from the engines' own code" part: SGLang's own answer (recorded from
SGLang 0.5.23 in its venv) beside kvviz's model of it, and where vLLM and SGLang put the same
tokens. Pure: tables as lists of rows and notes as (text key, fields); the page translates them.
"""
from __future__ import annotations

from kvviz.notations import engine_examples as ex


def slot_ranges(values) -> str:
    """``[16, 17, 18, 20]`` -> ``"16–18, 20"``: a row of slots, readable."""
    vals = [int(v) for v in values]
    if not vals:
        return "—"
    out, start, prev = [], vals[0], vals[0]
    for v in vals[1:] + [None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        out.append(str(start) if start == prev else f"{start}–{prev}")
        if v is not None:
            start = prev = v
    return ", ".join(out)


def sglang_runs() -> tuple[dict, list[dict]]:
    """(the recording of SGLang's own answers, kvviz's model answers), one run per page size in
    ``ex.SGLANG_PAGE_SIZES``."""
    return ex.recorded("sglang"), ex.sglang_model_answers()


def sglang_rows(answer: dict, step: int) -> list[list]:
    """One row per request of step ``step``: request, its ``req_pool_indices`` row, its
    ``req_to_token`` row (slot ranges), its batch (extend or decode), the slots written for it this
    step (its part of ``out_cache_loc``) and the prefix the radix cache matched if admitted now."""
    st = answer["steps"][step]
    ext, dec = st["extend"], st["decode"]
    new, at = {}, 0
    for rid, p in zip(ext["reqs"], ext["prefix_lens"]):
        n = len(st["req_to_token"][rid]) - p
        new[rid], at = ext["out_cache_loc"][at:at + n], at + n
    for rid, loc in zip(dec["reqs"], dec["out_cache_loc"]):
        new[rid] = [loc]
    return [[rid, row, slot_ranges(st["req_to_token"][rid]),
             "extend" if rid in ext["reqs"] else "decode", slot_ranges(new[rid]),
             ext["matched"].get(rid, "")] for rid, row in st["req_pool_indices"].items()]


def placements(answer: dict, step: int, vllm_slots: dict) -> list[list]:
    """Where vLLM (kvviz's simulation) and SGLang keep each request's tokens at ``step``:
    request, vLLM's slots, SGLang's slots, and whether they are the same."""
    st = answer["steps"][step]
    out = []
    for rid, sg in st["req_to_token"].items():
        vl = list(vllm_slots.get(rid, ()))
        out.append([rid, slot_ranges(vl), slot_ranges(sg), vl == list(sg)])
    return out


def sglang_notes(answer: dict, schedule: dict, step: int) -> list[tuple[str, dict]]:
    """Why SGLang's placement differs from vLLM's, read off the two runs: (text key, fields)."""
    ps = answer["page_size"]
    st = answer["steps"][step]
    notes = [("e.sglang_slot0" if ps == 1 else "e.sglang_page0", {"ps": ps})]
    first = {b["req"]: b["start"] for s in schedule["steps"][:step + 1] for b in s["batch"]
             if b["req"] not in {x["req"] for t in schedule["steps"][:s["index"]] for x in t["batch"]}}
    for rid, m in st["extend"]["matched"].items():
        if m or first.get(rid):
            notes.append(("e.sglang_match", {"req": rid, "m": m, "ps": ps, "v": first.get(rid, 0)}))
    rows = st["req_pool_indices"]
    notes.append(("e.sglang_rows", {"rows": ", ".join(f"{r} → {v}" for r, v in rows.items())}))
    return notes


def llamacpp_runs(kv_unified: bool) -> tuple[dict, dict]:
    """(llama.cpp's recorded answer for the page's batch in that layout, kvviz's model answer)."""
    from kvviz.notations import llamacpp_cells as lc
    real = lc.recorded_example()["unified" if kv_unified else "streams"]
    return real, lc.model_answer(ex.example_schedule(), kv_unified, real["n_ctx"], real.get("n_ubatch"))


def llamacpp_strips(answer: dict, step: int, names: dict) -> list[tuple[int | None, str, str]]:
    """(stream, its request, llama.cpp's own debug strip) per stream after ``step``: the unified
    cache's one (stream None), or one per sequence."""
    st = next(s for s in answer["steps"] if s["index"] == step)
    if answer.get("kv_unified"):
        return [(None, "", st["streams"][0]["strip"])]
    return [(g["stream"], names.get(str(g["stream"]), "?"), g["strip"]) for g in st["streams"]]


def llamacpp_rows(side: dict, vllm_slots: dict) -> list[list]:
    """Per request: its sequence id, llama.cpp's cells (per stream when there are several), the
    positions they hold, and vLLM's slots for the same tokens."""
    out = []
    for seq, rid in side["requests"].items():
        mine = [c for c in side["cells"] if int(seq) in c["seqs"]]
        cells = slot_ranges([c["cell"] for c in mine])
        if not side["kv_unified"]:
            cells = f"{seq}: {cells}"
        lo, hi = side["seq_pos"].get(seq, [None, None])
        out.append([rid, seq, cells, "—" if lo is None else f"{lo}–{hi}",
                    slot_ranges(vllm_slots.get(rid, ()))])
    return out
