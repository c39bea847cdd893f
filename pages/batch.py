"""Batch & mapping: define a batch, run it on the live backend, follow one token everywhere."""
import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views import batch as ex
from kvviz.views import batch_offsets as offsets
from kvviz.views import figures, frames
from kvviz.views import links as share
from ui import links
from kvviz.errors import BadInput
from kvviz.core.layout import CACHE_LAYOUTS

tr = ui.texts("batch")
figures_tr = ui.texts("figures")
S = st.session_state
WIDGETS = {"bs": 4, "kbs": 4, "nb": 48, "len": 64, "dcp": 1, "rank": 0, "cg": False,
           "heads": 2, "hdim": 8, "dtype": "float16", "layout": "NHD", "tok": ex.DEFAULT_TOKEN,
           "head": 0, "dim": 0, "kv": "k", "family": offsets.AUTO}


def load(rows, cfg, token=None):
    """Put a batch into the page's state (preset, link)."""
    S["batch.rows"] = rows
    S["batch.rows_edited"] = rows
    S["batch.editor_ver"] = S.get("batch.editor_ver", 0) + 1
    for key, val in (("bs", cfg.block_size), ("kbs", cfg.kernel_block_size), ("nb", cfg.num_blocks),
                     ("len", cfg.max_model_len), ("dcp", cfg.dcp_world_size), ("rank", cfg.dcp_rank),
                     ("cg", cfg.cudagraph), ("heads", cfg.num_kv_heads), ("hdim", cfg.head_dim),
                     ("dtype", cfg.dtype), ("tok", ex.DEFAULT_TOKEN if token is None else token)):
        S[f"batch.{key}"] = val


def on_preset():
    load(*ex.preset(S["batch.preset"]))


# A batch is explored once per server (a class on one preset, or a user going back to a batch, finds
# it built: the 256 x 2048 preset allocates 524,288 blocks). Shared, read-only objects; up to ~20 MB
# each for the biggest batches, hence the small bound.
@st.cache_resource(max_entries=4, ttl=1800, show_spinner=False)
def _explore(key: str, _rows, _cfg) -> ex.ExploredBatch:
    return ex.explore(_rows, _cfg)


def on_block_size():
    """A new block size that the kernel block size no longer divides: the kernel block size is reset
    (``ex.kernel_block_size_after``) and the page says so once."""
    old, bs = int(S["batch.kbs"]), int(S["batch.bs"])
    new = ex.kernel_block_size_after(bs, old)
    if new != old:
        S["batch.kbs"] = new
        S["batch.kbs_reset"] = {"old": old, "new": new, "bs": bs}


def on_pick_token():
    points = ui.picked_points("batch.slotfig")
    if points:
        S["batch.tok"] = int(points[0]["x"])


# --- state: first visit (maybe from a link), then whatever the user left here --------------
if "batch.rows" not in S:
    load(*ex.preset("default"))
    rows, cfg, tok, warns = share.decode_batch(st.query_params)
    if cfg is not None:
        load(rows or ex.default_rows(), cfg, tok)
    fam = st.query_params.get("cache_layout")  # the byte offsets' cache layout family, if not the default
    if fam is not None:
        if fam in CACHE_LAYOUTS:
            S["batch.family"] = fam
        else:
            warns = [*warns, tr("bad_family_link", value=str(fam)[:20], names=", ".join(CACHE_LAYOUTS))]
    S["batch.link_warnings"] = warns
    links.read("batch", share.batch_token_fields())   # the token's head, dim, K/V and the kernels' NHD/HND
ui.restore({f"batch.{key}": default for key, default in WIDGETS.items()})
ui.restore_version_link("batch")
for w in S.get("batch.link_warnings", []):
    st.warning(ui.plain(w), icon=":material/link_off:")
links.warnings("batch")

st.title(tr("title"))
st.markdown(tr("intro"))

