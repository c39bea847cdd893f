"""Tables for the notations page: each notation's arrays around one token, with the cells
that token is found through (no streamlit here; the page only styles them).

``tables(name, form, i, pos, lang)`` -> [(array label, DataFrame, [(row label, column label)])].
Long arrays are shown as a window around the token (``WINDOW`` entries each side). Labels and
the lookup line are in ``lang``; array and field names (``block_table``, ``pos``...) stay as the
engines spell them. Without ``lang``, the language the app's session chose (else English).
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from kvviz.notations import models as nt
from kvviz.notations.canonical import token_index
from kvviz.texts.i18n import DEFAULT_LANG, LANGS, t

WINDOW = 4


def _T(lang):
    code = lang if lang in LANGS else DEFAULT_LANG
    return lambda key, **f: t("notations", key, code, **f)


def _window(n: int, center: int, half: int = WINDOW) -> range:
    lo = max(0, min(center - half, n - 2 * half - 1))
    return range(lo, min(n, lo + 2 * half + 1))


def _strip(name: str, values, center: int | None, extra_rows=None):
    """A 1-D array as a one-row frame (a window around ``center``)."""
    values = np.asarray(values)
    cols = _window(len(values), center if center is not None else 0)
    data = {str(c): [int(values[c])] for c in cols}
    rows = [name]
    if extra_rows:
        for label, arr in extra_rows:
            for c in cols:
                data[str(c)].append(int(np.asarray(arr)[c]))
            rows.append(label)
    df = pd.DataFrame(data, index=rows)
    marks = [(name, str(center))] if center is not None and center in cols else []
    return df, marks


def tables(name: str, form, i: int, pos: int, lang: str | None = None) -> list[tuple[str, pd.DataFrame, list]]:
    fn = {"vllm": _vllm, "flashinfer": _flashinfer, "sglang": _sglang, "trtllm": _trtllm,
          "llamacpp": _llamacpp, "deepinfer": _deepinfer}[name]
    return fn(form, i, pos, _T(lang))


def _rows_frame(arr2d, row_labels, cols, mark):
    df = pd.DataFrame({str(c): [int(v) for v in arr2d[:, c]] for c in cols}, index=row_labels)
    return df, [mark] if mark and mark[1] in df.columns else []


def _vllm(f: nt.VllmForm, i, pos, T):
    j = pos // f.block_size
    used = int(max((np.count_nonzero(f.block_table[r]) for r in range(len(f.req_ids))), default=1))
    cols = _window(max(used, j + 1), j)
    bt, m1 = _rows_frame(f.block_table, [T("v.row", r=r, q=q) for r, q in enumerate(f.req_ids)], cols,
                         (T("v.row", r=i, q=f.req_ids[i]), str(j)))
    out = [(f"block_table  [{f.block_table.shape[0]} × {f.block_table.shape[1]}] int32", bt, m1)]
    t = token_index(f, i, pos)
    if len(f.slot_mapping):
        df, m = _strip("slot_mapping", f.slot_mapping, t, [(T("v.positions"), f.positions)])
        out.append((f"slot_mapping  [{len(f.slot_mapping)}] int64", df, m))
    df, m = _strip("seq_lens", f.seq_lens, i)
    out.append((f"seq_lens  [{len(f.seq_lens)}] int32", df, m))
    # whole: B + 1 entries, the last the batch's token count; the request's tokens are [i, i + 1)
    df, _ = _strip("query_start_loc", f.query_start_loc, i)
    out.append((f"query_start_loc  [{len(f.query_start_loc)}] int32", df,
                [("query_start_loc", str(i)), ("query_start_loc", str(i + 1))]))
    return out


def _flashinfer(f: nt.FlashInferForm, i, pos, T):
    k = int(f.kv_indptr[i]) + pos // f.page_size
    out = []
    df, _ = _strip("kv_indptr", f.kv_indptr, i)
    out.append((f"kv_indptr  [{len(f.kv_indptr)}] int32", df,
                [("kv_indptr", str(i)), ("kv_indptr", str(i + 1))]))
    df, m = _strip("kv_indices", f.kv_indices, k)
    out.append((f"kv_indices  [{len(f.kv_indices)}] int32", df, m))
    df, m = _strip("kv_last_page_len", f.kv_last_page_len, i)
    last = pos // f.page_size == int(f.kv_indptr[i + 1]) - int(f.kv_indptr[i]) - 1
    out.append((f"kv_last_page_len  [{len(f.kv_last_page_len)}] int32", df, m if last else []))
    return out


def _sglang(f: nt.SGLangForm, i, pos, T):
    row = int(f.req_pool_indices[i])
    cols = _window(f.req_to_token.shape[1], pos)
    owner = {int(r): f"{r} ({q})" for r, q in zip(f.req_pool_indices, f.req_ids)}
    labels = [T("v.dummy")] + [owner.get(r, T("v.free_row", r=r)) for r in range(1, f.req_to_token.shape[0])]
    rtt, m = _rows_frame(f.req_to_token, labels, cols, (labels[row], str(pos)))
    out = [(f"req_to_token  [{f.req_to_token.shape[0]} × {f.req_to_token.shape[1]}] int32", rtt, m)]
    df, m2 = _strip("req_pool_indices", f.req_pool_indices, i)
    out.append(("req_pool_indices", df, m2))
    t = f._token_index(i, pos)
    if len(f.out_cache_loc):
        df, m3 = _strip("out_cache_loc", f.out_cache_loc, t)
        out.append((f"out_cache_loc  [{len(f.out_cache_loc)}] int64", df, m3))
    return out


def _trtllm(f: nt.TrtLlmForm, i, pos, T):
    j = pos // f.tokens_per_block
    o = f.kv_cache_block_offsets[0]
    flat = o.reshape(-1, o.shape[-1])  # rows: (seq 0, K), (seq 0, V), (seq 1, K), ...
    labels = [f"[0, {r}, {'K' if kv == 0 else 'V'}]" for r in range(o.shape[0]) for kv in (0, 1)]
    cols = _window(o.shape[-1], j)
    df = pd.DataFrame({str(c): [int(v) for v in flat[:, c]] for c in cols}, index=labels)
    marks = [(f"[0, {i}, K]", str(j)), (f"[0, {i}, V]", str(j))]
    shape = "×".join(map(str, f.kv_cache_block_offsets.shape))
    return [(f"kv_cache_block_offsets  [{shape}] int32", df, marks)]


def _llamacpp(f, i, pos, T):
    return _llamacpp_unified(f, i, pos, T) if f.kv_unified else _llamacpp_streams(f, i, pos, T)


def _llamacpp_unified(f: nt.LlamaCppForm, i, pos, T):
    """The cells around the token's (llama.cpp's cell, not vLLM's slot: the slot column is
    kvviz's bookkeeping of which slot's K/V each cell holds); this step's writes."""
    cell, slot_col = f.cell(i, pos), T("v.slot_col")
    lo = max(0, min(cell - 3, len(f.cell_pos) - 8))
    rows = range(lo, min(lo + 8, len(f.cell_pos)))
    df = pd.DataFrame({"pos": [int(f.cell_pos[c]) for c in rows],
                       "seq_id": [" ".join(map(str, sorted(f.cell_seqs[c]))) or "—" for c in rows],
                       slot_col: [str(int(f.cell_slot[c])) if f.cell_slot[c] >= 0 else "—" for c in rows]},
                      index=[T("v.cell", c=c) for c in rows])
    here = T("v.cell", c=cell)
    out = [(T("v.cells", lo=lo, hi=rows[-1], n=len(f.cell_pos)), df,
            [(here, "pos"), (here, "seq_id"), (here, slot_col)])]
    t = token_index(f, i, pos)
    if len(f.ubatch_cells):
        d2, m = _strip(T("v.ubatch_cell"), f.ubatch_cells, t, [("seq_id", f.ubatch_seq)])
        out.append((f"ubatch  [{len(f.ubatch_cells)}]", d2, [(m[0][0], m[0][1])] if m else []))
    return out


