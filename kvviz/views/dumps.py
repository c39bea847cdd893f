"""What the dumps page shows, as plain data (no streamlit here): sources of dumps
(injected bugs, example files, simulator steps, uploads), tables as DataFrames with the cells
to highlight, findings with their concepts in the chosen language, the differences and the
downloads. The page only lays these out."""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from kvviz.core.engine import FAULTS, FAULTS_V1, FAULTS_V2, Engine
from kvviz.core.scenario import parse_scenario
from kvviz.core.versions import Rules
from kvviz.dumps.capture import dump_from_step
from kvviz.dumps.check import (
    CHECKS,
    Finding,
    applicable_checks,
    findings_to_json,
    first_wrong_row,
    resolve_profile,
    run_checks,
)
from kvviz.dumps.diff import DiffResult, diff_dumps
from kvviz.dumps.faults import BUGS, bug_pair
from kvviz.dumps.format import Dump, dump_to_npz_bytes, load_dump, load_dump_bytes
from kvviz.views.frames import no_none
from kvviz.views.runners import VERSION_CHOICES, version_option
from kvviz.views.dumps_refusal import SCENARIO_REFUSAL, refusal_text  # noqa: F401 - the page's
from kvviz.errors import BadInput
from kvviz.texts.i18n import DEFAULT_LANG, t

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = ROOT / "examples" / "dumps"
SCENARIOS_DIR = ROOT / "examples" / "scenarios"
MAX_SIM_STEPS = 200
MAX_SHOWN_ROWS, MAX_SHOWN_COLS = 64, 64
SOURCES = ("bug", "sim", "examples", "upload")     # where the page's dumps come from
TABLES = ("block_table", "block_table_device")     # the tables shown side by side
NO_FAULT = "none"                                  # the fault choice that injects none
FAULT_OPTIONS = (NO_FAULT, *FAULTS)


def example_names() -> list[str]:
    return sorted(p.name for p in EXAMPLES_DIR.glob("*.json"))


def load_example(name: str) -> Dump:
    return load_dump(str(EXAMPLES_DIR / name))


def widget_defaults() -> dict:
    """The page's widgets before the user touches them: the first bug, scenario and examples."""
    examples = example_names()
    return {"source": SOURCES[0], "bug": next(iter(BUGS)), "sim_sc": next(iter(sim_sources())),
            "fault": NO_FAULT, "step_a": 0, "step_b": 1, "group": 0, "a_healthy": True,
            "ex_a": examples[0], "ex_b": examples[min(1, len(examples) - 1)], "table": TABLES[0],
            "profile": AUTO_PROFILE, "all_rows": False}


@lru_cache(maxsize=16)
def bug_dumps(bug_id: str) -> tuple[Dump, Dump]:
    """(clean, buggy) dumps of the bug's step (cached: the simulator is deterministic; read only)."""
    return bug_pair(bug_id)


# --- simulator steps ------------------------------------------------------------------------

def sim_sources() -> dict[str, str]:
    """key -> label of every scenario the simulator can replay here: the example files, the
    guided demos (their main variant) and the step-through page's built-ins."""
    out = {f"file:{p.name}": f"examples/scenarios/{p.name}" for p in sorted(SCENARIOS_DIR.glob("*.json"))}
    try:
        from kvviz.views import demo_catalogue as demos
        for key, demo in getattr(demos, "DEMOS", {}).items():
            out[f"demo:{key}"] = f"demo: {demo.scenario.get('name', key)}"
    except Exception:  # noqa: BLE001 - the demos module is optional here
        pass
    try:
        from kvviz.views.scenarios import SCENARIOS
        for key in SCENARIOS:
            out[f"builtin:{key}"] = f"built-in: {key}"
    except Exception:  # noqa: BLE001
        pass
    return out


