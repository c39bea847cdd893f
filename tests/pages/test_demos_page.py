"""AppTest: every demo plays to its end and back in each language, presenter mode included,
and a link to a step restores it (links are untrusted: bad values fall back safely)."""
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
    assert text in shown, (key, step, lang)


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


@pytest.mark.parametrize("key", demos.DEMO_KEYS)
def test_play_every_demo_in_every_language(key):
    n = demos.num_steps(key)
    for lang in LANGS:
        at = _page(lang, demo=key)
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
        at.toggle(key="demos_presenter").set_value(True).run()   # back, in presenter mode
        assert not at.exception
        for _ in range(len(presenter_screens(screens_for(key, n - 1, lang)))):   # every screen
            assert len(chart_nodes(at)) == 1                               # one figure each
            _click(at, "demos_fig_next")
        for s in range(n - 2, -1, -1):
            _click(at, "demos_prev")
            assert at.session_state["demos_step"] == s
            _narrative_shown(at, key, s, lang)
        assert at.button(key="demos_prev").disabled


def test_link_restores_a_step():
    at = _page("es", demo="condense", step="2", presenter="1")
    assert at.session_state["demos_demo"] == "condense"
    assert at.session_state["demos_step"] == 2
    assert at.session_state["demos_presenter"] is True
    _narrative_shown(at, "condense", 2, "es")
    assert not at.warning


@pytest.mark.parametrize("query", [
    {"demo": "<script>alert(1)</script>", "step": "1"},
    {"demo": "fork", "step": "99999"},
    {"demo": "fork", "step": "-3"},
    {"demo": "fork", "step": "1e9"},
    {"demo": "fork", "step": "2", "presenter": "maybe"},
])
def test_untrusted_links_fall_back(query):
    at = _page("en", **query)
    key = at.session_state["demos_demo"]
    assert key in demos.DEMOS
    assert 0 <= at.session_state["demos_step"] < demos.num_steps(key)
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
    at = _page(lang, demo="condense", step="1")
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
        at = _page(lang, demo=key)
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
    at = _page(lang)
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
    at = _page("en", demo="where_stale", step="2")
    names = [t("demos", f"variant.{k}", "en") for k in ("v1", "v1_skip_commit", "v2", "v2_skip_gather")]
    tables = [(path, title.split(" — ")[0]) for path, title, _ in _charts(at.main)
              if title.split(" — ")[0] in names and not title.startswith("slot_mapping")]
    assert [name for _, name in tables] == [n for n in names for _ in range(2)]
    assert [p[-1] for p, _ in tables] == [0, 0, 1, 1, 0, 0, 1, 1]   # two bands, left column first


@pytest.mark.parametrize("key", ["condense", "dcp", "cudagraph", "hybrid", "v1_vs_v2", "where_stale"])
def test_presenter_mode_one_figure_per_screen(key):
    step = 1
    at = _page("en", demo=key, step=str(step), presenter="1")
    want = presenter_screens(screens_for(key, step, "en"), "en")
    titles = []
    for i in range(len(want)):
        charts = _charts(at.main)
        assert len(charts) == 1, (key, i, [c[1] for c in charts])
        titles.append(charts[0][1])
        assert at.subheader[0].value == want[i].title
        _click(at, "demos_fig_next")
    assert titles == [s.charts[0][1].layout.title.text.replace("<br>", " — ") for s in want]
    assert at.session_state["demos_fig"] == 0              # wrapped round to the first figure


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
    at.toggle(key="demos_presenter").set_value(True).run()
    assert not at.exception
    at.switch_page("pages/home.py").run()
    at.switch_page("pages/demos.py").run()
    assert not at.exception
    assert at.select_slider(key="demos_step").value == 2 and at.toggle(key="demos_presenter").value is True


def test_the_scenario_json_is_drawn_only_while_its_expander_is_open():
    """Folded, the scenario's code block is not on the page (not redrawn on every step); opened, it
    is the demo's scenario."""
    at = _page("en")
    key = at.session_state["demos_demo"]
    assert len(at.code) == 0 and any(e.label == t("demos", "ui.scenario", "en") for e in at.expander)
    at.session_state["demos.scenario_open"] = True
    at.run()
    assert not at.exception and len(at.code) == 1
    assert json.loads(at.code[0].value) == demos.DEMOS[key].scenario
    _click(at, "demos_next")                         # it stays open across steps
    assert len(at.code) == 1
