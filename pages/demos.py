"""Guided demos: pick a lesson and a vLLM release, step forward and back, read what to look at,
present it.

The URL always names the demo, step, release, language and presenter mode, and in presenter mode
the figure shown (``?demo=&step=&vllm=&lang=&presenter=&fig=``), so every screen has a link; a link
is untrusted input and is validated. Presenter mode shows one screen at a time: the step's own text,
then each figure with its own sentence; → / PageDown / space and ← / PageUp move through them.
"""
import json

import plotly.graph_objects as go
import streamlit as st

import ui

ui.ensure_app_shell()

from kvviz.core.versions import LAST_V1_RELEASE  # noqa: E402
from kvviz.texts.i18n import LANGS  # noqa: E402
from kvviz.views import demo_catalogue as demos  # noqa: E402
from kvviz.views import demos as demo_view  # noqa: E402
from kvviz.views import links as share  # noqa: E402
from kvviz.views import runners as rv  # noqa: E402
from kvviz.views.demos import bands, padded_line, presenter_screens, presenter_style, release_runs, v1_note  # noqa: E402
from ui import presenter as keys_ui  # noqa: E402

S = st.session_state


# A demo step's screens depend on (demo, step, language, release) only: built once per server and
# shared by every session (a classroom on one demo builds each step once). Shared objects: never
# changed in place here (presenter mode restyles a copy of a figure).
@st.cache_resource(max_entries=512, ttl=3600, show_spinner=False)
def screens_for(key: str, step: int, lang: str, release: str):
    return demo_view.screens_for(key, step, lang, release)


@st.cache_resource(max_entries=512, ttl=3600, show_spinner=False)
def shown_screens(key: str, step: int, lang: str, release: str):
    """Presenter mode's figures of a step (one chart each), in reading order."""
    return presenter_screens(screens_for(key, step, lang, release), lang)


@st.cache_data(max_entries=512, ttl=3600, show_spinner=False)
def _events_by_run(key: str, step: int, lang: str, release: str):
    return demo_view.events_by_run(key, step, lang, release)


@st.cache_data(max_entries=512, ttl=3600, show_spinner=False)
def _scheduled_frame(key: str, step: int, lang: str, release: str):
    return demo_view.scheduled_frame(key, step, lang, release)


lang = ui.lang()
tr = ui.texts("demos")
KEYS = demos.DEMO_KEYS


# --- state: restored once from the link, then owned by the widgets ---------------------------------
if "demos_demo" not in S or S.get("demos_demo") not in demos.DEMOS:
    (S["demos_demo"], S["demos_step"], S["demos_presenter"], S["demos_release"], S["demos_fig"],
     S["demos_bad_link"]) = share.decode_demo(st.query_params, with_release=True)
    S["demos_step.kept"], S["demos_presenter.kept"], S["demos_release.kept"] = (
        S["demos_step"], S["demos_presenter"], S["demos_release"])
ui.restore({"demos_step": 0, "demos_presenter": False, "demos_release": demos.DEFAULT_RELEASE})
if S["demos_release"] not in demos.VERSIONS:
    S["demos_release"] = demos.DEFAULT_RELEASE


def _screens_count(key: str, step: int, release: str) -> int:
    """Presenter screens of a step: its own text, then one per figure (none where it cannot play)."""
    if demos.missing_runner(key, release):
        return 1
    return 1 + len(shown_screens(key, step, lang, release))


def _set_step(step: int, fig: int = 0) -> None:
    S["demos_step"] = step
    S["demos_fig"] = fig          # a new step starts on its own screen


def _on_demo(widget_key):
    S["demos_demo"] = S[widget_key]
    _set_step(0)


def _go(to):
    new = demos.nav_step(S["demos_demo"], S["demos_step"], to)
    if new != S["demos_step"]:
        _set_step(new)


