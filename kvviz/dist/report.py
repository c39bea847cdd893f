"""The one JSON object ``kvviz dcp`` prints (built on rank 0 from every rank's figures)."""
from __future__ import annotations

import math

from kvviz.dist import plan

# a rank's partial output and LSE vs fp32 dense attention over the same tokens: fp32 on both sides
PARTIAL_TOLERANCE = 1e-3
REFERENCE = "dense fp32 attention over every position of each request (K/V as the cache stores them)"


def _num(x: float):
    """JSON-safe: integers stay integers, inf/NaN become strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, float) and x.is_integer() and abs(x) < 2**53:
        return int(x)
    return x


def _rank_row(rank: int, s: dict) -> dict:
    return {"rank": rank, "tokens_held": int(s["tokens_held"]), "bytes_written": int(s["bytes_written"]),
            "empty_shards": int(s["empty_shards"]),
            "all_gather_lse_us": round(s["all_gather_lse_us"], 2), "all_reduce_out_us": round(s["all_reduce_out_us"], 2),
            "partial_attention_us": round(s["partial_attention_us"], 2),
            "slot_mapping_us": round(s["slot_mapping_us"], 2), "kv_write_us": round(s["kv_write_us"], 2),
            "partial_max_error": _num(s["partial_max_error"]), "lse_max_error": _num(s["lse_max_error"]),
            "slot_mapping_exact": bool(s["slot_mapping_exact"]), "slots_distinct": bool(s["slots_distinct"]),
            "tokens_held_match": bool(s["tokens_held_match"])}


def build_report(cfg: plan.DcpConfig, tables: plan.RankTables, per_rank: list[dict], merged: dict) -> dict:
    """``per_rank``: every rank's STATS as floats; ``merged``: rank 0's checks of the merge."""
    from kvviz.gpu.device import device_label, label_string

    tol = plan.TOLERANCE[cfg.dtype]
    rows = [_rank_row(r, s) for r, s in enumerate(per_rank)]
    partial_tol = PARTIAL_TOLERANCE
    checks = {
        "merged_output": merged["merged_max_error"] <= tol,
        "positions_stored_once": merged["positions_stored_once"],
        "slot_mapping_exact": all(r["slot_mapping_exact"] for r in rows),
        "slots_distinct_per_rank": all(r["slots_distinct"] for r in rows),
        "tokens_held_match_local_seq_lens": all(r["tokens_held_match"] for r in rows),
        "partial_outputs": all(s["partial_max_error"] <= partial_tol and s["lse_max_error"] <= partial_tol
                               for s in per_rank),
    }
    step = tables.step
    out_bytes = step.num_reqs_padded * cfg.num_q_heads * cfg.head_dim * 4
    lse_bytes = step.num_reqs_padded * cfg.num_q_heads * 4
    return {
        "command": "dcp", "passed": all(checks.values()), "checks": checks,
        "world_size": cfg.world, "backend": cfg.backend, "device": label_string(), "label": device_label(),
        "block_size": step.block_size, "kernel_block_size": step.kernel_block_size, "interleave": cfg.interleave,
        "num_reqs": step.num_reqs, "num_reqs_padded": step.num_reqs_padded, "positions": tables.total_positions,
        "seq_lens": step.seq_lens[: step.num_reqs].tolist() if step.num_reqs <= 64 else None,
        "dtype": cfg.dtype, "layout": cfg.layout, "num_kv_heads": cfg.num_kv_heads, "num_q_heads": cfg.num_q_heads,
        "head_dim": cfg.head_dim, "seed": cfg.seed, "repeat": cfg.repeat,
        "merged_max_error": _num(merged["merged_max_error"]), "merged_lse_max_error": _num(merged["merged_lse_max_error"]),
        "tolerance": tol, "partial_tolerance": partial_tol, "reference": REFERENCE,
        "positions_not_stored": merged["positions_not_stored"], "positions_stored_twice": merged["positions_stored_twice"],
        "collective_bytes": {"all_gather_lse": lse_bytes * len(per_rank), "all_reduce_out": out_bytes},
        "ranks": rows,
        "lse_head0": merged.get("lse_detail"),
    }
