"""Real browser sweep: every page of the app, in en, zh and es, at 1440x900 and 1280x720, must show
no "None" / "nan" / "NaN" and nothing cut off.

One streamlit server, one chromium, one tab reused for the whole module: each (page, language) is
loaded once (``?lang=`` picks the language of the new session), checked at 1440x900, then the same
tab is resized to 1280x720 and checked again. A viewport screenshot of both sizes goes to
artifacts/screenshots/sweep_<page>_<lang>_<w>.png.

What "visible" means: the elements in the page's main area and sidebar with a non-empty client
box (collapsed expanders and tabs that are not selected are not visible and are not checked).

The criteria (each finding names page, language, size, the element and the text):

* **None / nan** - a whole word "None", "nan" or "NaN" in the rendered text of the page
  (``innerText`` of the main area and the sidebar, the SVG text of plotly figures, and the text of
  every visible data-grid cell).
* **Ellipsis by CSS** - an element whose computed style has ``text-overflow: ellipsis`` and whose
  ``scrollWidth > clientWidth`` (the browser is drawing "…" in place of the end of its text: metric
  values and labels, widget labels, tabs, buttons).
* **Segmented controls / pills** - an option button whose text is wider than the button, or a button
  past the right edge of its group (clipped, no ellipsis).
* **Select boxes** - the chosen value is the text of the box's combobox ``input``: its
  ``measureText`` width (the input's own font) wider than the input's content box means the end of
  the option is clipped.
* **Metric values** - a ``stMetricValue`` (or its text child) with ``scrollWidth > clientWidth``,
  whatever the overflow style (clipped or ellipsized, the number is not all there).
* **Text ending in "…"** inside a metric, a widget label or a data-grid cell (a string cut short
  by the app itself).
* **Figures** (every plotly chart, drawn first if off screen), measured on the chart's SVG:
  - an axis title, chart title, tick label, annotation or cell label whose box reaches past the
    chart's ``.main-svg`` (the SVG cuts it: "request-state i", a y title longer than a short plot);
  - a title over the tick labels, over another title or over a legend entry (a long y title run
    up into the chart's title), compared on the glyphs (the box less its leading);
  - a label (annotation, heatmap cell number, bar or point text) over another trace's markers
    (a stale-tail cross on a block id; an open marker round a number is fine when the number
    fits inside it) or over a scatter line (sampled every 2 px along the path: a "goal" label
    written over the data's last points).
  Besides every page's default, ``EXTRA_STATES`` lists states that draw what the default does not.
* **Static tables** (``st.table``, markdown tables) - a table wider than its element's place: either
  scrolled inside it (columns hidden to the right) or drawn past its right edge.
* **st.dataframe (glide data grid)** - the cells are drawn on a canvas, so the DOM has no element
  widths to compare. Glide keeps an accessibility table in the DOM with the text of every
  *visible* cell and header; the column boundaries are read from the canvas itself: the x
  positions where a vertical line of the grid's border colour (``--gdg-border-color``) runs
  through the header and the first two rows. For each column the width the text needs is
  ``measureText`` of the longest visible cell (the grid's own font, ``--gdg-base-font-style`` and
  ``--gdg-font-family``) plus twice ``--gdg-cell-horizontal-padding`` (and, for the header, the
  column-type icon of editable columns). The accessibility table holds a number's *raw* value
  while the canvas draws it through the column's format (``%.1f``...), so a cell holding a
  fraction (``37178.766999``, ``2.3e-07``) is left out of the width check; integers and text are
  drawn as they are held and are checked. A column narrower than that by more than 1 px draws a
  clipped text: a finding. A grid whose scroller is wider than its viewport (``scrollWidth >
  clientWidth`` of ``.dvn-scroller``) hides whole columns to the right: a finding too, since a
  projector has no horizontal scroll (a grid of more than ``MAX_RECORD_COLUMNS`` columns is an
  array view, e.g. a slot-mapping row, and may scroll; its column widths are then not checked,
  since the canvas no longer starts at the first column). The fix in the app is a ``column_config`` width (or a wider
  table, fewer or shorter columns, text that wraps elsewhere), which this measures directly.
"""
from __future__ import annotations

import os
import re

import pytest

from browser_support import IDLE, SHOTS, charts_drawn, needs_chromium, quiet, wait_idle
from kvviz.texts.i18n import LANGS
from ui import PAGES