def _llamacpp_streams(f: nt.LlamaCppStreamsForm, i, pos, T):
    """Stream i around the token's cell; the token's position in every stream (a shared prefix:
    the same slot in several streams, one copy each); this step's writes."""
    cell, slot_col, cell_col = f.cell(i, pos), T("v.slot_col"), T("v.cell_col")
    lo = max(0, min(cell - 3, f.kv_size - 8))
    rows = range(lo, min(lo + 8, f.kv_size))
    used = [int(f.stream_pos[i, c]) != nt.LLAMA_EMPTY_POS for c in rows]
    df = pd.DataFrame({"pos": [int(f.stream_pos[i, c]) for c in rows],
                       "seq_id": [str(i) if u else "—" for u in used],
                       slot_col: [str(int(f.stream_slot[i, c])) if u else "—" for c, u in zip(rows, used)]},
                      index=[T("v.cell", c=c) for c in rows])
    here = T("v.cell", c=cell)
    out = [(T("v.stream_cells", s=i, lo=lo, hi=rows[-1], n=f.kv_size), df,
            [(here, "pos"), (here, "seq_id"), (here, slot_col)])]
    held = [(s, f.cell_at(s, pos)) for s in range(f.n_stream)]
    every = pd.DataFrame({T("v.used"): [int(u) for u in f.stream_used],
                          cell_col: [str(c) if c is not None else "—" for _, c in held],
                          slot_col: [str(int(f.stream_slot[s, c])) if c is not None else "—" for s, c in held]},
                         index=[T("v.stream", s=s) for s in range(f.n_stream)])
    mine = T("v.stream", s=i)
    out.append((T("v.streams_at", pos=pos), every, [(mine, cell_col), (mine, slot_col)]))
    t = token_index(f, i, pos)
    if len(f.ubatch_cells):
        d2, m = _strip(T("v.ubatch_cell"), f.ubatch_cells, t, [("seq_id", f.ubatch_seq)])
        out.append((T("v.ubatch_streams", n=len(f.ubatch_cells)), d2, [(m[0][0], m[0][1])] if m else []))
    return out


