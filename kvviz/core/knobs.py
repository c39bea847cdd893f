"""Scenario config knobs that vLLM has only from some release, validated against that release.

  long_prefill_token_threshold  every release (config/scheduler.py ``SchedulerConfig``): 0..max_model_len,
                                0 = no cap; a request gets at most this many tokens a step.
  max_num_active_seqs           v0.31.0 on (#56758): 1..max_num_reqs (vLLM: <= max_num_seqs) or null
                                (= max_num_reqs); waiting admission stops at that many running.
"""
from __future__ import annotations

from kvviz.core.versions import rules_for
from kvviz.errors import BadInput

KNOBS = ("long_prefill_token_threshold", "max_num_active_seqs")


def _int_in(cfg: dict, key: str, lo: int, hi: int, what: str):
    v = cfg[key]
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise BadInput(f"config: {key!r} must be an integer in [{lo}, {hi}] ({what}), got {str(v)[:40]}")
    return v


def parse_knobs(cfg: dict, config) -> dict:
    """The knobs given in ``cfg`` as EngineConfig fields; BadInput with one sentence otherwise."""
    out = {}
    if cfg.get("long_prefill_token_threshold") is not None:
        out["long_prefill_token_threshold"] = _int_in(cfg, "long_prefill_token_threshold", 0, config.max_model_len,
                                                      "0 = no cap, at most max_model_len")
    if cfg.get("max_num_active_seqs") is not None:
        if not rules_for(config.vllm).has_max_num_active_seqs:
            raise BadInput(f"config: 'max_num_active_seqs' first shipped in vLLM v0.31.0 (#56758); "
                           f"{config.vllm} has no such knob: drop it or choose vLLM v0.31.0 or newer")
        out["max_num_active_seqs"] = _int_in(cfg, "max_num_active_seqs", 1, config.max_num_reqs,
                                             "at most max_num_reqs, vLLM's max_num_seqs")
    return out
