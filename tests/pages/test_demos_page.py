"""AppTest: every demo plays to its end and back in each language, presenter mode included,
and a link to a step restores it (links are untrusted: bad values fall back safely). The release
picker (default: the newest release) drives the figures; a demo that cannot happen on a release
says so. Tests of what the narratives say open the narrative's release (``vllm=main``)."""
from pathlib import Path

import json
import pytest
from streamlit.testing.v1 import AppTest

from kvviz.views import demo_catalogue as demos
from kvviz.views.demos import presenter_screens, screens_for
from kvviz.texts.i18n import LANGS, t
from page_support import chart_figure, chart_nodes, is_chart, table_frames

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = str(ROOT / "pages" / "demos.py")
REF = demos.NARRATIVE_RELEASE


def _page(lang: str, **query) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["lang"] = lang
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    return at


def _click(at, key):
    at.button(key=key).click().run()
    assert not at.exception


def _narrative_shown(at, key, step, lang):
    text = t("demos", f"{key}.step{step}", lang)
    shown = [m.value for m in at.markdown] + [m.value for m in at.info]
    assert any(v == text or v.startswith(text + "  \n") for v in shown), (key, step, lang)   # (+ "End of the demo.")


def _charts(node, path=()):
    """(column path, figure title) of every plotly chart under ``node``, in page order; the path
    holds the index of each ``st.columns`` column the chart sits in."""
    out = []
    if is_chart(node):
        spec = chart_figure(node)
        title = (spec["layout"].get("title") or {}).get("text", "").replace("<br>", " — ")
        return [(path, title, spec)]
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for i, c in children.items():
            out += _charts(c, path + ((i,) if type(c).__name__ == "Column" else ()))
    return out


ENGLISH = ["full attention", "sliding window", "Mamba-like", "block table only", "ref count",
           "physical block", "free queue", "local seq_lens", "CPU (truth)", "device mirror",
           "request-state", "batch position", "batch order", "input block table", "commit skipped",
           "gather skipped"]


def _no_english(at, key, step, lang):
    """What the page shows in zh / es has no English labels left: screen titles, chart titles,
    axis titles, legends, the scheduled table's kind column."""
    shown = [s.value for s in at.subheader]
    for _, title, spec in _charts(at.main):
        lay = spec["layout"]
        shown.append(title)
        shown += [((lay[k] or {}).get("title") or {}).get("text", "") for k in lay if k.startswith(("xaxis", "yaxis"))]
        shown += [tr.get("name") or "" for tr in spec["data"]]
    text = "\n".join(shown)
    for en in ENGLISH:
        assert en not in text, (key, step, lang, en)
    col = t("demos", "col.kind", lang)
    scheduled = [df for df in table_frames(at) if col in df.columns]   # the scheduled table (ui.table)
    assert scheduled or any(t("demos", "ui.no_tokens", lang) in m.value for m in at.markdown), (key, step, lang)
    for df in scheduled:
        assert not {"prefill", "chunk", "decode"} & set(df[col]), (key, step, lang)


BACK_LANG = {key: list(LANGS)[i % len(LANGS)] for i, key in enumerate(demos.DEMO_KEYS)}


@pytest.mark.parametrize("key", demos.DEMO_KEYS)
def test_play_every_demo_in_every_language(key):
    assert set(BACK_LANG.values()) == set(LANGS)       # every language walks back somewhere
    n = demos.num_steps(key)
    for lang in LANGS:
        at = _page(lang, demo=key, vllm=REF)
        assert at.session_state["demos_demo"] == key
        assert at.session_state["demos_step"] == 0
        _narrative_shown(at, key, 0, lang)
        if lang != "en":
            _no_english(at, key, 0, lang)
        for s in range(1, n):                       # forward, every figure on the page
            _click(at, "demos_next")
            assert at.session_state["demos_step"] == s
            _narrative_shown(at, key, s, lang)
            if lang != "en":
                _no_english(at, key, s, lang)
        assert at.button(key="demos_next").disabled
        assert str(at.query_params["step"]).strip("[]'") == str(n - 1)   # the URL is the link
        at.toggle(key="demos_presenter").set_value(True).run()   # presenter mode: the step's own screen,
        assert not at.exception and len(chart_nodes(at)) == 0    # then one figure each
        _narrative_shown(at, key, n - 1, lang)
        for f in range(1, 1 + len(presenter_screens(screens_for(key, n - 1, lang, REF), lang))):
            _click(at, "demos_next")
            assert at.session_state["demos_fig"] == f and len(chart_nodes(at)) == 1
        assert at.button(key="demos_next").disabled                      # the very end
        if lang != BACK_LANG[key]:
            continue
        # back to the start in one language per demo (the languages in turn over the demos: each walks
        # back in four): Previous is the same code in every language, and every step's narrative in
        # every language was checked on the way forward
        at.toggle(key="demos_presenter").set_value(False).run()
        for s in range(n - 2, -1, -1):
            _click(at, "demos_prev")
            assert at.session_state["demos_step"] == s
            _narrative_shown(at, key, s, lang)
        assert at.button(key="demos_prev").disabled


