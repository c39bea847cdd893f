"""What the demos and notations pages draw, without streamlit.

A demo step is shown as *screens*: one topic each (a block table, the pool, the slots...).
Normal mode stacks them; a screen holds one or more plotly charts, placed by ``bands``:
two per row, or, for a screen comparing runs (the vLLM run beside a fault, or two DCP ranks),
one column per run with that run's charts stacked in it. Presenter mode shows one chart per
screen (``presenter_screens``). The chart builders come from ``kvviz.views.figures``; only the
demo-specific ones (PCIe traffic, bytes per step) are defined here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from kvviz.texts.demos import STRINGS as DEMO_TEXTS
from kvviz.texts.i18n import t
from kvviz.views import figures as F
from kvviz.views.batch import token_frame
from kvviz.views import demo_notes as N
from kvviz.views.demo_catalogue import DEMOS, NARRATIVE_RELEASE, PCIE_TABLE, DemoRun, pcie_rate, play
from kvviz.views.report import describe_event
from kvviz.views.scenarios import table_sizes


@dataclass
class Screen:
    key: str                      # "block_table", "pool", ... (+ ":g<gid>" for a group)
    title: str
    charts: list = field(default_factory=list)   # [(caption, plotly figure)]
    columns: int = 0              # >0: one column per run, charts listed column by column
    notes: list = field(default_factory=list)    # each chart's own sentence (kvviz.views.demo_notes)
    runs: list = field(default_factory=list)     # a comparison: each column's run, named
    where: str = ""               # presenter mode: where normal mode draws this chart ("top band, left column")


def bands(screen: Screen) -> list[list[list[tuple]]]:
    """Where the page puts a screen's charts: a list of bands (rows of ``st.columns``), each a
    list of columns, each a list of charts drawn top to bottom.

    A comparison screen (``columns`` = number of runs) is one band with one column per run, in
    run order: the first run (vLLM, or DCP rank 0) on the left; its charts (CPU table above the
    device mirror) stacked. More than two runs: two columns a band, in run order. Otherwise charts
    go two per row."""
    charts = list(screen.charts)
    if screen.columns > 1 and len(charts) % screen.columns == 0:
        per = len(charts) // screen.columns
        cols = [charts[c * per:(c + 1) * per] for c in range(screen.columns)]
        if screen.columns > 2:   # four runs (two runners, each healthy and faulty): two runs a band
            return [cols[i:i + 2] for i in range(0, len(cols), 2)]
        return [cols]
    if len(charts) == 1:
        return [[charts]]
    return [[[c] for c in charts[i:i + 2]] for i in range(0, len(charts), 2)]


# Presenter mode fills one projector screen (1280x720 up to 1920x1080) with no scrolling: no
# header bar nor sidebar, the main column a full-height flex column, the controls on one row,
# text sized by the viewport's height, and the figure's container taking the height that is left
# (the chart is drawn with height="stretch" and no height of its own).
PRESENTER_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stHeader"] {display: none;}
[data-testid="stMain"] {overflow: hidden;}
[data-testid="stMainBlockContainer"] {padding: 0.6rem 1.5rem 0.5rem; max-width: none; height: 100dvh;
  box-sizing: border-box; display: flex; flex-direction: column;}
[data-testid="stMainBlockContainer"] > div > [data-testid="stVerticalBlock"],
[data-testid="stMainBlockContainer"] > [data-testid="stVerticalBlock"] {flex: 1 1 auto; min-height: 0;}
[data-testid="stMain"] h2 {font-size: clamp(1.3rem, 3.6vh, 2.4rem); padding: 0.1rem 0;}
[data-testid="stMain"] h3 {font-size: clamp(1.15rem, 3vh, 2rem); padding: 0;}
[data-testid="stMain"] .stMarkdown p, [data-testid="stMain"] .stMarkdown li {font-size: clamp(1.05rem, 2.7vh, 1.75rem);
  line-height: 1.4; margin-bottom: 0.2rem;}
[data-testid="stMain"] .stButton button p {font-size: clamp(1rem, 2.2vh, 1.35rem);}
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] > * {flex-shrink: 0;}
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] > :has(> .st-key-demos_presenter_fig) {flex: 1 1 0;
  min-height: 12rem;}
.st-key-demos_presenter_fig {height: 100%; min-height: 0;}
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] > :has(> .st-key-demos_story) {flex: 1 1 0; min-height: 0;}
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] > :has(> .st-key-demos_story_long) {flex: 1 1 0; min-height: 0;}
.st-key-demos_story, .st-key-demos_story_long {height: 100%; min-height: 0; overflow-y: auto;}
[data-testid="stMain"] .st-key-demos_story_long .stMarkdown p, [data-testid="stMain"] .st-key-demos_story_long .stMarkdown li
  {font-size: clamp(0.95rem, 2.15vh, 1.45rem); line-height: 1.3;}
[data-testid="stMain"] [data-testid="stButtonGroup"] button p {font-size: clamp(0.95rem, 2vh, 1.3rem);}
.st-key-demos_presenter_fig [data-testid="stElementContainer"] {height: 100%;}
</style>"""