pytestmark = [pytest.mark.browser, needs_chromium()]

SIZES = [(1440, 900), (1280, 720)]
# Pages other work is restructuring now (issue 12): checked, findings listed in artifacts, not failed.
OPEN_PAGES: set[str] = set()
MAX_RECORD_COLUMNS = 14   # a grid with more columns is an array view, meant to scroll sideways
PAGE_PATHS = ["" if i == 0 else path.split("/")[-1].removesuffix(".py") for i, (path, _, _) in enumerate(PAGES)]
# states past a page's default that draw what the default does not (name, path with its query,
# whether only the figures are checked there)
EXTRA_STATES = [("step_through_stale", "step_through?sc=lifecycle&step=3", False),   # V2's stale tails, crossed
                # a demo's pool figures in a narrow column; the page's other findings in its later steps (a
                # markdown table at 1280 px, a long select value) are the page's own work, not checked here
                ("demos_prefix_1", "demos?demo=prefix&step=1", True)]
BAD_WORD = re.compile(r"(?<![\w.])(None|nan|NaN)(?![\w(])")

# The probe run in the page: returns a list of findings, each {"kind", "where", "text"}.
PROBE = r"""
() => {
  const MAX_RECORD_COLUMNS = %d;
  const out = [];
  const seen = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && el.getClientRects().length > 0; };
  const name = el => (el.closest('[data-testid]') || el).getAttribute('data-testid') || el.tagName;
  const roots = [...document.querySelectorAll('[data-testid=stMain], [data-testid=stSidebar]')].filter(seen);
  // 1. words None / nan in the rendered text (innerText skips what is not rendered)
  for (const r of roots) out.push({kind: 'text', where: r.getAttribute('data-testid'), text: r.innerText});
  for (const t of document.querySelectorAll('.kv-live-chart svg text')) if (seen(t)) out.push({kind: 'text', where: 'plotly', text: t.textContent});
  // 1b. the words of the page outside code spans / blocks (for the one-language check)
  const words = [];
  for (const r of roots) {
    const walk = document.createTreeWalker(r, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const el = n.parentElement;
      if (!el || el.closest('code, pre, kbd, [data-testid=stCode], table[role=grid], [data-testid=stIconMaterial], [translate=no], [role=img]') || !seen(el)) continue;
      if (n.textContent.trim()) words.push(n.textContent);
    }
  }
  for (const t of document.querySelectorAll('.kv-live-chart svg text')) if (seen(t)) words.push(t.textContent);
  for (const th of document.querySelectorAll('[data-testid=stDataFrame] table[role=grid] th')) words.push(th.textContent);
  out.push({kind: 'words', where: 'page', text: words.join('\n')});
  // 2. CSS ellipsis actually in use, 3. metric values not all shown, 4. strings cut with "…"
  for (const r of roots) for (const el of r.querySelectorAll('*')) {
    if (!seen(el) || el.closest('[data-testid=stDataFrame]') || el.closest('.js-plotly-plot')) continue;
    const cs = getComputedStyle(el);
    if (cs.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1)
      out.push({kind: 'ellipsis', where: name(el), text: el.textContent});
  }
  // a select box's chosen value (the text of its combobox input) wider than the input: clipped
  const m0 = document.createElement('canvas').getContext('2d');
  for (const el of document.querySelectorAll('[data-testid=stSelectbox] input, [data-testid=stMultiSelect] input')) {
    if (!seen(el) || !el.value) continue;
    const cs = getComputedStyle(el);
    m0.font = cs.font;
    const avail = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    if (m0.measureText(el.value).width > avail + 1) out.push({kind: 'select', where: 'stSelectbox', text: el.value});
  }
  // segmented controls and pills: an option wider than its button is clipped without an ellipsis
  for (const g of document.querySelectorAll('[data-testid=stButtonGroup]')) {
    if (!seen(g)) continue;
    const box = g.getBoundingClientRect();
    for (const b of g.querySelectorAll('button')) {
      const r = b.getBoundingClientRect();
      if (seen(b) && (b.scrollWidth > b.clientWidth + 1 || r.right > box.right + 1)) out.push({kind: 'option', where: 'stButtonGroup', text: b.textContent});
    }
  }
  for (const el of document.querySelectorAll('[data-testid=stMetricValue], [data-testid=stMetricValue] > div')) {
    if (seen(el) && el.scrollWidth > el.clientWidth + 1) out.push({kind: 'metric', where: 'stMetricValue', text: el.textContent});
  }
  for (const el of document.querySelectorAll('[data-testid=stMetricValue], [data-testid=stMetricLabel], [data-testid=stWidgetLabel]')) {
    if (seen(el) && el.textContent.trim().endsWith('…')) out.push({kind: 'cut', where: name(el), text: el.textContent});
  }
  // 4a. chart titles, x axis titles and legend entries cut at the chart's edge (plotly neither wraps nor shrinks them)
  for (const c of document.querySelectorAll('.kv-live-chart')) {
    const svg = c.querySelector('.main-svg');
    if (!svg || !seen(svg)) continue;
    const b = svg.getBoundingClientRect();
    for (const t of c.querySelectorAll('.gtitle, .xtitle, .legendtext')) {
      const r = t.getBoundingClientRect();
      if (r.width && (r.left < b.left - 1 || r.right > b.right + 1)) out.push({kind: 'chart title', where: 'plotly', text: t.textContent});
    }
  }
  // 4c. figures: axis titles, tick labels, annotations and cell labels drawn past the chart's
  // edges (the svg cuts them), axis titles over tick labels, labels over a trace's line or markers
  const meet = (a, b, pad) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > pad && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > pad;
  // a text's glyphs: its box less the line's leading across the text (a y title runs upwards)
  const core = t => { const r = t.getBoundingClientRect(), up = /rotate\(-?90/.test(t.getAttribute('transform') || '');
    const d = 0.2 * (up ? r.width : r.height);
    return up ? {left: r.left + d, right: r.right - d, top: r.top + 1, bottom: r.bottom - 1}
              : {left: r.left + 1, right: r.right - 1, top: r.top + d, bottom: r.bottom - d}; };
  const textOf = t => t.textContent.trim();
  for (const c of document.querySelectorAll('.kv-live-chart')) {
    const svg = c.querySelector('.main-svg');
    if (!svg || !seen(svg)) continue;
    const b = svg.getBoundingClientRect();
    const chart = (c.querySelector('.gtitle') || c.querySelector('text[class$=title]') || {textContent: '?'}).textContent.slice(0, 50);
    const where = `plotly "${chart}"`;
    const outside = r => r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1;
    const titles = [...c.querySelectorAll('text[class$=title]')].filter(t => seen(t) && textOf(t) && !t.closest('.legend'));
    const ticks = [...c.querySelectorAll('g[class$=tick] > text')].filter(t => seen(t) && textOf(t));
    const labels = [...c.querySelectorAll('.annotation-text, .heatmap-label text, .textpoint text, text.bartext')].filter(t => seen(t) && textOf(t));
    for (const [kind, list] of [['axis title', titles], ['tick label', ticks], ['label', labels]])
      for (const t of list) if (outside(t.getBoundingClientRect())) out.push({kind: 'figure: ' + kind + ' cut', where, text: textOf(t)});
    const legend = [...c.querySelectorAll('.legend .legendtext')].filter(t => seen(t) && textOf(t));
    titles.forEach((t, i) => {
      const r = core(t);
      const over = ticks.find(k => meet(r, k.getBoundingClientRect(), 1));
      if (over) out.push({kind: 'figure: title over tick labels', where, text: `${textOf(t)} / ${textOf(over)}`});
      const other = [...titles.slice(i + 1), ...legend].find(u => meet(r, core(u), 1));
      if (other) out.push({kind: 'figure: title over another title or the legend', where, text: `${textOf(t)} / ${textOf(other)}`});
    });
    // a label written on its own trace's marker (a number in a square) is meant; another trace's is not
    // an open marker (a square round a cell's number) is crossed only by a text reaching its outline
    const marks = [...c.querySelectorAll('.scatterlayer .points path.point')].filter(seen).map(p => {
      const cs = getComputedStyle(p), r = p.getBoundingClientRect();
      const open = cs.fill === 'none' || parseFloat(cs.fillOpacity) === 0;
      const w = (parseFloat(cs.strokeWidth) || 1) + 1;
      return [p.closest('.trace'), r, open ? {left: r.left + w, right: r.right - w, top: r.top + w, bottom: r.bottom - w} : null];
    });
    const inside = (a, b) => a.left >= b.left && a.right <= b.right && a.top >= b.top && a.bottom <= b.bottom;
    const lines = [];
    for (const p of c.querySelectorAll('.scatterlayer path.js-line')) {
      if (!seen(p)) continue;
      const m = p.getScreenCTM(), n = p.getTotalLength();
      for (let s = 0; s <= n; s += 2) { const q = p.getPointAtLength(s); lines.push(new DOMPoint(q.x, q.y).matrixTransform(m)); }
    }
    for (const t of labels) {
      const r = core(t);
      if (marks.some(([tr, m, hole]) => tr !== t.closest('.trace') && meet(r, m, 1) && !(hole && inside(r, hole)))) { out.push({kind: 'figure: label over markers', where, text: textOf(t)}); continue; }
      if (lines.some(q => q.x > r.left && q.x < r.right && q.y > r.top && q.y < r.bottom)) out.push({kind: 'figure: label over a line', where, text: textOf(t)});
    }
  }
  // 4b. static tables (st.table, markdown tables): wider than their place means columns hidden to the right
  for (const tb of document.querySelectorAll('[data-testid=stTable], [data-testid=stMarkdownContainer]:has(table)')) {
    if (!seen(tb)) continue;
    // a table drawn past the right edge of its place (overflow visible): over the next column or off screen
    const host = tb.closest('[data-testid=stElementContainer]') || tb;
    const drawn = tb.querySelector('table') || tb;
    if (drawn.getBoundingClientRect().right > host.getBoundingClientRect().right + 1) {
      out.push({kind: 'table', where: 'wider than its place', text: (tb.querySelector('thead') || tb).innerText.slice(0, 120)}); continue;
    }
    for (const el of [tb, ...tb.querySelectorAll('*')]) {
      const cs = getComputedStyle(el);
      if ((cs.overflowX === 'auto' || cs.overflowX === 'scroll' || cs.overflowX === 'hidden') && el.scrollWidth > el.clientWidth + 1) {
        out.push({kind: 'table', where: 'stTable', text: (tb.querySelector('thead') || tb).innerText.slice(0, 120)}); break;
      }
    }
  }
  // 5. data grids: columns narrower than their visible text, columns scrolled out of view
  const hex = s => { const m = (s || '').trim().match(/^#?([0-9a-f]{6})$/i); if (!m) return null; const n = parseInt(m[1], 16); return [n >> 16, (n >> 8) & 255, n & 255]; };
  const meter = document.createElement('canvas').getContext('2d');
  const FRACTION = /^-?\d*\.\d+(e[-+]?\d+)?$|^-?\d+(\.\d+)?e[-+]?\d+$/i;
  for (const d of document.querySelectorAll('[data-testid=stDataFrame]')) {
    if (!seen(d)) continue;
    const ed = d.querySelector('.stDataFrameGlideDataEditor');
    const cv = d.querySelector('canvas[data-testid=data-grid-canvas]');
    const sc = d.querySelector('.dvn-scroller');
    const table = d.querySelector('table[role=grid]');
    if (!ed || !cv || !sc || !table) { out.push({kind: 'grid', where: 'stDataFrame', text: 'grid not rendered'}); continue; }
    const heads = [...table.querySelectorAll('thead th')].map(t => t.textContent);
    const rows = [...table.querySelectorAll('tbody tr')].map(tr => [...tr.querySelectorAll('td')]);
    const label = heads.filter(Boolean).slice(0, 3).join(' | ');
    for (const row of rows) for (const td of row) {
      const s = td.textContent;
      out.push({kind: 'text', where: 'grid ' + label, text: s});
      if (s.trim().endsWith('…')) out.push({kind: 'cut', where: 'grid ' + label, text: s});
    }
    if (sc.scrollWidth > sc.clientWidth + 1) {
      // a long array (many columns) is meant to scroll sideways; a record table is not
      // glide's accessibility table lists the visible columns only; aria-colcount is all of them
      if ((+table.getAttribute('aria-colcount') || heads.length) <= MAX_RECORD_COLUMNS)
        out.push({kind: 'grid-scroll', where: 'grid ' + label, text: `columns scrolled out of view: ${sc.scrollWidth}px of columns in ${sc.clientWidth}px`});
      continue;   // the columns on the canvas are no longer the first ones: widths unknown
    }
    const st = getComputedStyle(ed);
    const border = hex(st.getPropertyValue('--gdg-border-color'));
    const pad = parseFloat(st.getPropertyValue('--gdg-cell-horizontal-padding')) || 8;
    const family = st.getPropertyValue('--gdg-font-family');
    const font = st.getPropertyValue('--gdg-base-font-style') + ' ' + family;
    const hfont = st.getPropertyValue('--gdg-header-font-style') + ' ' + family;
    if (!border) continue;
    const dpr = window.devicePixelRatio || 1, W = cv.width, H = cv.height;
    const img = cv.getContext('2d').getImageData(0, 0, W, H).data;
    const isB = (x, y) => { const i = (y * W + x) * 4; return Math.abs(img[i] - border[0]) < 4 && Math.abs(img[i + 1] - border[1]) < 4 && Math.abs(img[i + 2] - border[2]) < 4; };
    const ys = [8, 26, 44, 62].map(y => Math.round(y * dpr)).filter(y => y < H);
    const edges = [0];
    for (let x = 1; x < W; x++) if (ys.every(y => isB(x, y)) && x - edges[edges.length - 1] > 2) edges.push(x);
    if (W - edges[edges.length - 1] > 3) edges.push(W);
    const widths = edges.slice(1).map((e, i) => (e - edges[i]) / dpr).slice(-heads.length);   // a row-marker column has no header
    const off = heads.length - widths.length;
    heads.forEach((h, c) => {
      const w = widths[c - off];
      if (w === undefined) return;
      const editable = rows.length && rows[0][c] && rows[0][c].getAttribute('aria-readonly') === 'false';
      meter.font = hfont;
      let need = h ? meter.measureText(h).width + 2 * pad + (editable ? 22 : 0) : 0;
      let what = h;
      meter.font = font;
      for (const row of rows) if (row[c]) {
        const txt = row[c].textContent;
        if (FRACTION.test(txt)) continue;   // a raw float: the canvas draws it through the column's format
        const tw = meter.measureText(txt).width + 2 * pad; if (tw > need) { need = tw; what = txt; } }
      if (need > w + 1) out.push({kind: 'grid-cell', where: 'grid ' + label + ` (column "${h}", ${Math.round(w)}px)`, text: `${what} needs ${Math.round(need)}px`});
    });
  }
  return out;
}
"""


