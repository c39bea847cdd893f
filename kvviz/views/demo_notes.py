"""Each demo figure's own sentence: what that one figure shows at this step, read from the run (not
from the step's narrative, which speaks of all the figures at once), then what its colour encodes.
Presenter mode shows it under the figure's title; normal mode as the figure's caption."""
from __future__ import annotations

import numpy as np

from kvviz.constants import NULL_BLOCK_ID
from kvviz.texts.i18n import t

MAX_REQS = 6        # requests named in one sentence
MAX_BLOCKS = 8      # block ids listed for one request


def _T(lang):
    return lambda key, **f: t("demos", key, lang, **f)


def _sep(lang: str) -> str:
    return "；" if lang == "zh" else "; "


def _join(lang: str, *parts: str) -> str:
    """Sentences one after the other (Chinese puts no space after its full stop)."""
    return ("" if lang == "zh" else " ").join(p.strip() for p in parts if p)


def spans(values) -> str:
    """Sorted integers as runs: [1, 2, 3, 5] -> "1–3, 5"."""
    vals = sorted({int(v) for v in values})
    out, i = [], 0
    while i < len(vals):
        j = i
        while j + 1 < len(vals) and vals[j + 1] == vals[j] + 1:
            j += 1
        out.append(str(vals[i]) if i == j else f"{vals[i]}–{vals[j]}")
        i = j + 1
    return ", ".join(out)


def _ids(row) -> str:
    ids = [int(b) for b in row]
    more = "…" if len(ids) > MAX_BLOCKS else ""
    return "[" + ", ".join(map(str, ids[:MAX_BLOCKS])) + more + "]"


def rows_text(table: np.ndarray, names, counts, lang: str) -> str:
    """"A [1, 2, 3]; B [4]": each named row (a request) with the entries it reads (its count)."""
    T = _T(lang)
    parts = []
    for r, rid in enumerate(names):
        if rid is None or r >= table.shape[0]:
            continue
        n = int(counts[r]) if counts is not None and r < len(counts) else int(np.count_nonzero(table[r]))
        parts.append(f"{rid} {_ids(table[r, :n])}")
    if not parts:
        return T("note.none")
    more = ["…"] if len(parts) > MAX_REQS else []
    return _sep(lang).join(parts[:MAX_REQS] + more)


def table_note(kind: str, table: np.ndarray, names, counts, lang: str, *, n: int = 0, stale=()) -> str:
    """A block table's sentence. ``kind``: cpu | mirror | state | input | attn."""
    T = _T(lang)
    if kind == "attn":
        text = T("note.table_attn", n=n)
    else:
        text = T(f"note.table_{kind}", rows=rows_text(table, names, counts, lang), n=n)
    return _join(lang, text, T("note.stale", rows=spans(stale)) if len(stale) else "", T("note.colour_table"))


def slots_note(frame, names, lang: str) -> str:
    """The step's tokens, request by request: their positions and the slots they write."""
    T = _T(lang)
    written = frame[(frame["row"] >= 0) & (frame["slot"] >= 0)]
    parts = []
    for row, toks in written.groupby("row", sort=True):
        rid = names[int(row)] if int(row) < len(names) else str(row)
        parts.append(T("note.slot_pair", req=rid, pos=spans(toks["position"]), slot=spans(toks["slot"])))
    n = int((frame["row"] >= 0).sum())
    pairs = _sep(lang).join(parts[:MAX_REQS] + (["…"] if len(parts) > MAX_REQS else [])) or T("note.nothing")
    return _join(lang, T("note.slots", n=n, pairs=pairs), T("note.colour_slots"))


def pool_notes(refs, queue, cached: dict, lang: str) -> tuple[str, str]:
    """The ref-count chart's sentence and the free queue's."""
    T = _T(lang)
    ref = np.asarray(refs)
    ids = [b for b in range(len(ref)) if b != NULL_BLOCK_ID]
    none = T("note.nothing")
    used = spans(b for b in ids if ref[b] >= 1) or none
    shared = spans(b for b in ids if ref[b] > 1) or none
    hashed = spans(b for b in cached if b != NULL_BLOCK_ID) or none
    front = ", ".join(map(str, list(queue)[:12])) + ("…" if len(queue) > 12 else "") if len(queue) else none
    return (_join(lang, T("note.ref", used=used, shared=shared, hashed=hashed), T("note.colour_ref")),
            _join(lang, T("note.queue", front=front), T("note.colour_queue")))


def csr_note(indptr, indices, lpl, lang: str) -> str:
    T = _T(lang)
    return _join(lang, T("note.csr", indptr=list(map(int, indptr)), indices=list(map(int, indices)),
                         lpl=list(map(int, lpl))), T("note.colour_csr"))


def traffic_note(texts: list[str], lang: str) -> str:
    T = _T(lang)
    return _join(lang, T("note.traffic", a=texts[0], b=texts[1]), T("note.colour_traffic"))


def bytes_note(nbytes: int, lang: str) -> str:
    T = _T(lang)
    return _join(lang, T("note.bytes", b=f"{nbytes / 1024:,.0f} KiB"), T("note.colour_bytes"))
