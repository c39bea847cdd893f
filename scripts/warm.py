"""Warm a freshly started kvviz server: open every page once, as a student would, before the class.

    .venv/bin/python scripts/warm.py --url http://127.0.0.1:8501 [--wait 120] [--langs en,zh,es] [--pages a,b]

A fresh server imports the app's modules, starts its worker processes (the dump parser, the kernel
checker) and builds its shared figures and kernel checks on the first visit of each page: measured,
5.1 s for the home page and 6.9 s for Batch on this 2-core machine, 0.06–0.11 s once that is done.
This script pays those seconds instead of the first student: it opens one websocket session per
(page, language) (Streamlit's own protocol, ``scripts/bench_load_ws.Session``), runs the page as a
browser's first visit does (its default state) and closes it. ``scripts/serve.py`` runs it on every
replica before the balancer sends it anyone; ``make run`` runs it beside the server.
Prints one line per page (seconds, and any exception the page showed).
"""
from __future__ import annotations

import argparse
import ast
import asyncio
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


def page_names() -> list[str]:
    """The app's pages as Streamlit names them in a rerun ("" for the default, then each file's
    stem), read from ``ui.PAGES`` without importing ui (no streamlit, no torch in the launcher)."""
    tree = ast.parse((ROOT / "ui" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "PAGES" for t in node.targets):
            paths = [elt.elts[0].value for elt in node.value.elts]
            return ["" if i == 0 else Path(p).stem for i, p in enumerate(paths)]
    raise RuntimeError("ui/__init__.py has no PAGES list")


def wait_healthy(url: str, seconds: float) -> bool:
    """True once ``url``/_stcore/health answers ok, False after ``seconds``."""
    end = time.time() + seconds
    while time.time() < end:
        try:
            if urllib.request.urlopen(url.rstrip("/") + "/_stcore/health", timeout=2).read() == b"ok":
                return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


async def _warm(url: str, pages, langs, timeout: float) -> list[dict]:
    from bench_load_ws import Session

    out = []
    for lang in langs:
        for page in pages:
            s = Session(url.rstrip("/"), page, {"lang": lang}, timeout)
            rec = {"page": page or "home", "lang": lang}
            t0 = time.perf_counter()
            try:
                await s.connect()
                await s.rerun()
            except Exception as e:  # noqa: BLE001 - a page that fails to warm is reported, the rest go on
                rec["error"] = repr(e)[:200]
            finally:
                await s.close()
            rec["s"] = round(time.perf_counter() - t0, 3)
            rec["exceptions"] = [x for x in s.exceptions if not x.startswith("st.error")][:2]
            out.append(rec)
    return out


def warm(url: str, pages=None, langs=("en",), timeout: float = 180.0) -> list[dict]:
    """Open each page of ``pages`` (default: all) in each language once on the server at ``url``:
    [{page, lang, s, exceptions[, error]}]."""
    job = _warm(url, page_names() if pages is None else pages, langs, timeout)
    try:
        asyncio.get_running_loop()
    except RuntimeError:                  # no loop here (the usual case)
        return asyncio.run(job)
    from concurrent.futures import ThreadPoolExecutor   # a caller's loop runs (Playwright's sync API)

    with ThreadPoolExecutor(1) as ex:
        return ex.submit(asyncio.run, job).result()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8501")
    ap.add_argument("--wait", type=float, default=0.0, help="seconds to wait for the server to be healthy first")
    ap.add_argument("--langs", default="en", help="comma-separated languages (en, zh, es)")
    ap.add_argument("--pages", default=None, help="comma-separated page names (default: every page; home is '')")
    args = ap.parse_args()
    if args.wait and not wait_healthy(args.url, args.wait):
        print(f"warm: {args.url} not healthy after {args.wait:g} s", file=sys.stderr)
        return 1
    pages = None if args.pages is None else [("" if p == "home" else p) for p in args.pages.split(",")]
    t0 = time.perf_counter()
    recs = warm(args.url, pages, args.langs.split(","))
    for r in recs:
        print(f"warm {r['page']:<13} {r['lang']} {r['s']:6.2f} s {r.get('error', '')}{r['exceptions'] or ''}")
    print(f"warm: {len(recs)} page visits in {time.perf_counter() - t0:.1f} s")
    return 1 if any("error" in r for r in recs) else 0


if __name__ == "__main__":
    sys.exit(main())
