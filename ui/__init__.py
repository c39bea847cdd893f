"""Streamlit helpers shared by the pages (kvviz itself never imports streamlit).

The page list (app.py's navigation and the home page's links), language, the shared kernel
backend (one lock around every launch), downloads, plotly charts with a PNG button, and widget
values that survive a page switch. ``ui/dcp.py`` (``from ui import dcp``) runs a batch on W ranks.
"""
from __future__ import annotations

import json
import os
import runpy
import sys
import threading

import streamlit as st

from kvviz.views.safe_text import plain  # noqa: F401 (pages show outside text through ui.plain)

from kvviz.texts.i18n import DEFAULT_LANG, t

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # the app's folder (ui/ is in it)

# (file, title: a key of kvviz/texts/app.py or a plain title, icon). app.py builds the navigation
# from it and the home page links every page after the first; to add a page, add one line.
PAGES = [
    ("pages/home.py", "nav_home", ":material/home:"),
    ("pages/batch.py", "nav_batch", ":material/table_chart:"),
    ("pages/step_through.py", "nav_step", ":material/play_circle:"),
    ("pages/prefixes.py", "nav_prefixes", ":material/account_tree:"),
    ("pages/csr.py", "nav_csr", ":material/view_list:"),
    ("pages/layout.py", "nav_layout", ":material/memory:"),
    ("pages/pcie.py", "nav_pcie", ":material/swap_horiz:"),
    ("pages/kernel_lab.py", "nav_kernel_lab", ":material/speed:"),
    ("pages/demos.py", "nav_demos", ":material/school:"),
    ("pages/notations.py", "nav_notations", ":material/translate:"),
    ("pages/dumps.py", "nav_dumps", ":material/bug_report:"),
    ("pages/runs.py", "nav_runs", ":material/history:"),
]


def ensure_app_shell() -> None:
    """Call first in every page. Because a ``pages/`` folder exists, Streamlit runs a deep-linked
    page *without* app.py on a fresh server's first run (and AppTest on every run after
    ``switch_page``): no sidebar, no language, no wide layout. Then turn that legacy mode off
    and run app.py here, in this same run (widget values and clicks intact): its
    ``st.navigation`` runs this page again, fully; this outer run stops."""
    from streamlit.runtime.pages_manager import PagesManager

    release_other_pages(os.path.basename(sys._getframe(1).f_code.co_filename))
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        runpy.run_path(os.path.join(_ROOT, "app.py"), run_name="__main__")
        st.stop()


# --- heavy parsing off the server's threads ----------------------------------------------------------

OFF_THREAD_BYTES = 1 << 20     # an upload or paste this big is parsed in the worker process
WORKER_NICE = 10               # the worker runs at a lower CPU priority than the server


@st.cache_resource
def _parse_pool():
    """One worker process shared by every session: a big dump is parsed (and validated) there, so
    the JSON parse does not hold the server's GIL while other students step through their pages."""
    _fixed_mmap_threshold()
    # niced: the parse takes the CPU the server's threads leave idle, not theirs
    return _niced_worker()


def _niced_worker():
    """A pool of one spawned worker process at WORKER_NICE, started now from a plain ``__main__``.
    During a script run Streamlit's ``__main__`` is the page's module, with the page's file: a
    worker spawned then would run that page again as its own main module (a whole page drawn with
    no session, its imports and data in the worker's memory), and a page that starts a worker
    itself would then fail to start it."""
    import multiprocessing
    import types
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                               initializer=os.nice, initargs=(WORKER_NICE,))
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        pool.submit(int).result(timeout=120)
    finally:
        sys.modules["__main__"] = main
    return pool


