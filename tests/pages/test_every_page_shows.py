"""Issue 25: every page says what it shows, in one caption (ui.shows): the vLLM release and the model
runner of a page with tables, bytes or transfers ("Shows vLLM v0.30.0 · Model Runner V2"), or, on a
page without a release, what it shows; and every version picker lists newest first, names the newest
release kvviz knows, and filters by prefix ("v0.3" finds v0.30.0 … v0.34.0, not v0.13.0)."""
import pytest

from page_support import app_test, open_page
from kvviz.core.versions import MAIN_COMMIT, NEWEST, RELEASES, VERSIONS, version_key
from kvviz.texts.i18n import LANGS, t
from kvviz.views import demo_catalogue as demos
from kvviz.views.runners import prefix_matches, shown_version
from ui import PAGES

PICKED = "v0.30.0"      # not any page's default: a caption naming it names the pick, not a constant
# the pages with a vLLM version picker: (page, picker key, runner key or None)
PICKERS = [("batch", "batch.vllm", "batch.runner"), ("step_through", "step.vllm", "step.runner"),
           ("prefixes", "pre.vllm", "pre.runner"), ("csr", "csr.vllm", "csr.runner"), ("layout", "lay.vllm", None),
           ("dumps", "dumps.profile", None), ("pcie", "pcie.vllm", "pcie.runner")]
NO_RELEASE = {"home": ("shows_home", {"oldest": RELEASES[0], "newest": NEWEST, "main": MAIN_COMMIT}),
              "kernel_lab": ("shows_kernel_lab", {}), "notations": ("shows_notations", {})}


def _captions(at) -> list[str]:
    return [c.value for c in at.caption]


def _shows(lang: str, *runs, backend=None) -> str:
    parts = [t("app", "run_backend", lang, version=shown_version(v), backend=backend) if r is None
             else t("app", "run", lang, version=shown_version(v), runner=r.upper()) for v, r in runs]
    return ":material/info: " + t("app", "shows", lang, what=" | ".join(parts))


def test_every_page_is_covered():
    pages = {p.removeprefix("pages/").removesuffix(".py") for p, _, _ in PAGES}
    # runs: the release its open run names, else its own caption (tests/pages/test_runs_page.py)
    assert pages == {p for p, _, _ in PICKERS} | set(NO_RELEASE) | {"demos", "runs"}


@pytest.mark.parametrize("lang", list(LANGS))
@pytest.mark.parametrize("page,key,runner_key", PICKERS)
def test_a_release_page_names_the_picked_release_and_runner(page, key, runner_key, lang):
    at = open_page(app_test(lang=lang), page)
    at.selectbox(key=key).set_value(PICKED).run()
    assert not at.exception, at.exception
    caps = _captions(at)
    if page == "layout":
        want = [_shows(lang, (PICKED, None), backend=at.selectbox(key="lay.backend").value)]
    elif page == "dumps":      # the default source: an injected bug's clean and buggy dumps, one runner each
        want = [_shows(lang, *[(PICKED, r) for r in rs]) for rs in (("v1",), ("v2",), ("v1", "v2"), ("v2", "v1"))]
    else:                      # auto: from v0.29.0 Model Runner V2 for every model
        want = [_shows(lang, (PICKED, "v2"))]
        at.selectbox(key=runner_key).set_value("v1").run()
        assert _shows(lang, (PICKED, "v1")) in _captions(at), _captions(at)
    assert any(w in caps for w in want), (want, caps)
    assert PICKED in " ".join(c for c in caps if c.startswith(":material/info: "))


@pytest.mark.parametrize("lang", list(LANGS))
@pytest.mark.parametrize("page", sorted(NO_RELEASE))
def test_a_page_without_a_release_says_what_it_shows(page, lang):
    at = app_test(lang=lang) if page == "home" else open_page(app_test(lang=lang), page)
    key, fmt = NO_RELEASE[page]
    assert ":material/info: " + t("app", key, lang, **fmt) in _captions(at), _captions(at)
    if page == "home":            # the home page says the newest release kvviz knows
        assert NEWEST in " ".join(_captions(at))


