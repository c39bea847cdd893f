"""Real browser (Playwright + Debian chromium): open every page of issue 4, drive its main
control, save full-page screenshots to artifacts/screenshots/."""
import pytest

from kvviz.texts.i18n import t
from browser_support import (charts_drawn, needs_chromium, no_exception, shot,
                             wait_idle)

pytestmark = [pytest.mark.browser, needs_chromium()]


def set_number(page, label, value):
    box = page.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")
    wait_idle(page)


def test_home(server, page):
    from playwright.sync_api import expect

    page.goto(server)
    wait_idle(page)
    expect(page.get_by_text("CPU, Triton interpreter").or_(page.get_by_text("compiled Triton"))).to_be_visible()
    no_exception(page)
    shot(page, "01_home")


def test_batch(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/batch")
    wait_idle(page)
    charts_drawn(page)
    set_number(page, "Token of the step (or click a marker in the slot mapping)", 12)
    expect(page.get_by_text("slot = 4 × 4 + 2 = 18")).to_be_visible(timeout=30_000)
    # the gathered input table, slot mapping, slot buffer and V2's request-state table (default: main, V2)
    assert page.locator('.kv-live-chart').count() == 4
    no_exception(page)
    shot(page, "02_batch_token12")
    set_number(page, "Pool size (blocks)", 5)
    expect(page.get_by_text("pool is too small")).to_be_visible()
    shot(page, "03_batch_bad_pool")
    set_number(page, "Pool size (blocks)", 48)


def test_batch_link(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/batch?bs=8&kbs=8&nb=32&len=128&cg=1&reqs=5.5.1,12.12.1,16.16.1&tok=2")
    wait_idle(page)
    expect(page.get_by_text("match their references")).to_be_visible(timeout=60_000)
    no_exception(page)
    shot(page, "04_batch_link_decode")


def test_step_through(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/step_through")
    wait_idle(page)
    for _ in range(3):
        page.get_by_role("button", name="Next").click()
        wait_idle(page)
    expect(page.get_by_text("Step 4 of 8")).to_be_visible()
    no_exception(page)
    shot(page, "05_step_through_step3")


def pick(page, label, option):
    """Choose ``option`` in the selectbox labelled ``label``."""
    page.get_by_test_id("stSelectbox").filter(has_text=label).click()
    page.get_by_role("option", name=option).click()
    wait_idle(page)


def test_step_through_runner_v2(server, page):
    """Switch the step-through page to V1, then to V2: V2's own tables, idx_mapping and events."""
    from playwright.sync_api import expect

    page.goto(server + "/step_through")
    wait_idle(page)
    pick(page, "Model runner", "V1: persistent batch")
    expect(page.get_by_text("Shows vLLM main ef47a897e (2026-08-18) · Model Runner V1")).to_be_visible()
    expect(page.get_by_text("CPU block table (after the row operations)")).to_be_visible()
    pick(page, "Model runner", "V2: request states + gather")
    expect(page.get_by_text("Shows vLLM main ef47a897e (2026-08-18) · Model Runner V2")).to_be_visible()
    for _ in range(3):
        page.get_by_role("button", name="Next").click()
        wait_idle(page)
    expect(page.get_by_text("Step 4 of 8")).to_be_visible()
    expect(page.get_by_text("Request-state block table (rows by state index)")).to_be_visible()
    expect(page.get_by_text("Input block table (gathered, batch order)")).to_be_visible()
    expect(page.get_by_text("idx_mapping (batch position → request-state index)")).to_be_visible()
    expect(page.get_by_text("stale tails in batch row(s) 1", exact=False)).to_be_visible()
    expect(page.locator("code", has_text="gather").first).to_be_visible()
    no_exception(page)
    shot(page, "05b_step_through_runner_v2_step3")


def test_prefixes(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/prefixes?sc=prefixes&step=2")
    wait_idle(page)
    charts_drawn(page)
    # worked by hand from the scenario (blocks of 4, block 0 the null block): A's 10-token prompt
    # takes blocks 1, 2, 3 at step 0; B (same 8-token system prompt) hits its two full blocks 1, 2
    # at step 1 and gets 4 for its partial tail; at step 2 B forks and the fork holds B's full blocks
    # 1, 2 as well (its partial block is copied on write): 1 and 2 are held twice, nothing else
    expect(page.get_by_text("Blocks held by more than one request now: 1, 2.", exact=True)).to_be_visible()
    no_exception(page)
    shot(page, "06_prefixes_step2")


def test_csr(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/csr")
    wait_idle(page)
    set_number(page, "Empty padding rows to add", 3)
    expect(page.get_by_text("equal the reference")).to_be_visible(timeout=60_000)
    no_exception(page)
    shot(page, "07_csr")


def test_layout(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/layout")
    wait_idle(page)
    set_number(page, "byte offset", 104)
    # the default family is what vLLM main allocates (flashinfer_packed): the picked element (K of
    # block 1, offset 2, head 1, dim 0 of a 2 x 4 x 2 x 4 fp16 cache) sits at byte 208 in NHD
    expect(page.get_by_text("NHD: byte 208")).to_be_visible()
    no_exception(page)
    shot(page, "08_layout")


def _pcie_bytes(reqs, ctx=2048, bs=16, max_len=32768, q=1):
    """The page's model, recomputed by hand (int32 = 4 B, int64 = 8 B): a block-table row covers
    max_len rounded up to a multiple of lcm(128, bs) tokens; the full-width commit copies every row.
    Returns {strategy: total bytes} and the table width."""
    import math

    step = 128 * bs // math.gcd(128, bs)
    width = -(-max_len // step) * step // bs
    used = -(-ctx // bs)
    dirty = reqs if q >= bs else min(reqs, -(-reqs * q // bs))
    rest = reqs * q * 8 + (reqs + 1) * 4 + reqs * 4 + (reqs + 1) * 4 + reqs * 4   # positions .. last_page_len
    return {"full width (vLLM)": reqs * width * 4 + rest, "valid prefix only": reqs * used * 4 + rest,
            "dirty rows only": dirty * (width + 1) * 4 + rest,
            "dirty rows, valid prefix": dirty * (used + 1) * 4 + rest}, width, used, dirty


TABLE_ROWS = """() => [...document.querySelectorAll('[data-testid="stMarkdownContainer"] table tr')]
  .map(tr => [...tr.querySelectorAll('th,td')].map(c => c.innerText.trim()))"""


def test_pcie(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/pcie")
    wait_idle(page)
    for reqs in (64, 256):          # the default batch, then a bigger one
        if reqs != 64:
            set_number(page, "Requests in the batch", reqs)
        want, width, used, dirty = _pcie_bytes(reqs)
        assert (width, used) == (2048, 128)
        expect(page.get_by_text(f"Table width: {width} columns ({width * 16} tokens per row); {used} used per "
                                f"request; about {dirty} of {reqs} rows change per step.")).to_be_visible()
        rows = page.evaluate(TABLE_ROWS)
        total = next(r for r in rows if r and r[0] == "total")       # bytes per table and strategy
        assert [int(x) for x in total[1:5]] == list(want.values()), total
        assert int(next(r for r in rows if r and r[0] == "block table")[1]) == reqs * width * 4
        for name, nbytes in want.items():                             # model vs measured
            shown = t("pcie", "s_full") if name == "full width (vLLM)" else name    # the page names V1
            row = next(r for r in rows if r and r[0] == shown and len(r) == 4)
            assert int(row[1]) == nbytes and row[2] == f"{8 + nbytes / 25e3:.1f}", row
    assert want["full width (vLLM)"] == 2_103_304        # 256 x 2048 x 4 B block table + 6152 B of the rest
    no_exception(page)
    shot(page, "09_pcie_256")


def test_kernel_lab(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/kernel_lab")
    wait_idle(page)
    expect(page.get_by_text("NVIDIA H200").first).to_be_visible()     # opens on the recorded run here
    page.get_by_text("Measure here", exact=False).first.click()
    wait_idle(page)
    page.get_by_role("button", name="Run the benchmark").click()
    expect(page.get_by_text("measurements on")).to_be_visible(timeout=180_000)
    wait_idle(page)
    no_exception(page)
    shot(page, "10_kernel_lab")


def test_kernel_lab_recorded_run_and_upload(server, page, tmp_path):
    """A recorded H200 run on this CPU machine, re-plotted host-hidden warm; then an uploaded bench
    JSON: a broken one gives one error, a good one is shown."""
    import json
    from pathlib import Path

    from playwright.sync_api import expect

    page.goto(server + "/kernel_lab")
    wait_idle(page)        # on a CPU machine the lab opens on the recorded runs (no click needed)
    expect(page.get_by_text("NVIDIA H200").first).to_be_visible()
    page.get_by_text("host hidden, warm L2", exact=True).click()
    wait_idle(page)
    expect(page.get_by_text("goal: 1.5× the empty launch").first).to_be_visible()
    no_exception(page)
    shot(page, "10b_kernel_lab_recorded_warm")
    page.get_by_text("Open a bench JSON", exact=True).click()
    wait_idle(page)
    good = Path(__file__).resolve().parents[2] / "examples" / "bench" / "h200-2026-11-30.json"
    bad = tmp_path / "broken.json"
    d = json.loads(good.read_text())
    d["rows"][3]["us"] = "slow"
    bad.write_text(json.dumps(d))
    page.locator('input[type="file"]').set_input_files(str(bad))
    wait_idle(page)
    expect(page.get_by_text("This file cannot be shown: broken.json: row 3.us")).to_be_visible()
    page.locator('input[type="file"]').set_input_files(str(good))
    wait_idle(page)
    expect(page.get_by_text("Showing h200-2026-11-30.json.")).to_be_visible()
    no_exception(page)
    shot(page, "10c_kernel_lab_uploaded")


def test_kernel_lab_step_timeline(server, page):
    """The step timeline (issue 13) from the recorded fused-step run: pick a batch, groups and runner;
    the bars and their labels show, nothing raises; the goals are whole lines (not a clipped table)."""
    from playwright.sync_api import expect

    page.goto(server + "/kernel_lab")
    wait_idle(page)
    expect(page.get_by_text("One step's metadata").first).to_be_visible()
    page.get_by_text("V2 (Model Runner V2)", exact=True).click()
    wait_idle(page)
    page.get_by_text("4", exact=True).last.click()
    wait_idle(page)
    charts_drawn(page)       # the timeline's bars are chart text: drawn once on screen, or asked for
    # the newest recorded run (2026-12-04) has vLLM's own step kernels beside the fused launch
    expect(page.get_by_text("vLLM's own kernels: 3 launches").first).to_be_visible()
    expect(page.locator(".js-plotly-plot").nth(1)).to_contain_text("4 group(s), V2")
    # the goals: a summary, then the list folded (targets, not errors); opened, one whole line a goal
    import re

    expect(page.get_by_text(re.compile(r"^\d+ of \d+ speed goals met on NVIDIA H200")).first).to_be_visible()
    page.get_by_text(re.compile(r"^All \d+ goals")).first.click()
    expect(page.get_by_text("not met", exact=True).first).to_be_visible()
    no_exception(page)
    shot(page, "10d_kernel_lab_step_timeline")


def test_language_persists_across_pages(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/layout?lang=zh")
    wait_idle(page)
    expect(page.get_by_text("内存布局：NHD 与 HND")).to_be_visible()
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="逐步执行").click()
    wait_idle(page)
    expect(page.get_by_text("逐步执行场景")).to_be_visible(timeout=60_000)
    shot(page, "11_step_zh")


def test_chinese_is_drawn_with_the_font_the_app_serves(server, page):
    """The app serves Noto Sans SC itself (.streamlit/config.toml, static/fonts/): on a zh page the
    browser loads some of its faces, the CJK text can be drawn with them, and the plotly figures ask
    for the same stack, so no CJK font on the machine is needed."""
    page.goto(server + "/batch?lang=zh")
    wait_idle(page)
    charts_drawn(page)
    page.wait_for_timeout(1500)
    got = page.evaluate("""() => {
      const faces = [...document.fonts].filter(f => f.family.replace(/"/g, '') === 'Noto Sans SC');
      const p = [...document.querySelectorAll('p, h1')].find(e => /[\\u4e00-\\u9fff]/.test(e.textContent));
      const svg = [...document.querySelectorAll('svg text')].find(e => (e.style.fontFamily || '').length);
      return {faces: faces.length, loaded: faces.filter(f => f.status === 'loaded').length,
              check: document.fonts.check('16px "Noto Sans SC"', '块表槽位'),
              css: p ? getComputedStyle(p).fontFamily : '', svg: svg ? svg.style.fontFamily : ''};
    }""")
    assert got["faces"] >= 90 and got["loaded"] >= 1 and got["check"], got
    assert got["css"].index("Source Sans") < got["css"].index("Noto Sans SC"), got
    assert "Noto Sans SC" in got["svg"], got
    no_exception(page)
    shot(page, "02z_batch_zh_served_font")
