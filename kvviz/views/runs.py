"""The Captured runs page as plain data (no streamlit here): the runs the operator's folder offers
(by name only), an upload screened before the reader opens it, the manifest in a few lines, the
checker's verdict in chunks (the page caches each chunk and shows its progress between them), and
one step's rows, events and findings. Reading and checking are ``kvviz.capture``'s; figures and the
token path are in ``kvviz.views.run_step``.

Everything a run holds is untrusted: its values (request ids, manifest strings, finish reasons) go to
dataframes and figures, never to markdown, cut to ``MAX_CELL`` characters; the numbers the page writes
into its own sentences are computed here."""
from __future__ import annotations

import io
import math
import os
import stat
import zipfile

import pandas as pd

from kvviz.capture import MANIFEST
from kvviz.capture.report import StepReport, check_step, row_request, rules_of
from kvviz.capture.run import MAX_ZIP_MEMBERS, CapturedRun, load_run, load_run_bytes
from kvviz.errors import BadInput
from kvviz.texts.i18n import t
from kvviz.views.links import _bounded_int, _first

RUNS_DIR_ENV = "KVVIZ_RUNS_DIR"     # the operator's folder of runs, read when the page runs
MAX_LISTED_RUNS = 500               # subfolders offered at most (sorted by name)
MAX_SCANNED = 5000                  # folder entries looked at, at most
MAX_UPLOAD_BYTES = 128 << 20        # an uploaded zip, counted before its bytes are read
CHUNK_STEPS = 32                    # steps checked per cached chunk (progress is shown between chunks)
MAX_MESSAGES = 20                   # the checker's sentences listed under a step's findings table
MAX_ERROR_CHARS = 500               # a capture's error sentence shown at most
MAX_CELL = 120                      # characters of a value from the run shown in one cell
CAPTURE_RECIPE = "pip install kvviz\nKVVIZ_CAPTURE_DIR=/tmp/run python my_vllm_script.py\nkvviz check /tmp/run"


def _tr(lang):
    return lambda key, **fmt: t("runs", key, lang, **fmt)


# --- where runs come from -------------------------------------------------------------------------

def runs_root(env=None) -> str | None:
    """The operator's folder of runs (``KVVIZ_RUNS_DIR``), or None when unset or not a folder."""
    root = (os.environ if env is None else env).get(RUNS_DIR_ENV, "").strip()
    return root if root and os.path.isdir(root) else None


def list_runs(root: str | None) -> list[str]:
    """The names of ``root``'s subfolders that hold a manifest.json, sorted (a visitor picks one of
    these names; no path is ever taken from a visitor)."""
    if not root:
        return []
    names = []
    try:
        with os.scandir(root) as it:
            for i, e in enumerate(it):
                if i >= MAX_SCANNED:
                    break
                if not e.name.startswith(".") and e.is_dir() and os.path.isfile(os.path.join(e.path, MANIFEST)):
                    names.append(e.name)
    except OSError:
        return []
    return sorted(names)[:MAX_LISTED_RUNS]


def run_path(root: str | None, name: str) -> str:
    """The folder of run ``name``, only if it is one :func:`list_runs` offers."""
    if not isinstance(name, str) or name not in list_runs(root):
        raise BadInput(f"the server has no run named {str(name)[:60]!r}")
    return os.path.join(root, name)


def dir_signature(path: str) -> tuple:
    """What changes when a run folder changes (a capture still writing, a run replaced): the
    modification times of its manifest, its requests and its steps folder."""
    out = []
    for part in (MANIFEST, "requests.json", "steps"):
        try:
            out.append(os.stat(os.path.join(path, part)).st_mtime_ns)
        except OSError:
            out.append(None)
    return tuple(out)


def open_dir_run(path: str) -> CapturedRun:
    """A run folder, read and its release resolved (BadInput when either fails)."""
    run = load_run(path)
    rules_of(run)
    return run


