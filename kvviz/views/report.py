"""Step records as JSON and as text (the `run` command, dumps, downloads)."""
from __future__ import annotations

from kvviz.core.records import StepRecord
from kvviz.core.scenario import EngineConfig


def _rows(a, n):
    return a[:n].tolist()


def vacated_rows(r: StepRecord, gid: int) -> list[dict]:
    """CPU rows past the live ones (>= num_reqs) that still count blocks or hold non-null ids in
    their counted prefix: under the current rules remove_request and condense leave every such
    row cleared, so one of these is a fault (or an older profile's rule). It is invisible to this
    step's kernels (only num_reqs rows are committed) until a dummy run commits the padded rows."""
    cpu = r.cpu_tables[gid]
    counts = r.num_blocks_per_row[gid]
    out = []
    for row in range(r.num_reqs, min(len(cpu), len(counts))):
        n = int(counts[row])
        if n:
            out.append({"row": row, "num_blocks": n, "block_table_cpu": cpu[row][:n].tolist()})
    return out


def _v2_group(r: StepRecord, gid: int) -> dict:
    """Model Runner V2's tables of one group. The V1 keys keep their meaning per batch row:
    ``block_table_cpu[b]`` is the authoritative row (request state ``idx_mapping[b]``),
    ``block_table_device[b]`` the gathered input row the kernels read, ``num_blocks_per_row[b]`` the
    state's count; ``vacated_rows`` is empty (V2 never clears a state row: a stale one is harmless)."""
    n = max(r.num_reqs, 1)
    idx = list(r.idx_mapping)
    state, counts = r.cpu_tables[gid], r.num_blocks_per_row[gid]
    used = max(idx, default=-1) + 1
    width = state.shape[1]
    return {"block_table_cpu": [state[i].tolist() for i in idx] or [[0] * width],
            "block_table_device": _rows(r.device_tables[gid], n),
            "num_blocks_per_row": [int(counts[i]) for i in idx] or [0],
            "vacated_rows": [], "idx_mapping": idx,
            "state_block_table": _rows(state, max(used, 1)),
            "state_num_blocks": counts[: max(used, 1)].tolist(),
            "input_block_table": _rows(r.device_tables[gid], max(r.num_reqs_padded, 1))}


def step_to_json(r: StepRecord, config: EngineConfig) -> dict:
    n_rows = max(r.num_reqs_padded, r.num_reqs)
    groups = []
    v2 = getattr(r, "runner", "v1") == "v2"
    for gid, g in enumerate(config.groups):
        inp = r.inputs[gid]
        d = {"group": gid, "kind": g.kind, "label": g.label}
        if v2:
            d.update(_v2_group(r, gid))
        else:
            d.update({"block_table_cpu": _rows(r.cpu_tables[gid], max(r.num_reqs, 1)),
                      "block_table_device": _rows(r.device_tables[gid], max(r.num_reqs, 1)),
                      "num_blocks_per_row": r.num_blocks_per_row[gid][: max(r.num_reqs, 1)].tolist(),
                      "vacated_rows": vacated_rows(r, gid)})
        d.update(inp.to_json(backend="reference (numpy)"))
        d.pop("backend")
        groups.append(d)
    return {
        "step": r.index,
        "scheduled": [{"req": s.req_id, "row": s.row, "num_tokens": s.num_tokens,
                       "num_computed": s.num_computed, "seq_len": s.seq_len, "kind": s.kind,
                       **({"state_index": s.state_index} if v2 else {})}
                      for s in r.scheduled],
        "num_reqs": r.num_reqs, "num_reqs_padded": r.num_reqs_padded,
        "num_tokens": r.num_tokens, "num_tokens_padded": r.num_tokens_padded,
        "commit_rows": r.commit_rows, "commit_bytes": r.commit_bytes,
        "rows": r.rows[:n_rows], "groups": groups,
        "free_queue": r.free_queue, "ref_counts": r.ref_counts,
        "cached_blocks": {str(k): v for k, v in r.cached_blocks.items()},
        "requests": r.requests, "events": r.events,
    }