def _fixed_mmap_threshold(nbytes: int = 128 * 1024) -> None:
    """Have glibc's malloc map every block of ``nbytes`` or more on its own (and unmap it when freed).
    By default the threshold grows to the largest block freed so far (up to 32 MiB), so after the
    first big paste the next ones are carved from the heaps of the server's threads, and what they
    leave is kept by the process: measured, the server kept +136..+156 MB after a class of 5 dropped
    10 pastes of 5.8 MB, +93..+111 MB with this (tests/pages/test_server_rss.py). Elsewhere than
    glibc: nothing."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-3, nbytes)      # -3: M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        pass


def read_upload(data: bytes, name: str):
    """(dump, None) or (None, one sentence), as ``kvviz.views.dumps.read_upload``; past
    ``OFF_THREAD_BYTES`` in the shared worker process (a spinner meanwhile). The bytes go to the
    worker as bytes and the validated Dump comes back; nothing the user sent is unpickled."""
    from kvviz.views import dumps as view

    if len(data) < OFF_THREAD_BYTES:
        return view.read_upload(data, name)
    try:
        with st.spinner(f"{plain(name)}: {len(data) / 1e6:.1f} MB"):
            return _parse_pool().submit(view.read_upload, data, name).result(timeout=180)
    except Exception as e:  # noqa: BLE001 - a broken or slow worker: one sentence, never a traceback
        _parse_pool.clear()
        return None, f"{name} could not be read ({type(e).__name__})"


# --- per-session memory: state a page owns lives only while that page is shown ---------------------

def own_while_shown(page: str, keys) -> None:
    """Register session-state ``keys`` (big things: parsed uploads) as owned by ``page`` (its file
    name, e.g. "dumps.py"): they are dropped as soon as another page runs in this session."""
    owned = st.session_state.setdefault("ui.owned", {})
    owned[page] = sorted(set(owned.get(page, ())) | set(keys))


def release_other_pages(page: str) -> None:
    """Drop what every page other than ``page`` owns (``own_while_shown``)."""
    owned = st.session_state.get("ui.owned")
    if not owned:
        return
    for other in [p for p in owned if p != page]:
        drop(owned.pop(other))


def drop(keys) -> None:
    """Pop ``keys`` from session state; when any held something, run a full garbage collection once
    this run has ended. The server runs without Streamlit's post-run collection (``runner.postScriptGC``
    off for a classroom's latency), and a page's run is a reference cycle (its functions hold its
    globals) that the widgets and deferred downloads it drew keep alive until the end of the next run:
    collected during this run, the last run's uploads would wait for Python's own, late, collector
    (measured after a class of 5: +63 MB collected in the run, +4 MB after it). Dropping big state is
    rare, so its cost is paid rarely, and not in the student's rerun."""
    dropped = [st.session_state.pop(key, None) for key in keys]
    if any(v is not None for v in dropped):
        del dropped
        _collect_after(threading.current_thread())


def _collect_after(thread, wait_s: float = 30.0) -> None:
    """A full collection once ``thread`` (a session's script thread: it ends when its runs do) has
    ended, or after ``wait_s`` (a session rerunning on and on)."""
    import gc

    def collect():
        thread.join(wait_s)
        gc.collect()

    threading.Thread(target=collect, name="ui.drop collect", daemon=True).start()


def take_paste(prefix: str, s: str, min_bytes: int) -> None:
    """``on_change`` of paste box ``{prefix}.paste_{s}``: a paste of ``min_bytes`` or more is taken out
    of the box (emptied, so the browser does not send it back on every rerun) into
    ``{prefix}.pasted_{s}`` (bytes, for this run to read once) and its size into ``{prefix}.cleared_{s}``;
    a small paste stays in the box, to be edited. Here, not in the page: Streamlit keeps every widget's last callback for the session's life (even
    once the widget is gone, and 120 s past the tab's close), and a callback defined in a page script
    keeps that script's whole run alive, the pasted text and the parsed dumps with it (issue 11:
    ~12 MB a session after it switched away, tests/pages/test_server_rss.py)."""
    text = st.session_state.get(f"{prefix}.paste_{s}") or ""
    if len(text) >= min_bytes:
        st.session_state[f"{prefix}.pasted_{s}"] = text.encode()
        st.session_state[f"{prefix}.cleared_{s}"] = len(text)
        st.session_state[f"{prefix}.paste_{s}"] = ""


def lang() -> str:
    return st.session_state.get("lang", DEFAULT_LANG)


