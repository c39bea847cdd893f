"""Captured runs: a run that kvviz's vLLM plugin recorded from a real engine, opened from the folder the
operator named (KVVIZ_RUNS_DIR) or from an uploaded zip; the checker's verdict on the whole run; then
step by step, the block table with its request ids, the slot mapping, one token followed, the step's
events and findings."""
import hashlib

import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.constants import NULL_BLOCK_ID
from kvviz.errors import BadInput
from kvviz.views import links as share
from kvviz.views import run_step as stepview
from kvviz.views import runs as view

tr = ui.texts("runs")
S = st.session_state
UPLOAD_STATE = ["runs.upload"]      # the parsed upload: dropped when another page runs


@st.cache_resource(max_entries=16, ttl=3600, show_spinner=False)
def dir_run(path: str, signature: tuple):
    """A run folder, read once for every session while it is unchanged (its steps load lazily)."""
    return view.open_dir_run(path)


@st.cache_data(max_entries=4096, ttl=3600, show_spinner=False)
def checked_chunk(key: str, i0: int, i1: int, _run):
    """The bad step reports of steps [i0, i1) of the run ``key`` names (a folder and its times, or an
    upload's digest): checked once per server."""
    return view.check_chunk(_run, i0, i1)


# --- opening a run: the operator's folder, an upload, a link -----------------------------------------

def uploader_key() -> str:
    return f"runs.up{S.get('runs.up_n', 0)}"


def opened(kind: tuple) -> None:
    """A run was opened: it replaces the one before; its first step is shown."""
    S["runs.open"] = kind
    S.pop("runs.error", None)
    S.pop("runs.link_errors", None)
    for k in ("runs.step", "runs.step.kept", "runs.step_want", "runs.group", "runs.follow_req", "runs.follow_pos"):
        S.pop(k, None)


def refuse(msg: str) -> None:
    """One error; the run open before stays, and the uploader is emptied (it must not name the
    refused file as if it were open)."""
    S["runs.error"] = msg
    S["runs.up_n"] = S.get("runs.up_n", 0) + 1
    S.pop("runs.up_seen", None)


def take_upload() -> None:
    """Read a newly uploaded zip (its size bounded before its bytes are read) and open it, or refuse it."""
    up = S.get(uploader_key())
    if up is None:
        if S.pop("runs.up_seen", None) is not None and S.get("runs.open", ("",))[0] == "upload":
            S.pop("runs.open", None)          # the user removed the open upload: it closes
            ui.drop(UPLOAD_STATE)
        return
    if getattr(up, "file_id", None) == S.get("runs.up_seen"):
        return
    if up.size > view.MAX_UPLOAD_BYTES:
        refuse(f"{up.name} is {up.size / (1 << 20):.1f} MiB; an upload may be "
               f"{view.MAX_UPLOAD_BYTES >> 20} MiB at most")
        return
    data = up.getvalue()
    try:
        run = view.open_upload(data, up.name)
    except BadInput as e:
        refuse(str(e))
        return
    digest = hashlib.sha256(data).hexdigest()
    S["runs.upload"] = {"run": run, "name": up.name, "key": f"up:{digest}"}
    S["runs.up_seen"] = up.file_id
    S["runs.pick"] = S["runs.pick_done"] = None
    opened(("upload", digest))


def take_pick(root, names) -> None:
    """Open the run picked in the server's list (when the pick changed)."""
    pick = S.get("runs.pick")
    if pick is None or pick == S.get("runs.pick_done"):
        return
    S["runs.pick_done"] = pick
    try:
        path = view.run_path(root, pick)
        dir_run(path, view.dir_signature(path))
    except BadInput as e:
        refuse(str(e))
        return
    ui.drop(UPLOAD_STATE)
    S["runs.up_n"] = S.get("runs.up_n", 0) + 1        # the uploader no longer names an open run
    S.pop("runs.up_seen", None)
    opened(("dir", pick))


def read_link(names) -> None:
    """On the page's first visit in this session: a link's ``run`` (a name the server offers) and
    ``step``; what it refuses is one error."""
    if S.get("runs.link_read"):
        return
    S["runs.link_read"] = True
    name, step, errors = view.decode_run_link(st.query_params, names)
    if name is not None:
        opened(("dir", name))
        S["runs.pick"] = S["runs.pick_done"] = name
        S["runs.step_want"] = step
    if errors:
        S["runs.link_errors"] = errors