def test_link_restores_a_step():
    at = _page("es", demo="condense", step="2", presenter="1", vllm="v0.19.0")
    assert at.session_state["demos_demo"] == "condense"
    assert at.session_state["demos_step"] == 2
    assert at.session_state["demos_presenter"] is True
    assert at.session_state["demos_release"] == "v0.19.0" and at.session_state["demos_fig"] == 0
    _narrative_shown(at, "condense", 2, "es")
    assert not at.warning
    at = _page("en", demo="fork", step="1", presenter="1", vllm="v0.30.0", fig="3")   # a figure's screen
    want = presenter_screens(screens_for("fork", 1, "en", "v0.30.0"), "en")[2]
    assert at.session_state["demos_fig"] == 3 and len(chart_nodes(at)) == 1
    assert want.notes[0] in [m.value for m in at.markdown]               # the figure's own sentence
    assert dict(at.query_params) == {"demo": "fork", "step": "1", "lang": "en", "presenter": "1",
                                     "vllm": "v0.30.0", "fig": "3"}


@pytest.mark.parametrize("query", [
    {"demo": "<script>alert(1)</script>", "step": "1"},
    {"demo": "fork", "step": "99999"},
    {"demo": "fork", "step": "-3"},
    {"demo": "fork", "step": "1e9"},
    {"demo": "fork", "step": "2", "presenter": "maybe"},
    {"demo": "fork", "vllm": "v9.99.0<b>"},
    {"demo": "fork", "presenter": "1", "fig": "-1"},
])
def test_untrusted_links_fall_back(query):
    at = _page("en", **query)
    key = at.session_state["demos_demo"]
    assert key in demos.DEMOS
    assert 0 <= at.session_state["demos_step"] < demos.num_steps(key)
    assert at.session_state["demos_release"] in demos.VERSIONS and at.session_state["demos_fig"] == 0
    if query.get("presenter") == "maybe":
        assert at.session_state["demos_presenter"] is False
    else:
        assert at.warning                           # says the link was not understood


def test_registered_in_the_app():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = "zh"
    at.run()
    for page, title in (("pages/demos.py", ("demos", "ui.title")),
                        ("pages/notations.py", ("notations", "title"))):
        at.switch_page(page).run()
        assert not at.exception
        assert at.title[0].value in {t(*title, lang) for lang in LANGS}


@pytest.mark.parametrize("lang", list(LANGS))
def test_condense_layout_is_what_the_narrative_says(lang):
    """Left column: the vLLM run (CPU table above its device mirror); right column: the fault.
    The narrative of the step says exactly that."""
    at = _page(lang, demo="condense", step="1", vllm=REF)
    main, fault = t("demos", "variant.main", lang), t("demos", "variant.no_clear", lang)
    tables = [(path, title) for path, title, _ in _charts(at.main) if title.startswith((main, fault))]
    assert [(p[-1], title.split(" — ")[:2]) for p, title in tables] == [
        (0, [main, t("demos", "ui.cpu", lang)]), (0, [main, t("demos", "ui.device", lang)]),
        (1, [fault, t("demos", "ui.cpu", lang)]), (1, [fault, t("demos", "ui.device", lang)])]
    assert len({p[:-1] for p, _ in tables}) == 1          # the two columns of one st.columns
    _narrative_shown(at, "condense", 1, lang)