def texts(page: str):
    """tr = texts("batch"); tr("title") -> the page's prose in the chosen language."""
    code = lang()
    return lambda key, **fmt: t(page, key, code, **fmt)


# --- the kernel backend: shared by every session, one launch at a time -------------------

@st.cache_resource
def _backend_lock() -> threading.Lock:
    return threading.Lock()


@st.cache_resource
def backend_label() -> dict:
    from kvviz.gpu import harness as backend

    return backend.device_label()


OFF_THREAD_KERNELS = ("run_batch", "run_csr")   # kvviz.gpu.harness checks a page runs for its batch
KERNEL_RESULTS_MAX = 32


@st.cache_resource
def _kernel_pool():
    """One worker process for the Triton interpreter's kernel checks, shared by every session: the
    interpreter is seconds of numpy under the GIL, which here would stall every other session's
    script run; there it takes the CPU the server leaves idle (niced), one check at a time."""
    return _niced_worker()


@st.cache_resource
def kernel_results() -> dict:
    """Checks already run, shared by every session: {digest of (kernel, batch, options): result},
    the newest KERNEL_RESULTS_MAX, plus counters ("pool": runs in the worker, "shared": reuses)."""
    return {"results": {}, "pool": 0, "shared": 0, "lock": threading.Lock()}


def _kernel_key(fn, args, kwargs) -> str | None:
    import hashlib
    import pickle

    if kwargs.get("seed") is not None:           # an explicit seed asks for exactly that run
        return None
    try:
        blob = pickle.dumps((fn.__module__, fn.__name__, args, sorted(kwargs.items())), protocol=5)
    except Exception:  # noqa: BLE001 - not picklable: run it here, uncached
        return None
    return hashlib.sha256(blob).hexdigest()


def run_backend(fn, *args, **kwargs):
    """Call a kvviz.gpu.harness / kvviz.gpu.bench function. In the Triton interpreter the batch
    checks (``OFF_THREAD_KERNELS``) run in the shared kernel worker process, and a batch already
    checked for any session is answered from ``kernel_results`` (a check draws its own random K/V:
    any run of it is as good as another). Everything else runs here under the process-wide lock."""
    return start_backend(fn, *args, **kwargs)()


def start_backend(fn, *args, **kwargs):
    """:func:`run_backend` started now and answered later: returns ``wait()``, which gives the
    result (or raises). A check that goes to the worker process runs there while this run goes on
    drawing the rest of the page; anything else has already run when this returns."""
    off_thread = (getattr(fn, "__module__", "") == "kvviz.gpu.harness" and fn.__name__ in OFF_THREAD_KERNELS
                  and backend_label().get("mode") == "interpreter")
    key = _kernel_key(fn, args, kwargs) if off_thread else None
    if key is None:
        try:
            with _backend_lock():
                res = fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - raised again by wait(), where run_backend's caller expects it
            err = e

            def failed():
                raise err
            return failed
        return lambda: res
    shared = kernel_results()
    with shared["lock"]:
        hit = shared["results"].get(key)
        if hit is not None:
            shared["shared"] += 1
            return lambda: hit
    from concurrent.futures import TimeoutError as FutureTimeout
    from concurrent.futures.process import BrokenProcessPool

    try:
        future = _kernel_pool().submit(fn, *args, **kwargs)
    except BrokenProcessPool:
        _kernel_pool.clear()
        future = _kernel_pool().submit(fn, *args, **kwargs)

    def wait():
        try:
            with st.spinner(texts("app")("kernel_worker")):
                res = future.result(timeout=600)
        except (BrokenProcessPool, FutureTimeout) as e:   # the worker died or hung: a fresh one next time
            _kernel_pool.clear()
            raise RuntimeError(f"the kernel worker process failed ({type(e).__name__})") from None
        with shared["lock"]:
            shared["pool"] += 1
            shared["results"][key] = res
            while len(shared["results"]) > KERNEL_RESULTS_MAX:
                shared["results"].pop(next(iter(shared["results"])))
        return res
    return wait


def device_text(label: dict) -> str:
    """The kernel backend in the page's language: the CPU's Triton interpreter, or a GPU's name."""
    tr = texts("app")
    if label.get("mode") == "interpreter":
        return tr("device_cpu")
    return tr("device_gpu", device=label["device"])