def notation_notes(name: str, form, lang: str | None = None) -> list[str]:
    """Plain lines to show under a notation's description: for llama.cpp, how many cells the
    batch takes in the layout shown, and what the other layout would take."""
    if name != "llamacpp" or isinstance(form, Exception):
        return []
    T = _T(lang)
    if form.kv_unified:
        return [T("v.llama_used_unified", n=form.cells_used, shared=form.shared_cells,
                  m=int(form.seq_lens.sum()))]
    parts = " + ".join(str(int(u)) for u in form.stream_used)
    return [T("v.llama_used_streams", n=form.cells_used, parts=parts, k=form.n_stream,
              copies=form.copied_cells, m=form.cells_used - form.copied_cells)]


def description_key(name: str, form) -> str:
    """The key of the notation's description in ``kvviz.texts.notations``."""
    if name == "llamacpp" and getattr(form, "kv_unified", False):
        return "d_llamacpp_unified"
    if name == "sglang" and getattr(form, "follows_sglang", False):
        return "d_sglang_own"
    return f"d_{name}"


def _deepinfer(f: nt.DeepInferForm, i, pos, T):
    d, _ = f._find(i, pos)
    owner = np.repeat(np.arange(len(f.req_ids)), np.diff(f.desc_indptr))
    df = pd.DataFrame({T("v.request"): [f.req_ids[o] for o in owner],
                       "start_page": f.desc_start.astype(int), "length": f.desc_len.astype(int),
                       T("v.slots"): [f"{s * f.page_size}–{(s + n) * f.page_size - 1}"
                                      for s, n in zip(f.desc_start, f.desc_len)]},
                      index=[T("v.run", k=k) for k in range(len(f.desc_start))])
    here = T("v.run", k=d)
    out = [(T("v.runs", p=f.page_size), df, [(here, "start_page"), (here, "length")])]
    dfp, _ = _strip("desc_indptr", f.desc_indptr, i)
    out.append(("desc_indptr", dfp, [("desc_indptr", str(i)), ("desc_indptr", str(i + 1))]))
    return out


def lookup_text(name: str, form, i: int, pos: int, lang: str | None = None) -> str:
    """The notation's own arithmetic for this token, ending in the slot."""
    T = _T(lang)
    c = form.coords(i, pos)
    if name == "vllm":
        j = pos // form.block_size
        return (f"block_table[{i}, {pos} // {form.block_size} = {j}] = {c['block']};  "
                f"{c['block']} × {form.block_size} + {c['offset']} = **{c['slot']}**")
    if name == "flashinfer":
        k = int(form.kv_indptr[i]) + pos // form.page_size
        return (f"kv_indices[kv_indptr[{i}] + {pos} // {form.page_size} = {k}] = {c['page']};  "
                f"{c['page']} × {form.page_size} + {c['entry']} = **{c['slot']}**")
    if name == "sglang" and form.follows_sglang:
        return T("v.lookup_sglang_own", i=i, row=c["pool_row"], pos=pos, s=c["sglang_slot"], slot=c["slot"])
    if name == "sglang":
        return f"req_to_token[req_pool_indices[{i}] = {c['pool_row']}, {pos}] = **{c['slot']}**"
    if name == "trtllm":
        return T("v.lookup_trtllm", i=i, j=pos // form.tokens_per_block, k=c["k_index"], v=c["v_index"],
                 l2=2 * form.num_layers, b=c["block"], tpb=form.tokens_per_block, off=c["offset"],
                 slot=c["slot"])
    if name == "llamacpp" and form.kv_unified:
        return T("v.lookup_llamacpp", pos=pos, i=i, ids=", ".join(map(str, c["seq_ids"])), cell=c["cell"],
                 slot=c["slot"])
    if name == "llamacpp":
        return T("v.lookup_llamacpp_streams", pos=pos, i=i, cell=c["cell"], slot=c["slot"])
    if name == "deepinfer":
        d, _ = form._find(i, pos)
        return T("v.lookup_deepinfer", d=d, s=c["start_page"], n=c["length"], rp=c["run_page"],
                 pg=c["page"], ps=form.page_size, off=c["offset"], slot=c["slot"])
    raise KeyError(name)