@pytest.mark.parametrize("lang", list(LANGS))
def test_page_says_which_runner_a_demo_shows(lang):
    """A caption under the header names the vLLM release and the model runner(s) of the demo."""
    from kvviz.views.demos import v1_note
    from kvviz.views.runners import shown_version

    for key, runners in (("condense", ["v1"]), ("prefix", ["v2"]), ("v1_vs_v2", ["v1", "v2"])):
        at = _page(lang, demo=key, vllm=REF)
        release = shown_version(demos.play(key).scenario.config.vllm)
        want = t("app", "shows", lang, what=" | ".join(
            t("app", "run", lang, version=release, runner=r.upper()) for r in runners))
        captions = [c.value for c in at.caption]
        assert any(want in c for c in captions), (key, captions)
        note = v1_note(key, lang)
        assert (note is not None) == ("v1" in runners) and (note is None or any(note in c for c in captions))


@pytest.mark.parametrize("lang", list(LANGS))
def test_runner_demos_in_the_selector(lang):
    """The two runner lessons are in the demo selector, play in every language, and list each
    run's engine events (V1's rows and commit, V2's states and gather) under the run's name."""
    at = _page(lang, vllm=REF)
    box = at.selectbox(key=f"demos_demo.{lang}")
    for key in ("v1_vs_v2", "where_stale"):
        assert t("demos", f"{key}.title", lang) in box.options
        box.set_value(key).run()
        assert not at.exception
        assert at.session_state["demos_demo"] == key and at.session_state["demos_step"] == 0
        _narrative_shown(at, key, 0, lang)
        labels = {m.value.strip("*") for m in at.markdown if m.value.startswith("**")}
        for v in demos.DEMOS[key].variants:
            assert t("demos", f"variant.{v.key}", lang) in labels
        _click(at, "demos_next")
        _narrative_shown(at, key, 1, lang)
        box = at.selectbox(key=f"demos_demo.{lang}")


def test_where_stale_layout_two_bands():
    """where_stale: four runs as two bands of two columns: V1 (healthy, fault) above V2."""
    at = _page("en", demo="where_stale", step="2", vllm=REF)
    names = [t("demos", f"variant.{k}", "en") for k in ("v1", "v1_skip_commit", "v2", "v2_skip_gather")]
    order = t("demos", "ui.batch_order", "en", v="")
    tables = [(path, title.split(" — ")[0]) for path, title, _ in _charts(at.main)
              if title.split(" — ")[0] in names and order not in title]
    assert [name for _, name in tables] == [n for n in names for _ in range(2)]
    assert [p[-1] for p, _ in tables] == [0, 0, 1, 1, 0, 0, 1, 1]   # two bands, left column first


@pytest.mark.parametrize("key", ["condense", "dcp", "cudagraph", "hybrid", "v1_vs_v2", "where_stale"])
def test_presenter_mode_one_figure_per_screen(key):
    """The step's own screen (its text, the list of its figures, no chart), then one figure a screen with
    its own sentence; past the last figure, the next step's own screen (the figure index restarts)."""
    step, release = 0, demos.nearest_playable(key, demos.DEFAULT_RELEASE)
    at = _page("en", demo=key, step=str(step), presenter="1", vllm=release)
    want = presenter_screens(screens_for(key, step, "en", release), "en")
    assert len(chart_nodes(at)) == 0
    _narrative_shown(at, key, step, "en")
    if key == "where_stale":   # the list of figures says where normal mode draws each ("Top left, ...")
        listed = [m.value for m in at.markdown if m.value.startswith(f"**{t('demos', 'ui.figures', 'en')}**")]
        assert listed and "1. " in listed[0] and "(top band, left column)" in listed[0] \
            and "(bottom band, right column)" in listed[0]
    titles = []
    for i in range(len(want)):
        _click(at, "demos_next")
        charts = _charts(at.main)
        assert len(charts) == 1 and at.session_state["demos_fig"] == i + 1, (key, i, [c[1] for c in charts])
        titles.append(charts[0][1])
        assert want[i].notes[0] in [m.value for m in at.markdown]
        assert t("demos", f"{key}.step{step}", "en") not in [m.value for m in at.markdown]   # not the step's text
    assert titles == [s.charts[0][1].layout.title.text.replace("<br>", " — ") for s in want]
    _click(at, "demos_next")
    assert at.session_state["demos_step"] == step + 1 and at.session_state["demos_fig"] == 0
    _click(at, "demos_prev")                                   # back: the previous step's last figure
    assert at.session_state["demos_step"] == step and at.session_state["demos_fig"] == len(want)