# One language at a time: on a zh or es page, any of these English words outside code spans,
# code blocks and identifiers is a half translation. Chosen so that none is a Spanish word nor a
# loanword the Chinese texts keep (token, batch, slot, prefill, decode...).
ENGLISH = {"the", "of", "and", "is", "are", "was", "with", "from", "this", "that", "these", "which", "when",
           "where", "what", "block", "blocks", "request", "requests", "row", "rows", "step", "steps", "table",
           "tables", "column", "columns", "shows", "shown", "each", "every", "into", "after", "before", "only",
           "not", "have", "than", "then", "there", "their", "its", "by", "on", "in", "at", "it", "an", "or",
           "to", "for", "yes", "none", "free", "held", "cached", "written", "device",
           "pages", "page", "show", "hide", "run", "click", "copy", "download", "figure", "here", "measured"}
# identifiers and names that stay as they are in every language (the tokeniser already skips
# snake_case, dotted and digit-bearing words and code spans)
ALLOWED = {"vLLM", "FlashInfer", "Triton", "CUDA", "PCIe", "NHD", "HND", "CSR", "GPU", "CPU", "KV", "H200"}
WORD = re.compile(r"\w[\w.'-]*")


def english_words(text: str) -> list[str]:
    """The lines of ``text`` holding an English stop word (``ENGLISH``), each once, as context."""
    hits = []
    for line in text.splitlines():
        if line.lstrip().startswith(("{", "[")):      # a JSON text (a scenario in a text box)
            continue
        for m in WORD.finditer(line):
            w = m.group(0).rstrip(".'-")
            if line[m.end():m.end() + 1] == "[":      # an array indexed: table[0, 0]
                continue
            if "_" in w or "." in w or w in ALLOWED or any(c.isdigit() for c in w):
                continue
            if w.lower() in ENGLISH and not w.isupper():
                hits.append(f"{w!r} in {line.strip()[:140]!r}")
                break
    return hits


