"""First visit of every page on a freshly started server, in a real chromium (issue 33, item 13).

    .venv/bin/python scripts/bench_first_visit.py [--mode warm|cold|both] [--pages batch,home] [--json OUT]

A student's first visit: a new browser context (nothing in its HTTP cache, a new session), from the
navigation's start to the page idle (``scripts/bench_browser.measured``: the script run over and no
DOM change for 0.5 s; the charts on screen drawn). ``cold``: each page is the first thing a freshly
started ``streamlit run app.py`` serves (one server per page), as before the warm-up. ``warm``: one
freshly started server, ``scripts/warm.py`` run on it as ``make run`` / ``make serve`` do at start, then
each page in its own new context. Prints, per page, the seconds (and the warm-up's own time), with
the load average before and after; ``--json`` writes them.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_browser import ARGS, CHROMIUM, FIRST, PROBE, measured  # noqa: E402
from bench_load import start_server, write_json  # noqa: E402
from warm import page_names, warm  # noqa: E402


def visit(browser, url: str, page: str) -> float:
    """Seconds of one first visit of ``page`` ("" = home) in a new context."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    ctx.add_init_script(PROBE + FIRST)
    try:
        tab = ctx.new_page()
        tab.goto(f"{url}/{page}")
        ms, _ = measured(tab)
        if tab.locator('[data-testid="stException"]').count():
            raise RuntimeError(f"{page or 'home'} shows an exception")
        return ms / 1000
    finally:
        ctx.close()


def stopped(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except Exception:  # noqa: BLE001
        proc.kill()
        proc.wait(timeout=10)


def run(mode: str, pages: list[str], browser) -> dict:
    out = {"mode": mode, "load_before": [round(x, 2) for x in os.getloadavg()], "pages": {}}
    if mode == "warm":
        proc, url = start_server()
        try:
            t0 = time.perf_counter()
            recs = warm(url)
            out["warm_s"] = round(time.perf_counter() - t0, 1)
            out["warm_pages_s"] = {r["page"]: r["s"] for r in recs}
            for p in pages:
                out["pages"][p or "home"] = round(visit(browser, url, p), 2)
                print(f"  {mode} {p or 'home':<13} {out['pages'][p or 'home']:.2f} s", flush=True)
        finally:
            stopped(proc)
    else:
        for p in pages:
            proc, url = start_server()
            try:
                out["pages"][p or "home"] = round(visit(browser, url, p), 2)
                print(f"  {mode} {p or 'home':<13} {out['pages'][p or 'home']:.2f} s", flush=True)
            finally:
                stopped(proc)
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def main() -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("warm", "cold", "both"), default="both")
    ap.add_argument("--pages", default=None, help="comma-separated (home, batch, ...); default: every page")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pages = page_names() if args.pages is None else [("" if p == "home" else p) for p in args.pages.split(",")]
    res = {"date": time.strftime("%Y-%m-%d %H:%M"), "runs": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for mode in (("cold", "warm") if args.mode == "both" else (args.mode,)):
                r = run(mode, pages, browser)
                res["runs"].append(r)
                worst = max(r["pages"].items(), key=lambda kv: kv[1])
                print(f"{mode}: slowest first visit {worst[0]} {worst[1]:.2f} s"
                      + (f"; warm-up {r['warm_s']} s" if "warm_s" in r else "")
                      + f"; load {r['load_before']} -> {r['load_after']}")
        finally:
            browser.close()
    if args.json:
        write_json(res, args.json)
    else:
        print(json.dumps(res))


if __name__ == "__main__":
    main()