# --- the batch -------------------------------------------------------------------------------
c = st.columns([3, 1, 1, 1, 1, 1, 1])
# short preset names (shown whole at 1280 px); what each batch holds is in the menu's help
c[0].selectbox(tr("preset"), ex.PRESETS, format_func=lambda p: tr("p_" + p), key="batch.preset",
               on_change=on_preset, index=None, placeholder=tr("p_default"),
               help="\n".join(f"- **{tr('p_' + p)}**: {tr('p_' + p + '_about')}" for p in ex.PRESETS))
c[1].number_input(tr("block_size"), 1, 1024, key="batch.bs", on_change=on_block_size)
c[2].number_input(tr("kernel_block_size"), 1, 1024, key="batch.kbs")
c[3].number_input(tr("num_blocks"), 2, 1 << 20, key="batch.nb")
c[4].number_input(tr("max_model_len"), 1, 1 << 18, key="batch.len")
c[5].number_input(tr("dcp_world"), 1, 16, key="batch.dcp")
c[6].number_input(tr("dcp_rank"), 0, 15, key="batch.rank")
# the version and runner selectors get room for "main (la más nueva)"; the CUDA-graph toggle its own
# column, with the runner note under it (a label squeezed into the sizes' row is cut at 1280 px)
vr = st.columns([2, 2, 3])
choice = ui.version_runner("batch", (vr[0], vr[1]))
v2 = choice.runner == "v2"
vr[2].toggle(tr("cudagraph"), key="batch.cg", help=tr("cudagraph_help"))
with vr[2]:
    ui.runner_note(choice, choice.runner)
if "batch.kbs_reset" in S:
    st.info(tr("kbs_reset", **S.pop("batch.kbs_reset")), icon=":material/info:")
with st.expander(tr("geometry")):
    g = st.columns(4)
    g[0].number_input(tr("heads"), 1, 64, key="batch.heads")
    g[1].number_input(tr("head_dim"), 1, 512, key="batch.hdim")
    g[2].selectbox(tr("dtype"), ["float16", "bfloat16", "fp8"], key="batch.dtype")
    g[3].segmented_control(tr("layout"), ["NHD", "HND"], key="batch.layout")

# the language is part of the key: translated column labels make a new editor, which must start
# from the last edit (not the rows the page began with)
editor_key = f"batch.editor.{S['batch.editor_ver']}.{ui.lang()}"
if editor_key not in S:  # a new editor (page left, language switched): start from the last edit
    S["batch.rows"] = S.get("batch.rows_edited", S["batch.rows"])
edited = st.data_editor(
    ex.rows_to_frame(S["batch.rows"]), key=editor_key, num_rows="dynamic", hide_index=False,
    column_config={
        "prompt_len": st.column_config.NumberColumn(tr("col_prompt"), min_value=1, max_value=ex.LIMITS["tokens_per_req"],
                                                    step=1, default=8),
        "computed": st.column_config.NumberColumn(tr("col_computed"), min_value=0, step=1, default=0),
        "new_tokens": st.column_config.NumberColumn(tr("col_new"), min_value=0, step=1, default=8),
        "prefix_group": st.column_config.TextColumn(tr("col_group"), max_chars=16, help=tr("group_help")),
    }, height=min(400, 38 + 35 * (len(S["batch.rows"]) + 1)))
cfg = ex.BatchConfig(block_size=S["batch.bs"], kernel_block_size=S["batch.kbs"], num_blocks=S["batch.nb"],
                     max_model_len=S["batch.len"], dcp_world_size=S["batch.dcp"], dcp_rank=S["batch.rank"],
                     cudagraph=S["batch.cg"], num_kv_heads=S["batch.heads"], head_dim=S["batch.hdim"],
                     dtype=S["batch.dtype"])
try:
    rows = ex.frame_to_rows(edited)
    S["batch.rows_edited"] = rows
    key = ex.batch_key(rows, cfg)
    if S.get("batch.explored_key") != key:
        S["batch.explored"], S["batch.explored_key"] = _explore(key, rows, cfg), key
    eb = S["batch.explored"]
except ex.KeyedBadInput as e:
    st.error(tr("bad_batch", msg=tr(e.key, **e.fields)), icon=":material/error:")
    ui.keep(*[f"batch.{k}" for k in WIDGETS])
    st.stop()