def findings(page, lang: str) -> list[dict]:
    bad = []
    got = page.evaluate(PROBE % MAX_RECORD_COLUMNS)
    if any(f["kind"] == "grid" for f in got):
        # a grid caught re-mounting (its canvas replaced after a layout change, seen on a loaded
        # machine): settle and look once more; a grid that never draws is still reported
        _settle(page)
        got = page.evaluate(PROBE % MAX_RECORD_COLUMNS)
    for f in got:
        if f["kind"] == "words":
            if lang != "en":
                bad += [{"kind": "english", "where": f["where"], "text": w} for w in english_words(f["text"])]
            continue
        if f["kind"] == "text":
            for m in BAD_WORD.finditer(f["text"]):
                ctx = f["text"][max(0, m.start() - 40):m.end() + 40].replace("\n", " ")
                bad.append({"kind": "none/nan", "where": f["where"], "text": ctx})
        else:
            bad.append(f)
    return bad


def _settle(page):
    wait_idle(page)
    page.wait_for_selector(IDLE)
    if page.locator('.kv-live-chart').count():   # charts off screen too: every figure is checked
        charts_drawn(page, timeout=30_000)
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=stDataFrame]')].every("
                           "d => d.querySelector('canvas[data-testid=data-grid-canvas]') && d.querySelector('table[role=grid]'))",
                           timeout=30_000)
    # charts and grids draw after the run ends: until the page stops changing (was a fixed 1.2 s)
    quiet(page)


