"""One kvviz run as an engine-neutral *schedule*, so another engine's own bookkeeping can be
driven through the same requests (SGLang's pools and radix cache, llama.cpp's cells).

A schedule is plain JSON (it crosses into an engine's venv on stdin)::

    {"requests": {"A": {"prompt": [ids...], "tokens": [prompt + every sampled id]}, ...},
     "steps": [{"index": 0, "batch": [{"req": "A", "start": 0, "end": 10}, ...],
                "finished": ["C"], "preempted": []}, ...]}

``start``/``end`` are the request's computed tokens before and after the step *as kvviz's vLLM
scheduler ran it*: the batch, its order and its lengths. ``finished`` lists the requests that
finished at the end of the step (vLLM frees their blocks then). Another engine keeps the
*targets* (which request holds how many tokens after each step) and places them its own way:
its prefix cache may match more or fewer tokens than vLLM's, so the tokens it computes in the
request's first step may differ (``start`` there is vLLM's prefix hit, not the other engine's).
"""
from __future__ import annotations

from kvviz.errors import BadInput

SCHEDULE_FORMAT = 1
MAX_SCHEDULE_STEPS = 2000
MAX_SCHEDULE_TOKENS = 1 << 16   # prompt + output tokens over all requests: the engines' pools are small


def schedule_from_scenario(data, *, max_steps: int = MAX_SCHEDULE_STEPS) -> dict:
    """Run a kvviz scenario (a dict, as in a scenario file) and return its schedule."""
    from kvviz.core.engine import Engine
    from kvviz.core.scenario import parse_scenario

    sc = parse_scenario(data)
    if len(sc.config.groups) > 1:
        raise BadInput("a hybrid scenario has several KV-cache groups; the other engines' "
                       "notations hold one")
    total = sum(len(r.prompt) + r.max_tokens for r in sc.requests)
    if total > MAX_SCHEDULE_TOKENS:
        raise BadInput(f"the scenario holds {total} tokens; the engine runs take at most "
                       f"{MAX_SCHEDULE_TOKENS}")
    eng = Engine(sc)
    steps = []
    while not eng.done() and len(steps) < max_steps:
        rec = eng.step()
        batch = [{"req": s.req_id, "start": int(s.num_computed), "end": int(s.seq_len)}
                 for s in rec.scheduled]
        kinds = {"finish": [], "preempt": []}
        for e in rec.events:
            if e.get("kind") in kinds and e["req"] not in kinds[e["kind"]]:
                kinds[e["kind"]].append(e["req"])
        steps.append({"index": rec.index, "batch": batch, "finished": kinds["finish"],
                      "preempted": kinds["preempt"]})
    reqs = {rid: {"prompt": list(r.prompt), "tokens": list(r.tokens)}
            for rid, r in eng.requests.items()}
    return {"format": SCHEDULE_FORMAT, "name": sc.name, "requests": reqs, "steps": steps}


def check_schedule(s) -> dict:
    """A schedule read from outside (JSON): its shape checked, BadInput naming what is wrong."""
    if not isinstance(s, dict) or not isinstance(s.get("requests"), dict) \
            or not isinstance(s.get("steps"), list):
        raise BadInput("a schedule is an object with 'requests' and 'steps'")
    if len(s["steps"]) > MAX_SCHEDULE_STEPS:
        raise BadInput(f"{len(s['steps'])} steps; at most {MAX_SCHEDULE_STEPS}")
    total = 0
    for rid, r in s["requests"].items():
        toks = r.get("tokens") if isinstance(r, dict) else None
        prompt = r.get("prompt") if isinstance(r, dict) else None
        if not (isinstance(toks, list) and isinstance(prompt, list)
                and all(isinstance(t, int) and not isinstance(t, bool) for t in toks)
                and toks[:len(prompt)] == prompt):
            raise BadInput(f"request {rid!r}: 'tokens' must be a list of ints starting with 'prompt'")
        total += len(toks)
    if total > MAX_SCHEDULE_TOKENS:
        raise BadInput(f"{total} tokens; at most {MAX_SCHEDULE_TOKENS}")
    for st in s["steps"]:
        for b in st.get("batch", []) if isinstance(st, dict) else [None]:
            if not (isinstance(b, dict) and b.get("req") in s["requests"]
                    and isinstance(b.get("start"), int) and isinstance(b.get("end"), int)
                    and 0 <= b["start"] < b["end"] <= len(s["requests"][b["req"]]["tokens"])):
                raise BadInput(f"step {st.get('index') if isinstance(st, dict) else '?'}: "
                               f"a batch entry {b!r} is not a known request with 0 <= start < end")
    return s
