"""Guided demos: small scenarios a teacher plays step by step, forward and back.

Each demo is an ordinary scenario (``kvviz.core.scenario`` format) plus, optionally, a second
*variant* played beside it (the same scenario on another DCP rank, or with a fault
injected), and the figures worth showing. The narrative of step ``k`` lives in
``kvviz/texts/demos.py`` under ``"<demo>.step<k>"`` in English, Chinese and Spanish;
``tests/views/test_demos.py`` checks that every step has one and that what the narrative
claims really happens in the engine.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import lru_cache

from kvviz.core.engine import Engine
from kvviz.core.records import StepRecord
from kvviz.core.scenario import Scenario, parse_scenario
from kvviz.core.versions import MAIN, NEWEST, VERSIONS, rules_for
from kvviz.errors import BadInput


@dataclass(frozen=True)
class Variant:
    key: str                       # label key in the demos texts ("variant.<key>")
    overrides: tuple = ()          # (config key, value) pairs
    faults: frozenset = frozenset()
    # steps the faults strike (empty: every step); a one-step fault of the commit or the gather
    # leaves the kernel reading what an earlier step left in the table, not a table of zeros
    fault_steps: tuple = ()


@dataclass(frozen=True)
class Demo:
    key: str
    scenario: dict
    figures: tuple                 # figure names, shown in this order (one per screen in presenter mode)
    variants: tuple = (Variant("main"),)
    focus_req: str | None = None   # request whose token the slot figures point at


# The narratives were written for, and are checked against (tests/views/test_demos.py), vLLM main of
# 2026-08-18: the scenarios name it. The page plays a demo on any release kvviz knows (default: the
# newest); where that release's step differs from the narrative's, the page says what differs.
DEMO_RELEASE = MAIN
NARRATIVE_RELEASE = MAIN
DEFAULT_RELEASE = NEWEST


def _sc(name, config, requests, actions=()):
    return {"name": name, "config": {"vllm": DEMO_RELEASE, **config}, "requests": list(requests),
            "actions": list(actions)}


DEMOS: dict[str, Demo] = {}


def _add(d: Demo) -> None:
    DEMOS[d.key] = d


_add(Demo("prefix", _sc("prefix sharing", {"num_blocks": 12, "block_size": 4, "max_num_reqs": 4,
                                           "max_num_batched_tokens": 32},
                        [{"id": "A", "arrival": 0, "prompt_len": 10, "prefix_group": "sys",
                          "prefix_len": 8, "max_tokens": 3},
                         {"id": "B", "arrival": 1, "prompt_len": 11, "prefix_group": "sys",
                          "prefix_len": 8, "max_tokens": 3}]),
          ("block_table", "pool", "slots")))

_add(Demo("fork", _sc("fork with copy-on-write", {"num_blocks": 12, "block_size": 4, "max_num_reqs": 4,
                                                  "max_num_batched_tokens": 32},
                      [{"id": "A", "arrival": 0, "prompt_len": 10, "max_tokens": 3}],
                      [{"step": 1, "kind": "fork", "req": "A", "n": 1}]),
          ("block_table", "pool", "slots")))

_add(Demo("preempt", _sc("preemption and recompute",
                         {"num_blocks": 7, "block_size": 4, "max_num_reqs": 4,
                          "max_num_batched_tokens": 32, "enable_prefix_caching": False},
                         [{"id": "A", "arrival": 0, "prompt_len": 11, "max_tokens": 6},
                          {"id": "B", "arrival": 1, "prompt_len": 7, "max_tokens": 3}]),
          ("block_table", "pool", "slots")))

_add(Demo("chunked", _sc("chunked prefill across a block boundary",
                         {"num_blocks": 12, "block_size": 4, "max_num_reqs": 4,
                          "max_num_batched_tokens": 6},
                         [{"id": "A", "arrival": 0, "prompt_len": 14, "max_tokens": 2}]),
          ("slots", "block_table", "pool"), focus_req="A"))

_add(Demo("condense", _sc("condense and move_row",
                          {"num_blocks": 16, "block_size": 4, "max_num_reqs": 4,
                           "max_num_batched_tokens": 32, "runner": "v1"},
                          [{"id": "A", "arrival": 0, "prompt_len": 5, "max_tokens": 1},
                           {"id": "B", "arrival": 0, "prompt_len": 6, "max_tokens": 4},
                           {"id": "C", "arrival": 0, "prompt_len": 9, "max_tokens": 4}]),
          ("block_table", "pool"),
          variants=(Variant("main"), Variant("no_clear", faults=frozenset({"move_row_no_clear"})))))

_add(Demo("cudagraph", _sc("CUDA-graph padding",
                           {"num_blocks": 16, "block_size": 4, "max_num_reqs": 8,
                            "max_num_batched_tokens": 32, "cudagraph_capture_sizes": [1, 2, 4, 8]},
                           [{"id": "A", "arrival": 0, "prompt_len": 6, "max_tokens": 3},
                            {"id": "B", "arrival": 0, "prompt_len": 5, "max_tokens": 3},
                            {"id": "C", "arrival": 0, "prompt_len": 3, "max_tokens": 3}]),
          ("slots", "block_table", "csr")))

_add(Demo("hybrid", _sc("hybrid model: sliding window and state",
                        {"num_blocks": 20, "block_size": 4, "max_num_reqs": 4,
                         "max_num_batched_tokens": 32,
                         "groups": [{"kind": "full", "name": "full attention"},
                                    {"kind": "sliding_window", "sliding_window": 6,
                                     "name": "sliding window 6"},
                                    {"kind": "state", "name": "state (Mamba-like)"}]},
                        [{"id": "A", "arrival": 0, "prompt_len": 9, "max_tokens": 6}]),
          ("block_table", "pool", "slots")))

_add(Demo("kernel_block", _sc("kernel block smaller than the manager's",
                              {"num_blocks": 8, "block_size": 8, "kernel_block_size": 4,
                               "max_num_reqs": 4, "max_num_batched_tokens": 32},
                              [{"id": "A", "arrival": 0, "prompt_len": 13, "max_tokens": 2},
                               {"id": "B", "arrival": 1, "prompt_len": 5, "max_tokens": 2}]),
          ("block_table", "slots", "pool")))

_add(Demo("dcp", _sc("DCP interleave across ranks",
                     {"num_blocks": 8, "block_size": 4, "max_num_reqs": 4,
                      "max_num_batched_tokens": 32, "dcp_world_size": 2, "dcp_rank": 0,
                      "cp_kv_cache_interleave_size": 1},
                     [{"id": "A", "arrival": 0, "prompt_len": 11, "max_tokens": 2}]),
          ("slots", "block_table"),
          variants=(Variant("rank0"), Variant("rank1", overrides=(("dcp_rank", 1),)))))

_add(Demo("pcie", _sc("the PCIe cost of a 1M-token context",
                      {"num_blocks": 16, "block_size": 16, "max_num_reqs": 4,
                       "max_num_batched_tokens": 64, "max_model_len": 1 << 20, "runner": "v1"},
                      [{"id": "A", "arrival": 0, "prompt_len": 20, "max_tokens": 3},
                       {"id": "B", "arrival": 1, "prompt_len": 12, "max_tokens": 2}]),
          ("traffic", "bytes", "block_table")))

# the same four requests for the two runner lessons: A (3 blocks) finishes after its prefill, D (1
# block) arrives two steps later and takes what A left (a V1 row / a V2 request state)
FOUR = _sc("four requests, one finishing early, one arriving late",
           {"num_blocks": 24, "block_size": 4, "max_num_reqs": 4, "max_num_batched_tokens": 64},
           [{"id": "A", "arrival": 0, "prompt_len": 10, "max_tokens": 1},
            {"id": "B", "arrival": 0, "prompt_len": 5, "max_tokens": 4},
            {"id": "C", "arrival": 0, "prompt_len": 7, "max_tokens": 4},
            {"id": "D", "arrival": 2, "prompt_len": 3, "max_tokens": 2}])
FAULT_STEP = 2   # where_stale: the step whose commit (V1) / gather (V2) the faulty runs skip

_add(Demo("v1_vs_v2", FOUR, ("block_table", "slots"),
          variants=(Variant("v1", overrides=(("runner", "v1"),)),
                    Variant("v2", overrides=(("runner", "v2"),)))))

_add(Demo("where_stale", FOUR, ("block_table", "slots"),
          variants=(Variant("v1", overrides=(("runner", "v1"),)),
                    Variant("v1_skip_commit", overrides=(("runner", "v1"),),
                            faults=frozenset({"skip_commit"}), fault_steps=(FAULT_STEP,)),
                    Variant("v2", overrides=(("runner", "v2"),)),
                    Variant("v2_skip_gather", overrides=(("runner", "v2"),),
                            faults=frozenset({"skip_gather"}), fault_steps=(FAULT_STEP,)))))

DEMO_KEYS = list(DEMOS)


# --- playing ---------------------------------------------------------------------------------

@dataclass
class DemoRun:
    demo: Demo
    variant: Variant
    scenario: Scenario
    history: list[StepRecord] = field(default_factory=list)

    @property
    def num_steps(self) -> int:
        return len(self.history)


def scenario_dict(demo: Demo, variant: Variant, release: str = NARRATIVE_RELEASE) -> dict:
    d = copy.deepcopy(demo.scenario)
    d["config"]["vllm"] = release
    for k, v in variant.overrides:
        d["config"][k] = v
    return d


def check_release(release) -> str:
    """An untrusted release name (e.g. from a link) as one kvviz knows, else ``BadInput``."""
    if str(release) not in VERSIONS:
        raise BadInput(f"unknown vLLM release {str(release)[:40]!r}")
    return str(release)


def missing_runner(key: str, release: str) -> str | None:
    """Why demo ``key`` cannot play on ``release``: "v1" (a run needs the V1 model runner, which the
    release no longer has), "v2" (a run needs Model Runner V2, which it does not have yet), else None."""
    rules = rules_for(release)
    for variant in DEMOS[key].variants:
        runner = dict(variant.overrides).get("runner", DEMOS[key].scenario["config"].get("runner"))
        if runner == "v1" and not rules.has_runner_v1:
            return "v1"
        if runner == "v2" and not rules.has_runner_v2:
            return "v2"
    return None


def playable_releases(key: str) -> list[str]:
    """The releases (oldest first) demo ``key`` can play on."""
    return [v for v in VERSIONS if missing_runner(key, v) is None]


def nearest_playable(key: str, release: str) -> str | None:
    """The playable release closest to ``release`` in release order (the newer one on a tie)."""
    ok = playable_releases(key)
    if not ok:
        return None
    at = VERSIONS.index(release)
    return min(ok, key=lambda v: (abs(VERSIONS.index(v) - at), -VERSIONS.index(v)))


@lru_cache(maxsize=256)
def play(key: str, variant_index: int = 0, max_steps: int = 64, release: str = NARRATIVE_RELEASE) -> DemoRun:
    """Play a demo to its end on vLLM ``release`` (cached: demos are deterministic). A demo that cannot
    happen on that release (``missing_runner``) raises ``BadInput``."""
    if key not in DEMOS:
        raise KeyError(f"unknown demo {key!r}")
    demo = DEMOS[key]
    variant = demo.variants[variant_index]
    sc = parse_scenario(scenario_dict(demo, variant, check_release(release)))
    eng = Engine(sc, faults=set(variant.faults))
    if variant.fault_steps:
        history = _run_with_fault_steps(eng, variant, max_steps)
    else:
        history = eng.run(max_steps)
    if not eng.done():
        raise RuntimeError(f"demo {key} did not finish in {max_steps} steps")
    return DemoRun(demo, variant, sc, history)


# faults checked at every step (the others are built into the tables when the engine starts)
_STEP_FAULTS = {"skip_commit", "commit_too_few_rows", "skip_apply_staged_writes", "skip_gather"}


def _run_with_fault_steps(eng: Engine, variant: Variant, max_steps: int) -> list[StepRecord]:
    """Play with the variant's per-step faults switched on only in ``variant.fault_steps``."""
    timed = set(variant.faults) & _STEP_FAULTS
    if not timed:
        raise ValueError(f"variant {variant.key}: fault_steps needs one of {sorted(_STEP_FAULTS)}")
    always = set(variant.faults) - timed
    while not eng.done() and eng.step_index < max_steps:
        on = timed if eng.step_index in variant.fault_steps else set()
        eng.faults = always | on          # the engine reads its faults at every step ...
        eng.states.faults = set(on)       # ... and so do Model Runner V2's request states
        eng.step()
    return eng.history


