"""Real browser: play every demo to its end (each demo in one language, the languages taking
turns, so every demo and every language is played, on the newest release it plays on), then open a
presenter-mode link and step through its figures, saving screenshots to artifacts/screenshots/
(git-ignored) for a human to look at. where_stale gets a screenshot of every
presenter figure of its step. The release picker: a demo that cannot happen on the newest
release says so and one click shows it on the nearest release it can; picking another release
changes the caption, the figures and the figures' own sentences."""
import pytest

from browser_support import charts_drawn, needs_chromium, shot, wait_idle
from kvviz.views import demo_catalogue as demos
from kvviz.views.demos import presenter_screens, screens_for
from kvviz.views.runners import version_option
from kvviz.texts.i18n import LANGS, t

pytestmark = [pytest.mark.browser, needs_chromium()]

# the step screenshotted in presenter mode (the one whose narrative points at something to see)
SHOT_STEP = {"prefix": 0, "fork": 1, "preempt": 6, "chunked": 1, "condense": 3, "cudagraph": 1,
             "hybrid": 3, "kernel_block": 0, "dcp": 0, "pcie": 0, "v1_vs_v2": 2, "where_stale": 2}
EVERY_FIGURE = {"where_stale"}     # the most figures a step has (12); the others: their first two
# (language, demo): each demo once, the languages in turn
PLAN = [(list(LANGS)[i % len(LANGS)], key) for i, key in enumerate(demos.DEMO_KEYS)]


def test_the_plan_covers_every_demo_and_language():
    assert {k for _, k in PLAN} == set(demos.DEMO_KEYS)
    assert {lang for lang, _ in PLAN} == set(LANGS)
    assert set(SHOT_STEP) == set(demos.DEMO_KEYS)


def _no_error(page):
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0


def _charts(page):
    charts_drawn(page)
    return page.locator('.kv-live-chart').count()


@pytest.mark.parametrize("lang,key", PLAN)
def test_play_and_present(server, browser, lang, key):
    from playwright.sync_api import expect

    release = demos.nearest_playable(key, demos.DEFAULT_RELEASE)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(f"{server}/demos?demo={key}&step=0&lang={lang}&vllm={release}")
        wait_idle(page)
        expect(page.get_by_text(t("demos", f"{key}.step0", lang))).to_be_visible(timeout=60_000)
        n = demos.num_steps(key)
        for s in range(1, n):
            page.get_by_role("button", name=t("demos", "ui.next", lang)).click()
            expect(page.get_by_text(t("demos", f"{key}.step{s}", lang))).to_be_visible(timeout=60_000)
            wait_idle(page)
            _no_error(page)
        expect(page.get_by_role("button", name=t("demos", "ui.next", lang))).to_be_disabled()
        _charts(page)
        shot(page, f"demo_{key}_{lang}_end")

        # the link to a presenter-mode step restores it; one figure per screen
        step = SHOT_STEP[key]
        want = presenter_screens(screens_for(key, step, lang, release), lang)
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto(f"{server}/demos?demo={key}&step={step}&lang={lang}&presenter=1&vllm={release}")
        wait_idle(page)
        expect(page.get_by_text(t("demos", f"{key}.step{step}", lang)[:60])).to_be_visible(timeout=60_000)
        expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden()
        shot(page, f"presenter_{key}_{lang}_step{step + 1}_story")
        figures = len(want) if key in EVERY_FIGURE else min(2, len(want))
        for f in range(figures):
            page.get_by_role("button", name="›", exact=True).click()
            page.wait_for_function("(f) => new URLSearchParams(location.search).get('fig') === f",
                                   arg=str(f + 1), timeout=60_000)
            wait_idle(page)
            expect(page.get_by_text(want[f].notes[0][:40])).to_be_visible(timeout=60_000)
            assert _charts(page) == 1
            _no_error(page)
            shot(page, f"presenter_{key}_{lang}_step{step + 1}_fig{f + 1}")
    finally:
        page.close()