@pytest.fixture(scope="module")
def tab(browser):
    pg = browser.new_page(viewport={"width": SIZES[0][0], "height": SIZES[0][1]})
    yield pg
    pg.close()


def test_english_word_scan():
    """Stop words are found as words, not inside identifiers, names or other words."""
    assert english_words("No se puede construir este lote: the pool is too small") != []
    assert english_words("请求 A 的 block_table 行; slot_mapping[3] = 14; vLLM; NHD; Theorem; blockchain") == []
    assert english_words('table[0, 0] = 物理块 1\n{"requests": [{"id": "A"}]}') == []
    assert english_words("tabla de bloques por solicitud; aún no\n每个请求一行; los kernels") == []
    assert len(english_words("the row\nof blocks")) == 2


def test_bad_word_pattern():
    """The word filter: whole words only (not "nano", "Nonetheless", "annan", "x.nan")."""
    hits = lambda s: [m.group(0) for m in BAD_WORD.finditer(s)]  # noqa: E731
    assert hits("measured: None") == ["None"] and hits("max err nan, NaN") == ["nan", "NaN"]
    assert hits("nanoseconds Nonetheless banana np.nan NoneType isnan(") == []


@pytest.mark.parametrize("lang", list(LANGS))
def test_every_page_nothing_cut_no_none(server, tab, lang):
    problems = []
    only = [p for p in os.environ.get("SWEEP_PAGES", "").split(",") if p]   # a developer's subset
    states = [(p or "home", p, False) for p in PAGE_PATHS] + EXTRA_STATES
    for name, path, figures_only in [st for st in states if not only or st[0] in only or st[1].split("?")[0] in only]:
        tab.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
        tab.goto(f"{server}/{path}{'&' if '?' in path else '?'}lang={lang}")
        _settle(tab)
        assert tab.locator('[data-testid="stException"]').count() == 0, f"{name} {lang}: exception"
        for w, h in SIZES:
            if (w, h) != SIZES[0]:
                tab.set_viewport_size({"width": w, "height": h})
                quiet(tab)                   # the relayout (plotly, grids) done: was a fixed 0.9 s
            SHOTS.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(SHOTS / f"sweep_{name}_{lang}_{w}.png"))
            for f in findings(tab, lang):
                if figures_only and not f["kind"].startswith("figure: "):
                    continue
                problems.append(f"{name} [{lang} {w}x{h}] {f['kind']} in {f['where']}: {f['text'][:160]!r}")
    problems = list(dict.fromkeys(problems))
    # pages being restructured by other work in progress (issue 12): their findings are written
    # to artifacts/sweep_open_<lang>.txt, not asserted, until they are fixed; every other page must be clean
    open_ = [p for p in problems if p.split(" ")[0] in OPEN_PAGES]
    SHOTS.parent.mkdir(parents=True, exist_ok=True)
    # a developer's subset (SWEEP_PAGES=a,b) writes its own file: the whole sweep's list stays as it was
    out = f"sweep_open_{lang}.txt" if not only else f"sweep_open_{lang}.{'+'.join(only)}.txt"
    (SHOTS.parent / out).write_text("\n".join(open_) + "\n", encoding="utf-8")
    problems = [p for p in problems if p not in open_]
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)