# --- widgets whose value survives leaving the page ------------------------------------------

def kept(key: str, default):
    """Value for a widget's ``value=``: what the user last chose on this page (stored under
    ``key + '.kept'``), else ``default``. Call ``keep(key)`` after the widget."""
    return st.session_state.get(key + ".kept", default)


def keep(*keys: str) -> None:
    """Remember the widgets' current values (under ``key + '.kept'``) for the next visit."""
    for key in keys:
        if key in st.session_state:
            st.session_state[key + ".kept"] = st.session_state[key]


def restore(defaults: dict) -> None:
    """Give each widget key of ``defaults`` that has no value (Streamlit forgets a widget's value
    when its page is left) what the user last chose (``keep``), else its default. Call before
    drawing the widgets, and ``keep`` the same keys after."""
    S = st.session_state
    for key, default in defaults.items():
        if key not in S:
            S[key] = S.get(key + ".kept", default)


def restore_scenario_link(prefix: str, names: list[str], default_name: str, default_idx: int) -> None:
    """On a page's first visit in this session, take scenario and step from a link (``?scenario=``,
    ``&step=``; validated, with warnings for what was refused); then put the page's scenario and
    step widgets (``prefix.sc``, ``prefix.idx``) back to what the user last chose, and show the
    link's warnings."""
    from kvviz.views import links as share

    S = st.session_state
    if f"{prefix}.visited" not in S:
        name, idx, S[f"{prefix}.warnings"] = share.decode_scenario(st.query_params, names,
                                                                  lambda n: len(replay(n)[1]))
        S[f"{prefix}.sc.kept"] = name or default_name
        S[f"{prefix}.idx.kept"] = idx if idx is not None else default_idx
        vllm, runner, more = share.decode_version_runner(st.query_params)
        if vllm is not None:
            S[f"{prefix}.vllm.kept"] = vllm
        if runner is not None:
            S[f"{prefix}.runner.kept"] = runner
        S[f"{prefix}.warnings"] = [*S[f"{prefix}.warnings"], *more]
        S[f"{prefix}.visited"] = True
    restore({key: S[key + ".kept"] for key in (f"{prefix}.sc", f"{prefix}.idx")})
    for w in S.get(f"{prefix}.warnings", []):
        st.warning(plain(w), icon=":material/link_off:")


def restore_version_link(prefix: str) -> None:
    """On a page's first visit in this session, take the vLLM version and runner from a link
    (``?vllm=``, ``&runner=``; validated, with a warning for what was refused) into the page's selectors
    (``prefix.vllm``, ``prefix.runner``, see ``version_runner``); show those warnings on every run."""
    from kvviz.views import links as share

    S = st.session_state
    if f"{prefix}.vr_link_read" not in S:
        vllm, runner, S[f"{prefix}.vr_link_warnings"] = share.decode_version_runner(st.query_params)
        for key, value in ((f"{prefix}.vllm", vllm), (f"{prefix}.runner", runner)):
            if value is not None:
                S[key] = S[key + ".kept"] = value
        S[f"{prefix}.vr_link_read"] = True
    for w in S.get(f"{prefix}.vr_link_warnings", []):
        st.warning(plain(w), icon=":material/link_off:")


def pool_view(prefix: str, rec):
    """The "pool after this step's finishes / at the kernels' launch" selector of the scenario pages
    (key ``prefix.pool``, kept across page visits) and its caption; returns (when, free queue, ref
    counts) of ``rec`` for the chosen moment."""
    from kvviz.views import scenarios as stepper

    S = st.session_state
    key = f"{prefix}.pool"
    tr = texts("step_through")
    if S.get(key) not in stepper.POOL_WHEN:
        S[key] = S.get(key + ".kept") or "after"
    st.segmented_control(tr("pool_when"), stepper.POOL_WHEN, key=key, required=True,
                         format_func=lambda w: tr("when_" + w))
    when = S[key] or "after"
    keep(key)
    queue, refs = stepper.pool_state(rec, when)
    gone = stepper.finished_after_launch(rec)
    st.caption(tr("pool_diff", reqs=", ".join(gone)) if gone else tr("pool_same"))
    return when, queue, refs