def presenter_style(fig: go.Figure) -> go.Figure:
    """A chart restyled for presenter mode: every font big enough for a projector, and no height
    of its own (the page gives it the height left on the screen)."""
    # the top margin holds the whole title: ~30 px a line at 24 px (a two-line title ran into the plot)
    lines = 1 + str(fig.layout.title.text or "").count("<br>")
    fig.update_layout(height=None, autosize=True, font=dict(size=20), margin=dict(t=max(60, 24 + 32 * lines), b=40))
    fig.update_xaxes(tickfont=dict(size=18), title_font=dict(size=20), automargin=True)
    fig.update_yaxes(tickfont=dict(size=18), title_font=dict(size=20))
    fig.update_traces(textfont=dict(size=20), selector=dict(type="heatmap"))
    fig.update_layout(legend=dict(font=dict(size=18)), title=dict(font=dict(size=24)))
    if fig.layout.legend.orientation == "h":
        # a projector screen is wide and short: the legend goes at the right of the plot, one entry
        # a line from its top, where it takes width (to spare) and no height from the plot, and stays
        # clear of the title above and the axis title below
        fig.update_layout(legend=dict(orientation="v", yref="paper", y=1, yanchor="top", x=1.01, xanchor="left"))
    return fig


def presenter_screens(screens: list[Screen], lang: str = "en") -> list[Screen]:
    """One chart per screen (presenter mode), in reading order: band by band, left column first.
    A chart from a comparison says which column it stands for in normal mode (the narratives
    speak of the left and right columns)."""
    T = _T(lang)
    out = []
    for s in screens:
        k = 0
        column = 0
        layout = bands(s)
        for b, band in enumerate(layout):
            for c, col in enumerate(band):
                place = [T("ui.band_top" if b == 0 else "ui.band_bottom")] if len(layout) == 2 and s.columns > 1 else []
                if s.columns > 1 and len(band) == 2:
                    place.append(T("ui.col_left" if c == 0 else "ui.col_right"))
                where = ""
                if s.columns > 1 and len(band) >= 2:
                    where = " — " + (s.runs[column] if column < len(s.runs) and s.runs[column]
                                     else T("ui.col_left" if c == 0 else "ui.col_right"))
                column += 1
                for chart in col:
                    note = s.notes[k] if k < len(s.notes) else ""
                    out.append(Screen(f"{s.key}#{k}", s.title + where, [chart], notes=[note],
                                      where=T("ui.place_sep").join(place)))
                    k += 1
    return out


def chart_title(screen: Screen) -> str:
    """The title of a screen's first chart on one line (its screen's title if it has none)."""
    text = str(screen.charts[0][1].layout.title.text or "") if screen.charts else ""
    return text.replace("<br>", " — ") or screen.title


def _T(lang):
    return lambda key, **f: t("demos", key, lang, **f)


def group_label(g, lang: str) -> str:
    """A KV-cache group's name in ``lang`` (the scenario's own names are English)."""
    T = _T(lang)
    if g.kind == "sliding_window":
        return T("group.sliding_window", w=g.sliding_window)
    if g.kind in ("full", "state"):
        return T(f"group.{g.kind}")
    return g.label


def runs_of(key: str, release: str = NARRATIVE_RELEASE) -> list[DemoRun]:
    return [play(key, i, release=release) for i in range(len(DEMOS[key].variants))]


