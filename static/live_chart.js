// kvviz's live chart: one plotly figure that keeps its identity across reruns (st.components.v2,
// keyed). st.plotly_chart remounts a chart whenever its figure changes (a new <div>, a full
// Plotly.newPlot); here the same <div> is updated:
//  - only the overlay changed (a selection: shapes and a few traces on top of an unchanged base):
//    Plotly.relayout of the shapes and Plotly.restyle of the overlay traces (~3x cheaper than react);
//  - otherwise Plotly.react, with every trace whose JSON text did not change passed as the very same
//    object, so plotly recomputes only what changed;
//  - a chart off screen is drawn when it comes on screen (below).
// plotly.js is its "cartesian" partial bundle at the pinned plotly package's version, served by the
// app itself (kvviz/views/live_chart.py, PLOTLY_BUNDLE: a third of the full bundle's time to start).
const PLOTLY_SRC = "app/static/plotly/plotly-cartesian.min.js";

function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__kvvizPlotly) {
    window.__kvvizPlotly = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = new URL(PLOTLY_SRC, document.baseURI).href;
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => { window.__kvvizPlotly = null; reject(new Error("plotly.js did not load")); };
      document.head.appendChild(s);
    });
  }
  return window.__kvvizPlotly;
}

function pointsOf(ev) {
  return (ev.points || []).map((p) => ({
    curve_number: p.curveNumber, point_index: p.pointIndex, point_number: p.pointNumber,
    x: p.x, y: p.y, customdata: p.customdata === undefined ? null : p.customdata,
  }));
}

function sameList(a, b) {
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((s, i) => s === b[i]);
}

// Draw ``data`` into ``div`` (plotly loaded); returns plotly's promise.
function draw(Plotly, div, data) {
  const overlay = data.overlay || { traces: [], shapes: "[]" };
  const last = div._kv || {};
  const config = Object.assign({ responsive: true }, data.config || {});
  // The PNG button's file name names the step; plotly redraws a chart from scratch (newPlot, ~3x a
  // react) when its config changes, so the chart keeps the options it was drawn with and the new
  // name is put where the button reads it at click time.
  const imageOptions = config.toImageButtonOptions;
  const setImageOptions = () => { if (div._context) div._context.toImageButtonOptions = imageOptions; };
  if (div._context && div._context.toImageButtonOptions) config.toImageButtonOptions = div._context.toImageButtonOptions;
  if (last.layout === data.layout && sameList(last.traces, data.traces) && last.fill === !!data.fill
      && last.overlayTraces && last.overlayTraces.length === overlay.traces.length) {
    if (last.overlayShapes === overlay.shapes && sameList(last.overlayTraces, overlay.traces)) {
      setImageOptions();
      return Promise.resolve();                                   // the very same figure
    }
    const steps = [];
    if (last.overlayShapes !== overlay.shapes) {
      const shapes = (last.baseShapes || []).concat(JSON.parse(overlay.shapes));
      steps.push(() => Plotly.relayout(div, { shapes }));
    }
    overlay.traces.forEach((s, i) => {
      if (s === last.overlayTraces[i]) return;
      const t = JSON.parse(s);
      const update = {};
      for (const k of Object.keys(t)) if (k !== "type") update[k] = [t[k]];
      steps.push(() => Plotly.restyle(div, update, [data.traces.length + i]));
    });
    div._kv = Object.assign({}, last, { overlayShapes: overlay.shapes, overlayTraces: overlay.traces });
    return steps.reduce((p, step) => p.then(step), Promise.resolve()).then(setImageOptions);
  }
  const layout = JSON.parse(data.layout);
  const baseShapes = layout.shapes || [];
  const extra = JSON.parse(overlay.shapes);
  if (extra.length) layout.shapes = baseShapes.concat(extra);
  if (data.fill) {                                                // fill the height the page gives
    delete layout.height;
    layout.autosize = true;
  }
  const oldJson = last.traces || [];
  const oldTraces = last.objects || [];
  const base = data.traces.map((s, i) => (oldJson[i] === s ? oldTraces[i] : JSON.parse(s)));
  const traces = base.concat(overlay.traces.map((s) => JSON.parse(s)));
  div._kv = { layout: data.layout, traces: data.traces, objects: base, baseShapes, fill: !!data.fill,
              overlayShapes: overlay.shapes, overlayTraces: overlay.traces };
  return Plotly.react(div, traces, layout, config).then(setImageOptions);
}

// A title or x axis title wider than the chart (a long translated title in a half-width column) is
// drawn smaller until it fits, down to MIN_TITLE_PX: plotly does not wrap or shrink titles, it cuts
// them at the chart's edge; one still out on a side is centred on the chart. Redone after every
// plotly redraw (a resize redraws them at full size).
const MIN_TITLE_PX = 12;   // readable from the back of a room (issue 33)

