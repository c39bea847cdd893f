"""Guided demos: pick a lesson, step forward and back, read what to look at, present it.

The URL always names the demo, step, language and presenter mode (``?demo=&step=&lang=
&presenter=``), so every step has a link; a link is untrusted input and is validated.
"""
import json

import plotly.graph_objects as go
import streamlit as st

import ui

ui.ensure_app_shell()

from kvviz.texts.i18n import LANGS  # noqa: E402
from kvviz.views import demo_catalogue as demos  # noqa: E402
from kvviz.views import links as share  # noqa: E402
from kvviz.views.demos import (bands, events_by_run, padded_line, presenter_screens,  # noqa: E402
                               presenter_style, release_runs, scheduled_frame, v1_note)
from kvviz.views import demos as demo_view  # noqa: E402


# A demo step's screens depend on (demo, step, language) only: built once per server and shared by
# every session (a classroom on one demo builds each step once). Shared objects: never changed in
# place here (presenter mode restyles a copy of a figure).
@st.cache_resource(max_entries=512, ttl=3600, show_spinner=False)
def screens_for(key: str, step: int, lang: str):
    return demo_view.screens_for(key, step, lang)


@st.cache_data(max_entries=512, ttl=3600, show_spinner=False)
def _events_by_run(key: str, step: int, lang: str):
    return events_by_run(key, step, lang)


@st.cache_data(max_entries=512, ttl=3600, show_spinner=False)
def _scheduled_frame(key: str, step: int, lang: str):
    return scheduled_frame(key, step, lang)

lang = ui.lang()
tr = ui.texts("demos")
KEYS = demos.DEMO_KEYS


# --- state: restored once from the link, then owned by the widgets ---------------------------------
def _from_link() -> None:
    S = st.session_state
    S["demos_demo"], S["demos_step"], S["demos_presenter"], S["demos_bad_link"] = share.decode_demo(st.query_params)
    S["demos_fig"] = 0


if "demos_demo" not in st.session_state or st.session_state.get("demos_demo") not in demos.DEMOS:
    _from_link()


def _on_demo(widget_key):
    st.session_state["demos_demo"] = st.session_state[widget_key]
    st.session_state["demos_step"] = 0
    st.session_state["demos_fig"] = 0


def _go(to):
    st.session_state["demos_step"] = demos.nav_step(st.session_state["demos_demo"], st.session_state["demos_step"], to)


def _fig(delta, count):
    st.session_state["demos_fig"] = (st.session_state.get("demos_fig", 0) + delta) % max(count, 1)


def _on_lang():
    # the app's language lives in the plain key "lang"; the sidebar widget "lang.widget" mirrors it
    # (app.py copies "lang" into it at the top of every run, so the sidebar agrees after this rerun)
    choice = st.session_state.get("demos_lang")
    if choice in LANGS:
        st.session_state["lang"] = choice
        st.session_state["lang.widget"] = choice


ui.restore({"demos_step": 0, "demos_presenter": False})
presenter = st.session_state.get("demos_presenter", False)
if presenter:   # one projector screen, no scrolling: the figure takes what the text leaves
    st.markdown(demo_view.PRESENTER_CSS, unsafe_allow_html=True)

if not presenter:
    st.title(tr("ui.title"))
    st.caption(tr("ui.caption"))
if st.session_state.get("demos_bad_link"):
    st.warning(tr("ui.bad_link", what=ui.plain(st.session_state["demos_bad_link"])), icon=":material/link_off:")

# In presenter mode every control is on one row, labels folded into the widgets' tooltips.
fold = "collapsed" if presenter else "visible"
top = st.columns([5, 4, 1, 1, 1, 1, 3, 3], vertical_alignment="center") if presenter else st.columns([3, 2, 2])
if presenter:  # the sidebar (and its language selector) is hidden in presenter mode: a compact one here
    st.session_state["demos_lang"] = lang
    top[7].selectbox(f":material/translate: {tr('ui.language')}", list(LANGS), format_func=LANGS.get,
                     key="demos_lang", on_change=_on_lang, label_visibility=fold)
# The chosen demo lives in the plain key "demos_demo"; the selectbox mirrors it under a key per
# language: a keyed widget keeps its identity when only its option labels change, and the browser
# would go on showing the title in the language it was first drawn in.
demo_widget = f"demos_demo.{lang}"
st.session_state[demo_widget] = st.session_state["demos_demo"]
top[0].selectbox(tr("ui.demo"), KEYS, format_func=lambda k: tr(f"{k}.title"), key=demo_widget,
                 on_change=_on_demo, args=(demo_widget,), label_visibility=fold)
key = st.session_state["demos_demo"]
n = demos.num_steps(key)
st.session_state["demos_step"] = demos.clamp_step(key, st.session_state.get("demos_step", 0))
# steps are counted from 1 wherever they are shown (the value, and the link's step=, stay 0-based)
top[1].select_slider(tr("ui.step"), list(range(n)), format_func=lambda i: str(i + 1), key="demos_step",
                     label_visibility=fold)
top[6 if presenter else 2].toggle(tr("ui.presenter"), key="demos_presenter", help=tr("ui.presenter_help"))
ui.keep("demos_step", "demos_presenter")
step = st.session_state["demos_step"]

nav = top[2:6] if presenter else st.columns(4)
# presenter mode: arrows only (the words are the buttons' tooltips), so the row fits 1280 px
if presenter:
    labels = {"first": "«", "prev": "‹", "next": "›", "last": "»"}
    icons = {}