def _used_cols(run: DemoRun, gid: int) -> int:
    """Columns worth drawing: the widest row any step of the run used, plus one."""
    top = 1
    for r in run.history:
        top = max(top, int(np.max(r.num_blocks_per_row[gid])))
        nz = np.nonzero(r.cpu_tables[gid].any(axis=0) | r.device_tables[gid].any(axis=0))[0]
        if len(nz):
            top = max(top, int(nz[-1]) + 1)
    return top + 1


def runners_of(runs: list[DemoRun]) -> list[str]:
    """The model runner of each run ("v1" / "v2"), as its records say."""
    return [run.history[0].runner for run in runs]


def runner_label(run: DemoRun, lang: str) -> str:
    """"vLLM main · Model Runner V2": the release and the runner a run shows."""
    return f"vLLM {run.scenario.config.vllm} · {_T(lang)('runner.' + run.history[0].runner)}"


def release_runs(key: str, release: str = NARRATIVE_RELEASE) -> list[tuple[str, str]]:
    """(vLLM release, model runner) of each run of demo ``key``, in run order: what its caption names."""
    return [(run.scenario.config.vllm, run.history[0].runner) for run in runs_of(key, release)]


def v1_note(key: str, lang: str, release: str = NARRATIVE_RELEASE) -> str | None:
    """For a demo of V1's mechanics, the releases that have them (V1 ships up to v0.33.0); else None."""
    from kvviz.core.versions import LAST_V1_RELEASE

    return _T(lang)("ui.v1_releases", last=LAST_V1_RELEASE) if "v1" in runners_of(runs_of(key, release)) else None


def runner_caption(key: str, lang: str, release: str = NARRATIVE_RELEASE) -> str:
    """What the page says a demo shows: each distinct release and runner of its runs, in run order,
    then, for a demo of V1's mechanics, the releases that have them (V1 ships up to v0.33.0)."""
    from kvviz.core.versions import LAST_V1_RELEASE

    seen: list[str] = []
    for run in runs_of(key, release):
        label = runner_label(run, lang)
        if label not in seen:
            seen.append(label)
    text = " | ".join(seen)
    if "v1" in runners_of(runs_of(key, release)):
        text += " " + _T(lang)("ui.v1_releases", last=LAST_V1_RELEASE)
    return text


def _kernel_ids(run: DemoRun, g, ids) -> list[int]:
    """A request's blocks as its table rows hold them: kernel block ids, or (vLLM v0.32.0+, whose rows
    keep KV-manager ids and expand them in the kernel) the manager's own ids."""
    from kvviz.core.versions import rules_for

    geo = run.scenario.config.group_geometry(g)
    split = geo.blocks_per_kv_block > 1 and not rules_for(run.scenario.config.vllm).kernel_block_table_per_group
    return [int(b) for b in (geo.kernel_blocks(ids) if split else ids)]


def stale_rows_v2(run: DemoRun, step: int, gid: int) -> tuple[list[int], list[int]]:
    """Model Runner V2: the state rows and the input rows whose read part (the first entries, as
    many as the request has kernel blocks) is not the request's blocks: what a kernel would read
    wrong. Stale tails past the count, and rows of no request, are never read and not counted."""
    rec = run.history[step]
    g = run.scenario.config.groups[gid]
    truth = {rid: _kernel_ids(run, g, r["blocks"][gid]) for rid, r in rec.requests.items()}
    state, inp = rec.cpu_tables[gid], rec.device_tables[gid]
    counts = rec.num_blocks_per_row[gid]
    bad_state = [s for s, rid in enumerate(rec.state_rows) if rid is not None and rid in truth
                 and (state[s, :len(truth[rid])].tolist() != truth[rid] or int(counts[s]) != len(truth[rid]))]
    bad_input = [b for b, sr in enumerate(rec.scheduled)
                 if inp[b, :len(truth[sr.req_id])].tolist() != truth[sr.req_id]]
    return bad_state, bad_input