function fitTitles(div) {
  const svg = div.querySelector(".main-svg");
  if (!svg) return;
  const box = svg.getBoundingClientRect();
  for (const t of div.querySelectorAll(".gtitle, .xtitle")) {
    const r = t.getBoundingClientRect();
    const size = parseFloat(t.style.fontSize);
    if (!r.width || !size) continue;
    const anchor = t.getAttribute("text-anchor") || "start";
    const x = anchor === "middle" ? (r.left + r.right) / 2 : anchor === "end" ? r.right : r.left;
    const room = (anchor === "middle" ? 2 * Math.min(x - box.left, box.right - x)
      : anchor === "end" ? x - box.left : box.right - x) - 4;
    if (r.width > room && room > 0) t.style.fontSize = `${Math.max(MIN_TITLE_PX, Math.floor(size * room / r.width))}px`;
    const now = t.getBoundingClientRect();       // still out on one side (centred under an off-centre
    if (now.width < box.width - 4 && (now.left < box.left || now.right > box.right)) {   // plot): centre it
      const dx = (box.left + box.right) / 2 - (now.left + now.right) / 2;
      t.setAttribute("transform", `translate(${dx.toFixed(1)},0) ${t.getAttribute("transform") || ""}`.trim());
    }
  }
}

// Charts are drawn when they are on screen (an IntersectionObserver on the element that scrolls
// them): a rerun redraws only what the reader sees, a chart further down is drawn when scrolled to
// (half transparent until then if it shows an older figure). window.__kvvizDrawAll() draws every
// waiting chart now (tests, printing).
const AHEAD_PX = 0;      // drawn as soon as a pixel of it shows (~20-70 ms a chart)
const waiting = new Map();          // div -> [its latest draw, not run yet; the observer watching it]
const watchers = new Map();         // scrolling element (null: the viewport) -> its observer

// The element that scrolls the chart (Streamlit's main area scrolls, not the page): the observer's
// root, so that its margin reaches below what that element shows.
function scroller(div) {
  for (let e = div.parentElement; e && e !== document.body; e = e.parentElement) {
    const oy = getComputedStyle(e).overflowY;
    if ((oy === "auto" || oy === "scroll") && e.scrollHeight > e.clientHeight) return e;
  }
  return null;
}

function drawWaiting(div) {
  const w = waiting.get(div);
  if (!w) return;
  waiting.delete(div);
  w[1].unobserve(div);
  w[0]();
}

function whenSeen(div, run) {
  if (typeof IntersectionObserver === "undefined") { run(); return; }
  for (const [d, w] of [...waiting]) if (!d.isConnected) { waiting.delete(d); w[1].unobserve(d); }   // gone
  const root = scroller(div);
  let watcher = watchers.get(root);
  if (!watcher) {
    watcher = new IntersectionObserver((entries) => {
      for (const e of entries) if (e.isIntersecting) drawWaiting(e.target);
    }, { root, rootMargin: `${AHEAD_PX}px 0px ${AHEAD_PX}px 0px` });
    watchers.set(root, watcher);
  }
  const before = waiting.get(div);
  if (before) before[1].unobserve(div);
  waiting.set(div, [run, watcher]);
  if (div._kv) div.style.opacity = "0.45";                        // an older figure until drawn
  watcher.observe(div);                                           // observing anew reports it at once
}

window.__kvvizDrawAll = () => { for (const div of [...waiting.keys()]) drawWaiting(div); };

export default function (component) {
  const { parentElement, data, setTriggerValue } = component;
  let div = parentElement.querySelector("div.kv-live-chart");
  if (!div) {
    div = document.createElement("div");
    div.className = "kv-live-chart";
    div.style.width = "100%";
    parentElement.appendChild(div);
  }
  div._kvTrigger = setTriggerValue;
  if (data.fill) {
    div.style.height = "100%";
    if (parentElement.style) parentElement.style.height = "100%";
  } else {                                                        // the room is kept while plotly.js loads
    div.style.height = (data.height || 450) + "px";
  }
  const seq = (div._kvSeq || 0) + 1;
  div._kvSeq = seq;
  // one update at a time, in order: a newer figure waits for the one being drawn, and one that
  // was overtaken before its turn is skipped
  whenSeen(div, () => { div._kvQueue = (div._kvQueue || Promise.resolve()).then(() => loadPlotly()).then((Plotly) => {
    if (div._kvSeq !== seq) return undefined;
    return draw(Plotly, div, data).then(() => {
      div.style.opacity = "";
      fitTitles(div);
      if (!div._kvFits) { div.on("plotly_afterplot", () => fitTitles(div)); div._kvFits = true; }
      div.dataset.kvRev = String(seq);
      if (!div._kvBound && data.clicks) {
        div.on("plotly_click", (ev) => div._kvTrigger("select", { points: pointsOf(ev) }));
        div._kvBound = true;
      }
    });
  }).catch((err) => {
    div._kv = null;
    div.style.opacity = "";
    div.textContent = String(err && err.message ? err.message : err);
  }); });
  return undefined;
}
