"""vLLM's start-up capacity check, in blocks (v1/core/kv_cache_utils.py ``get_kv_cache_configs``,
``_check_enough_kv_cache_memory``, ``_max_memory_usage_bytes_from_groups``).

vLLM refuses to start when one request of ``max_model_len`` tokens needs more KV-cache blocks than the
pool has. kvviz's ``num_blocks`` plays ``num_gpu_blocks_override``: the memory checked is
``num_blocks x bytes_per_block``; from v0.29.0 (#47272) one block's bytes are kept back for the null
block first, so the check counts ``num_blocks - 1`` (the blocks a request can really get; before, a
config needing all ``num_blocks`` passed the check and could never be served). The pool itself is
unchanged. One request needs, summed over the groups (``max_memory_usage_bytes`` / page):
  full attention   cdiv(max_model_len, block_size x dcp),
  sliding window   cdiv(min(window - 1 + max_num_batched_tokens, max_model_len), block_size) + 1,
  state            1 (Mamba's state without align mode).
kvviz replays such a config anyway (a scenario's requests may be short); the result is a note.
"""
from __future__ import annotations


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def blocks_for_one_request(config, max_model_len: int | None = None) -> int:
    """Blocks one request of ``max_model_len`` tokens needs, summed over the config's groups."""
    mml = config.max_model_len if max_model_len is None else max_model_len
    geo = config.geometry
    total = 0
    for g in config.groups:
        if g.kind == "state":
            total += 1
        elif g.kind == "sliding_window":
            total += _cdiv(min(g.sliding_window - 1 + config.max_num_batched_tokens, mml), geo.block_size) + 1
        else:
            total += _cdiv(mml, geo.virtual_block_size)
    return total


def estimated_max_model_len(config, blocks: int) -> int:
    """The longest max_model_len whose request fits in ``blocks`` (vLLM's binary search,
    ``_estimate_max_model_len_from_groups``); 0 if none does."""
    lo, hi = 0, config.max_model_len
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if blocks_for_one_request(config, mid) <= blocks:
            lo = mid
        else:
            hi = mid - 1
    return lo


def capacity_check(config, rules) -> dict:
    """The check as the release runs it: blocks needed, blocks counted, whether vLLM would start."""
    counted = config.num_blocks - 1 if rules.null_block_in_capacity else config.num_blocks
    needed = blocks_for_one_request(config)
    out = {"needed": needed, "counted": counted, "null_reserved": rules.null_block_in_capacity,
           "fits": needed <= counted, "max_model_len": config.max_model_len}
    if not out["fits"]:
        out["estimated_max_model_len"] = estimated_max_model_len(config, counted)
    return out