def _table_views(run: DemoRun, runner: str, step: int, gid: int, T) -> list[tuple]:
    """The tables one run shows for a group: (name, table, counts, marked rows, real rows, y-axis
    title, note kind, row names)."""
    rec = run.history[step]
    cpu, dev = rec.cpu_tables[gid], rec.device_tables[gid]
    batch = [s.req_id for s in rec.scheduled]
    if runner == "v2":
        # rows by request-state index above, the gathered input (rows by batch position) below
        bad_state, bad_input = stale_rows_v2(run, step, gid)
        nb = rec.num_blocks_per_row[gid]
        state_counts = np.array([nb[s] if rid is not None else 0 for s, rid in enumerate(rec.state_rows)])
        input_counts = np.zeros(dev.shape[0], dtype=np.int64)
        for b, s in enumerate(rec.idx_mapping):
            input_counts[b] = nb[s]
        views = [(T("ui.state"), cpu, state_counts, bad_state, cpu.shape[0], T("ui.axis_state"), "state",
                  list(rec.state_rows)),
                 (T("ui.input"), dev, input_counts, bad_input, dev.shape[0], T("ui.axis_batch"), "input", batch)]
    else:
        stale = [int(r) for r in np.nonzero((cpu != dev).any(axis=1))[0]]
        views = [(T("ui.cpu"), cpu, rec.num_blocks_per_row[gid], stale, cpu.shape[0], None, "cpu", list(rec.rows)),
                 (T("ui.device"), dev, None, stale, dev.shape[0], None, "mirror",
                  [rid if r < rec.num_reqs else None for r, rid in enumerate(rec.rows)])]
    inp = rec.inputs[gid]
    if rec.num_reqs_padded > rec.num_reqs and inp is not None:
        # what attention reads: the first rows, padded rows pointing at block 0
        views.append((T("ui.attn_input"), inp.block_table, None, (), rec.num_reqs,
                      T("ui.axis_batch") if runner == "v2" else None, "attn", []))
    return views


def block_table_screens(runs: list[DemoRun], step: int, lang: str) -> list[Screen]:
    T = _T(lang)
    c0 = runs[0].scenario.config
    runners = runners_of(runs)
    kind = "fig.block_table" if set(runners) == {"v1"} else (
        "fig.block_table_v2" if set(runners) == {"v2"} else "fig.block_table_both")
    labels = [T(f"variant.{run.variant.key}") if len(runs) > 1 else "" for run in runs]
    out = []
    for gid, g in enumerate(c0.groups):
        charts, notes = [], []
        for run, runner, label in zip(runs, runners, labels):
            rec = run.history[step]
            sizes = table_sizes(run.scenario.config, g)
            cols = _used_cols(run, gid)
            width = rec.cpu_tables[gid].shape[1]
            more = "" if cols >= width else " — " + T("ui.cols", shown=cols, width=f"{width:,}")
            mirror_counts = rec.num_blocks_per_row[gid]
            for name, table, counts, marked, real, axis, note, names in _table_views(run, runner, step, gid, T):
                # the run first (it names the column), on a line of its own so the title fits
                title = f"{label + ' — ' if label else ''}{name}{more}"
                fig = F.block_table_heatmap(table, num_reqs=real, **sizes, counts=counts, stale_rows=marked,
                                            title=title.replace(" — ", "<br>", 1) if label else title,
                                            lang=lang, max_cols=cols)
                if axis:
                    fig.update_yaxes(title=axis)
                if label:
                    fig.update_layout(margin=dict(t=84))
                charts.append((title, fig))
                notes.append(N.table_note(note, table, names, counts if counts is not None else mirror_counts,
                                          lang, n=rec.num_reqs, stale=marked))
        title = T(kind) + (f" — {group_label(g, lang)}" if len(c0.groups) > 1 else "")
        out.append(Screen(f"block_table:g{gid}", title, charts, columns=len(runs), notes=notes, runs=labels))
    return out


def pool_screen(runs: list[DemoRun], step: int, lang: str) -> Screen:
    T = _T(lang)
    rec = runs[0].history[step]
    # after the requests that finished this step released their blocks (what the narrative tells)
    refs = getattr(rec, "ref_counts_after", None) or rec.ref_counts
    queue = getattr(rec, "free_queue_after", None)
    queue = rec.free_queue if queue is None else queue
    charts = [("ref", F.ref_count_figure(refs, queue, rec.cached_blocks, title=T("fig.ref_title"), lang=lang)),
              ("queue", F.free_queue_figure(queue, rec.cached_blocks, title=T("ui.free_queue"),
                                            lang=lang))]
    return Screen("pool", T("fig.pool"), charts, notes=list(N.pool_notes(refs, queue, rec.cached_blocks, lang)))


