"""Streamlit side of "run on W ranks" (the DCP demo and the Batch page call ``run_on_ranks``).

The run is a ``kvviz.dist.jobs`` job: W rank processes and one supervising thread; the script
only starts it (a button callback) and polls it (a fragment that reruns every second while it
runs), so the page stays responsive and other sessions are not held up. One run per page and
session at a time; the outcomes of the last few inputs are kept (``MAX_RESULTS``) and dropped when
the page is left. What the page draws comes from ``kvviz.views.dcp_ranks``.
"""
from __future__ import annotations

import streamlit as st

import ui
from kvviz.errors import BadInput

MAX_RESULTS = 4          # outcomes kept per page and session (the newest)
POLL_S = 1.0


@st.cache_resource(show_spinner=False)
def _gpus() -> int:
    try:
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001 - no usable torch: CPU ranks only
        return 0


def _keep_outcome(P: str, key: str, outcome: dict) -> None:
    S = st.session_state
    results = dict(S.get(P + "results", {}))
    results.pop(key, None)
    results[key] = outcome
    while len(results) > MAX_RESULTS:
        results.pop(next(iter(results)))
    S[P + "results"] = results


def _choose_world(wkey: str, chosen: str) -> None:
    st.session_state[chosen] = int(st.session_state[wkey])


def _start(P: str, wkey: str, spec_fn, geom: dict) -> None:
    """The button's callback: check the inputs, start the run (or keep one line of why not)."""
    from kvviz.dist import jobs, launch
    from kvviz.views import dcp_ranks as V

    S = st.session_state
    tr = ui.texts("dcp_ranks")
    job = S.get(P + "job")
    if job is not None and not job.done:      # a second click while a run is under way
        return
    w = int(S.get(wkey, 1))
    try:
        spec = spec_fn()
    except BadInput as e:
        S[P + "start_error"] = tr("ui.bad", w=w, msg=ui.plain(e))
        return
    key = V.run_key(spec, w, **geom)
    try:
        backend, gpus = launch.choose_backend("auto", w)
        cfg, norm = V.prepare(spec, w, backend=backend, gpus=gpus, **geom)
        job = jobs.start(cfg, norm)
    except BadInput as e:
        _keep_outcome(P, key, {"error": tr("ui.bad", w=w, msg=ui.plain(e))})
        return
    S[P + "job"] = job
    S[P + "job_info"] = {"key": key, "norm": norm, "world": w, "backend": backend}


def _collect(P: str, progress) -> None:
    """A run that ended: its report (with what each rank filled) or its one line, kept by input."""
    from kvviz.views import dcp_ranks as V

    S = st.session_state
    info = S.pop(P + "job_info", None)
    S.pop(P + "job", None)
    if info is None:
        return
    tr = ui.texts("dcp_ranks")
    if progress.report is not None:
        outcome = {"report": progress.report, "owners": V.cache_owners(info["norm"], info["world"]),
                   "elapsed_s": progress.elapsed_s}
    else:
        outcome = {"error": tr("ui.failed", w=info["world"], msg=ui.plain(progress.error or "?"))}
    _keep_outcome(P, info["key"], outcome)


def _show(P: str, outcome: dict) -> None:
    from kvviz.views import dcp_ranks as V

    tr = ui.texts("dcp_ranks")
    lang = ui.lang()
    if "error" in outcome:
        st.error(outcome["error"], icon=":material/error:")
        return
    rep = outcome["report"]
    ok, line = V.verdict(rep, lang)
    (st.success if ok else st.error)(line, icon=":material/check_circle:" if ok else ":material/cancel:")
    st.caption(tr("ui.done_in", w=rep["world_size"], backend=rep["backend"], device=ui.plain(rep["device"]),
                  s=outcome["elapsed_s"]))
    bad = [c for c in V.failed_checks(rep) if c != "merged_output"]
    if bad:
        st.caption(tr("ui.checks_failed", names=", ".join(bad)))
    owners = outcome["owners"]
    ui.plot(V.caches_figure(owners, lang=lang), key=P + "fig", name="dcp_ranks")
    st.caption(tr("ui.caches_caption"))
    if owners["blocks_total"] > len(owners["blocks"]):
        st.caption(tr("ui.blocks_cut", shown=len(owners["blocks"]), total=owners["blocks_total"]))
    if rep["checks"]["positions_stored_once"]:
        st.markdown(":material/check: " + tr("ui.stored_once", n=rep["positions"]))
    else:
        st.markdown(":material/close: " + tr("ui.stored_wrong", missing=rep["positions_not_stored"],
                                               twice=rep["positions_stored_twice"]))
    st.markdown(f"**{tr('ui.ranks_title')}**")
    st.dataframe(V.ranks_frame(rep, lang), hide_index=True, width="stretch")
    timing = tr("ui.timing_gpu" if rep["backend"] == "nccl" else "ui.timing_cpu")
    st.caption(tr("ui.ranks_caption", tol=rep["partial_tolerance"], timing=timing))
    lse = V.lse_frame(rep, lang)
    if lse is not None:
        st.markdown(f"**{tr('ui.lse_title')}**")
        st.dataframe(lse, hide_index=True, width="stretch")
        st.caption(tr("ui.lse_caption"))