def _move(direction: str) -> None:
    """Presenter mode's next / back: figure by figure, then on to the next step's own screen; back
    from a step's own screen to the previous step's last figure."""
    key, step, release = S["demos_demo"], S["demos_step"], S["demos_release"]
    n, count = demos.num_steps(key), _screens_count(key, step, release)
    fig = min(max(int(S.get("demos_fig", 0)), 0), count - 1)
    if direction == "next":
        if fig + 1 < count:
            S["demos_fig"] = fig + 1
        elif step + 1 < n:
            _set_step(step + 1)
    elif fig > 0:
        S["demos_fig"] = fig - 1
    elif step > 0:
        _set_step(step - 1, _screens_count(key, step - 1, release) - 1)


def _on_pick():
    if S.get("demos_fig_pick") is not None:
        S["demos_fig"] = int(S["demos_fig_pick"])


def _on_lang():
    # the app's language lives in the plain key "lang"; the sidebar widget "lang.widget" mirrors it
    # (app.py copies "lang" into it at the top of every run, so the sidebar agrees after this rerun)
    choice = S.get("demos_lang")
    if choice in LANGS:
        S["lang"] = choice
        S["lang.widget"] = choice


def _show_on(release: str):
    S["demos_release"] = S["demos_release.kept"] = release
    S["demos_fig"] = 0


presenter = S.get("demos_presenter", False)
if presenter:   # one projector screen, no scrolling: the figure takes what the text leaves
    st.markdown(demo_view.PRESENTER_CSS, unsafe_allow_html=True)
else:
    st.title(tr("ui.title"))
    st.caption(tr("ui.caption"))
if S.get("demos_bad_link"):
    st.warning(tr("ui.bad_link", what=ui.plain(S["demos_bad_link"])), icon=":material/link_off:")

# In presenter mode every control is on one row, labels folded into the widgets' tooltips.
fold = "collapsed" if presenter else "visible"
top = st.columns([4, 3, 3, 1, 1, 1, 1, 3, 2], vertical_alignment="center") if presenter else st.columns([3, 3, 2, 3])
if presenter:  # the sidebar (and its language selector) is hidden in presenter mode: a compact one here
    S["demos_lang"] = lang
    top[8].selectbox(f":material/translate: {tr('ui.language')}", list(LANGS), format_func=LANGS.get,
                     key="demos_lang", on_change=_on_lang, label_visibility=fold)
# The chosen demo lives in the plain key "demos_demo"; the selectbox mirrors it under a key per
# language: a keyed widget keeps its identity when only its option labels change, and the browser
# would go on showing the title in the language it was first drawn in.
demo_widget = f"demos_demo.{lang}"
S[demo_widget] = S["demos_demo"]
top[0].selectbox(tr("ui.demo"), KEYS, format_func=lambda k: tr(f"{k}.title"), key=demo_widget,
                 on_change=_on_demo, args=(demo_widget,), label_visibility=fold)
ui.version_select(top[1], tr("ui.release"), rv.VERSION_CHOICES, "demos_release", help=tr("ui.release_help"),
                  on_change=lambda: S.update({"demos_fig": 0}), label_visibility=fold)
key, release = S["demos_demo"], S["demos_release"]
n = demos.num_steps(key)
S["demos_step"] = demos.clamp_step(key, S.get("demos_step", 0))
# steps are counted from 1 wherever they are shown (the value, and the link's step=, stay 0-based)
top[2].select_slider(tr("ui.step"), list(range(n)), format_func=lambda i: str(i + 1), key="demos_step",
                     label_visibility=fold, on_change=lambda: S.update({"demos_fig": 0}))
top[7 if presenter else 3].toggle(tr("ui.presenter"), key="demos_presenter", help=tr("ui.presenter_help"))
ui.keep("demos_step", "demos_presenter", "demos_release")
step = S["demos_step"]
missing = demos.missing_runner(key, release)
count = _screens_count(key, step, release)
fig = S["demos_fig"] = min(max(int(S.get("demos_fig", 0)), 0), count - 1) if presenter else 0

nav = top[3:7] if presenter else st.columns(4)
# presenter mode: arrows only (the words are the buttons' tooltips), so the row fits 1280 px
if presenter:
    labels = {"first": "«", "prev": "‹", "next": "›", "last": "»"}
    icons = {}