def sim_scenario(source: str) -> dict:
    kind, _, name = source.partition(":")
    if kind == "file":
        path = SCENARIOS_DIR / Path(name).name
        try:
            return json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise BadInput(f"cannot read scenario {path.name}: {e}") from None
    if kind == "demo":
        from kvviz.views import demo_catalogue as demos
        demo = demos.DEMOS[name]
        return demos.scenario_dict(demo, demo.variants[0])
    if kind == "builtin":
        from kvviz.views.scenarios import SCENARIOS
        return SCENARIOS[name]
    raise BadInput(f"unknown scenario source {source!r}")


def runner_for_fault(fault: str | None) -> str | None:
    """The model runner a fault breaks ("v1" for move_row/commit faults, "v2" for the staged-write
    and gather faults); None without a fault (the scenario's own runner)."""
    if not fault:
        return None
    return "v1" if fault in FAULTS_V1 else "v2" if fault in FAULTS_V2 else None


@lru_cache(maxsize=16)
def sim_run(source: str, fault: str | None = None, runner: str | None = None):
    """(config, step records) of the scenario replayed with ``fault`` injected from step 0, under
    ``runner`` (default: the one the fault breaks, else the scenario's)."""
    sc = dict(sim_scenario(source))
    runner = runner or runner_for_fault(fault)
    if runner is not None:
        sc["config"] = {**sc.get("config", {}), "runner": runner}
    sc = parse_scenario(sc)
    records = Engine(sc, faults={fault} if fault else set()).run(MAX_SIM_STEPS)
    if not records:
        raise BadInput("the scenario has no step (no request ever arrives)")
    return sc.config, records


def sim_groups(source: str) -> dict[int, str]:
    """index -> name of the scenario's KV-cache groups (a dump shows one). A state group's dump says
    ``group_kind: "state"`` (one state block per request, no pages), which the checker knows."""
    config, _ = sim_run(source)
    return {i: f"{i}: {g.name or g.kind}" for i, g in enumerate(config.groups)}


def sim_dump(source: str, fault: str | None, step: int, group: int = 0, runner: str | None = None) -> Dump:
    config, records = sim_run(source, fault, runner)
    rec = records[clamp_step(step, len(records))]
    return dump_from_step(rec, config, group=group)


def fault_of(choice: str | None) -> str | None:
    """The engine fault a fault choice names; None for "none"."""
    return None if choice in (None, NO_FAULT) else choice


def sim_step_count(source: str, fault: str | None) -> int:
    """The steps both the healthy run and the run with ``fault`` have: the steps A and B can be."""
    return min(len(sim_run(source, None, runner_for_fault(fault))[1]), len(sim_run(source, fault)[1]))


def clamp_step(step, n: int) -> int:
    """``step`` brought into 0..n-1 (a step past the end of a shorter scenario becomes the last)."""
    return max(0, min(int(step), n - 1))


def kept_choice(value, options):
    """``value`` when it is still one of ``options``, else the first option."""
    return value if value in options else next(iter(options))


def sim_pair(source: str, fault: str | None, steps: tuple[int, int], group: int,
             a_healthy: bool) -> list[tuple[str, int, str | None, Dump]]:
    """(side, step, fault, dump) of dumps A and B: steps of the scenario, B with ``fault`` and A with
    it too unless ``a_healthy``."""
    faults = (None if a_healthy else fault, fault)
    runner = runner_for_fault(fault)      # the healthy side runs the runner the fault breaks
    return [(side, i, f, sim_dump(source, f, i, group, runner)) for side, i, f in zip("AB", steps, faults)]


# --- uploads ---------------------------------------------------------------------------------------

def content_digest(data: bytes) -> str:
    """A digest of an upload's bytes, so that the page parses each content once."""
    return hashlib.sha256(data).hexdigest()


# A tab feeds the server big inputs at a bounded pace: after a big one of N bytes was read, its next big
# one waits N / BIG_INPUT_BYTES_PER_S seconds (a 7.8 MB paste: ~4 s). Receiving and showing a big dump
# costs the server's one interpreter ~0.35 s however fast the worker parses, so one tab pasting back to
# back would otherwise take a third of it from everyone else (BENCHMARKS.md, Classroom load).
BIG_INPUT_BYTES_PER_S = 2e6