def _live(P: str, key: str, was_running: bool) -> None:
    """The run's progress while it runs (this part reruns every POLL_S), then its outcome."""
    from kvviz.views import dcp_ranks as V

    S = st.session_state
    tr = ui.texts("dcp_ranks")
    job = S.get(P + "job")
    if job is not None:
        p = job.poll()
        if p.running:
            info = S.get(P + "job_info", {})
            st.progress(p.fraction, text=tr("ui.running", w=p.world, backend=info.get("backend", ""), s=p.elapsed_s))
            st.caption(" · ".join(tr("ui.rank_stage", r=r, stage=V.stage_label(s, ui.lang()))
                                  for r, s in enumerate(p.stages)))
            st.button(tr("ui.stop"), key=P + "stop", icon=":material/stop:", on_click=job.cancel)
            return
        _collect(P, p)
        if was_running:      # the whole page again: the run button comes back, the polling stops
            st.rerun()
    outcome = S.get(P + "results", {}).get(key)
    if outcome is not None:
        _show(P, outcome)


def run_on_ranks(page: str, spec_fn, *, default_world: int, num_kv_heads: int | None = None,
                 head_dim: int | None = None, dtype: str = "float16") -> None:
    """The "run on W ranks" section of ``page`` ("batch" | "demos"): ``spec_fn()`` gives the
    page's batch as a ``compute`` batch (BadInput: one line); ``default_world`` is the W offered
    first (the batch's DCP world size)."""
    from kvviz.views import dcp_ranks as V

    S = st.session_state
    tr = ui.texts("dcp_ranks")
    P = f"dcp_ranks.{page}."
    ui.own_while_shown(f"{page}.py", [P + "results", P + "start_error"])
    gpus = _gpus()
    top = V.max_world(gpus)
    geom = {"num_kv_heads": num_kv_heads, "head_dim": head_dim, "dtype": dtype}
    st.subheader(tr("ui.title"))
    st.caption(tr("ui.intro", backend=tr("ui.backend_nccl" if gpus >= 2 else "ui.backend_gloo")))
    try:
        spec = spec_fn()
    except BadInput as e:
        st.error(tr("ui.bad", w=default_world, msg=ui.plain(e)), icon=":material/error:")
        return
    declared = int(spec.get("dcp_world_size", 1))
    wkey = f"{P}w.{declared}"       # a batch laid out for another W starts from its own W
    # the W chosen is also kept apart from the widget and given as its value: a number input that
    # Streamlit creates anew (a new element id while a run polls and reruns the page) then shows the
    # W chosen, not its minimum, and the run's outcome stays on screen
    chosen = wkey + ".chosen"
    if chosen not in S or not 1 <= int(S[chosen]) <= top:
        S[chosen] = min(max(int(default_world), 1), top)
    if wkey in S and not 1 <= int(S[wkey]) <= top:
        del S[wkey]
    job = S.get(P + "job")
    running = job is not None and not job.done
    c = st.columns([1.2, 2, 5], vertical_alignment="bottom")
    c[0].number_input(tr("ui.world"), 1, top, value=int(S[chosen]), key=wkey,
                      help=tr("ui.world_help", top=top, declared=declared), disabled=running,
                      on_change=_choose_world, args=(wkey, chosen))
    w = int(S[wkey])
    S[chosen] = w
    c[1].button(tr("ui.run", w=w), key=P + "run", icon=":material/hub:", disabled=running,
                on_click=_start, args=(P, wkey, spec_fn, geom))
    err = S.pop(P + "start_error", None)
    if err:
        st.error(err, icon=":material/error:")
    key = V.run_key(spec, w, **geom)
    st.fragment(run_every=POLL_S if running else None)(_live)(P, key, running)