else:
    labels = {b: tr(f"ui.{b}") for b in ("first", "prev", "next", "last")}
    icons = {"first": ":material/first_page:", "last": ":material/last_page:"}
for col, (b, to, off) in zip(nav, [("first", "first", step == 0), ("prev", "prev", step == 0),
                                   ("next", "next", step == n - 1), ("last", "last", step == n - 1)]):
    col.button(labels[b], icon=icons.get(b), on_click=_go, args=(to,), disabled=off, key=f"demos_{b}",
               width="stretch", help=tr(f"ui.{b}") if presenter else None)

# keep the URL in step with what is shown: it is the link to this step
link = share.encode_demo(key, step, lang, presenter)
st.query_params.from_dict(link)

st.header(f"{tr(key + '.title')} — {tr('ui.step_of', k=step + 1, n=n)}")
ui.shows(release_runs(key))     # presenter mode too: the class sees which release and runner it is shown
if not presenter and v1_note(key, lang):
    st.caption(v1_note(key, lang))
if step == 0:   # the intro once, on the first step (presenter mode too: the figure stays above the fold)
    st.markdown(f"*{tr(key + '.intro')}*")
if presenter:
    st.markdown(tr(f"{key}.step{step}") + (f"  \n*{tr('ui.end')}*" if step == n - 1 else ""))
else:
    st.info(tr(f"{key}.step{step}"), icon=":material/visibility:")
    st.caption(padded_line(key, step, lang) + ("  \n" + tr("ui.end") if step == n - 1 else ""))

screens = screens_for(key, step, lang)
if step + 1 < n:   # the next step is built while this one is read: Forward finds it ready
    ui.prefetch(screens_for, key, step + 1, lang)


def _show(screen, big: bool):
    """A screen's charts as ``bands`` places them: in a comparison, one column per run (the first
    run, vLLM or DCP rank 0, on the left), its charts stacked top to bottom. ``big`` (presenter
    mode, one chart): the chart fills the height the text above it leaves on the screen."""
    # a screen of one chart whose own title says the same: the title is said once (the chart's)
    if not (len(screen.charts) == 1 and screen.charts[0][1].layout.title.text == screen.title):
        st.subheader(screen.title)
    if big:
        with st.container(key="demos_presenter_fig", height="stretch"):
            for k, (_, fig) in enumerate(screen.charts):
                name = screen.key.replace(":", "_").replace("#", "_")
                ui.plot(presenter_style(go.Figure(fig)), key=f"demos_{screen.key}_{k}",   # a copy: shared figure
                        name=f"{key}_step{step}_{name}_{k}", height="stretch")
        return
    k = 0
    for band in bands(screen):
        cols = st.columns(len(band))
        for col, charts in zip(cols, band):
            for caption, fig in charts:
                if big:
                    fig = presenter_style(go.Figure(fig))   # the shared figure stays as it is
                name = screen.key.replace(":", "_").replace("#", "_")
                with col:
                    ui.plot(fig, key=f"demos_{screen.key}_{k}", name=f"{key}_step{step}_{name}_{k}")
                k += 1


if presenter:  # one figure per screen; the figure buttons step through them
    screens = presenter_screens(screens, lang)
    count = len(screens)
    cur = st.session_state.get("demos_fig", 0) % max(count, 1)
    st.session_state["demos_fig"] = cur
    fnav = st.columns([1, 2, 1], vertical_alignment="center")
    fnav[0].button(tr("ui.fig_prev"), on_click=_fig, args=(-1, count), key="demos_fig_prev",
                   width="stretch", disabled=count < 2)
    fnav[1].markdown(f"**{tr('ui.figure')} {cur + 1} / {count}**")
    fnav[2].button(tr("ui.fig_next"), on_click=_fig, args=(1, count), key="demos_fig_next",
                   width="stretch", disabled=count < 2)
    if screens:
        _show(screens[cur], big=True)
else:
    for s in screens:
        _show(s, big=False)
    left, right = st.columns(2)
    with left:
        st.subheader(tr("ui.scheduled"))
        frame = _scheduled_frame(key, step, lang)
        if len(frame):
            ui.table(frame, {c: tr(f"col.{c}") for c in frame.columns})
        else:
            st.write(tr("ui.no_tokens"))
    with right:
        st.subheader(tr("ui.events"))
        for label, events in _events_by_run(key, step, lang):
            if label:
                st.markdown(f"**{label}**")
            st.markdown("\n".join(f"- {e}" for e in events))

if key == "dcp" and not presenter:   # the demo's step on real ranks (torch.distributed)
    from ui import dcp as ui_dcp
    from kvviz.views.dcp_ranks import demo_batch

    ui_dcp.run_on_ranks("demos", lambda k=key, i=step: demo_batch(k, i), default_world=2)

if presenter:   # nothing below the figure: the address bar holds this step's link
    st.stop()
st.markdown(f":material/link: [{tr('ui.link')}]({share.query_string(link)})")
with st.expander(tr("ui.all_links")):
    st.markdown("\n".join(
        f"- [{tr('ui.step_of', k=i + 1, n=n)}]({share.query_string(share.encode_demo(key, i, lang, presenter))})"
        for i in range(n)))
if not presenter:
    box, opened = ui.lazy_expander(tr("ui.scenario"), "demos.scenario_open")
    if opened:
        box.code(json.dumps(demos.DEMOS[key].scenario, indent=1), language="json")