# --- output ------------------------------------------------------------------------------------

_LIVE_JS = os.path.join(_ROOT, "static", "live_chart.js")


@st.cache_resource
def _live_chart():
    """The live chart component (static/live_chart.js): a keyed chart keeps its <div> across
    reruns and is updated in place with ``Plotly.react`` (st.plotly_chart remounts a chart whenever
    its figure changes: ~250 ms of browser CPU per chart and interaction)."""
    with open(_LIVE_JS, encoding="utf-8") as f:
        js = f.read()
    return st.components.v2.component("kvviz_live_chart", js=js, isolate_styles=False)


def chart_config(name: str) -> dict:
    """Every chart's plotly config: a PNG button named ``name``; no plotly logo, and no "Share chart"
    (plotly.js offers to upload the chart to Plotly Cloud unless told not to) or Chart Studio button."""
    return {"displaylogo": False, "showSendToCloud": False, "showEditInChartStudio": False,
            "modeBarButtonsToRemove": ["sendChartToCloud", "sendDataToCloud"],
            "toImageButtonOptions": {"format": "png", "filename": name, "scale": 2}}


def plot(fig, key: str, name: str, on_select=None, height: str | None = None, overlay: dict | None = None):
    """A plotly chart with a PNG button (modebar) named ``name``, drawn by the live chart component
    (updated in place across reruns: ``key`` must name the same chart from one rerun to the next).
    ``fig``: a figure, or a payload made once (:func:`payload_once`); ``overlay``: traces and shapes
    added on top (a selection). ``on_select``: called when a point is clicked; :func:`picked_points`
    then reads the point. ``height="stretch"``: the chart fills the height its container gives it."""
    from kvviz.views.live_chart import chart_payload, with_overlay

    if isinstance(fig, dict) and "traces" in fig:
        payload = dict(fig, config=chart_config(name), clicks=on_select is not None)
    else:
        payload = chart_payload(fig, chart_config(name), clicks=on_select is not None)
    payload = with_overlay(payload, overlay)
    payload["fill"] = height == "stretch"
    kwargs = {"on_select_change": on_select} if on_select is not None else {}
    return _live_chart()(key=key, data=payload, height="stretch" if payload["fill"] else "content", **kwargs)


_PAYLOADS: dict = {}      # id(owner) -> OrderedDict(key -> payload); an entry goes with its owner
_PAYLOADS_LOCK = threading.Lock()
PAYLOADS_PER_OWNER = 48


def payload_once(owner, key: tuple, build):
    """The chart payload of figure ``build()``, made once per ``owner`` (a shared, cached object such
    as an explored batch: the payloads live as long as it does) and ``key``; the last
    PAYLOADS_PER_OWNER are kept. Shared between sessions: never mutate what this returns."""
    import weakref
    from collections import OrderedDict

    from kvviz.views.live_chart import chart_payload

    with _PAYLOADS_LOCK:
        mine = _PAYLOADS.get(id(owner))
        if mine is None:
            mine = _PAYLOADS[id(owner)] = OrderedDict()
            weakref.finalize(owner, _PAYLOADS.pop, id(owner), None)
        hit = mine.get(key)
        if hit is not None:
            mine.move_to_end(key)
            return hit
    payload = chart_payload(build())
    with _PAYLOADS_LOCK:
        mine[key] = payload
        while len(mine) > PAYLOADS_PER_OWNER:
            mine.popitem(last=False)
    return payload


def picked_points(key: str) -> list[dict]:
    """The points clicked on chart ``key`` in the rerun this click caused (dicts with
    ``curve_number``, ``point_index``, ``x``, ``y``, ``customdata``); [] if none."""
    value = st.session_state.get(key)
    event = value.get("select") if hasattr(value, "get") else None
    return list(event.get("points") or []) if hasattr(event, "get") else []


