"""Debug dumps: one or two dumps (an injected bug, two simulator steps, examples, your own files),
what the checker finds (the first wrong row first), the tables side by side, where they differ."""
import time

import streamlit as st

import ui

ui.ensure_app_shell()
from kvviz.views import dumps as view
from kvviz.views import frames
from kvviz.errors import BadInput
from kvviz.views import links as share
from ui import links

tr = ui.texts("dumps")
lang = ui.lang()
S = st.session_state
EXAMPLES = view.example_names()
SIM = view.sim_sources()
WIDGETS = view.widget_defaults()
ui.restore({f"dumps.{k}": default for k, default in WIDGETS.items()})  # widgets are forgotten off the page
links.sync("dumps", share.dumps_fields())   # the page's choices in its link (never an upload's content)


# Parsed uploads (and their digests, names, errors) live in this session's state only while the
# page shows them: leaving the "upload" source or this page drops them (at most two per session).
UPLOAD_STATE = [f"dumps.{k}_{s}" for k in ("up_dump", "up_name", "digest", "err", "err_name", "pasted", "cleared")
                for s in "ab"]


def keep():
    ui.keep(*[f"dumps.{k}" for k in WIDGETS])


def wait_turn(side: str) -> None:
    """A big input waits for this tab's turn (``view.big_input_wait``), the page saying so; each
    update of the note lets a newer paste or click supersede the waiting one."""
    note = None
    while (left := view.big_input_wait(S.get("dumps.big_read"), time.monotonic())) > 0:
        note = note or st.empty()
        note.caption(tr("big_wait", side=side, s=f"{left:.1f}"))
        time.sleep(min(0.25, left))
    if note is not None:
        note.empty()


def load_side(side: str, data: bytes, name: str) -> None:
    """Parse an upload or paste once per content; a bad one leaves the dump loaded before."""
    s = side.lower()
    digest = view.content_digest(data)
    if S.get(f"dumps.digest_{s}") != digest:
        big = len(data) >= ui.OFF_THREAD_BYTES
        if big:
            wait_turn(side)
        dump, error = ui.read_upload(data, name)     # a big one in the shared worker process
        if big:   # kept across sources (not in UPLOAD_STATE): leaving the page does not skip the wait
            S["dumps.big_read"] = (time.monotonic(), len(data))
        if error is None:
            S[f"dumps.up_dump_{s}"], S[f"dumps.up_name_{s}"] = dump, name
            S.pop(f"dumps.err_{s}", None)
        else:   # the previous dump stays (its results say so); the error names the refused file
            S[f"dumps.err_{s}"], S[f"dumps.err_name_{s}"] = error, name
        S[f"dumps.digest_{s}"] = digest   # parsed (or refused) once per content


def side_notes(side: str) -> None:
    """What the side's last input left: its error (the dump loaded before stays), a cleared paste."""
    s = side.lower()
    if f"dumps.err_{s}" in S:
        st.error(view.refusal_text(side, S.get(f"dumps.err_name_{s}", ""), S[f"dumps.err_{s}"], lang),
                 icon=":material/error:")
        if S.get(f"dumps.up_dump_{s}") is not None:
            st.caption(tr("kept_previous", name=ui.plain(S[f"dumps.up_name_{s}"])))
    if S.get(f"dumps.cleared_{s}"):
        st.caption(tr("paste_cleared", mb=f"{S[f'dumps.cleared_{s}'] / 1e6:.1f}"))


def heading(side: str, name: str) -> None:
    """A dump's name over its results; an upload shown while a newer one was refused says so."""
    st.markdown(f"**{tr('side_name', side=side, name=ui.plain(name))}**")
    s = side.lower()
    if S.get("dumps.source") == "upload" and f"dumps.err_{s}" in S:
        st.caption(tr("results_of", name=ui.plain(name), refused=ui.plain(S.get(f"dumps.err_name_{s}", ""))))


st.title(tr("title"))
st.markdown(tr("intro"))
st.radio(tr("source"), view.SOURCES, format_func=lambda s: tr("src." + s), horizontal=True, key="dumps.source")
source = S["dumps.source"]
if source == "upload":
    ui.own_while_shown("dumps.py", UPLOAD_STATE)
else:   # the uploader and the paste boxes are not drawn: what they held goes
    ui.drop(UPLOAD_STATE)