else:
    labels = {b: tr(f"ui.{b}") for b in ("first", "prev", "next", "last")}
    icons = {"first": ":material/first_page:", "last": ":material/last_page:"}
# presenter mode's ‹ › move as the keys do (figure by figure, then step), « » to the first / last step
moves = {"prev": (_move, "prev", step == 0 and fig == 0), "next": (_move, "next", step == n - 1 and fig == count - 1)}
for col, (b, off) in zip(nav, [("first", step == 0), ("prev", step == 0), ("next", step == n - 1),
                               ("last", step == n - 1)]):
    call, arg, off = moves[b] if presenter and b in moves else (_go, b, off)
    col.button(labels[b], icon=icons.get(b), on_click=call, args=(arg,), disabled=off, key=f"demos_{b}",
               width="stretch", help=tr({"prev": "ui.fig_prev", "next": "ui.fig_next"}.get(b, f"ui.{b}"))
               if presenter else None)

# keep the URL in step with what is shown: it is the link to this screen
link = share.encode_demo(key, step, lang, presenter, release, fig)
st.query_params.from_dict(link)

st.header(f"{tr(key + '.title')} — {tr('ui.step_of', k=step + 1, n=n)}")


def _cannot_play() -> None:
    """A demo that cannot happen on the chosen release: why, and a button to the nearest one it can."""
    msg = tr("ui.no_v1", release=release, last=LAST_V1_RELEASE) if missing == "v1" else \
        tr("ui.no_v2", release=release, first=demos.playable_releases(key)[0])
    st.warning(msg, icon=":material/block:")
    near = demos.nearest_playable(key, release)
    if near:
        st.button(tr("ui.show_on", release=near), on_click=_show_on, args=(near,), key="demos_show_on",
                  type="primary")


def _differs_note() -> None:
    """Where the chosen release's step is not what the narrative (written for one release) says."""
    what = demos.differs(key, step, release)
    if what:
        st.caption(":material/difference: " + tr("ui.differs", ref=demos.NARRATIVE_RELEASE, release=release,
                                                  what=tr("ui.aspect_sep").join(tr(f"aspect.{a}") for a in what)))


def _show(screen, big: bool):
    """A screen's charts as ``bands`` places them: in a comparison, one column per run (the first
    run, vLLM or DCP rank 0, on the left), its charts stacked top to bottom, each with its own
    sentence under it. ``big`` (presenter mode, one chart): the chart fills the height the text
    above it leaves on the screen."""
    name = screen.key.replace(":", "_").replace("#", "_")
    if big:
        if demo_view.chart_title(screen) != screen.title:    # the chart's own title says it otherwise
            st.subheader(screen.title)
        if screen.notes and screen.notes[0]:
            st.markdown(screen.notes[0])
        with st.container(key="demos_presenter_fig", height="stretch"):
            ui.plot(presenter_style(go.Figure(screen.charts[0][1])), key=f"demos_{screen.key}_0",  # a copy
                    name=f"{key}_step{step + 1}_{name}", height="stretch")
        return
    # a screen of one chart whose own title says the same: the title is said once (the chart's)
    if not (len(screen.charts) == 1 and screen.charts[0][1].layout.title.text == screen.title):
        st.subheader(screen.title)
    k = 0
    for band in bands(screen):
        cols = st.columns(len(band))
        for col, charts in zip(cols, band):
            for _caption, fig_ in charts:
                with col:
                    ui.plot(fig_, key=f"demos_{screen.key}_{k}", name=f"{key}_step{step + 1}_{name}_{k}")
                    if k < len(screen.notes) and screen.notes[k]:
                        st.caption(screen.notes[k])
                k += 1


def _strip(shown) -> None:
    """Presenter mode's overview: the step's own screen and every figure, the current one marked;
    a click shows it."""
    S["demos_fig_pick"] = fig
    st.pills(tr("ui.figures"), list(range(count)), key="demos_fig_pick", on_change=_on_pick,
             format_func=lambda i: tr("ui.story") if i == 0 else str(i), label_visibility="collapsed",
             width="stretch")