def test_presenter_figure_index_restarts_at_every_step():
    at = _page("en", demo="prefix", step="0", presenter="1")
    for via in ("slider", "last", "first"):
        at.button_group(key="demos_fig_pick").set_value(3).run()           # the strip: figure 3
        assert at.session_state["demos_fig"] == 3 and len(chart_nodes(at)) == 1
        if via == "slider":
            at.select_slider(key="demos_step").set_value(2).run()
        else:
            _click(at, f"demos_{via}")
        assert not at.exception and at.session_state["demos_fig"] == 0 and len(chart_nodes(at)) == 0
        assert "fig" not in at.query_params


def test_presenter_mode_has_its_own_language_selector():
    """The sidebar (with the app's language selector) is hidden in presenter mode; the page's own
    selector sets the app's language: the plain key "lang", mirrored by the sidebar widget."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = "en"
    at.run()
    at.switch_page("pages/demos.py").run()
    assert not at.exception
    assert not [s for s in at.main.selectbox if s.key == "demos_lang"]   # only in presenter mode
    at.toggle(key="demos_presenter").set_value(True).run()
    assert at.selectbox(key="demos_lang").value == "en"
    at.selectbox(key="demos_lang").set_value("zh").run()
    assert not at.exception
    assert at.session_state["lang"] == "zh"
    assert at.selectbox(key="lang.widget").value == "zh"      # the sidebar agrees
    assert at.header[0].value.startswith(t("demos", "prefix.title", "zh"))
    assert str(at.query_params["lang"]).strip("[]'") == "zh"
    at.selectbox(key="demos_lang").set_value("es").run()
    at.toggle(key="demos_presenter").set_value(False).run()    # back to normal: the sidebar says es
    assert at.session_state["lang"] == "es" and at.selectbox(key="lang.widget").value == "es"
    assert at.title[0].value == t("demos", "ui.title", "es")
    at.selectbox(key="lang.widget").set_value("zh").run()      # and the sidebar still works
    at.toggle(key="demos_presenter").set_value(True).run()
    assert at.selectbox(key="demos_lang").value == "zh"


def test_pick_a_demo_then_switch_language():
    """The demo lives in the plain key "demos_demo"; the selectbox mirroring it is keyed per
    language, so after a switch it is drawn afresh with the titles in the new language."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/demos.py").run()
    at.selectbox(key="demos_demo.en").set_value("dcp").run()
    assert not at.exception
    assert at.session_state["demos_demo"] == "dcp" and at.session_state["demos_step"] == 0
    _click(at, "demos_next")
    at.selectbox(key="lang.widget").set_value("es").run()
    box = at.selectbox(key="demos_demo.es")
    assert box.value == "dcp" and t("demos", "dcp.title", "es") in box.options
    assert at.session_state["demos_step"] == 1                  # the language switch keeps the step
    box.set_value("hybrid").run()
    assert at.session_state["demos_demo"] == "hybrid" and at.session_state["demos_step"] == 0
    assert at.header[0].value.startswith(t("demos", "hybrid.title", "es"))


def test_demo_step_and_presenter_survive_leaving_the_page():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=60).run()
    at.switch_page("pages/demos.py").run()
    at.select_slider(key="demos_step").set_value(2).run()
    at.selectbox(key="demos_release").set_value("v0.25.0").run()
    at.toggle(key="demos_presenter").set_value(True).run()
    assert not at.exception
    at.switch_page("pages/home.py").run()
    at.switch_page("pages/demos.py").run()
    assert not at.exception
    assert at.select_slider(key="demos_step").value == 2 and at.toggle(key="demos_presenter").value is True
    assert at.selectbox(key="demos_release").value == "v0.25.0"