def big_input_wait(last: tuple[float, int] | None, now: float,
                   rate: float | None = None) -> float:
    """Seconds a tab's next big input waits: ``last`` = (when its previous big input was read, its
    bytes) or None; 0 once ``bytes / rate`` seconds have passed since then."""
    if not last:
        return 0.0
    done, nbytes = last
    return max(0.0, done + nbytes / (rate or BIG_INPUT_BYTES_PER_S) - now)


def read_upload(data: bytes, name: str) -> tuple[Dump | None, str | None]:
    """(the dump, None) from an upload or paste, or (None, one sentence saying why it was refused);
    never a traceback."""
    try:
        return load_dump_bytes(data, name), None
    except BadInput as e:
        return None, str(e)
    except Exception as e:  # noqa: BLE001 - a hostile upload must never become a traceback
        return None, f"{name} could not be read ({type(e).__name__})"


# --- profiles -------------------------------------------------------------------------------------

AUTO_PROFILE = "auto"
PROFILE_CHOICES = (AUTO_PROFILE, *VERSION_CHOICES)     # newest first, like every version picker; no aliases


def check_profile(d: Dump, choice: str | None = AUTO_PROFILE) -> Rules:
    """The profile ``d`` is checked under: ``choice`` unless it is "auto" (or None), then the dump's
    own ``profile`` key, else current."""
    return resolve_profile(d, None if choice in (None, AUTO_PROFILE) else choice)[0]


def check_dump(d: Dump, choice: str | None = AUTO_PROFILE) -> list[Finding]:
    """The checker's findings for ``d`` under the chosen profile."""
    return run_checks(d, profile=check_profile(d, choice))


def applicable(d: Dump, choice: str | None = AUTO_PROFILE) -> list[str]:
    return applicable_checks(d, check_profile(d, choice))


def profile_label(choice: str, lang: str = DEFAULT_LANG) -> str:
    return t("dumps", "profile.auto", lang) if choice == AUTO_PROFILE else version_option(choice, lang)


# --- tables -------------------------------------------------------------------------------------

def shown_size(dumps: list[Dump], table: str) -> tuple[int, int]:
    """(rows, columns) of ``table`` to show for every dump alike: the first MAX_SHOWN_ROWS rows, and
    the columns up to the last one that holds a non-zero entry in any dump (plus one; all-zero
    columns on the right carry nothing), at most MAX_SHOWN_COLS."""
    arrays = [getattr(d, table) for d in dumps if getattr(d, table) is not None]
    if not arrays:
        return 0, 0
    rows = min(MAX_SHOWN_ROWS, max(a.shape[0] for a in arrays))
    width = max(a.shape[1] for a in arrays)
    last = -1
    for d, a in ((d, getattr(d, table)) for d in dumps if getattr(d, table) is not None):
        nz = np.flatnonzero(a[:rows].any(axis=0))
        last = max(last, int(nz[-1]) if nz.size else -1, int(d.num_blocks_per_row[:rows].max(initial=0)) - 1)
    return rows, max(1, min(width, MAX_SHOWN_COLS, max(last + 2, 4)))


def hidden_columns_are_zero(dumps: list[Dump], table: str, cols: int) -> bool:
    return all(not getattr(d, table)[:, cols:].any() for d in dumps if getattr(d, table) is not None)


def table_frame(d: Dump, table: str, first_row: int | None = None,
                size: tuple[int, int] = (MAX_SHOWN_ROWS, MAX_SHOWN_COLS)) -> pd.DataFrame | None:
    """The shown part of a table; the index names each row (live / padded / first wrong); column
    "n" is num_blocks_per_row."""
    a = getattr(d, table)
    if a is None:
        return None
    a = a[: size[0], : size[1]]
    frame = pd.DataFrame(a, columns=[str(c) for c in range(a.shape[1])])
    frame.insert(0, "n", d.num_blocks_per_row[: a.shape[0]].astype(np.int64))
    frame.index = [row_label(d, r, first_row) for r in range(a.shape[0])]
    return frame