def _figure_html(fig) -> str:
    """A standalone HTML page of ``fig`` (a figure, or a chart payload: :func:`payload_once`)."""
    if isinstance(fig, dict) and "traces" in fig:
        import plotly.graph_objects as go

        from kvviz.views.live_chart import payload_figure

        fig = go.Figure(payload_figure(fig))
    return fig.to_html(include_plotlyjs=True, config=chart_config("figure"))


def lazy_expander(label: str, key: str, **kwargs):
    """(expander, open): an expander whose content the page draws only while it is open (opening
    it reruns the page). A folded code block or JSON view is then not redrawn on every rerun:
    st.code's highlighter cost the Demos page ~30 ms of browser time per step while folded."""
    box = st.expander(label, key=key, on_change="rerun", **kwargs)
    return box, bool(box.open)


# a wide small table (the Batch page's eleven request columns) in a smaller type with narrower cell padding,
# so that it fits the page's column at 1280 px in every language; the app's own rule, no user text in it
COMPACT_TABLE_CSS = ("<style>[class*='st-key-compact-'] table{font-size:0.875rem}"
                     "[class*='st-key-compact-'] th,[class*='st-key-compact-'] td{padding:0.3rem 0.45rem}</style>")


def table(data, labels: dict | None = None, compact: str | None = None):
    """A small table that changes with each step or input: one markdown table, headers through
    ``labels``, text escaped, "—" for a missing cell (:func:`kvviz.views.frames.markdown_table`).
    ``compact``: a name unique on the page; the table is drawn in the compact style
    (:data:`COMPACT_TABLE_CSS`). (A markdown table shows no ``help`` icon: put it on the heading.)"""
    from kvviz.views.frames import markdown_table

    text = markdown_table(data, labels)
    if compact is None:
        return st.markdown(text)
    st.html(COMPACT_TABLE_CSS)
    with st.container(key=f"compact-{compact}"):
        return st.markdown(text)


def download_fig(fig, name: str, key: str, label: str = "HTML"):
    st.download_button(f":material/download: {label}", lambda: _figure_html(fig),
                       file_name=f"{name}.html", mime="text/html", key=key, on_click="ignore")


def download_csv(df, name: str, key: str, label: str = "CSV"):
    st.download_button(f":material/download: {label}", lambda: df.to_csv(index=False),
                       file_name=f"{name}.csv", mime="text/csv", key=key, on_click="ignore")


def download_json(obj_fn, name: str, key: str, label: str = "JSON"):
    """``obj_fn``: a callable returning the object (built only when clicked)."""
    st.download_button(f":material/download: {label}", lambda: json.dumps(obj_fn(), indent=1, default=str),
                       file_name=f"{name}.json", mime="application/json", key=key, on_click="ignore")


# --- scenarios: replayed once per text, shared safely (each caller gets its own copy) ---------

@st.cache_data(max_entries=8, ttl=1800, show_spinner=False)   # a replay may hold up to 256 MiB
def replay(source: str, vllm: str | None = None, runner: str | None = None):
    """(scenario, records) of a built-in name or a JSON text, under the ``vllm`` version and
    ``runner`` (auto | v1 | v2) a page chose (None: the scenario's own config); BadInput propagates."""
    from kvviz.views import scenarios as stepper

    sc = stepper.load(source, vllm=vllm, runner=runner)
    return sc, stepper.replay(sc)


STEP_FIGURES_MAX = 512     # Step through's figure sets kept for every session (~25 KB each)


def _build_step_figures(part: str, scenario, records, idx: int, lang: str, option) -> dict:
    """The step's figures as chart payloads (JSON made here, once, not on each draw: a Next press
    then only sends them), with the step's other values as they are."""
    import plotly.graph_objects as go

    from kvviz.views import scenarios as stepper
    from kvviz.views.live_chart import chart_payload

    if part == "tables":
        out = stepper.step_table_figures(scenario, records, idx, lang, after=bool(option))
    else:
        out = stepper.step_pool_figures(records, idx, lang, when=option)
    return {k: chart_payload(v) if isinstance(v, go.Figure) else v for k, v in out.items()}