def _story(shown) -> None:
    """Presenter mode's first screen of a step: its text, and the list of its figures."""
    # a long narrative (where_stale's ~1,000 characters) in smaller type, so it fits 1280x720 with its list
    text = tr(f"{key}.step{step}") + (tr(key + ".intro") if step == 0 else "")
    long = sum(2 if ord(c) > 0x2E80 else 1 for c in text) > 650     # a Chinese character is two wide
    with st.container(key="demos_story_long" if long else "demos_story", height="stretch"):
        if step == 0:
            st.markdown(f"*{tr(key + '.intro')}*")
        st.markdown(tr(f"{key}.step{step}") + (f"  \n*{tr('ui.end')}*" if step == n - 1 else ""))
        _differs_note()
        if shown:
            st.markdown(f"**{tr('ui.figures')}**  \n" + "  \n".join(
                f"{i}. {demo_view.chart_title(s)}" + (tr("ui.place", where=s.where) if s.where else "")
                for i, s in enumerate(shown, start=1)))
        st.caption(tr("ui.keys"))


def _present() -> None:
    """Presenter mode: one screen at a time, the step's text, then one figure each."""
    shown = shown_screens(key, step, lang, release)
    _strip(shown)
    if fig == 0:
        _story(shown)
    else:
        _show(shown[fig - 1], big=True)
    if step + 1 < n:
        ui.prefetch(shown_screens, key, step + 1, lang, release)


def _normal() -> None:
    """Normal mode: the step's text, every figure with its sentence, what was scheduled, the events."""
    if v1_note(key, lang, release):
        st.caption(v1_note(key, lang, release))
    if step == 0:   # the intro once, on the first step
        st.markdown(f"*{tr(key + '.intro')}*")
    st.info(tr(f"{key}.step{step}"), icon=":material/visibility:")
    _differs_note()
    st.caption(padded_line(key, step, lang, release) + ("  \n" + tr("ui.end") if step == n - 1 else ""))
    if step + 1 < n:   # the next step is built while this one is read: Forward finds it ready
        ui.prefetch(screens_for, key, step + 1, lang, release)
    for s in screens_for(key, step, lang, release):
        _show(s, big=False)
    left, right = st.columns(2)
    with left:
        st.subheader(tr("ui.scheduled"))
        frame = _scheduled_frame(key, step, lang, release)
        if len(frame):
            ui.table(frame, {c: tr(f"col.{c}") for c in frame.columns})
        else:
            st.write(tr("ui.no_tokens"))
    with right:
        st.subheader(tr("ui.events"))
        for label, events in _events_by_run(key, step, lang, release):
            if label:
                st.markdown(f"**{label}**")
            st.markdown("\n".join(f"- {e}" for e in events))


if presenter:
    keys_ui.keys(_move)
if missing:   # nothing to show: the warning says why
    _cannot_play()
else:
    ui.shows(release_runs(key, release))    # presenter mode too: the class sees the release and runner
    if presenter:
        _present()
    else:
        _normal()

if key == "dcp" and not presenter and not missing:   # the demo's step on real ranks (torch.distributed)
    from ui import dcp as ui_dcp
    from kvviz.views.dcp_ranks import demo_batch

    ui_dcp.run_on_ranks("demos", lambda k=key, i=step, r=release: demo_batch(k, i, r), default_world=2)

if presenter:   # nothing below the figure: the address bar holds this screen's link
    st.stop()
st.markdown(f":material/link: [{tr('ui.link')}]({share.query_string(link)})")
with st.expander(tr("ui.all_links")):
    st.markdown("\n".join(
        f"- [{tr('ui.step_of', k=i + 1, n=n)}]({share.query_string(share.encode_demo(key, i, lang, False, release))})"
        for i in range(n)))
box, opened = ui.lazy_expander(tr("ui.scenario"), "demos.scenario_open")
if opened:
    box.code(json.dumps(demos.scenario_dict(demos.DEMOS[key], demos.DEMOS[key].variants[0], release), indent=1),
             language="json")