def sources(root, names) -> None:
    """The server's runs (by name) and the uploader, side by side."""
    if S.get("runs.open", ("",))[0] == "dir" and "runs.pick" not in S:   # widgets are forgotten off the page
        S["runs.pick"] = S["runs.pick_done"] = S["runs.open"][1]
    left, right = st.columns(2, gap="large")
    with left:
        if names:
            st.selectbox(tr("pick"), names, index=None, key="runs.pick", placeholder=tr("pick_placeholder"),
                         help=tr("pick_help"))
        else:
            st.caption(tr("no_dir") if root is None else tr("empty_dir"))
    with right:
        mib = max(1, view.MAX_UPLOAD_BYTES >> 20)      # the widget refuses a bigger file before sending it
        st.file_uploader(tr("upload"), type=["zip"], key=uploader_key(), max_upload_size=mib,
                         help=tr("upload_help", mb=mib))


def current(root):
    """(run, cache key, shown name, kind) of the open run, or None."""
    kind = S.get("runs.open")
    if not kind:
        return None
    if kind[0] == "upload":
        up = S.get("runs.upload")
        return (up["run"], up["key"], up["name"], "upload") if up else None
    try:
        path = view.run_path(root, kind[1])
        sig = view.dir_signature(path)
        return dir_run(path, sig), f"dir:{path}:{sig}", kind[1], "dir"
    except BadInput as e:
        st.error(tr("bad_run", msg=ui.plain(e)), icon=":material/error:")
        S.pop("runs.open", None)
        return None


def notes(run_label) -> None:
    """The one error of the last refused input or link, and which run stays open."""
    errors = ([tr("bad_upload", msg=ui.plain(S["runs.error"]))] if "runs.error" in S else []) + \
             [tr("bad_link", msg=ui.plain(e)) for e in S.get("runs.link_errors", [])]
    if errors:
        kept = tr("still_open", name=ui.plain(run_label)) if run_label else tr("none_open")
        st.error("  \n".join([*errors, kept]), icon=":material/error:")


def how_to_open() -> None:
    st.caption(":material/info: " + tr("shows_none"))
    st.info(tr("none_open"), icon=":material/folder_open:")
    st.subheader(tr("how_title"))
    st.markdown(tr("how"))
    st.code(view.CAPTURE_RECIPE, language="bash")
    st.query_params.from_dict({"lang": ui.lang()})


# --- the run as a whole ------------------------------------------------------------------------------

def manifest(run) -> None:
    engine, knobs = view.manifest_frames(run, ui.lang())
    for col, title, frame in zip(st.columns(2, gap="large"), ("engine", "knobs"), (engine, knobs)):
        col.markdown(f"**{tr(title)}**")
        col.dataframe(frame, hide_index=True, width="stretch", key=f"runs.manifest_{title}")
    st.caption(tr("captured", **view.capture_numbers(run)))


def run_verdict(run, key: str, rules) -> dict:
    """The checker's verdict on every step, chunk by chunk (cached per run), a progress bar between."""
    spans = view.chunks(len(run.steps))
    bar = st.empty() if len(spans) > 1 else None
    bad = []
    for k, (i0, i1) in enumerate(spans):
        if bar is not None:
            bar.progress(k / len(spans), text=tr("checking", done=i0, n=len(run.steps)))
        bad += checked_chunk(key, i0, i1, run)
    if bar is not None:
        bar.empty()
    vd = view.verdict(bad, len(run.steps))
    if vd["clean"]:
        st.success(tr("verdict_clean", n=vd["steps"], v=rules.name), icon=":material/check_circle:")
    else:
        st.warning(tr("verdict_bad" if vd["row"] is not None else "verdict_bad_norow", k=vd["bad_steps"], n=vd["steps"],
                      v=rules.name, **{k: vd[k] for k in ("step", "group", "row", "check")}),
                   icon=":material/report:")
    return vd


# --- one step ------------------------------------------------------------------------------------------

def go(step: int) -> None:
    S["runs.step"] = step


def jump(step: int) -> None:
    """To the first wrong step, following its first wrong row's newest token."""
    S["runs.step"] = step
    S.pop("runs.follow_req", None)
    S.pop("runs.follow_pos", None)


def from_box(steps) -> None:
    S["runs.step"] = view.snap_step(steps, int(S["runs.step_box"]))


