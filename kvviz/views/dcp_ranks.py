""""Run on W ranks" (the DCP demo and the Batch page), without streamlit: the batch a page hands to
``kvviz.dist``, the app's bounds on it, the W caches side by side, and the report as tables.

A page's batch (the demo's step, the Batch page's step) becomes a ``compute`` batch
(``batch_from_step``); ``prepare`` checks it against W and the app's bounds and returns the run's
config (nothing starts); ``kvviz.dist.jobs.start`` runs it in the background. What each rank filled
(``cache_owners``) comes from the same tables the ranks build (``plan.rank_tables``): the report's
``slot_mapping_exact`` says the Triton kernel wrote exactly these slots.
"""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kvviz.core.step import StepInputs
from kvviz.dist import plan
from kvviz.errors import BadInput
from kvviz.texts.i18n import t
from kvviz.views import figures as F

MAX_CPU_WORLD = 4                       # gloo ranks on the CPU (each one torch + the Triton interpreter)
MAX_POSITIONS = {"cpu": 2048, "cuda": 1 << 20}   # every position of every request, per run
MAX_REQUESTS = {"cpu": 32, "cuda": 1024}
TIMEOUT_S = {"cpu": 180.0, "cuda": 180.0}
MAX_FIG_BLOCKS = 40                     # kernel blocks drawn per rank
APP_HEADS = {"num_kv_heads": 2, "num_q_heads": 4, "head_dim": 32}
APP_DTYPES = ("float16", "bfloat16")


def _T(lang):
    return lambda key, **f: t("dcp_ranks", key, lang, **f)


def max_world(gpus: int) -> int:
    """The largest W a page offers: the GPUs (NCCL) on a machine with two or more, else MAX_CPU_WORLD."""
    return min(plan.MAX_WORLD, gpus if gpus >= 2 else MAX_CPU_WORLD)


