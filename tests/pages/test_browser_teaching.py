"""Real browser, as a student at 1280×720 sees the teaching pages (issue 33, items 7, 9, 10):
Memory layout, Step through and PCIe in English, Chinese and Spanish. On each: no exception, no
"None"; every chart title and axis title at 12 px or more (Step through's narrow tables shrank
theirs to ~10 px); in zh/es no chart title left in English. Memory layout's two charts are titled
NHD and HND with a colour bar; PCIe's three what-ifs are one a row, aligned, at the page's width,
each with its Model Runner V2 line. Screenshots: artifacts/screenshots/teaching_<page>_<lang>.png."""
import pytest

from browser_support import SHOTS, charts_drawn, needs_chromium, wait_idle
from kvviz.texts.i18n import _table

pytestmark = [pytest.mark.browser, needs_chromium()]

W, H = 1280, 720
PAGES = ["layout", "step_through", "pcie"]
LANGS = ["en", "zh", "es"]

# every drawn chart: its box, and each title's text, font size and box
CHARTS = """() => [...document.querySelectorAll('.kv-live-chart')].map(c => {
  const r = c.getBoundingClientRect();
  const titles = [...c.querySelectorAll('.gtitle, .xtitle, .ytitle, .cbtitle text')].map(e => {
    const b = e.getBoundingClientRect();
    return {text: e.textContent, px: parseFloat(getComputedStyle(e).fontSize), w: b.width,
            main: e.classList.contains('gtitle')};
  });
  return {l: r.left, w: r.width, titles, colorbar: !!c.querySelector('.colorbar'),
          traces: c.querySelectorAll('.scatterlayer .trace').length};
})"""


def _english_titles() -> set[str]:
    """The English chart texts that Chinese and Spanish translate (a title equal to one is left in English)."""
    out = set()
    for table in ("figures", "layout", "pcie", "step_through"):
        for key, texts in _table(table).items():
            en = texts.get("en", "")
            if "{" not in en and en and all(texts.get(lg) != en for lg in ("zh", "es")) and len(en) > 3:
                out.add(en)
    return out


@pytest.fixture(scope="module")
def tab(browser):
    ctx = browser.new_context(viewport={"width": W, "height": H})
    pg = ctx.new_page()
    yield pg
    ctx.close()


def _look(tab, page: str, lang: str, server: str) -> list[dict]:
    tab.set_viewport_size({"width": W, "height": H})
    tab.goto(f"{server}/{page}?lang={lang}")
    wait_idle(tab)
    charts_drawn(tab)
    tab.wait_for_timeout(600)
    charts = tab.evaluate(CHARTS)
    text = tab.get_by_test_id("stMain").inner_text()
    assert tab.locator('[data-testid="stException"]').count() == 0, (page, lang)
    assert "None" not in text.split(), (page, lang)
    SHOTS.mkdir(parents=True, exist_ok=True)
    h = tab.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    tab.set_viewport_size({"width": W, "height": max(h, H)})
    tab.wait_for_timeout(500)
    tab.screenshot(path=str(SHOTS / f"teaching_{page}_{lang}.png"), full_page=True)
    return charts


@pytest.mark.parametrize("lang", LANGS)
def test_teaching_pages_read_from_the_back_of_the_room(server, tab, lang):
    english = _english_titles() if lang != "en" else set()
    for page in PAGES:
        charts = _look(tab, page, lang, server)
        assert charts, page
        for c in charts:
            for ti in c["titles"]:
                if ti["text"].strip():
                    assert ti["px"] >= 12, (page, lang, ti)
                    assert ti["text"] not in english, (page, lang, ti)       # left in English
        if page == "layout":
            memory = [c for c in charts if c["colorbar"]]
            assert [next(ti["text"] for ti in c["titles"] if ti["main"]) for c in memory] == \
                ["NHD [B, N, H, 2D]", "HND [B, H, N, 2D]"]
        if page == "pcie":
            sweeps = charts[-3:]                  # the three what-ifs, one a row
            assert len({round(c["l"]) for c in sweeps}) == 1 and min(c["w"] for c in sweeps) > 800, sweeps
            assert all(c["traces"] >= 5 for c in sweeps)     # V1's four strategies and Model Runner V2