except BadInput as e:   # the core's sentence (English, bounded): a code span, the page's words around it
    msg = " ".join(str(e).split())[:400].replace("`", "'")
    st.error(f"{tr('bad_batch_code')} `{msg}`", icon=":material/error:")
    ui.keep(*[f"batch.{k}" for k in WIDGETS])
    st.stop()

for key, fields in eb.notes[:6]:
    st.caption(":material/info: " + tr(key, **fields))
# short labels (the long names in the heading's tooltip): all eleven columns fit 1280 px without scrolling.
# A small batch is one markdown table (a new batch redraws it at a fraction of a grid's cost); a big one scrolls
st.subheader(tr("allocated"), help="\n".join(f"- **{tr('rshort_' + c)}**: {tr('rcol_' + c)}"
                                             for c in eb.requests.columns))
if frames.fits_static(eb.requests):
    ui.table(eb.requests, {c: tr("rshort_" + c) for c in eb.requests.columns}, compact="requests")
else:
    st.dataframe(eb.requests, hide_index=True, height=min(320, 38 + 35 * len(eb.requests)),
                 column_config={c: st.column_config.Column(tr("rshort_" + c), help=tr("rcol_" + c))
                                for c in eb.requests.columns})
decoding = ex.rows_past_prompt(eb.rows)
if decoding:
    st.caption(":material/info: " + tr("decode_tokens", rows=", ".join(map(str, decoding[:12]))
                                       + (" …" if len(decoding) > 12 else "")))

step = eb.step
nkb = eb.num_kernel_blocks
token_place = st.container()   # "Follow one token" right under the batch; drawn below, once its fragment exists
# --- kernels on the live backend: once per batch (a token change reruns only the fragment below) ---
st.subheader(tr("kernels"))
key, fields = offsets.kernel_note(choice.version)   # the kernels' layout vs the release's
st.caption(tr(key, **fields))
label = ui.backend_label()
run_key = (S["batch.explored_key"], S["batch.layout"])
context_tokens = int(eb.requests["seq_len"].sum())
auto = context_tokens <= 4096
kernel_wait = None
if st.button(tr("run"), key="batch.run", icon=":material/play_arrow:") or (
        auto and S.get("batch.kernel_key") != run_key):
    from kvviz.gpu import harness as backend

    # timed on a GPU only: in the interpreter a timing repeats every kernel twice (3x the wait) for a
    # figure that says nothing about kernel speed. In the interpreter the check runs in the kernel
    # worker process while this run draws the rest of the page; its results fill this place at the end
    kernel_wait = ui.start_backend(backend.run_batch, step, layout=S["batch.layout"] or "NHD", dtype=cfg.dtype,
                                   num_kv_heads=cfg.num_kv_heads, head_dim=cfg.head_dim, num_blocks=nkb,
                                   timing=label["mode"] != "interpreter")
kernel_place = st.container()


def show_kernels():
    """The kernel check's result (waited for here when it was started in this run)."""
    if kernel_wait is not None:
        try:
            S["batch.kernel"] = kernel_wait()
        except (ValueError, RuntimeError) as e:
            S["batch.kernel"] = str(e)
        S["batch.kernel_key"] = run_key
    if S.get("batch.kernel_key") != run_key:
        st.info(tr("run_big", n=context_tokens))
        return
    res = S["batch.kernel"]
    if isinstance(res, str):
        st.error(tr("backend_error", msg=ui.plain(res)))
        return
    if res.passed:
        st.success(tr("all_pass", n=len(res.kernels)), icon=":material/check_circle:")
    else:
        st.error(tr("some_fail", msg=ui.plain("; ".join(res.failures()))), icon=":material/cancel:")
    timed = any(r["us"] is not None for r in res.rows())
    # the table holds the short fields; each kernel's detail (a long sentence) is listed under it,
    # wrapped, instead of a column cut at the table's edge
    krows = res.rows(ui.lang())
    ui.table(ex.kernel_table(krows, timed), {"kernel": tr("kcol_kernel"), "passed": tr("kcol_passed"),
                                              "max_error": tr("kcol_max_error"), "us": "µs"})
    st.caption(tr("kernel_details"))
    st.code("\n".join(f"{r['kernel']}: {r['detail']}" for r in krows), language=None, wrap_lines=True)
    if timed:
        note = tr("timing_interp") if label["mode"] == "interpreter" else tr("timing_gpu")
        st.caption(tr("timing_note", dev=ui.device_text(label), note=note))
    else:
        st.caption(tr("untimed", dev=ui.device_text(label)))