def _fmt(v) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def describe_event(e: dict, lang: str = "en") -> str:
    """One engine event as a sentence a student can read, in ``lang`` (en, zh, es)."""
    import string

    from kvviz.texts.i18n import t
    from kvviz.texts.events import STRINGS

    kind = e.get("kind")
    if kind not in STRINGS or kind == "group":
        return str(e)
    fields = {k: _fmt(v) for k, v in e.items()}
    names = [f for _, f, _, _ in string.Formatter().parse(STRINGS[kind]["en"]) if f]
    text = t("events", kind, lang, **{f: fields.get(f, "") for f in names})
    if e.get("group"):
        text += t("events", "group", lang, group=e["group"])
    return text


def event_line(kind: str, text: str) -> str:
    """A markdown list item: the event's kind as code, then its sentence, the kind said once (a
    sentence that opens with its own name, "gather: …", is not preceded by it again). ``text`` must
    already be escaped for markdown (``ui.plain``)."""
    kind = str(kind)
    if text.startswith(kind):
        return f"- `{kind}`{text[len(kind):]}"
    return f"- `{kind}` {text}"


def _v2_lines(r: StepRecord, gid: int) -> list[str]:
    """Each batch row's request state, its state row and the gathered input row (Model Runner V2)."""
    out = []
    for b, s in enumerate(r.idx_mapping):
        cnt = int(r.num_blocks_per_row[gid][s])
        state = r.cpu_tables[gid][s][: max(cnt, 1)].tolist()
        inp = r.device_tables[gid][b][: max(cnt, 1)].tolist()
        stale = "" if state == inp else "   <- gathered row stale"
        out.append(f"    row {b} (state {s}): state {state} input {inp}{stale}")
    return out


def step_to_text(r: StepRecord, config: EngineConfig) -> str:
    lines = [f"\n== step {r.index}: {r.num_reqs} request(s), {r.num_tokens} token(s)"
             f" (padded to {r.num_reqs_padded} rows, {r.num_tokens_padded} tokens)"]
    for s in r.scheduled:
        lines.append(f"  row {s.row}: {s.req_id} {s.kind} {s.num_tokens} token(s), "
                     f"positions {s.num_computed}..{s.seq_len - 1}")
    for gid, g in enumerate(config.groups):
        inp = r.inputs[gid]
        n = max(r.num_reqs, 1)
        lines.append(f"  group {gid} ({g.label}):")
        if getattr(r, "runner", "v1") == "v2":
            lines.extend(_v2_lines(r, gid))
        for row in range(min(n, len(r.cpu_tables[gid])) if getattr(r, "runner", "v1") == "v1" else 0):
            cnt = int(r.num_blocks_per_row[gid][row])
            cpu = r.cpu_tables[gid][row][: max(cnt, 1)].tolist()
            dev = r.device_tables[gid][row][: max(cnt, 1)].tolist()
            stale = "" if cpu == dev else "   <- mirror stale"
            lines.append(f"    row {row}: cpu {cpu} device {dev}{stale}")
        for v in (vacated_rows(r, gid) if getattr(r, "runner", "v1") == "v1" else ()):
            lines.append(f"    row {v['row']}: cpu {v['block_table_cpu']} (not live: still counts {v['num_blocks']} "
                         "block(s); a dummy run's commit of padded rows would copy it)")
        if inp.slot_mapping is not None:
            lines.append(f"    slot_mapping {inp.slot_mapping.tolist()}")
        if inp.paged_kv_indptr is not None:
            lines.append(f"    paged_kv_indptr {inp.paged_kv_indptr.tolist()} indices "
                         f"{inp.paged_kv_indices.tolist()} last_page_len {inp.paged_kv_last_page_len.tolist()}")
    lines.append(f"  free queue (front first): {r.free_queue}")
    lines.append("  events:")
    lines.extend("    - " + describe_event(e) for e in r.events)
    return "\n".join(lines)
