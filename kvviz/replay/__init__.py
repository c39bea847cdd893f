"""``kvviz replay RUN``: a captured vLLM run (``kvviz.capture``) simulated by kvviz's own engine under
the run's release and runner, and compared with the capture step by step.

The engine gets the run's requests (prompts, arrival steps, aborts), its config (manifest.json) and the
token ids vLLM generated (requests.json), so prefix-cache hits over generated text are the same
(``kvviz.replay.setup``, ``kvviz.replay.engine``). Every step is simulated from step 0; a step the
capture holds (a ring, a stride or a range may leave some out) is compared: rows and token counts,
the scheduler's side, then each group's tables (``kvviz.replay.compare``, ``kvviz.replay.tables``). The
first difference is reported. A setting kvviz does not model is refused with one sentence.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kvviz.errors import BadInput
from kvviz.replay.compare import Divergence, compare_rows, compare_side
from kvviz.replay.engine import MAX_PADDING, ReplayEngine
from kvviz.replay.setup import ReplaySetup, build_setup
from kvviz.replay.tables import compare_group


@dataclass
class ReplayResult:
    label: str
    vllm: str                  # the release whose rules ran
    runner: str
    steps_captured: int
    steps_simulated: int = 0
    steps_compared: int = 0    # captured steps found equal
    first: Divergence | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return self.first is None

    def to_json(self) -> dict:
        return {"run": self.label, "vllm": self.vllm, "runner": self.runner, "equal": self.equal,
                "steps_captured": self.steps_captured, "steps_simulated": self.steps_simulated,
                "steps_compared": self.steps_compared,
                "first": None if self.first is None else self.first.to_json(), "notes": self.notes}


def _count(meta: dict, key: str, step: int) -> int:
    v = meta.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_PADDING:
        raise BadInput(f"step {step}'s {key} is not a count")
    return v


def _padding(run) -> dict[int, tuple[int, int]]:
    """Each captured step's padded row and token counts (CUDA graphs: not in the manifest)."""
    out = {}
    for s in run.steps:
        meta = run.meta(s)
        out[s] = (_count(meta, "num_reqs_padded", s), _count(meta, "num_tokens_padded", s))
    return out


def compare_step(run, step: int, engine: ReplayEngine, setup: ReplaySetup) -> Divergence | None:
    """The first difference at a captured step, or None."""
    from kvviz.dumps.capture import dump_from_step

    meta, rec, names = run.meta(step), engine.record, setup.captured_id
    d = compare_rows(step, meta, rec, names, engine.runner) or compare_side(step, meta.get("scheduler"),
                                                                             engine.side, names)
    if d is not None:
        return d
    dumps = run.dumps(step)
    config = setup.scenario.config
    if len(dumps) != len(config.groups):
        return Divergence(step, "groups", len(dumps), len(config.groups))
    req_ids = meta.get("req_ids") or []
    for g, dump in enumerate(dumps):
        if dump is None:
            continue
        d = compare_group(step, g, dump, dump_from_step(rec, config, group=g), req_ids, rec.num_tokens)
        if d is not None:
            return d
    return None


def _ran_out(run, step: int, engine: ReplayEngine, *, before: bool) -> Divergence | None:
    """kvviz has nothing left to run at ``step`` (``before`` it), or the step scheduled no token: every
    step of a run scheduled at least one."""
    captured = run.meta(step) if step in set(run.steps) else None
    what = (captured.get("req_ids") or [None])[0] if captured else "a step (each scheduled at least one token)"
    if before and engine.done():
        return Divergence(step, "req_ids", what, None, row=0)
    if not before and engine.record.num_tokens == 0:
        return Divergence(step, "num_scheduled_tokens", what, 0, row=0)
    return None


def replay_run(run, *, setup: ReplaySetup | None = None) -> ReplayResult:
    """Simulate ``run`` (a ``kvviz.capture.run.CapturedRun``) up to its last captured step and compare
    every captured step; the result holds the first divergence (None: equal)."""
    setup = setup or build_setup(run)
    engine = ReplayEngine(setup.scenario, setup.outputs, _padding(run))
    result = ReplayResult(run.label, engine.profile.name, engine.runner, len(run.steps), notes=list(setup.notes))
    captured = set(run.steps)
    last = run.steps[-1] if run.steps else -1
    while engine.step_index <= last:
        step = engine.step_index
        result.first = _ran_out(run, step, engine, before=True)
        if result.first is not None:
            break
        engine.step()
        result.steps_simulated += 1
        result.first = _ran_out(run, step, engine, before=False)
        if result.first is None and step in captured:
            result.first = compare_step(run, step, engine, setup)
            result.steps_compared += result.first is None
        if result.first is not None:
            break
    _add_notes(result, run, engine, setup)
    return result


def _add_notes(result: ReplayResult, run, engine: ReplayEngine, setup: ReplaySetup) -> None:
    missing = result.steps_simulated - result.steps_compared
    if missing > 0 and result.equal:
        result.notes.append(f"{missing} simulated step(s) are not in the capture (ring, stride, range or "
                            "dropped): simulated, not compared")
    if engine.invented:
        names = ", ".join(sorted(setup.captured_id.get(r, r) for r in engine.invented)[:5])
        result.notes.append(f"requests.json ends before some generated tokens kvviz needed ({names}): "
                            "kvviz made those up")
