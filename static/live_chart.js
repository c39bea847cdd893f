// kvviz's live chart: one plotly figure that keeps its identity across reruns (st.components.v2,
// keyed). A rerun that changes the figure calls Plotly.react on the same <div>: traces whose JSON is
// unchanged are passed as the very same objects, so plotly redraws only what changed (a moved
// selection box is a layout shape: no heatmap is recomputed or redrawn). st.plotly_chart instead
// remounts the chart whenever its figure changes (a full Plotly.newPlot, ~250 ms of browser CPU per
// chart). plotly.js is the copy shipped with the pinned plotly package, served by the app itself.
const PLOTLY_SRC = "app/static/vendor/plotly.min.js";

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
  if (div._kvLayout === data.layout && div._kvJson && div._kvJson.length === data.traces.length
      && data.traces.every((s, i) => s === div._kvJson[i])) {
    return undefined;                                   // the same figure: nothing to draw
  }
  const layout = JSON.parse(data.layout);
  if (data.fill) {                                      // fill the height the page gives the chart
    div.style.height = "100%";
    parentElement.style && (parentElement.style.height = "100%");
    delete layout.height;
    layout.autosize = true;
  } else {
    div.style.height = (layout.height || 450) + "px";   // the room is kept while plotly.js loads
  }
  const seq = (div._kvSeq || 0) + 1;
  div._kvSeq = seq;
  loadPlotly().then((Plotly) => {
    if (div._kvSeq !== seq) return;                     // a newer figure came meanwhile
    div._kvLayout = data.layout;
    const oldJson = div._kvJson || [];
    const oldTraces = div._kvTraces || [];
    const traces = data.traces.map((s, i) => (oldJson[i] === s ? oldTraces[i] : JSON.parse(s)));
    div._kvJson = data.traces;
    div._kvTraces = traces;
    const config = Object.assign({ responsive: true }, data.config || {});
    return Plotly.react(div, traces, layout, config).then(() => {
      div.dataset.kvRev = String(seq);
      if (!div._kvBound && data.clicks) {
        div.on("plotly_click", (ev) => div._kvTrigger("select", { points: pointsOf(ev) }));
        div._kvBound = true;
      }
    });
  }).catch((err) => {
    div.textContent = String(err && err.message ? err.message : err);
  });
  return undefined;
}