def batch_from_step(step: StepInputs) -> dict:
    """A step's requests as a ``compute`` batch: each row's manager block ids (the kernel blocks it
    needs, back to manager ids), seq_len and query_len, with the step's sizes, padding and DCP
    world (its ``dcp_rank`` is left out: every rank takes its own)."""
    geo = step.geometry
    bpk = geo.blocks_per_kv_block
    qsl = step.query_start_loc.astype(np.int64)
    reqs = []
    for r in range(step.num_reqs):
        seq = int(step.seq_lens[r])
        need = geo.blocks_for(seq) * bpk
        kernel = step.block_table[r, :need].astype(np.int64)
        reqs.append({"block_ids": [int(b) // bpk for b in kernel[::bpk]], "seq_len": seq,
                     "query_len": int(qsl[r + 1] - qsl[r])})
    spec = {"block_size": geo.block_size, "requests": reqs, "dcp_world_size": geo.dcp_world_size,
            "cp_kv_cache_interleave_size": geo.interleave}
    if geo.kernel_block_size != geo.block_size:
        spec["kernel_block_size"] = geo.kernel_block_size
    if step.num_reqs_padded > step.num_reqs:
        spec["num_reqs_padded"] = step.num_reqs_padded
    if step.num_tokens_padded > step.num_tokens:
        spec["num_tokens_padded"] = step.num_tokens_padded
    return spec


def run_key(spec: dict, world: int, **extra) -> str:
    blob = json.dumps([spec, world, extra], sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def prepare(spec: dict, world: int, *, backend: str, gpus: int, num_kv_heads: int | None = None,
            head_dim: int | None = None, dtype: str = "float16") -> tuple[plan.DcpConfig, dict]:
    """(config, normalised batch) of a run of ``spec`` on ``world`` ranks with ``backend`` (resolved:
    nccl | gloo); BadInput (one sentence) for a W the page does not offer, a batch that declares
    another world size, one past the app's bounds, or one ``kvviz dcp`` would refuse."""
    device = "cuda" if backend == "nccl" else "cpu"
    top = max_world(gpus) if backend == "nccl" else MAX_CPU_WORLD
    if not isinstance(world, int) or not 1 <= world <= top:
        raise BadInput(f"W must be between 1 and {top} here ({'GPUs' if device == 'cuda' else 'CPU processes'}), "
                       f"got {world}")
    declared = spec.get("dcp_world_size") if isinstance(spec, dict) else None
    if isinstance(declared, int) and declared != world:
        raise BadInput(f"this batch is laid out for a DCP world size of {declared}; run it on {declared} ranks "
                       f"(or change its DCP world size to {world})")
    norm, step0 = plan.dcp_batch(spec, world)
    positions = int(step0.seq_lens[: step0.num_reqs].astype(np.int64).sum())
    if positions > MAX_POSITIONS[device]:
        raise BadInput(f"the batch holds {positions} positions; the app runs up to {MAX_POSITIONS[device]} "
                       f"on {'GPUs' if device == 'cuda' else 'CPU processes'} (`python -m kvviz dcp` runs more)")
    if step0.num_reqs > MAX_REQUESTS[device]:
        raise BadInput(f"the batch has {step0.num_reqs} requests; the app runs up to {MAX_REQUESTS[device]} here")
    kv = int(num_kv_heads or APP_HEADS["num_kv_heads"])
    hd = int(head_dim or APP_HEADS["head_dim"])
    cfg = plan.DcpConfig(world=world, interleave=int(norm["cp_kv_cache_interleave_size"]), backend=backend,
                         num_kv_heads=kv, num_q_heads=2 * kv, head_dim=hd,
                         dtype=dtype if dtype in APP_DTYPES else "float16",
                         repeat=20 if backend == "nccl" else 1, timeout_s=TIMEOUT_S[device])
    plan.check_sizes(cfg, step0)
    plan.check_world(world, backend, gpus)
    return cfg, norm


# --- what each rank filled -------------------------------------------------------------------------

def cache_owners(norm: dict, world: int, max_blocks: int = MAX_FIG_BLOCKS) -> dict:
    """Every rank's cache as the page draws it: the kernel blocks the batch's table names (the same
    ids on every rank; the first ``max_blocks``), and per rank arrays [blocks, kernel_block_size] of
    the request row (-1: not written), the position, and whether this step wrote it. Also
    ``stored``: how many ranks hold each (row, position) of the batch (every one must be 1)."""
    tables = [plan.rank_tables(norm, r) for r in range(world)]
    step = tables[0].step
    geo = step.geometry
    kbs = geo.kernel_block_size
    used = sorted({int(b) for r in range(step.num_reqs)
                   for b in step.block_table[r, : geo.blocks_for(int(step.seq_lens[r])) * geo.blocks_per_kv_block]})
    shown = used[:max_blocks]
    where = {b: i for i, b in enumerate(shown)}
    seq = step.seq_lens[: step.num_reqs].astype(np.int64)
    stored = [np.zeros(int(s), dtype=np.int64) for s in seq]
    ranks = []
    for tb in tables:
        row = np.full((len(shown), kbs), -1, dtype=np.int64)
        pos = np.full((len(shown), kbs), -1, dtype=np.int64)
        new = np.zeros((len(shown), kbs), dtype=bool)
        for part, is_new in ((tb.context, False), (tb.step, True)):
            n = part.num_tokens
            qsl = part.query_start_loc[: part.num_reqs + 1].astype(np.int64)
            req = np.repeat(np.arange(part.num_reqs), np.diff(qsl))
            slots = part.slot_mapping[:n]
            p = part.positions[:n]
            mine = slots >= 0
            for rq, ps in zip(req[mine], p[mine]):
                stored[int(rq)][int(ps)] += 1
            for rq, ps, s in zip(req[mine], p[mine], slots[mine]):
                b, o = divmod(int(s), kbs)
                if b in where:
                    row[where[b], o], pos[where[b], o], new[where[b], o] = rq, ps, is_new
        held = int(tb.local_seq_lens[: step.num_reqs].astype(np.int64).sum())
        ranks.append({"row": row, "pos": pos, "new": new, "tokens_held": held})
    return {"blocks": shown, "blocks_total": len(used), "kernel_block_size": kbs, "num_reqs": step.num_reqs,
            "ranks": ranks, "stored": stored}


def stored_once(owners: dict) -> bool:
    return all(bool((s == 1).all()) for s in owners["stored"])


def caches_figure(owners: dict, *, lang: str = "en", title: str | None = None) -> go.Figure:
    """The W caches side by side: one heatmap per rank (rows: the kernel blocks the table names,
    the same ids on every rank; columns: the offset in the block), coloured by request row as in
    the Batch page's slot buffer, each filled slot labelled with its position; a dot marks a slot
    this step wrote."""
    T = _T(lang)
    ranks = owners["ranks"]
    world = len(ranks)
    kbs = owners["kernel_block_size"]
    blocks = owners["blocks"]
    nb = max(len(blocks), 1)
    n_req = owners["num_reqs"]
    titles = [T("fig.rank_title", r=r, n=rk["tokens_held"]) for r, rk in enumerate(ranks)]
    fig = make_subplots(rows=1, cols=world, shared_yaxes=True, horizontal_spacing=0.03 if world > 2 else 0.05,
                        subplot_titles=titles)
    y = np.arange(len(blocks))
    x = np.arange(kbs)
    cells = sum(rk["row"].size for rk in ranks)   # every rank's cells drawn
    dot_legend = True
    for r, rk in enumerate(ranks):
        row, pos, new = rk["row"], rk["pos"], rk["new"]
        state = np.where(row < 0, T("fig.not_here"), np.where(new, T("fig.written_now"), T("fig.context")))
        custom = np.stack([np.broadcast_to(np.asarray(blocks)[:, None], row.shape) if blocks else row,
                           np.broadcast_to(np.asarray(blocks)[:, None] * kbs + x[None, :], row.shape) if blocks else row,
                           row, pos, state], axis=-1).astype(object)
        hover = T("fig.hover", r=r) + "<extra></extra>"
        fig.add_trace(go.Heatmap(z=np.zeros(row.shape), x=x, y=y, colorscale=[[0, F.NULL_GRAY], [1, F.NULL_GRAY]],
                                 showscale=False, xgap=1, ygap=1, customdata=custom, hovertemplate=hover),
                      row=1, col=r + 1)
        text = np.where(row >= 0, pos.astype(str), "") if cells <= F.MAX_TEXT_CELLS else None
        fig.add_trace(go.Heatmap(z=np.where(row >= 0, row, np.nan).astype(float), x=x, y=y, customdata=custom,
                                 text=text, texttemplate="%{text}" if text is not None else None,
                                 textfont=dict(size=F.FONT - 3), colorscale=F.row_colorscale(n_req), zmin=-0.5,
                                 zmax=max(n_req, 1) - 0.5, showscale=False, xgap=1, ygap=1, hoverongaps=False,
                                 hovertemplate=hover), row=1, col=r + 1)
        wy, wx = np.nonzero(new)
        if len(wy):
            fig.add_trace(go.Scatter(x=wx + 0.3, y=wy - 0.3, mode="markers", name=T("fig.written_now"),
                                     legendgroup="new", showlegend=dot_legend,
                                     marker=dict(size=7, color="black"), hoverinfo="skip"), row=1, col=r + 1)
            dot_legend = False
        fig.update_xaxes(title=T("fig.offset"), dtick=1 if kbs <= 32 else None, row=1, col=r + 1)
    # one legend entry per request row, in its colour (a colour bar of rows would mean nothing)
    for q in range(min(n_req, 12)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=T("fig.request", q=q),
                                 marker=dict(size=12, symbol="square", color=F.PALETTE[q % len(F.PALETTE)]
                                             if n_req <= len(F.PALETTE) else None),
                                 hoverinfo="skip"), row=1, col=1)
    fig.update_yaxes(autorange="reversed", tickvals=list(y), ticktext=[str(b) for b in blocks],
                     title=T("fig.block"), row=1, col=1)
    fig.update_yaxes(autorange="reversed")
    # the legend at the right, clear of the subplot titles above and the axis titles below
    fig.update_layout(showlegend=True, legend=dict(orientation="v", y=1, x=1.01, xanchor="left", yanchor="top"))
    F.base_layout(fig, title if title is not None else T("fig.title", w=world),
                  int(min(1100, max(340, 140 + 36 * nb))))
    for a in fig.layout.annotations:      # the subplot titles: the app's font, a little smaller than the title
        a.font = dict(size=F.FONT)
    return fig


# --- the report as the page shows it -------------------------------------------------------------

RANK_COLUMNS = ("rank", "tokens_held", "bytes_written", "empty_shards", "partial_max_error", "lse_max_error",
                "partial_attention_us", "all_gather_lse_us", "all_reduce_out_us")


def ranks_frame(report: dict, lang: str = "en") -> pd.DataFrame:
    """One line per rank: what it holds and wrote, its partial output's and LSE's error against
    dense attention over its own tokens, and the time of its attention and of each collective."""
    T = _T(lang)
    df = pd.DataFrame([{c: r[c] for c in RANK_COLUMNS} for r in report["ranks"]], columns=list(RANK_COLUMNS))
    for c in ("partial_max_error", "lse_max_error"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    return df.rename(columns={c: T("col." + c) for c in RANK_COLUMNS})


def lse_frame(report: dict, lang: str = "en") -> pd.DataFrame | None:
    """One line per request (query head 0): each rank's LSE and its weight exp(lse_r − lse) in the
    merge, and the merged LSE; an empty shard shows −inf and weight 0. None when the report has
    no per-request detail (too many requests)."""
    d = report.get("lse_head0")
    if not d:
        return None
    T = _T(lang)
    num = float        # the report writes -inf as the string "-inf", which float reads back
    n = len(d["merged_lse"])
    out = {T("col.request"): list(range(n))}
    for r, (lses, ws) in enumerate(zip(d["rank_lse"], d["rank_weight"])):
        out[T("col.rank_lse", r=r)] = [num(v) for v in lses]
        out[T("col.rank_weight", r=r)] = [num(v) for v in ws]
    out[T("col.merged_lse")] = [num(v) for v in d["merged_lse"]]
    return pd.DataFrame(out)


def verdict(report: dict, lang: str = "en") -> tuple[bool, str]:
    """(passed, one sentence): the merged output's error against dense attention and its tolerance."""
    T = _T(lang)
    err = report["merged_max_error"]
    err_s = err if isinstance(err, str) else f"{err:.2g}"
    key = "pass" if report["passed"] else "fail"
    return bool(report["passed"]), T(key, err=err_s, tol=f"{report['tolerance']:g}", dtype=report["dtype"],
                                      w=report["world_size"], backend=report["backend"])


def failed_checks(report: dict) -> list[str]:
    return [k for k, ok in report["checks"].items() if not ok]


def stage_label(stage: str, lang: str = "en") -> str:
    return _T(lang)("stage." + (stage or "starting"))


def demo_batch(key: str, step: int, release: str | None = None) -> dict:
    """A guided demo's step on vLLM ``release`` (default: the narrative's; its first run: DCP rank 0's
    view) as a ``compute`` batch."""
    from kvviz.views.demos import NARRATIVE_RELEASE, runs_of

    rec = runs_of(key, release or NARRATIVE_RELEASE)[0].history[step]
    if rec.inputs[0] is None or rec.num_reqs == 0:
        raise BadInput("this step schedules no tokens")
    return batch_from_step(rec.inputs[0])
