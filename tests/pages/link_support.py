"""What the link and restart browser tests share: driving a keyed widget, and a page's state as the
browser shows it (every keyed widget's value, the page's text, every chart's figure) to compare."""
import re

from browser_support import charts_drawn, quiet, wait_idle

# every keyed widget's value, by key (``st-key-<key>``, dots as dashes), as the browser shows it
WIDGETS_JS = """() => { const out = {};
  for (const el of document.querySelectorAll('[data-testid="stMain"] [class*="st-key-"], [data-testid="stSidebar"] [class*="st-key-"]')) {
    const k = [...el.classList].find(c => c.startsWith('st-key-')).slice(7);
    const sel = el.querySelector('[data-baseweb="select"]'), inp = el.querySelector('input'),
          sl = el.querySelector('[role="slider"]'), seg = el.querySelector('[role="radiogroup"]'),
          ta = el.querySelector('textarea');
    let v;
    if (sel) v = sel.innerText;
    else if (sl) v = sl.getAttribute('aria-valuetext') || sl.getAttribute('aria-valuenow');
    else if (seg) v = [...seg.querySelectorAll('[aria-checked="true"], input:checked')].map(a => a.innerText
                      || a.closest('label')?.innerText).join('|');
    else if (inp && inp.type === 'checkbox') v = inp.checked;
    else if (inp && inp.type !== 'file') v = inp.value;
    else if (ta) v = ta.value;
    else continue;
    out[k] = v; }
  return out; }"""

# every chart's figure: its title and a digest of its traces and shapes (the selection drawn on top)
CHARTS_JS = """() => [...document.querySelectorAll('.kv-live-chart')].map(d => {
  const s = JSON.stringify([(d.data || []).map(t => [t.type, t.x, t.y, t.z, t.text]), (d.layout || {}).shapes]);
  let h = 0; for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  const title = (d.layout && d.layout.title) ? (d.layout.title.text || d.layout.title) : '';
  return title + ' #' + h; })"""

VARYING = re.compile(r"µs|\bms\b|\d+(\.\d+)?\s*s\b")   # timings differ from one run to the next


def key(page, k):
    return page.locator(f'[class~="st-key-{k.replace(".", "-")}"]')


FIRST_KEY = {"csr": "csr.vllm", "layout": "lay.vllm", "batch": "batch.head", "notations": "notations_req",
             "kernel_lab": "lab.kernel", "dumps": "dumps.source", "step_through": "step.idx", "prefixes": "pre.pool",
             "pcie": "pcie.reqs", "": "lang.widget", "demos": "demos_step"}   # a widget drawn late on each page: there, it is drawn


def number(page, k, value):
    box = key(page, k).locator("input")
    box.fill(str(value))
    box.press("Enter")
    wait_idle(page)


def choose(page, k, option):
    """Pick the option whose text starts with ``option`` in selectbox ``k``."""
    box = key(page, k).locator("input")
    box.click()
    box.fill(option)   # the list is long (every release): typed, it holds the option near its top
    page.get_by_role("option").filter(has_text=re.compile("^" + re.escape(option))).first.click()
    wait_idle(page)


def press(page, k, label):
    """Click the segmented-control (or radio) option ``label`` of widget ``k``."""
    key(page, k).get_by_text(label, exact=True).click()
    wait_idle(page)


def flip(page, k):
    key(page, k).locator("label").first.click()
    wait_idle(page)


def state(page) -> dict:
    """The page as shown: widgets, text (timings left out), figures; and the address's path."""
    wait_idle(page)
    if page.locator(".kv-live-chart").count():
        charts_drawn(page)
    text = page.locator('[data-testid="stMain"]').inner_text()
    lines = [ln for ln in text.splitlines() if ln.strip() and not VARYING.search(ln)]
    return {"path": page.url.split("?")[0].rsplit("/", 1)[-1], "widgets": page.evaluate(WIDGETS_JS),
            "charts": page.evaluate(CHARTS_JS), "text": lines}


def arrives(page, want: dict, timeout_s: float = 120) -> dict:
    """The page's state once it equals ``want`` (a loaded machine draws a page in pieces), else the
    failing comparison."""
    import time

    end = time.monotonic() + timeout_s
    while True:
        got = state(page)
        if got == want or time.monotonic() > end:
            same_state(want, got)
            return got
        page.wait_for_timeout(1000)


def settled(page, timeout_s: float = 120) -> dict:
    """The page's state once two reads agree, the second after the page has not changed for 0.4 s (every
    rerun the changes caused is drawn; was: a second apart)."""
    import time

    end, last = time.monotonic() + timeout_s, state(page)
    while True:
        quiet(page)
        now = state(page)
        if now == last or time.monotonic() > end:
            return now
        last = now


def opened(page, url: str, k: str) -> None:
    """Go to ``url`` and wait until widget ``k`` is drawn and the run has ended."""
    page.goto(url)
    key(page, k).first.wait_for(timeout=120_000)
    wait_idle(page)


def same_state(a: dict, b: dict) -> None:
    assert a["path"] == b["path"]
    assert a["widgets"] == b["widgets"], {k: (a["widgets"].get(k), b["widgets"].get(k))
                                          for k in set(a["widgets"]) | set(b["widgets"])
                                          if a["widgets"].get(k) != b["widgets"].get(k)}
    assert a["charts"] == b["charts"]
    assert a["text"] == b["text"], [x for x in a["text"] if x not in b["text"]][:5] + \
        ["<->"] + [x for x in b["text"] if x not in a["text"]][:5]