def test_the_scenario_json_is_drawn_only_while_its_expander_is_open():
    """Folded, the scenario's code block is not on the page (not redrawn on every step); opened, it
    is the demo's scenario."""
    at = _page("en")
    key = at.session_state["demos_demo"]
    assert len(at.code) == 0 and any(e.label == t("demos", "ui.scenario", "en") for e in at.expander)
    at.session_state["demos.scenario_open"] = True
    at.run()
    assert not at.exception and len(at.code) == 1
    shown = json.loads(at.code[0].value)
    assert shown["config"].pop("vllm") == demos.DEFAULT_RELEASE           # the release picked
    want = json.loads(json.dumps(demos.DEMOS[key].scenario))
    want["config"].pop("vllm")
    assert shown == want
    _click(at, "demos_next")                         # it stays open across steps
    assert len(at.code) == 1


# --- the release picker ---------------------------------------------------------------------------

def _shown_caption(at, lang, release, runner):
    from kvviz.views.runners import shown_version

    want = t("app", "shows", lang, what=t("app", "run", lang, version=shown_version(release), runner=runner))
    return any(want in c.value for c in at.caption)


@pytest.mark.parametrize("lang", list(LANGS))
def test_release_picker_defaults_to_the_newest_and_the_figures_follow_it(lang):
    at = _page(lang, demo="prefix", step="1")
    assert at.selectbox(key="demos_release").value == demos.DEFAULT_RELEASE == "v0.34.0"
    assert _shown_caption(at, lang, "v0.34.0", "V2")
    assert t("demos", "fig.block_table_v2", lang) in [s.value for s in at.subheader]
    assert at.query_params["vllm"] in ("v0.34.0", ["v0.34.0"])
    at.selectbox(key="demos_release").set_value("v0.11.0").run()   # before V2: V1's tables, its events
    assert not at.exception and at.session_state["demos_step"] == 1
    assert _shown_caption(at, lang, "v0.11.0", "V1")
    assert t("demos", "fig.block_table", lang) in [s.value for s in at.subheader]
    titles = [title for _, title, _ in _charts(at.main)]
    assert any(t("demos", "ui.cpu", lang) in x for x in titles) and any(t("demos", "ui.device", lang) in x for x in titles)
    assert at.query_params["vllm"] in ("v0.11.0", ["v0.11.0"])
    # the text was written for main: the page says where this release's step differs
    what = t("demos", "ui.aspect_sep", lang).join(t("demos", f"aspect.{a}", lang) for a in demos.differs("prefix", 1, "v0.11.0"))
    assert any(c.value.endswith(t("demos", "ui.differs", lang, ref=REF, release="v0.11.0", what=what)) for c in at.caption)
    # every figure says what its colour encodes
    captions = [c.value for c in at.caption]
    for screen in screens_for("prefix", 1, lang, "v0.11.0"):
        assert len(screen.notes) == len(screen.charts) and all(n in captions for n in screen.notes)


@pytest.mark.parametrize("key,release,why,near", [("condense", "v0.34.0", "ui.no_v1", "v0.33.0"),
                                                  ("where_stale", "v0.34.0", "ui.no_v1", "v0.33.0"),
                                                  ("v1_vs_v2", "v0.11.2", "ui.no_v2", "v0.12.0")])
def test_a_demo_that_cannot_happen_on_a_release_says_so(key, release, why, near):
    from kvviz.core.versions import LAST_V1_RELEASE

    for presenter in ("0", "1"):
        at = _page("zh", demo=key, vllm=release, presenter=presenter)
        msg = t("demos", why, "zh", release=release, last=LAST_V1_RELEASE, first="v0.12.0")
        assert [w.value for w in at.warning] == [msg] and not at.error
        assert len(chart_nodes(at)) == 0
    at.button(key="demos_show_on").click().run()            # one click to the nearest release it plays on
    assert not at.exception and not at.warning and at.session_state["demos_release"] == near
    assert len(chart_nodes(at)) == 0                             # presenter mode: the step's own screen
    _click(at, "demos_next")
    assert len(chart_nodes(at)) == 1