def navigation(steps, vd) -> int:
    """Previous / Next / First wrong step, the slider and the step box; returns the step shown."""
    want = S.pop("runs.step_want", None)
    if want is not None:
        S["runs.step"] = view.snap_step(steps, want)
        if S["runs.step"] != want:
            st.warning(tr("link_snapped", step=want, shown=S["runs.step"]), icon=":material/link_off:")
    cur = view.snap_step(steps, int(S.get("runs.step", S.get("runs.step.kept", steps[0]))))
    S["runs.step"] = S["runs.step_box"] = cur
    i = steps.index(cur)
    with st.container(horizontal=True):    # buttons as wide as their words, in every language
        st.button(tr("back"), icon=":material/skip_previous:", on_click=go, args=(steps[max(i - 1, 0)],),
                  key="runs.back", disabled=i == 0)
        st.button(tr("next"), icon=":material/skip_next:", on_click=go, args=(steps[min(i + 1, len(steps) - 1)],),
                  key="runs.next", disabled=i == len(steps) - 1)
        st.button(tr("jump"), icon=":material/report:", on_click=jump, args=(vd.get("step", cur),), key="runs.jump",
                  disabled=vd["clean"] or vd.get("step") == cur)
    nav = st.columns([5, 1], vertical_alignment="bottom")
    if len(steps) > 1:
        nav[0].slider(tr("step"), steps[0], steps[-1], step=view.step_stride(steps), key="runs.step")
    nav[1].number_input(tr("step_box"), steps[0], steps[-1], key="runs.step_box", on_change=from_box, args=(steps,))
    S["runs.step.kept"] = cur
    return cur


def follow_request(ids) -> None:
    """A request picked to follow: kept by its id from step to step, from its newest token."""
    row = S["runs.follow_row"]
    S["runs.follow_req"] = ids[row] if row < len(ids) else None
    S.pop("runs.follow_pos", None)


def follow_widgets(d, ids, wrong) -> dict | None:
    """The request (kept by its id from step to step) and the token position to follow."""
    st.subheader(tr("follow"))
    if d.num_reqs == 0:
        st.caption(tr("no_requests"))
        return None
    rows = list(range(d.num_reqs))
    want = S.get("runs.follow_req")
    default = wrong[0] if wrong and wrong[0] < d.num_reqs else 0      # first look: the first wrong row
    S["runs.follow_row"] = next((r for r in rows if r < len(ids) and ids[r] == want and want is not None), default)
    st.selectbox(tr("follow_request"), rows, key="runs.follow_row", on_change=follow_request, args=(ids,),
                 format_func=lambda r: f"{r}: {ids[r]}"[:60] if r < len(ids) else str(r))
    row = S["runs.follow_row"]
    last = max(stepview.row_length(d, row) - 1, 0)
    if S.get("runs.follow_req") != (ids[row] if row < len(ids) else None) or "runs.follow_pos" not in S:
        S["runs.follow_pos"] = last                      # a new request: its newest token
    S["runs.follow_pos"] = min(max(int(S["runs.follow_pos"]), 0), last)
    st.number_input(tr("follow_position"), 0, last, key="runs.follow_pos", help=tr("follow_position_help", last=last))
    S["runs.follow_req"] = ids[row] if row < len(ids) else None
    return stepview.follow(d, row, int(S["runs.follow_pos"]))


def follow_chain(picked: dict) -> None:
    """The token's way through the table in one line (numbers the page computed), then what it means."""
    parts = [("chain_logical", picked["logical_block"]), ("chain_column", picked["column"]),
             ("chain_physical", picked["physical_block"]), ("chain_offset", picked["offset"]),
             ("chain_slot", picked["slot"])]
    st.markdown(" → ".join(f"{tr(k)} **{'—' if v is None else int(v)}**" for k, v in parts))
    if picked["physical_block"] == NULL_BLOCK_ID:
        st.caption(tr("null_block"))
    if not picked["local"]:
        st.caption(tr("other_rank"))
    elif not picked["counted"]:
        st.caption(tr("not_counted", n=picked["row_blocks"], b=picked["logical_block"]))
    if picked["token"] is None:
        st.caption(tr("not_written"))
    elif picked["captured_slot"] == picked["slot"]:
        st.caption(tr("written", t=picked["token"], s=picked["captured_slot"]))
    else:
        st.caption(tr("written_differs", t=picked["token"], s=picked["captured_slot"], want=picked["slot"]))


def findings(rep) -> list[int]:
    """What the checker finds at this step (this group): a table, then each message; the wrong rows."""
    st.subheader(tr("findings"))
    wrong = view.wrong_rows(rep)
    if rep is None or (not rep.findings and not rep.error):
        st.success(tr("findings_none"), icon=":material/check_circle:")
        return wrong
    n = len(rep.findings) + bool(rep.error)
    st.warning(tr("findings_some", k=n, rows=", ".join(map(str, wrong)) or tr("no_rows")), icon=":material/report:")
    st.dataframe(view.findings_frame(rep, ui.lang()), hide_index=True, width="stretch", key="runs.findings")
    # the checker's own sentences (numbers from the dump, kvviz's words) in full, one a line
    lines = [f"- `{f.check}` · " + tr("finding_line", row="—" if f.row is None else f.row,
                                      msg=ui.plain(f.text(ui.lang())))
             for f in sorted(rep.findings, key=lambda f: f.sort_key())[:view.MAX_MESSAGES]]
    if lines:
        st.markdown("\n".join(lines))
    if rep.error:      # the capture's own words (or the reader's): text, never markdown
        st.text(str(rep.error)[:view.MAX_ERROR_CHARS])
    return wrong