def screen_zip(data: bytes, name: str) -> None:
    """Refuse, before the reader opens it, an upload that is too big or a zip whose members name a
    path outside the run (absolute, ``..``, a drive, backslashes) or are links or special files."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise BadInput(f"{name} is {len(data) / (1 << 20):.1f} MiB; an upload may be {MAX_UPLOAD_BYTES >> 20} MiB "
                       "at most")
    try:
        infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise BadInput(f"{name} is not a readable zip ({e})") from None
    if len(infos) > MAX_ZIP_MEMBERS:
        raise BadInput(f"{name} has {len(infos)} members; the limit is {MAX_ZIP_MEMBERS}")
    for info in infos:
        member = info.filename
        parts = member.split("/")
        if member.startswith("/") or "\\" in member or ".." in parts or (len(member) > 1 and member[1] == ":"):
            raise BadInput(f"{name}: the member {member[:80]!r} names a path outside the run")
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
            raise BadInput(f"{name}: the member {member[:80]!r} is a link or a special file, not a regular file")


def open_upload(data: bytes, name: str) -> CapturedRun:
    """An uploaded zip as a run: screened, read by ``kvviz.capture.run`` (bounded), its release
    resolved. BadInput (one sentence) otherwise; anything else unexpected becomes one sentence too."""
    try:
        screen_zip(data, name)
        run = load_run_bytes(data, name)
        rules_of(run)
        return run
    except BadInput:
        raise
    except Exception as e:  # noqa: BLE001 - a hostile upload must never become a traceback
        raise BadInput(f"{name} could not be read ({type(e).__name__})") from None


# --- the manifest ---------------------------------------------------------------------------------

def _cell(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "✔" if value else "✘"
    return str(value)[:MAX_CELL]


def _groups_text(groups) -> str:
    """The KV-cache groups in a few words: each one's kind of attention ("FullAttention",
    "SlidingWindow 4096"), its block size where it differs from the first's."""
    if not isinstance(groups, list):
        return _cell(groups)
    parts, first_bs = [], None
    for g in groups[:8]:
        if not isinstance(g, dict):
            continue
        name = str(g.get("spec") or g.get("kind") or "?").removesuffix("Spec")
        if g.get("sliding_window"):
            name += f" {g.get('sliding_window')}"
        first_bs = g.get("block_size") if first_bs is None else first_bs
        if g.get("block_size") != first_bs:
            name += f" (B={g.get('block_size')})"
        parts.append(name)
    more = f" +{len(groups) - 8}" if len(groups) > 8 else ""
    return _cell(" + ".join(parts) + more)


def manifest_frames(run: CapturedRun, lang: str = "en") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(engine, scheduler knobs): two small two-column tables of the manifest, labels in ``lang``."""
    tr = _tr(lang)
    m = run.manifest
    sched = m.get("scheduler") if isinstance(m.get("scheduler"), dict) else {}
    cache = m.get("cache") if isinstance(m.get("cache"), dict) else {}
    model = m.get("model") if isinstance(m.get("model"), dict) else {}
    release, full = m.get("vllm"), m.get("vllm_version")
    if full is not None and str(full).lstrip("v") != str(release).lstrip("v"):
        release = f"{release} ({full})"
    engine = [("release", release), ("runner", str(m.get("runner", "")).upper()), ("backend", m.get("attn_backend")),
              ("block_size", m.get("block_size")), ("kernel_block_size", m.get("kernel_block_size")),
              ("num_blocks", m.get("num_blocks")), ("groups", _groups_text(m.get("groups"))),
              ("device", m.get("device"))]
    knobs = [("max_num_seqs", sched.get("max_num_seqs")), ("max_num_batched_tokens", sched.get("max_num_batched_tokens")),
             ("chunked_prefill", sched.get("enable_chunked_prefill")),
             ("prefix_caching", cache.get("enable_prefix_caching")), ("policy", sched.get("policy")),
             ("async_scheduling", sched.get("async_scheduling")),
             ("max_model_len", sched.get("max_model_len", model.get("max_model_len")))]

    def frame(rows):
        return pd.DataFrame({tr("col_what"): [tr("m_" + k) for k, _ in rows], tr("col_value"): [_cell(v) for _, v in rows]})

    return frame(engine), frame(knobs)


def capture_numbers(run: CapturedRun) -> dict:
    """Counts for the page's own sentence about the capture (numbers only, computed here)."""
    dropped = run.manifest.get("dropped_steps")
    return {"n": len(run.steps), "first": run.steps[0] if run.steps else 0, "last": run.steps[-1] if run.steps else 0,
            "reqs": len(run.requests), "dropped": dropped if isinstance(dropped, int) and not isinstance(dropped, bool) else 0}