# --- the batch on W real DCP ranks (background processes) ---------------------------------------------
from ui import dcp as ui_dcp  # noqa: E402
from kvviz.views.dcp_ranks import batch_from_step  # noqa: E402

ui_dcp.run_on_ranks("batch", lambda s=step: batch_from_step(s), default_world=cfg.dcp_world_size,
                    num_kv_heads=cfg.num_kv_heads, head_dim=cfg.head_dim, dtype=cfg.dtype)

# --- the token follower: a fragment, so that picking a token (head, dim, K/V, layout family, a click
# in the slot mapping) reruns only this part, not the editor, the allocation and the kernels above.
# Everything it reads comes from the arguments of the last full run; what it sets (the token's
# widgets, the link) is only read inside it.
@st.fragment
def follow_token(eb, cfg, rows, choice):
    v2 = choice.runner == "v2"
    # --- pick a token ------------------------------------------------------------------------------
    n_tok = eb.step.num_tokens_padded
    S["batch.tok"] = min(int(S["batch.tok"]), n_tok - 1)
    S["batch.head"] = min(S["batch.head"], cfg.num_kv_heads - 1)
    S["batch.dim"] = min(S["batch.dim"], cfg.head_dim - 1)
    st.subheader(tr("pick"))
    if S["batch.family"] not in offsets.FAMILY_CHOICES:
        S["batch.family"] = offsets.AUTO
    release_layout = offsets.offset_layout(choice.version)
    p = st.columns([2.2, 1, 1, 1, 2.3])
    p[0].number_input(tr("token"), 0, n_tok - 1, key="batch.tok")
    p[1].number_input(tr("head"), 0, cfg.num_kv_heads - 1, key="batch.head")
    p[2].number_input(tr("dim"), 0, cfg.head_dim - 1, key="batch.dim")
    p[3].segmented_control(tr("kv"), ["k", "v"], key="batch.kv")
    # the option is the family's name (fits the box); what each one is, in the tooltip and the caption below;
    # "auto" names what the release allocates (LBNHC from v0.29.0), sent again on every run (ui.labels_follow)
    auto_label = tr("fam_auto", version=release_layout.version, family=release_layout.release_family)
    ui.labels_follow("batch.family")
    p[4].selectbox(tr("family"), offsets.FAMILY_CHOICES, key="batch.family",
                   format_func=lambda f: auto_label if f == offsets.AUTO else f,
                   help="\n\n".join(f"- {tr('fam_' + f)}" for f in CACHE_LAYOUTS))
    family = S["batch.family"]
    layout = offsets.offset_layout(choice.version, family)
    tok = int(S["batch.tok"])
    ch = offsets.chain(eb, layout, tok, int(S["batch.head"]), int(S["batch.dim"]), S["batch.kv"] or "k")
    m = [*st.columns(4), *st.columns(4)]   # two rows of four: labels and big numbers in full at 1280 px
    for col, (label, value) in zip(m, [("m_row", ch["row"]), ("m_pos", ch["position"]),
                                       ("m_logical", ch["logical_block"]), ("m_column", ch["column"]),
                                       ("m_physical", ch["physical_block"]), ("m_slot", ch["slot"]),
                                       ("m_nhd", ch.get("NHD_byte", "—")), ("m_hnd", ch.get("HND_byte", "—"))]):
        col.metric(tr(label), value)
    # the same numbers in full, copyable (a metric cuts a long one short: "slot 114…")
    names = {"row": "m_row", "position": "m_pos", "logical block": "m_logical", "column": "m_column",
             "physical block": "m_physical", "slot": "m_slot", "NHD byte": "m_nhd", "HND byte": "m_hnd"}
    st.code(ex.chain_line(ch, {k: tr(v) for k, v in names.items()} if ui.lang() != "en" else None),
            language=None, wrap_lines=True)
    for key, fields in offsets.whose(layout):
        st.caption(tr(key, **fields))
    if ch["slot"] >= 0:
        st.markdown(tr("chain_text", row=ch["row"], pos=ch["position"], lb=ch["logical_block"], tpb=eb.tokens_per_block,
                       col=ch["column"], pb=ch["physical_block"], kbs=cfg.kernel_block_size, off=ch["offset"],
                       slot=ch["slot"]))
        if v2:
            st.caption(tr("chain_v2", row=ch["row"], state=int(eb.v2["idx_mapping"][ch["row"]])))
    else:
        st.markdown(tr("pad_token", kind=ch["kind"]))

    # --- the three linked views -------------------------------------------------------------------------
    step = eb.step
    shown = eb.shown_columns()
    selected_cell = (ch["row"], ch["column"]) if ch["slot"] >= 0 else None
    rows_window = ex.table_row_window(step.block_table.shape[0], shown, ch["row"])
    # a table too big for one figure: a window of rows, and of columns, around the token's cell
    cols_window = ex.table_col_window(shown, ch["column"]) if rows_window is not None else None
    # each figure is built once per batch (and window, language) without the selection; a token
    # change adds only the selection on top (figures.*_selection: what the figure would add itself)
    lang = ui.lang()
    fig_table = ui.payload_once(eb, ("table", lang, v2, shown, rows_window, cols_window), lambda: figures.block_table_heatmap(
        step.block_table, num_reqs=step.num_reqs, num_blocks=eb.num_kernel_blocks, geometry=cfg.geometry,
        counts=eb.row_kernel_blocks(), title=tr("fig_table_v2" if v2 else "fig_table"), lang=lang,
        max_cols=shown, row_window=rows_window, col_window=cols_window,
        row_title=figures_tr("batch_position") if v2 else None))
    drawn_rows = rows_window or (0, step.block_table.shape[0])
    ui.plot(fig_table, "batch.tablefig", "block_table",
            overlay=figures.table_selection(selected_cell, rows=drawn_rows, cols=cols_window or (0, shown)))
    if cols_window is not None:
        st.caption(tr("table_cols_window", c0=cols_window[0], c1=cols_window[1] - 1, shown=shown, col=ch["column"]))
    elif shown < eb.width:
        st.caption(tr("table_cols", shown=shown - 1, width=eb.width))
    if rows_window is not None:
        st.caption(tr("table_rows", r0=rows_window[0], r1=rows_window[1] - 1, rows=step.block_table.shape[0],
                      row=ch["row"]))
    if v2:  # Model Runner V2: the same ids by request-state index, and the idx_mapping the gather used
        tables = eb.v2
        state_row = int(tables["idx_mapping"][ch["row"]]) if ch["slot"] >= 0 else None
        state_window = ex.table_row_window(tables["state_block_table"].shape[0], shown,
                                           state_row if state_row is not None else 0)
        t_state, t_idx = st.columns([2, 1], gap="medium")
        with t_state:
            state_cols = ex.table_col_window(shown, ch["column"]) if state_window is not None else None
            fig_state = ui.payload_once(eb, ("state", lang, shown, state_window, state_cols), lambda: (
                figures.block_table_heatmap(
                    tables["state_block_table"], num_reqs=tables["state_block_table"].shape[0],
                    num_blocks=eb.num_kernel_blocks, geometry=cfg.geometry, counts=tables["state_num_blocks"],
                    title=tr("fig_state_v2"), lang=lang, max_cols=shown, row_window=state_window,
                    row_title=figures_tr("state_index"), col_window=state_cols,
                    row_names=[tr("held_by", row=b) if b is not None else "" for b in eb.state_holders()])))
            ui.plot(fig_state, "batch.statefig", "state_block_table", overlay=figures.table_selection(
                (state_row, ch["column"]) if state_row is not None else None,
                rows=state_window or (0, tables["state_block_table"].shape[0]), cols=state_cols or (0, shown)))
        with t_idx:
            idx_frame = eb.idx_mapping_frame()
            idx_cols = {"batch position": "icol_position", "state index": "icol_state", "num_blocks": "icol_blocks"}
            st.markdown(f"**{tr('idx_title')}**", help="\n".join(f"- **{tr(k)}**: {tr(k + '_help')}"
                                                              for k in idx_cols.values()))
            if frames.fits_static(idx_frame):
                ui.table(idx_frame, {c: tr(k) for c, k in idx_cols.items()})
            else:
                st.dataframe(idx_frame, hide_index=True, height=min(360, 38 + 35 * step.num_reqs),
                             column_config={c: st.column_config.NumberColumn(tr(k), help=tr(k + "_help"))
                                            for c, k in idx_cols.items()})
        st.caption(tr("v2_note", r=step.num_reqs_padded, idx=ex.short_list(tables["idx_mapping"])))

    fig_slots = ui.payload_once(eb, ("slots", lang), lambda: figures.slot_mapping_figure(
        eb.tokens, num_reqs=step.num_reqs, title=tr("fig_slots"), lang=lang))
    ui.plot(fig_slots, "batch.slotfig", "slot_mapping", on_select=on_pick_token,
            overlay=figures.slot_selection(eb.tokens, tok, lang))

    nkb = eb.num_kernel_blocks
    first, last = eb.buffer_window(ch["physical_block"] if ch["slot"] >= 0 else None)
    fig_buf = ui.payload_once(eb, ("buffer", lang, first, last), lambda: figures.slot_buffer_figure(
        eb.slot_owners(first, last), geometry=cfg.geometry, num_reqs=step.num_reqs, title=tr("fig_buffer"), lang=lang))
    ui.plot(fig_buf, "batch.buffig", "slot_buffer", overlay=figures.buffer_selection(
        ch["slot"], geometry=cfg.geometry, first_block=first, num_blocks=last - first + 1))
    if last - first + 1 < nkb:
        st.caption(tr("buffer_window", a=first, b=last, n=nkb))

    # --- downloads and the link ---------------------------------------------------------------------------
    st.subheader(tr("downloads"))
    d = [*st.columns(3, gap="small"), *st.columns(3, gap="small")]   # labels in full at 1280 px
    with d[0]:
        ui.download_csv(eb.tokens, "tokens", "batch.dl_tokens", ui.texts("downloads")("tokens CSV"))
    with d[1]:
        ui.download_csv(eb.requests, "requests", "batch.dl_reqs", ui.texts("downloads")("requests CSV"))
    with d[2]:
        ui.download_json(lambda: eb.to_json(choice.runner), "step", "batch.dl_step", ui.texts("downloads")("step JSON"))
    with d[3]:
        ui.download_fig(fig_table, "block_table", "batch.dl_fig_table", ui.texts("downloads")("table HTML"))
    with d[4]:
        ui.download_fig(fig_slots, "slot_mapping", "batch.dl_fig_slots", ui.texts("downloads")("slots HTML"))
    with d[5]:
        ui.download_fig(fig_buf, "slot_buffer", "batch.dl_fig_buf", ui.texts("downloads")("buffer HTML"))
    params = {**share.encode_batch(rows, cfg, tok), **share.encode_version_runner(S["batch.vllm"], S["batch.runner"])}
    if family != offsets.AUTO:
        params["cache_layout"] = family
    params = links.write(share.batch_token_fields(), params)   # with head, dim, K/V, NHD/HND and the language
    st.caption(tr("link"))
    st.code(share.query_string(params), language=None)
    lost = share.link_losses(rows)
    if lost:
        st.warning(tr("link_lossy", groups=ui.plain(", ".join(lost.get("dropped_groups", []))) or "—",
                      cut=lost.get("rows_cut", 0), max=share.MAX_SHARED_REQS), icon=":material/link_off:")
    ui.keep(*[f"batch.{k}" for k in WIDGETS])


with token_place:
    follow_token(eb, cfg, rows, choice)
with kernel_place:   # the kernel check's place above, filled last: it ran while the page was drawn
    show_kernels()
ui.keep(*[f"batch.{k}" for k in WIDGETS])