def num_steps(key: str) -> int:
    """Steps of demo ``key``: the same on every release it plays on (tests/views/test_demos.py)."""
    return play(key).num_steps


ASPECTS = ("runner", "batch", "blocks", "tables", "slots", "pool")


def _facts(rec: StepRecord) -> dict:
    """What a narrative can speak of in one step, aspect by aspect (``ASPECTS``), as plain values."""
    return {
        "runner": rec.runner,
        "batch": ([(s.req_id, s.num_tokens, s.kind, s.seq_len) for s in rec.scheduled],
                  rec.num_reqs_padded, rec.num_tokens_padded),
        "blocks": {rid: [list(map(int, b)) for b in r["blocks"]] for rid, r in rec.requests.items()},
        "tables": ([t.tolist() for t in rec.cpu_tables], [t.tolist() for t in rec.device_tables]),
        "slots": [None if getattr(i, "slot_mapping", None) is None else i.slot_mapping.tolist() for i in rec.inputs],
        "pool": (list(rec.free_queue_after or rec.free_queue), list(rec.ref_counts_after or rec.ref_counts),
                 sorted(rec.cached_blocks)),
    }


@lru_cache(maxsize=1024)
def differs(key: str, step: int, release: str) -> tuple[str, ...]:
    """The aspects (``ASPECTS``, in that order) in which step ``step`` of demo ``key`` on ``release``
    differs from the same step on the narrative's release: what the narrative may get wrong there.
    Empty on the narrative's release, or where every run of the step is the same."""
    if release == NARRATIVE_RELEASE:
        return ()
    out = set()
    for vi in range(len(DEMOS[key].variants)):
        a = _facts(play(key, vi).history[step])
        b = _facts(play(key, vi, release=release).history[step])
        out |= {k for k in ASPECTS if a[k] != b[k]}
    return tuple(k for k in ASPECTS if k in out)