# --- the verdict, chunk by chunk ------------------------------------------------------------------

def chunks(num_steps: int, size: int | None = None) -> list[tuple[int, int]]:
    """Index spans [i0, i1) of the run's steps, ``size`` (default ``CHUNK_STEPS``) at a time."""
    size = size or CHUNK_STEPS
    return [(i, min(i + size, num_steps)) for i in range(0, num_steps, size)]


def check_chunk(run: CapturedRun, i0: int, i1: int) -> list[StepReport]:
    """The reports with a finding or an error of steps ``run.steps[i0:i1]`` (``check_step`` under the
    run's own release); a step that cannot be read is one report with its sentence as the error."""
    rules = rules_of(run)
    bad = []
    for step in run.steps[i0:i1]:
        try:
            bad += [s for s in check_step(run, step, rules) if s.findings or s.error]
        except BadInput as e:
            bad.append(StepReport(step, 0, [], [], error=str(e)))
    return bad


def verdict(bad: list[StepReport], num_steps: int) -> dict:
    """The run's verdict: {"clean", "steps": checked, "bad_steps": with findings, and for the first
    wrong one "step", "group", "row" (None: none), "check"}."""
    out = {"clean": not bad, "steps": num_steps, "bad_steps": len({s.step for s in bad})}
    if bad:
        first = bad[0]
        row = first.first_row
        f = next((f for f in first.findings if f.row == row), first.findings[0] if first.findings else None)
        out.update(step=first.step, group=first.group, row=row, check=f.check if f else "capture-error")
    return out


# --- one step -------------------------------------------------------------------------------------

def step_reports(run: CapturedRun, step: int) -> list[StepReport]:
    """Every group of ``step``, checked (BadInput when the step cannot be read)."""
    return check_step(run, step, rules_of(run))


def wrong_rows(report: StepReport | None) -> list[int]:
    return sorted({f.row for f in report.findings if f.row is not None}) if report else []


def findings_frame(report: StepReport | None, lang: str = "en") -> pd.DataFrame:
    """The step's findings of one group as a table: check, row, request (the id from the capture),
    index; a capture error is a line "capture-error". Headers in ``lang``; the messages are listed
    apart by the page (whole sentences, which a grid cell would cut)."""
    tr = _tr(lang)
    rows = []
    if report is not None and report.error:
        rows.append({"check": "capture-error", "row": "—", "request": "—", "index": "—"})
    for f in sorted(report.findings, key=lambda f: f.sort_key()) if report is not None else []:
        req = row_request({"req_ids": report.req_ids}, f.row)
        rows.append({"check": f.check, "row": "—" if f.row is None else str(f.row), "request": _cell(req),
                     "index": "—" if f.index is None else str(f.index)})
    cols = ("check", "row", "request", "index")
    return pd.DataFrame(rows, columns=cols).rename(columns={c: tr("col_" + c) for c in cols})


def _blocks_of(meta: dict, req_id, group: int) -> str:
    sched = meta.get("scheduler") if isinstance(meta.get("scheduler"), dict) else {}
    ids = (sched.get("block_ids") or {}).get(req_id) if isinstance(sched.get("block_ids"), dict) else None
    if isinstance(ids, list) and group < len(ids) and isinstance(ids[group], list):
        return _cell(" ".join(str(b) for b in ids[group]))
    return "—"