@st.cache_resource(max_entries=STEP_FIGURES_MAX, show_spinner=False)
def _shared_step_figures(part: str, name: str, vllm: str | None, runner: str | None, idx: int, lang: str,
                         option, _scenario, _records) -> dict:
    return _build_step_figures(part, _scenario, _records, idx, lang, option)


def step_figures(part: str, source: str, vllm: str | None, runner: str | None, idx: int, lang: str, option,
                 scenario, records) -> dict:
    """Step through's figures of step ``idx`` of (``scenario``, ``records``), the replay of ``source``
    under ``vllm`` / ``runner``: ``part`` "tables" (``option``: after the commit / gather) or "pool"
    (``option``: a POOL_WHEN moment). A built-in scenario's are built once for every session (a class
    on one scenario pays each step once) and the same objects go to every caller: read only. A pasted
    scenario's are built for the caller (their size grows with the scenario: not kept)."""
    from kvviz.views import scenarios as stepper

    if source in stepper.NAMES:
        return _shared_step_figures(part, source, vllm, runner, idx, lang, option, scenario, records)
    return _build_step_figures(part, scenario, records, idx, lang, option)


def prefetch_step_figures(source: str, vllm: str | None, runner: str | None, idx: int, lang: str, after,
                          when, scenario, records) -> None:
    """Build a built-in scenario's figures of step ``idx`` (both parts, the options on screen) in the
    background: the Next press that shows it then finds them built."""
    from kvviz.views import scenarios as stepper

    if source in stepper.NAMES and 0 <= idx < len(records):
        prefetch(_shared_step_figures, "tables", source, vllm, runner, idx, lang, after, scenario, records)
        prefetch(_shared_step_figures, "pool", source, vllm, runner, idx, lang, when, scenario, records)


# --- the vLLM version and model runner of a table page ------------------------------------------

def version_runner(prefix: str, cols=None, groups=None):
    """The vLLM version and model-runner selectors of a page that shows tables (keys ``prefix.vllm``
    and ``prefix.runner``, kept across page visits; default: main, auto), drawn into the two
    containers ``cols`` (default: two new columns). V2 is offered only from v0.12.0 on. Returns the
    ``RunnerChoice`` for the model's KV-cache ``groups`` (default: a dense model): "auto" names the
    runner the release picks for that model (V1 for a hybrid one before v0.29.0, see ``runner_note``)."""
    from kvviz.views import runners as rv

    S = st.session_state
    tr = texts("step_through")
    vkey, rkey = f"{prefix}.vllm", f"{prefix}.runner"
    restore({vkey: rv.DEFAULT_VERSION, rkey: rv.DEFAULT_RUNNER})
    if S[vkey] not in rv.VERSION_CHOICES:
        S[vkey] = rv.DEFAULT_VERSION
    options = rv.runner_choices(S[vkey])
    if S[rkey] not in options:     # v2 was chosen, then a version without V2
        S[rkey] = rv.DEFAULT_RUNNER
    choice = rv.pick_runner(S[vkey], S[rkey], groups=groups)
    a, b = cols if cols is not None else st.columns(2)
    version_select(a, tr("vllm"), rv.VERSION_CHOICES, vkey)
    auto = tr("runner_auto", runner=choice.auto_runner.upper())     # "auto → V1": what this version picks
    labels_follow(rkey)
    b.selectbox(tr("runner"), options, key=rkey, help=tr("runner_help"),
                format_func=lambda r: auto if r == rv.AUTO else tr("runner_" + r))
    keep(vkey, rkey)
    return choice


def labels_follow(*keys: str) -> None:
    """Call just before drawing the keyed pickers ``keys`` whose labels can change while their value
    does not ("auto → V2" becomes "auto → V1" when the release changes; a label in another language).
    A browser picker holds its choice as the label it was sent, and Streamlit sends a value only when
    it changed: the old label stayed on screen under a caption that said otherwise (issue 33, item 1).
    Writing the value back marks it changed, so this run sends the label the value has now."""
    S = st.session_state
    for key in keys:
        if key in S:
            S[key] = S[key]