def figures(d, ids, wrong, picked) -> None:
    st.markdown(f"**{tr('table_v2' if d.is_v2 else 'table')}**")
    fig, rows, cols = stepview.block_table_figure(d, ids, wrong, picked, ui.lang(), tr("flagged"))
    ui.plot(fig, "runs.tablefig", "block_table")
    st.caption(tr("table_caption"))
    if rows != (0, d.rows) or cols[0] > 0:
        st.caption(tr("table_window", r0=rows[0], r1=rows[1] - 1, c0=cols[0], c1=cols[1] - 1, rows=d.rows,
                      width=d.width))
    st.markdown(f"**{tr('slots')}**")
    slots = stepview.slot_mapping_figure(d, ids, picked, ui.lang())
    if slots is None:
        st.caption(tr("no_slots"))
        return
    ui.plot(slots, "runs.slotfig", "slot_mapping")
    st.caption(tr("slots_caption"))


def shaded(frame, wrong):
    """The rows table with the checker's wrong rows shaded."""
    def style(row):
        return ["background-color: #fde2e2" if row.name in wrong else "" for _ in row]
    return frame.style.apply(style, axis=1)


def events(run, step: int, meta: dict) -> None:
    """Arrivals, preemptions, finishes and aborts at this step, by request id (the page's width:
    the scheduler's sentences are long)."""
    st.subheader(tr("events"))
    frame = view.events_frame(run, step, meta, ui.lang())
    if len(frame):
        st.dataframe(frame, hide_index=True, width="stretch", key="runs.events")
    else:
        st.caption(tr("events_none"))


def load_step(run, step: int):
    """(meta, dumps, reports) of ``step``, or None after one error (the step cannot be read)."""
    try:
        return run.meta(step), run.dumps(step), view.step_reports(run, step)
    except BadInput as e:
        st.error(tr("bad_step", msg=ui.plain(e)), icon=":material/error:")
        return None


@st.fragment
def stepper(run, label: str, kind: str, vd: dict) -> None:
    """Everything one step shows: Previous / Next / the slider rerun only this part of the page."""
    step = navigation(run.steps, vd)
    params = view.encode_run_link(label, step, ui.lang()) if kind == "dir" else {"lang": ui.lang()}
    st.query_params.from_dict(params)
    got = load_step(run, step)
    if got is None:
        return
    meta, dumps, reports = got
    g = 0
    if len(dumps) > 1:
        S["runs.group"] = min(int(S.get("runs.group", 0)), len(dumps) - 1)
        g = st.selectbox(tr("group"), list(range(len(dumps))), key="runs.group",
                         format_func=lambda i: tr("group_option", g=i))
    d, rep = dumps[g], next((r for r in reports if r.group == g), None)
    if d is None:
        st.info(tr("no_dump"), icon=":material/info:")
        findings(rep)
        return
    ids = [str(x) for x in (meta.get("req_ids") or [])]
    st.info(tr("step_info", step=step, i=run.steps.index(step) + 1, n=len(run.steps), reqs=d.num_reqs,
               rpad=d.padded_reqs, tok=d.num_tokens if d.num_tokens is not None else "—",
               tpad=len(d.slot_mapping) if d.slot_mapping is not None else "—"), icon=":material/info:")
    wrong = findings(rep)
    events(run, step, meta)
    left, right = st.columns([3, 2], gap="large")
    with right:
        picked = follow_widgets(d, ids, wrong)
        if picked is not None:
            follow_chain(picked)
    with left:
        figures(d, ids, wrong, picked)
    st.subheader(tr("rows"))
    st.dataframe(shaded(view.rows_frame(meta, d, rep, g, ui.lang()), wrong), hide_index=True,
                 width="stretch", key="runs.rows")
    st.caption(tr("rows_caption"))
    if kind == "dir":
        st.caption(tr("link"))
        st.code(share.query_string(params), language=None)
    else:
        st.caption(tr("no_link", step=step))


def main() -> None:
    root = view.runs_root()
    names = view.list_runs(root)
    ui.own_while_shown("runs.py", UPLOAD_STATE)
    read_link(names)
    take_upload()
    take_pick(root, names)
    st.title(tr("title"))
    st.markdown(tr("intro"))
    sources(root, names)
    got = current(root)
    notes(got[2] if got else None)
    if got is None:
        how_to_open()
        return
    run, key, label, kind = got
    rules = view.rules_of(run)
    st.markdown(tr("open_dir" if kind == "dir" else "open_upload", name=ui.plain(label)))
    ui.shows([(rules.name, run.runner)])
    vd = run_verdict(run, key, rules)
    manifest(run)
    if run.steps:
        stepper(run, label, kind, vd)


main()