def rows_frame(meta: dict, dump, report: StepReport | None, group: int, lang: str = "en") -> pd.DataFrame:
    """One line per live row of the step: its request, the tokens scheduled, seq_len, the blocks the
    table row counts, the blocks the scheduler gave the request, and the checks that flag the row."""
    tr = _tr(lang)
    ids = meta.get("req_ids") or []
    sched = meta.get("num_scheduled_tokens") if isinstance(meta.get("num_scheduled_tokens"), list) else []
    flagged: dict[int, list[str]] = {}
    for f in report.findings if report is not None else []:
        if f.row is not None:
            flagged.setdefault(f.row, []).append(f.check)
    out = []
    for r in range(dump.num_reqs):
        n = int(dump.num_blocks_per_row[r]) if r < len(dump.num_blocks_per_row) else 0
        req = ids[r] if r < len(ids) else None
        out.append({"row": r, "request": _cell(req), "scheduled": _cell(sched[r] if r < len(sched) else None),
                    "seq_len": "—" if dump.seq_lens is None or r >= len(dump.seq_lens) else str(int(dump.seq_lens[r])),
                    "table_blocks": " ".join(str(int(b)) for b in dump.block_table[r, :n]) or "—",
                    "scheduler_blocks": _blocks_of(meta, req, group),
                    "flags": ", ".join(dict.fromkeys(flagged.get(r, []))) or "—"})
    cols = ("row", "request", "scheduled", "seq_len", "table_blocks", "scheduler_blocks", "flags")
    return pd.DataFrame(out, columns=cols).rename(columns={c: tr("col_" + c) for c in cols})


def _steps_list(value) -> list:
    return value if isinstance(value, list) else []


def events_frame(run: CapturedRun, step: int, meta: dict, lang: str = "en") -> pd.DataFrame:
    """The step's events by request id: arrivals, preemptions, finishes and aborts from requests.json,
    then what the step's scheduler output says (newly scheduled, finished before it, preempted)."""
    tr = _tr(lang)
    out = []
    for r in run.requests:
        rid = r.get("req_id")
        if r.get("arrival_step") == step:
            out.append((rid, tr("ev_arrived"), "—"))
        if step in _steps_list(r.get("preempted_steps")):
            out.append((rid, tr("ev_preempted"), "—"))
        if r.get("finished_step") == step:
            out.append((rid, tr("ev_finished"), _cell(r.get("finish_reason"))))
        if r.get("aborted_step") == step:
            out.append((rid, tr("ev_aborted"), "—"))
    sched = meta.get("scheduler") if isinstance(meta.get("scheduler"), dict) else {}
    for key in ("new", "preempted", "finished"):
        for rid in _steps_list(sched.get(key))[:1000]:
            out.append((rid, tr("ev_sched_" + key), tr("from_scheduler")))
    return pd.DataFrame([(_cell(a), b, c) for a, b, c in out],
                        columns=[tr("col_request"), tr("col_event"), tr("col_detail")])


def snap_step(steps: list[int], wanted: int) -> int:
    """The captured step nearest ``wanted`` (the earlier one on a tie)."""
    import bisect

    i = bisect.bisect_left(steps, wanted)
    if i == 0:
        return steps[0]
    if i == len(steps):
        return steps[-1]
    return steps[i] if steps[i] - wanted < wanted - steps[i - 1] else steps[i - 1]


def step_stride(steps: list[int]) -> int:
    """The slider's stride: the greatest common divisor of the gaps between captured steps."""
    g = 0
    for a, b in zip(steps, steps[1:]):
        g = math.gcd(g, b - a)
    return max(g, 1)


# --- links ----------------------------------------------------------------------------------------

def decode_run_link(params, names: list[str]) -> tuple[str | None, int | None, list[str]]:
    """(run name, step, refusals) from a link's ``run`` and ``step``: a run name only if the server
    offers it (``names``), a step only as a whole number (snapped to a captured one by the page)."""
    errors = []
    name, raw = _first(params, "run"), _first(params, "step")
    if name is not None and name not in names:
        errors.append(f"the link names a run this server does not have: {str(name)[:60]!r}")
        name = None
    step = None
    if name is not None and raw is not None:
        step = _bounded_int(raw, 0, 1 << 40)
        if step is None:
            errors.append(f"the link's step {str(raw)[:20]!r} is not a step number")
    return name, step, errors


def encode_run_link(name: str, step: int, lang: str) -> dict[str, str]:
    return {"run": name, "step": str(int(step)), "lang": lang}