def test_presenter_language_selector(server, browser):
    """Presenter mode hides the sidebar; its own selector switches the whole page's language."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(f"{server}/demos?demo=fork&step=1&lang=en&presenter=1")
        wait_idle(page)
        expect(page.get_by_text(t("demos", "fork.step1", "en"))).to_be_visible(timeout=60_000)
        page.get_by_test_id("stMain").get_by_label(t("demos", "ui.language", "en")).click()
        page.get_by_role("option", name=LANGS["zh"], exact=True).click()
        wait_idle(page)
        expect(page.get_by_text(t("demos", "fork.step1", "zh"))).to_be_visible(timeout=60_000)
        _no_error(page)
        demo_box = page.get_by_test_id("stMain").get_by_role("combobox", name=t("demos", "ui.demo", "zh"))
        expect(demo_box).to_have_value(t("demos", "fork.title", "zh"))       # not the English title
        assert "lang=zh" in page.url
        shot(page, "presenter_fork_zh_after_switch")
    finally:
        page.close()


def test_release_picker(server, browser):
    """Condense shows the V1 model runner: on v0.34.0 (the default, no V1) it says so, with no figure;
    one click shows it on v0.33.0. Prefix on v0.11.0 (no V2 yet): V1's CPU table and mirror, and
    each figure's sentence follows."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(f"{server}/demos?demo=condense&step=1&lang=es")
        wait_idle(page)
        from kvviz.core.versions import LAST_V1_RELEASE

        expect(page.get_by_text(t("demos", "ui.no_v1", "es", release="v0.34.0", last=LAST_V1_RELEASE))).to_be_visible(
            timeout=60_000)
        assert page.locator(".kv-live-chart").count() == 0 and "vllm=v0.34.0" in page.url
        shot(page, "demos_condense_es_v0.34.0_refused")
        page.get_by_role("button", name=t("demos", "ui.show_on", "es", release="v0.33.0")).click()
        page.wait_for_function("() => location.search.includes('vllm=v0.33.0')", timeout=60_000)
        wait_idle(page)
        expect(page.get_by_text(t("demos", "condense.step1", "es"))).to_be_visible(timeout=60_000)
        assert _charts(page) >= 4
        _no_error(page)

        page.goto(f"{server}/demos?demo=prefix&step=1&lang=en")
        wait_idle(page)
        pool = [s for s in screens_for("prefix", 1, "en", "v0.34.0") if s.key.startswith("block_table")][0]
        expect(page.get_by_text(pool.notes[0][:60])).to_be_visible(timeout=60_000)
        box = page.get_by_test_id("stMain").get_by_role("combobox", name=t("demos", "ui.release", "en"))
        box.click()
        page.keyboard.type("v0.11.0")
        page.get_by_role("option", name=version_option("v0.11.0", "en")).click()
        page.wait_for_function("() => location.search.includes('vllm=v0.11.0')", timeout=60_000)
        wait_idle(page)
        expect(page.get_by_text("Shows vLLM v0.11.0 · Model Runner V1")).to_be_visible(timeout=60_000)
        v1 = [s for s in screens_for("prefix", 1, "en", "v0.11.0") if s.key.startswith("block_table")][0]
        expect(page.get_by_text(v1.notes[0][:60])).to_be_visible(timeout=60_000)
        expect(page.get_by_text(t("demos", "ui.cpu", "en"), exact=False).first).to_be_attached()
        _charts(page)
        _no_error(page)
        shot(page, "demos_prefix_en_v0.11.0")
    finally:
        page.close()


def test_notations_page(server, browser):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        for lang in ("zh", "es"):
            page.goto(f"{server}/notations?lang={lang}")
            wait_idle(page)
            expect(page.get_by_text(t("notations", "title", lang))).to_be_visible(timeout=60_000)
            _no_error(page)
            shot(page, f"notations_{lang}")
    finally:
        page.close()