def language_changed() -> None:
    """``on_change`` of the language picker (app.py's sidebar): the new language in the plain key
    "lang", and every picker's value sent again on this run, so that each shows its label in the new
    language (a picker's value does not change with the language, so Streamlit would not send it, and
    the browser kept the old language's label: "Mixed batch" under a Chinese page). Only text values
    are written back: every picker here has text options; a button, an upload or a table editor
    (never text) refuses a value written to it."""
    S = st.session_state
    S["lang"] = S["lang.widget"]
    for key in list(S.keys()):
        value = S[key]
        if isinstance(value, str):
            S[key] = value


def version_select(where, label: str, options, key: str, *, format_func=None, help: str | None = None, **kwargs):
    """Every vLLM version picker: ``options`` newest first, each label starting with its version (the
    newest marked), a prefix filter as the user types ("v0.3": v0.30.0 … v0.34.0, not v0.13.0), and a
    help that names the newest release kvviz knows. ``where``: st or a container."""
    from kvviz.views import runners as rv

    code = lang()
    fmt = format_func or (lambda v: rv.version_option(v, code))
    helps = "\n\n".join(h for h in (help, rv.picker_help(code)) if h)
    labels_follow(key)
    return where.selectbox(label, options, key=key, format_func=fmt, help=helps, filter_mode="prefix", **kwargs)


def shows(runs=None, *, what: str | None = None, **fmt) -> None:
    """The caption of every page, naming what it shows: ``runs``, a list of (vLLM version, runner)
    pairs ("Shows vLLM v0.34.0 · Model Runner V2"), or (version, None) with ``backend=`` (the Layout
    page: a cache, whatever the runner); else ``what``, a key of kvviz/texts/app.py, for a page
    without a release."""
    from kvviz.views.runners import shown_version

    tr = texts("app")
    if not runs:
        st.caption(":material/info: " + tr(what, **fmt))
        return
    parts = [tr("run_backend", version=shown_version(v), **fmt) if r is None
             else tr("run", version=shown_version(v), runner=str(r).upper()) for v, r in dict.fromkeys(runs)]
    st.caption(":material/info: " + tr("shows", what=" | ".join(parts)))


def runner_note(choice, ran: str, *, v1_only: bool = False) -> None:
    """One line under the selectors: the version and the runner that ran (``ran``), why V2 is not
    offered (a version before v0.12.0) or not used (a model vLLM keeps on V1)."""
    tr = texts("step_through")
    from kvviz.views.runners import runner_choices

    if v1_only and (choice.forced_v1 or choice.choice == "v2" or choice.auto_runner == "v2"):
        st.info(tr("v1_only_model"), icon=":material/info:")
    if "v2" not in runner_choices(choice.version):
        st.caption(tr("no_v2", version=choice.version))
    if "v1" not in runner_choices(choice.version):
        from kvviz.core.versions import LAST_V1_RELEASE
        st.caption(tr("no_v1", version=choice.version, last=LAST_V1_RELEASE))
    shows([(choice.version, ran)])


# --- work done ahead, off the script thread ------------------------------------------------------------

PREFETCH_PENDING_MAX = 4     # queued calls at most (every session shares the one thread)
_prefetch_lock = threading.Lock()
_prefetch_pending = [0]


@st.cache_resource
def _ahead_pool():
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="kvviz-ahead")


def prefetch(fn, *args) -> None:
    """Call the cached function ``fn(*args)`` in one background thread shared by every session (the
    next step of a walk: its Forward click then finds it built). Skipped while
    ``PREFETCH_PENDING_MAX`` calls wait; an error is left for the real call to show."""
    with _prefetch_lock:
        if _prefetch_pending[0] >= PREFETCH_PENDING_MAX:
            return
        _prefetch_pending[0] += 1

    def run():
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - the page's own call raises it where it can be shown
            pass
        finally:
            with _prefetch_lock:
                _prefetch_pending[0] -= 1

    _ahead_pool().submit(run)


def prefetched(timeout_s: float = 30.0) -> None:
    """Wait until the work queued by :func:`prefetch` so far is done (tests; one FIFO thread)."""
    _ahead_pool().submit(lambda: None).result(timeout=timeout_s)