def round_trip_report(c: nt.CanonicalBatch, page_size: int, lang: str | None = None, *,
                      kv_unified: bool = nt.LLAMA_KV_UNIFIED_DEFAULT) -> pd.DataFrame:
    """From each notation back to the canonical batch and into every other: tokens whose
    address differs (expected: none). Rows: from; columns: to (both axis names in ``lang``).
    ``kv_unified``: llama.cpp's layout, both ways."""
    forms = nt.all_forms(c, page_size, kv_unified=kv_unified)
    good = {k: f for k, f in forms.items() if not isinstance(f, Exception)}
    rows = []
    for src, f in good.items():
        back = nt.to_canonical(f)
        for dst in good:
            g = nt.convert(back, dst, page_size, kv_unified=kv_unified)
            bad = sum(1 for i, r in enumerate(c.requests) for p in range(r.seq_len)
                      if g.address(i, p) != r.slots[p])
            rows.append({"from": nt.NOTATIONS[src][0], "to": nt.NOTATIONS[dst][0], "mismatches": bad})
    df = pd.DataFrame(rows)
    out = df.pivot(index="from", columns="to", values="mismatches")
    T = _T(lang)
    out.index.name, out.columns.name = T("v.from"), T("v.to")
    return out


def token_answer(c: nt.CanonicalBatch, i: int, pos: int, page_size: int) -> dict:
    """Where token ``pos`` of request ``i`` lives: its slot, the page and offset of that slot
    for ``page_size``-token pages, the requests that share the slot, and whether this step
    writes it (a new token) or reads it (context)."""
    r = c.requests[i]
    slot = c.address(i, pos)
    page, offset = divmod(slot, page_size)
    return {"slot": slot, "page": page, "offset": offset,
            "sharers": [q.req_id for q in c.requests if slot in q.slots],
            "new": pos >= r.seq_len - r.query_len}


MARK = ':color[**{v}**]{{foreground="black" background="#ffd54f"}}'   # the marked cell, in markdown


def markdown_table(df: pd.DataFrame, marks) -> str:
    """``df`` (row labels as its index) as one GitHub-flavoured markdown table, the cells in
    ``marks`` ([(row label, column label)]) highlighted. One markdown element per array: the page
    shows fifteen of them on every rerun, and ``st.table`` renders each cell as its own markdown
    (about twice the browser's time); no Styler either (computing and shipping a Styler's display
    values was most of the page's server time). Labels and values pass through ``plain`` (a ``|``
    cannot break a row)."""
    from kvviz.views.frames import markdown_grid
    from kvviz.views.safe_text import plain

    cells = set(marks)
    cols = list(df.columns)
    rows = ([plain(r)] + [MARK.format(v=plain(v)) if (r, c) in cells else plain(v)
                          for c, v in zip(cols, df.loc[r].tolist())] for r in df.index)
    return markdown_grid(["", *(plain(c) for c in cols)], rows, [False] + [True] * len(cols))


def marked_cells(text: str) -> list[str]:
    """The values highlighted in a :func:`markdown_table` (tests, and a reader of the page's text)."""
    head, tail = MARK.format(v="\0").split("\0")
    out, at = [], text.find(head)
    while at >= 0:
        end = text.index(tail, at + len(head))
        out.append(text[at + len(head):end])
        at = text.find(head, end)
    return out


def forms_json(forms: dict) -> dict:
    """Every notation's arrays as JSON-able values (a notation that cannot hold the batch: its
    reason); the notations page's download."""
    return {name: (_jsonable(f) if not isinstance(f, Exception) else str(f)) for name, f in forms.items()}


def _jsonable(form) -> dict:
    out = {"kv_unified": bool(form.kv_unified)} if hasattr(form, "kv_unified") else {}
    for k, v in vars(form).items():
        if k.startswith("_"):
            continue
        if isinstance(v, np.ndarray):
            out[k] = v.tolist()
        elif isinstance(v, list) and v and isinstance(v[0], frozenset):
            out[k] = [sorted(s) for s in v]
        else:
            out[k] = v
    return out