def nav_step(key: str, current: int, to: str) -> int:
    """The step the "first" / "prev" / "next" / "last" button leads to from ``current``."""
    n = num_steps(key)
    return {"first": 0, "prev": max(current - 1, 0), "next": min(current + 1, n - 1), "last": n - 1}[to]


def clamp_step(key: str, step) -> int:
    """An untrusted step number (e.g. from a link) as a valid step of the demo."""
    try:
        s = int(str(step).strip())
    except (TypeError, ValueError):
        return 0
    return max(0, min(s, num_steps(key) - 1))


# --- the PCIe traffic model ----------------------------------------------------------------

def _shape(rows: int, max_model_len: int, block_size: int):
    from kvviz.gpu.traffic import StepShape

    return StepShape(num_reqs=rows, context_len=1, block_size=block_size, max_model_len=max_model_len)


def commit_bytes_per_step(rows: int, max_model_len: int, block_size: int) -> int:
    """``commit_block_table(rows)`` copies whole rows, however few blocks each one uses."""
    from kvviz.gpu.traffic import block_table_bytes

    return block_table_bytes(_shape(rows, max_model_len, block_size))


def pcie_rate(rows: int, max_model_len: int, block_size: int, steps_per_s: float) -> float:
    """Bytes per second of block-table copies alone."""
    return commit_bytes_per_step(rows, max_model_len, block_size) * steps_per_s


PCIE_TABLE = [  # (label, rows, max_model_len, block_size, steps/s): the design document's cases
    ("32K x 256", 256, 32 * 1024, 16, 50),
    ("1M x 256", 256, 1 << 20, 16, 50),
]