def _integer_axes(fig: go.Figure, frame) -> None:
    """Token index and slot are integers: integer ticks, and a range that never reads 19.5 or -1."""
    n = len(frame)
    if n <= 40:
        fig.update_xaxes(dtick=1, range=[-0.5, n - 0.5])
    slots = frame["slot"].to_numpy()
    lo, hi = int(slots.min()), int(slots.max())
    if hi - lo <= 12:
        fig.update_yaxes(dtick=1, range=[lo - 0.5, hi + 0.5])
    fig.update_yaxes(tickformat="d")


def slots_screens(runs: list[DemoRun], step: int, lang: str) -> list[Screen]:
    T = _T(lang)
    c0 = runs[0].scenario.config
    out = []
    for gid, g in enumerate(c0.groups):
        if g.kind == "state":
            continue
        charts, notes, labels = [], [], []
        for run in runs:
            rec = run.history[step]
            inp = rec.inputs[gid]
            label = T(f"variant.{run.variant.key}") if len(runs) > 1 else ""
            title = label or T("fig.slot_title")
            if len(set(runners_of(runs))) > 1:   # the runners order the batch differently
                title += " — " + T("ui.batch_order", v=" ".join(s.req_id for s in rec.scheduled))
            if inp.dcp_world_size > 1:  # attention on a DCP rank sees only the tokens it stores
                local = inp.geometry.local_seq_lens(inp.seq_lens[: rec.num_reqs])
                title += " — " + T("ui.local_seq_lens", v=local.tolist())
            if inp.num_tokens_padded == 0:
                continue
            frame = token_frame(inp)
            ordered = len(set(runners_of(runs))) > 1   # the batch order on a line of its own
            fig = F.slot_mapping_figure(frame, num_reqs=max(rec.num_reqs, 1), lang=lang,
                                        row_names=[s.req_id for s in rec.scheduled],
                                        title=title.replace(" — ", "<br>", 1) if ordered else title)
            if ordered:
                fig.update_layout(margin=dict(t=84))
            _integer_axes(fig, frame)
            charts.append((title, fig))
            notes.append(N.slots_note(frame, [s.req_id for s in rec.scheduled], lang))
            labels.append(label)
        title = T("fig.slots") + (f" — {group_label(g, lang)}" if len(c0.groups) > 1 else "")
        out.append(Screen(f"slots:g{gid}", title, charts, columns=len(charts), notes=notes, runs=labels))
    return out


def csr_screen(runs: list[DemoRun], step: int, lang: str) -> Screen:
    T = _T(lang)
    inp = runs[0].history[step].inputs[0]
    charts, notes = [], []
    if inp.paged_kv_indptr is not None:
        charts.append(("csr", F.csr_figure(inp.paged_kv_indptr, inp.paged_kv_indices,
                                           inp.paged_kv_last_page_len, page_size=inp.kernel_block_size,
                                           title=T("fig.csr_title", v=inp.seq_lens.tolist()), lang=lang)))
        notes.append(N.csr_note(inp.paged_kv_indptr, inp.paged_kv_indices, inp.paged_kv_last_page_len, lang))
    return Screen("csr", T("fig.csr"), charts, notes=notes)


def traffic_figure(lang: str) -> go.Figure:
    T = _T(lang)
    labels = [row[0] for row in PCIE_TABLE]
    rates = [pcie_rate(rows, L, bs, sps) for _, rows, L, bs, sps in PCIE_TABLE]
    text = [f"{r / 2**30:.2f} GiB/s" if r >= 2**30 else f"{r / 2**20:.0f} MiB/s" for r in rates]
    fig = go.Figure(go.Bar(x=labels, y=rates, text=text, textposition="outside",
                           marker_color=["#1f77b4", "#d62728"], textfont=dict(size=F.FONT + 2)))
    ticks = F.byte_ticks(min(rates) / 2, max(rates) * 2, log=True)     # B/s in binary units, not "1B"
    ticks["ticktext"] = [f"{t}/s" for t in ticks["ticktext"]]
    fig.update_yaxes(title=T("fig.traffic_axis"), type="log", gridcolor="#eee", **ticks)
    return F.base_layout(fig, T("fig.traffic"), 380)


