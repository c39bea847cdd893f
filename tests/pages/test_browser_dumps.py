"""Real browser: open the dumps page, inject a bug, check the first-wrong-row callout, then two
simulator steps; full-page screenshots go to artifacts/screenshots/dumps_*.png."""
import pytest

from browser_support import needs_chromium, no_exception, shot, wait_idle

pytestmark = [pytest.mark.browser, needs_chromium()]


def pick(pg, label, option):
    pg.get_by_label(label, exact=True).click()
    pg.get_by_role("option", name=option, exact=True).click()
    wait_idle(pg)


def test_dumps_bug(server, page):  # noqa: F811
    from playwright.sync_api import expect

    page.goto(server + "/dumps")
    wait_idle(page)
    expect(page.get_by_role("heading", name="Debug dumps")).to_be_visible(timeout=60_000)
    pick(page, "Bug", "Commit of too few rows")
    expect(page.get_by_text("first wrong row: 3", exact=False)).to_be_visible(timeout=30_000)
    page.get_by_text("Concept broken: CPU table and device mirror").first.click()
    wait_idle(page)
    page.get_by_text("block_table_device (what the kernel reads)").click()
    wait_idle(page)
    expect(page.get_by_text("Stale rows (device ≠ CPU): 3.")).to_be_visible()
    no_exception(page)
    shot(page, "dumps_bug_commit_too_few_rows")


def test_dumps_simulator(server, page):  # noqa: F811
    from playwright.sync_api import expect

    page.goto(server + "/dumps?lang=es")
    wait_idle(page)
    page.get_by_text("Dos pasos del simulador").click()
    wait_idle(page)
    pick(page, "Fallo inyectado en el motor", "skip_commit: el paso olvida confirmar")
    expect(page.get_by_text("primera fila errónea", exact=False).first).to_be_visible(timeout=30_000)
    no_exception(page)
    shot(page, "dumps_sim_skip_commit_es")