def row_label(d: Dump, r: int, first_row: int | None = None) -> str:
    if r == first_row:
        return f"{r} ⚠"
    if r >= d.padded_reqs:
        return f"{r} ·"
    return f"{r} pad" if r >= d.num_reqs else str(r)


def table_choice(choice: str | None) -> str:
    """The table a (possibly cleared) table choice names: the CPU table by default."""
    return choice or TABLES[0]


def other_dump(dumps: list[tuple], side: str) -> Dump | None:
    """The dump of ``dumps`` ((side, name, dump) triples) on the other side, None when alone."""
    return next((d for s, _, d in dumps if s != side), None)


def frame_height(n_rows: int, cap: int) -> int:
    """Pixels a dataframe of ``n_rows`` rows needs (header included), at most ``cap``."""
    return min(cap, 38 + 35 * n_rows)


def cut_counts(frame: pd.DataFrame, d: Dump, table: str) -> dict | None:
    """{r, rows, c, w}: the rows and columns shown of how many, when the frame shows only part of
    the table; None when it shows all of it."""
    rows, cols = frame.shape[0], frame.shape[1] - 1          # the leading column is "n"
    if rows < getattr(d, table).shape[0] or cols < d.width:
        return {"r": rows, "rows": getattr(d, table).shape[0], "c": cols, "w": d.width}
    return None


def stale_rows_text(d: Dump) -> str:
    """The stale live rows, comma-separated ("" when none)."""
    return ", ".join(map(str, stale_rows(d)))


def stale_rows(d: Dump) -> list[int]:
    """Live rows whose device mirror differs from the CPU table (anywhere in the row)."""
    if d.block_table_device is None:
        return []
    n = min(d.num_reqs, d.block_table_device.shape[0])
    return np.flatnonzero((d.block_table[:n] != d.block_table_device[:n]).any(axis=1)).tolist()


def cell_marks(d: Dump, table: str, other: Dump | None = None,
               size: tuple[int, int] = (MAX_SHOWN_ROWS, MAX_SHOWN_COLS)) -> np.ndarray | None:
    """0 plain, 1 differs from the other dump, 2 stale (device vs CPU in a live row; wins over 1),
    3 padded row, 4 unused row (beyond the padded rows)."""
    a = getattr(d, table)
    if a is None:
        return None
    a = a[: size[0], : size[1]]
    marks = np.zeros(a.shape, dtype=np.int8)
    marks[d.padded_reqs:] = 4
    marks[d.num_reqs:d.padded_reqs] = 3
    b = getattr(other, table, None) if other is not None else None
    if b is not None:
        r, w = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
        differ = np.zeros(a.shape, dtype=bool)
        differ[:r, :w] = a[:r, :w] != b[:r, :w]
        differ[r:, :] = True     # rows or columns the other dump lacks
        differ[:, w:] = True
        marks[differ] = 1
    dev = d.block_table_device
    if dev is not None:
        n = min(d.num_reqs, dev.shape[0], a.shape[0])
        w = a.shape[1]
        marks[:n][d.block_table[:n, :w] != dev[:n, :w]] = 2
    return marks


MARK_STYLE = {1: "background-color: #ffd54f; color: #000", 2: "background-color: #ef9a9a; color: #000",
              3: "color: #9e9e9e", 4: "color: #c8c8c8"}


CLEAR_PASTE_BYTES = 256 * 1024   # a paste this big is read once and taken out of its box (the page)
WINDOW_ROWS, WINDOW_COLS = 16, 24   # each table window drawn by default (a toggle draws all of the shown part)