def bytes_figure(run: DemoRun, step: int, lang: str) -> go.Figure:
    T = _T(lang)
    x = [r.index + 1 for r in run.history]     # steps counted from 1, as the page shows them
    y = [r.commit_bytes for r in run.history]
    colors = ["#d62728" if i == step + 1 else "#9ecae1" for i in x]
    fig = go.Figure(go.Bar(x=x, y=y, marker_color=colors, text=[f"{b / 1024:,.0f} KiB" for b in y],
                           textposition="outside", textfont=dict(size=F.FONT)))
    fig.update_xaxes(title=T("ui.step"), dtick=1)
    fig.update_yaxes(title=T("fig.bytes_axis"), gridcolor="#eee", **F.byte_ticks(0, max(y + [1]) * 1.2, log=False))
    return F.base_layout(fig, T("fig.bytes"), 360)


def screens_for(key: str, step: int, lang: str, release: str = NARRATIVE_RELEASE) -> list[Screen]:
    """Every screen of one demo step on vLLM ``release``, in the demo's figure order."""
    runs = runs_of(key, release)
    T = _T(lang)
    out: list[Screen] = []
    for name in DEMOS[key].figures:
        if name == "block_table":
            out += block_table_screens(runs, step, lang)
        elif name == "pool":
            out.append(pool_screen(runs, step, lang))
        elif name == "slots":
            out += slots_screens(runs, step, lang)
        elif name == "csr":
            out.append(csr_screen(runs, step, lang))
        elif name == "traffic":
            fig = traffic_figure(lang)
            out.append(Screen("traffic", T("fig.traffic"), [("traffic", fig)],
                              notes=[N.traffic_note(list(fig.data[0].text), lang)]))
        elif name == "bytes":
            out.append(Screen("bytes", T("fig.bytes"), [("bytes", bytes_figure(runs[0], step, lang))],
                              notes=[N.bytes_note(runs[0].history[step].commit_bytes, lang)]))
    return [s for s in out if s.charts]


def events_text(key: str, step: int, lang: str = "en", release: str = NARRATIVE_RELEASE) -> list[str]:
    """The step's engine events, one sentence each in ``lang``."""
    return [describe_event(e, lang) for e in runs_of(key, release)[0].history[step].events]


def events_by_run(key: str, step: int, lang: str = "en",
                  release: str = NARRATIVE_RELEASE) -> list[tuple[str, list[str]]]:
    """The step's engine events of each run, labelled, where a demo compares runners (their events
    differ: rows and a commit under V1, request states, staged writes and a gather under V2);
    otherwise the first run's events, unlabelled."""
    runs = runs_of(key, release)
    if len(set(runners_of(runs))) < 2:
        return [("", events_text(key, step, lang, release))]
    T = _T(lang)
    return [(T(f"variant.{run.variant.key}"), [describe_event(e, lang) for e in run.history[step].events])
            for run in runs]


def padded_line(key: str, step: int, lang: str, release: str = NARRATIVE_RELEASE) -> str:
    rec = runs_of(key, release)[0].history[step]
    return t("demos", "ui.padded", lang, r=rec.num_reqs, t=rec.num_tokens, rp=rec.num_reqs_padded,
             tp=rec.num_tokens_padded)


def scheduled_frame(key: str, step: int, lang: str = "en", release: str = NARRATIVE_RELEASE) -> pd.DataFrame:
    """What the step scheduled, one request a row; ``kind`` in ``lang`` (column names are keys
    ``col.<name>`` of the demos texts)."""
    rec = runs_of(key, release)[0].history[step]
    T = _T(lang)
    kind = lambda k: T(f"kind.{k}") if f"kind.{k}" in DEMO_TEXTS else k  # noqa: E731
    return pd.DataFrame([{"row": s.row, "req": s.req_id, "kind": kind(s.kind), "tokens": s.num_tokens,
                          "positions": f"{s.num_computed}..{s.seq_len - 1}"} for s in rec.scheduled],
                        columns=["row", "req", "kind", "tokens", "positions"])