@pytest.mark.parametrize("lang", list(LANGS))
def test_a_demo_names_its_release_and_runner_in_presenter_mode_too(lang):
    at = open_page(app_test(lang=lang), "demos")
    at.session_state["demos_release"] = PICKED        # the demos page's release picker
    for presenter in (False, True):
        at.session_state["demos_presenter"] = presenter
        for key in ("prefix", "condense", "v1_vs_v2"):
            at.session_state["demos_demo"] = key
            at.session_state["demos_step"] = 0
            at.run()
            assert not at.exception
            runs = [(demos.play(key, i, release=PICKED).scenario.config.vllm,
                     demos.play(key, i, release=PICKED).history[0].runner) for i in range(len(demos.DEMOS[key].variants))]
            assert {v for v, _ in runs} == {PICKED}
            assert _shows(lang, *dict.fromkeys(runs)) in _captions(at), (key, presenter, _captions(at))


@pytest.mark.parametrize("lang", list(LANGS))
def test_demo_steps_are_counted_from_one_for_the_class(lang):
    at = open_page(app_test(lang=lang), "demos")
    at.session_state["demos_demo"] = "fork"
    at.run()
    n = demos.num_steps("fork")
    slider = at.select_slider(key="demos_step")
    assert list(slider.options) == [str(i) for i in range(1, n + 1)]
    assert t("demos", "ui.step_of", lang, k=1, n=n) in at.header[0].value
    at.button(key="demos_last").click().run()
    assert at.session_state["demos_step"] == n - 1
    head = at.header[0].value
    assert head.endswith(t("demos", "ui.step_of", lang, k=n, n=n)), head       # "Step 4 of 4"
    assert "0" not in t("demos", "ui.step_of", lang, k="", n="")                # no "(counted from 0)"


def _pickers(page, key):
    at = open_page(app_test(), page)
    return at, at.selectbox(key=key)


@pytest.mark.parametrize("page,key,_r", PICKERS)
def test_every_version_picker_newest_first_prefix_filtered_and_naming_the_newest(page, key, _r):
    at, box = _pickers(page, key)
    labels = list(box.options)
    versions = [lab.split(" ")[0] for lab in labels if lab.split(" ")[0] in VERSIONS]
    # newest first (main in its place, between v0.28.0 and v0.27.1), every version kvviz knows, no aliases
    assert versions == list(reversed(VERSIONS)), versions
    assert not any(a in " ".join(labels) for a in ("current", "2025-11", "2025-early", "profile"))
    # the picker itself says which release is the newest kvviz knows: its first version, and its help
    assert next(lab for lab in labels if lab.split(" ")[0] in VERSIONS) == t("app", "newest", "en", version=NEWEST)
    assert NEWEST in box.help
    # typing "v0.3" keeps v0.34.0 .. v0.30.0 and nothing else (prefix, not fuzzy: no v0.13.0, v0.23.0)
    modes = type(box.proto).DESCRIPTOR.fields_by_name["filter_mode"].enum_type.values_by_number
    assert modes[box.proto.filter_mode].name == "FILTER_MODE_PREFIX"
    found = [lab.split(" ")[0] for lab in prefix_matches(labels, "v0.3")]
    assert found == ["v0.34.0", "v0.33.0", "v0.32.0", "v0.31.0", "v0.30.0"]
    assert sorted(found, key=version_key, reverse=True) == found
    assert not at.exception


def test_the_debug_dumps_picker_was_oldest_first_before():
    """The dumps page's picker follows the same order as the others (it listed oldest first, then the
    aliases)."""
    from kvviz.views.dumps import PROFILE_CHOICES
    from kvviz.views.runners import VERSION_CHOICES

    assert PROFILE_CHOICES[1:] == VERSION_CHOICES and PROFILE_CHOICES[1] == NEWEST