def focus_window(dumps: list[tuple], found: dict, table: str, size: tuple[int, int],
                 rows: int = WINDOW_ROWS, cols: int = WINDOW_COLS) -> tuple[tuple[int, int], tuple[int, int]]:
    """((lo, hi) rows, (lo, hi) columns) of the shown part (``size``) that both sides draw by
    default: ``rows`` rows from two above the first wrong row of either dump (else the first row
    where a cell is marked: different from the other dump, or stale), and ``cols`` columns from
    four left of the first marked cell in those rows. Both sides get the same window, so they stay
    comparable cell by cell. Styling costs per cell and per column (issue 11): 16 x 24 is a tenth
    of the cells of 64 x 64."""
    n, w = size
    marks = [m for m in (cell_marks(d, table, other_dump(dumps, side), size) for side, _, d in dumps) if m is not None]
    hot = [(m == 1) | (m == 2) for m in marks]
    wrong = [r for r in (first_wrong_row(found.get(s, [])) for s, _, _ in dumps) if r is not None and r < n]
    if wrong:
        focus = min(wrong)
    else:
        focus = min((int(np.flatnonzero(h.any(axis=1))[0]) for h in hot if h.any()), default=0)
    r0 = max(0, min(focus - 2, n - rows)) if n > rows else 0
    r1 = min(n, r0 + rows)
    hit = [np.flatnonzero(h[r0:r1].any(axis=0)) for h in hot]
    fc = min((int(c[0]) for c in hit if c.size), default=0)
    c0 = max(0, min(fc - 4, w - cols)) if w > cols else 0
    return (r0, r1), (c0, min(w, c0 + cols))


def window(frame: pd.DataFrame, marks: np.ndarray, rows: tuple[int, int] | None = None,
           cols: tuple[int, int] | None = None):
    """The styled table window of ``frame``: rows [lo, hi) and table columns [lo, hi) of it (default:
    all; the leading "n" column always stays), what the page hands to ``st.dataframe``."""
    extra = frame.shape[1] - marks.shape[1]
    r0, r1 = rows if rows is not None else (0, frame.shape[0])
    c0, c1 = cols if cols is not None else (0, marks.shape[1])
    frame = frame.iloc[r0:r1, list(range(extra)) + list(range(extra + c0, extra + c1))]
    return styled(frame, marks[r0:r1, c0:c1])


def styled(frame: pd.DataFrame, marks: np.ndarray):
    """Colour the table's cells by ``marks`` (the leading "n" column stays plain)."""
    extra = frame.shape[1] - marks.shape[1]

    def style(_):
        return pd.DataFrame([[""] * extra + [MARK_STYLE.get(int(m), "") for m in row] for row in marks],
                            index=frame.index, columns=frame.columns)
    # cell_ids=False: only the styled cells carry an id, so Streamlit rewrites the display values of
    # the styled columns only (with ids on every cell it rewrote every column: most of the cost)
    from pandas.io.formats.style import Styler

    return Styler(frame, cell_ids=False).apply(style, axis=None)


# --- findings ---------------------------------------------------------------------------------

def first_finding(findings: list[Finding]) -> Finding | None:
    """The finding of the first wrong row (the checker sorts by row), else the first one."""
    r = first_wrong_row(findings)
    if r is None:
        return findings[0] if findings else None
    return next(f for f in findings if f.row == r)


def check_title(check: str, lang: str = DEFAULT_LANG) -> str:
    return t("dumps", f"check.{check}", lang)


def concept_name(concept: str, lang: str = DEFAULT_LANG) -> str:
    return t("dumps", f"concept.{concept}", lang)


def findings_frame(findings: list[Finding], lang: str = DEFAULT_LANG) -> pd.DataFrame:
    """The findings for the page, titles, concepts and messages in ``lang`` (the downloads stay English)."""
    return pd.DataFrame([{"check": f.check, "title": check_title(f.check, lang), "row": f.row, "index": f.index,
                          "concept": concept_name(CHECKS[f.check].concept, lang), "message": f.text(lang)}
                         for f in findings],
                        columns=["check", "title", "row", "index", "concept", "message"]
                        ).astype({"row": "Int64", "index": "Int64"})