# --- the dumps: [(side, name, dump)] ----------------------------------------------------------------
try:
    if source == "bug":
        st.selectbox(tr("bug"), list(view.BUGS), format_func=lambda b: tr("bug." + b), key="dumps.bug")
        bug = view.BUGS[S["dumps.bug"]]
        st.markdown(tr("bugdesc." + bug.id))
        st.caption(tr("bug_pair", step=bug.step))
        a, b = view.bug_dumps(bug.id)
        dumps = [("A", tr("name_clean"), a), ("B", tr("name_bug", title=tr("bug." + bug.id)), b)]
    elif source == "sim":
        c = st.columns(2)
        c[0].selectbox(tr("scenario"), list(SIM), format_func=SIM.get, key="dumps.sim_sc")
        c[1].selectbox(tr("fault"), view.FAULT_OPTIONS, format_func=lambda f: tr("fault." + f),
                       key="dumps.fault")
        sc, fault = S["dumps.sim_sc"], view.fault_of(S["dumps.fault"])
        n = view.sim_step_count(sc, fault)
        groups = view.sim_groups(sc)
        for k in ("step_a", "step_b"):
            S[f"dumps.{k}"] = view.clamp_step(S[f"dumps.{k}"], n)
        S["dumps.group"] = view.kept_choice(S["dumps.group"], groups)
        c = st.columns([1, 1, 2, 3])
        c[0].number_input(tr("step_a"), 0, n - 1, key="dumps.step_a")
        c[1].number_input(tr("step_b"), 0, n - 1, key="dumps.step_b")
        if len(groups) > 1:
            c[2].selectbox(tr("group"), list(groups), format_func=groups.get, key="dumps.group")
        c[3].toggle(tr("a_healthy"), key="dumps.a_healthy", disabled=fault is None)
        st.caption(tr("sim_help", n=n, last=n - 1))
        pair = view.sim_pair(sc, fault, (S["dumps.step_a"], S["dumps.step_b"]), S["dumps.group"],
                             S["dumps.a_healthy"])
        dumps = [(side, tr("name_step_fault", i=i, fault=f) if f else tr("name_step", i=i), d)
                 for side, i, f, d in pair]
    elif source == "examples":
        c = st.columns(2)
        c[0].selectbox(tr("dump_a"), EXAMPLES, key="dumps.ex_a")
        c[1].selectbox(tr("dump_b"), EXAMPLES, key="dumps.ex_b")
        dumps = [(side, S[f"dumps.ex_{side.lower()}"], view.load_example(S[f"dumps.ex_{side.lower()}"]))
                 for side in "AB"]
    else:
        for side, col in zip("AB", st.columns(2)):
            with col:
                up = st.file_uploader(tr("upload", side=side), type=["npz", "json"], key=f"dumps.up_{side.lower()}")
                # a big paste is taken out of its box once read; the callback is ui's: one defined in this
                # script would keep this run (the paste, the parsed dumps) alive as long as the session
                text = st.text_area(tr("paste", side=side), key=f"dumps.paste_{side.lower()}", height=120,
                                    on_change=ui.take_paste, args=("dumps", side.lower(), view.CLEAR_PASTE_BYTES))
                taken = S.pop(f"dumps.pasted_{side.lower()}", None)     # a big paste, read this run only
                if up is not None:
                    data, name = up.getvalue(), up.name
                else:
                    data, name = (taken if taken is not None else text.encode()), tr("pasted")
                    if text.strip():   # a small paste in the box: no note about an earlier big one
                        S.pop(f"dumps.cleared_{side.lower()}", None)
                    elif taken is None and not S.get(f"dumps.cleared_{side.lower()}"):
                        S.pop(f"dumps.err_{side.lower()}", None)   # the box emptied: its error goes too
                if up is not None or data.strip():
                    load_side(side, data, name)
                side_notes(side)
        dumps = [(side, S[f"dumps.up_name_{side.lower()}"], S[f"dumps.up_dump_{side.lower()}"])
                 for side in "AB" if S.get(f"dumps.up_dump_{side.lower()}") is not None]
except BadInput as e:
    st.error(tr("bad_scenario", msg=ui.plain(e)), icon=":material/error:")
    keep()
    st.stop()

if not dumps:
    ui.shows(what="shows_dumps")
    st.info(tr("give_dumps"), icon=":material/upload_file:")
    keep()
    st.stop()
if len(dumps) == 1:
    st.info(tr("only_one"), icon=":material/info:")
ui.version_select(st, tr("profile"), view.PROFILE_CHOICES, "dumps.profile", help=tr("profile_help"),
                  format_func=lambda p: view.profile_label(p, lang))
profiles = {side: view.check_profile(d, S["dumps.profile"]) for side, _, d in dumps}
ui.shows([(profiles[side].name, d.runner or "v1") for side, _, d in dumps])
found = {side: view.check_dump(d, S["dumps.profile"]) for side, _, d in dumps}

# --- what the checker finds: the first wrong row on top, then every finding and its concept --------
st.subheader(tr("findings"))
for col, (side, name, d) in zip(st.columns(len(dumps)), dumps):
    with col:
        heading(side, name)
        st.caption(tr("checked_under", profile=profiles[side].name))
        f = found[side]
        if not f:
            st.success(tr("clean", n=len(view.applicable(d, S["dumps.profile"]))), icon=":material/check_circle:")
            continue
        first = view.first_finding(f)
        st.error(tr("first_wrong" if first.row is not None else "no_row", row=first.row, check=first.check,
                    msg=first.text(lang)) + "  \n" + tr("n_findings", n=len(f)), icon=":material/error:")