FINDING_TABLE_COLUMNS = ("row", "check", "title", "message", "index")
FINDINGS_SHOWN = 200       # rows of the findings table on the page (the downloads hold every finding)


def findings_table(findings: list[Finding], lang: str = DEFAULT_LANG, labels: dict | None = None) -> pd.DataFrame:
    """The page's findings table: row, check, title, message, index (at most FINDINGS_SHOWN lines),
    a missing row or index shown as "—", the columns named by ``labels`` (key -> header), indexed
    by the row so that no bare 0..n index column is drawn."""
    frame = no_none(findings_frame(findings[:FINDINGS_SHOWN], lang)[list(FINDING_TABLE_COLUMNS)])  # Arrow: no mix
    frame = frame.rename(columns=labels or {})
    return frame.set_index(frame.columns[0])


def findings_csv_frame(findings: list[Finding]) -> pd.DataFrame:
    """The findings as `kvviz check` reports them, one per line, plus the concept key."""
    return pd.DataFrame([{**f.to_json(), "concept": CHECKS[f.check].concept} for f in findings],
                        columns=["check", "row", "index", "message", "concept"]
                        ).astype({"row": "Int64", "index": "Int64"})


def findings_json(findings: list[Finding], profile: Rules | str | None = None) -> dict:
    """The same shape as ``kvviz check --json`` (with ``profile`` when given)."""
    return findings_to_json(findings, profile)


def concepts_of(findings: list[Finding], lang: str = DEFAULT_LANG) -> dict[str, dict]:
    """concept key -> {name, text, checks: [(id, title, explanation)]} for the concepts the findings
    break, in order of first appearance."""
    out: dict[str, dict] = {}
    for f in findings:
        key = CHECKS[f.check].concept
        c = out.setdefault(key, {"name": concept_name(key, lang), "text": t("dumps", f"concept_text.{key}", lang),
                                 "checks": []})
        if f.check not in [x[0] for x in c["checks"]]:
            c["checks"].append((f.check, check_title(f.check, lang), t("dumps", f"explain.{f.check}", lang)))
    return out


def concept_checks_markdown(checks: list[tuple[str, str, str]], lang: str = DEFAULT_LANG) -> str:
    """A markdown list of the checks that fired, each with its title and explanation."""
    return "\n".join(f"- `{cid}` **{title}**{t('dumps', 'colon', lang)}{text}" for cid, title, text in checks)


# --- differences and downloads -----------------------------------------------------------------

def diff_pair(dumps: list[tuple]) -> DiffResult | None:
    """Where dumps A and B differ; None unless there are two."""
    return diff_dumps(dumps[0][2], dumps[1][2]) if len(dumps) == 2 else None


def only_in(res: DiffResult) -> list[tuple[str, str]]:
    """(side, its tables, comma-separated) for each dump that holds tables the other lacks."""
    return [(side.upper(), ", ".join(tables)) for side, tables in res.only_in.items()]


def npz_bytes(d: Dump) -> bytes:
    """The dump as an .npz file (the download)."""
    return dump_to_npz_bytes(d)


def diff_json(res: DiffResult) -> dict:
    return res.to_json()


def diff_frame(res: DiffResult) -> pd.DataFrame:
    def cell(v):
        return None if v is None else json.dumps(v, default=str)
    def whole(v):   # an index stays a whole number (a missing one would turn the column into floats)
        return None if v is None else int(v)
    cols = ["table", "row", "col", "token", "index", "a", "b"]
    rows = [{"table": x.table, "row": whole(x.row), "col": whole(x.col), "token": whole(x.token),
             "index": whole(x.block if x.block is not None else x.index), "a": cell(x.a), "b": cell(x.b)}
            for x in res.differences]
    return pd.DataFrame({c: pd.Series([r[c] for r in rows], dtype=object) for c in cols}, columns=cols)