for side, name, d in dumps:
    f = found[side]
    if not f:
        continue
    st.markdown(f"**{tr('findings_of', side=side, name=ui.plain(name))}**")
    # an HTML table: the long messages wrap at the page's width (a data grid cut them off)
    shown = view.findings_table(f, lang, {k: tr("col_" + k) for k in view.FINDING_TABLE_COLUMNS})
    with st.container(height=min(440, 60 + 90 * len(shown)) if len(shown) > 4 else "content", border=False):
        st.table(shown)
    if len(shown) < len(f):
        st.caption(tr("findings_cut", shown=len(shown), n=len(f)))
    concepts = list(view.concepts_of(f, lang).values())
    for col, concept in zip(st.columns(len(concepts)), concepts):
        with col.expander(tr("concept_label", name=concept["name"]), icon=":material/school:"):
            st.markdown(concept["text"])
            st.markdown(tr("checks_fired"))
            st.markdown(view.concept_checks_markdown(concept["checks"], lang))

# --- the tables side by side -------------------------------------------------------------------------
st.subheader(tr("tables"))
st.caption(tr("legend"))
st.segmented_control(tr("table"), view.TABLES, format_func=lambda x: tr("table." + x), key="dumps.table")
table = view.table_choice(S["dumps.table"])
size = view.shown_size([d for _, _, d in dumps], table)
zero = view.hidden_columns_are_zero([d for _, _, d in dumps], table, size[1])
rows = cols = None   # the whole shown part, or (by default, when it is big) a window around the first wrong row
if size[0] > view.WINDOW_ROWS or size[1] > view.WINDOW_COLS:
    st.toggle(tr("all_rows", n=size[0], w=size[1]), key="dumps.all_rows",
              help=tr("all_rows_help", r=view.WINDOW_ROWS, c=view.WINDOW_COLS))
    if not S["dumps.all_rows"]:
        rows, cols = view.focus_window(dumps, found, table, size)
        st.caption(tr("window_rows", r0=rows[0], r1=rows[1] - 1, c0=cols[0], c1=cols[1] - 1, n=size[0], w=size[1]))
for col, (side, name, d) in zip(st.columns(len(dumps)), dumps):
    frame = view.table_frame(d, table, view.first_wrong_row(found[side]), size)
    with col:
        heading(side, name)
        st.caption(tr("rows_caption", live=d.num_reqs, rows=d.rows, padded=d.padded_reqs, width=d.width))
        if frame is None:
            st.write(tr("no_table"))
            continue
        marks = view.cell_marks(d, table, view.other_dump(dumps, side), size)
        n_rows = len(frame) if rows is None else rows[1] - rows[0]
        st.dataframe(view.window(frame, marks, rows, cols), key=f"dumps.table_{side}", height=view.frame_height(n_rows, 600))
        cut = view.cut_counts(frame, d, table)
        if cut:
            st.caption(tr("shown_zero" if zero else "shown", **cut))
        stale = view.stale_rows_text(d)
        if stale:
            st.caption(tr("stale_rows", rows=stale))

# --- where they differ ----------------------------------------------------------------------------------
res = view.diff_pair(dumps)
if res is not None:
    st.subheader(tr("differences"))
    if res.equal:
        st.success(tr("equal"), icon=":material/check_circle:")
    else:
        for side, tables in view.only_in(res):
            st.caption(tr("only_in", side=side, tables=tables))
        if res.differences:
            st.caption(tr("n_diff", n=len(res.differences)))
            diff = frames.no_none(view.diff_frame(res))      # a cell a difference has no value for: "—"
            diff = diff.astype({c: str for c in diff.columns if diff[c].dtype == object})   # one type a column
            st.dataframe(diff, hide_index=True, key="dumps.diff",
                         height=view.frame_height(len(res.differences), 500),
                         column_config={k: tr("col_" + k) for k in ("table", "row", "col", "token", "index", "a", "b")})

# --- downloads -------------------------------------------------------------------------------------------
st.subheader(tr("downloads"))
st.caption(tr("dl_help"))
with st.container(horizontal=True):
    for side, _, d in dumps:
        ui.download_json(lambda f=found[side], p=profiles[side]: view.findings_json(f, p), f"findings_{side}",
                         f"dumps.dl_fjson_{side}",
                         tr("dl_findings_json", side=side))
        ui.download_csv(view.findings_csv_frame(found[side]), f"findings_{side}", f"dumps.dl_fcsv_{side}",
                        tr("dl_findings_csv", side=side))
        st.download_button(f":material/download: {tr('dl_npz', side=side)}", lambda d=d: view.npz_bytes(d),
                           file_name=f"dump_{side}.npz", mime="application/octet-stream", key=f"dumps.dl_npz_{side}",
                           on_click="ignore")
    if res is not None:
        ui.download_json(lambda: view.diff_json(res), "differences", "dumps.dl_diff", tr("dl_diff"))
keep()
