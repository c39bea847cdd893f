"""One captured step, from the worker: its number, the manifest on the first one, the hand-off to
the writer. Called by ``kvviz.capture.plugin``'s wrappers on the engine's thread."""
from __future__ import annotations

from kvviz.capture import worker_v1, worker_v2

_SCHEDULER_KNOBS = ("max_num_seqs", "max_num_batched_tokens", "max_model_len", "enable_chunked_prefill",
                    "long_prefill_token_threshold", "max_num_partial_prefills", "policy", "async_scheduling",
                    "scheduler_reserve_full_isl", "disable_hybrid_kv_cache_manager", "max_num_active_seqs",
                    "long_prefill_token_threshold_adaptive")
_CACHE_KNOBS = ("block_size", "enable_prefix_caching", "prefix_caching_hash_algo", "num_gpu_blocks_override",
                "num_gpu_blocks", "sliding_window", "mamba_cache_mode", "kv_sharing_fast_prefill")
_PARALLEL_KNOBS = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
                   "decode_context_parallel_size", "cp_kv_cache_interleave_size")


def _plain(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    name = getattr(v, "name", None) or getattr(v, "value", None)
    return str(name if name is not None else v)


def _knobs(obj, names) -> dict:
    return {n: _plain(getattr(obj, n)) for n in names if obj is not None and hasattr(obj, n)}


def _first_rank(runner) -> bool:
    """Only the first tensor/pipeline rank writes (every rank holds the same block tables)."""
    try:
        from vllm.distributed import parallel_state as ps

        return ps.get_tensor_model_parallel_rank() == 0 and ps.get_pp_group().rank_in_group == 0
    except Exception:  # noqa: BLE001 - not initialised (a single process): this is the only rank
        return True


def manifest(session, runner, runner_kind: str) -> dict:
    cfg = runner.vllm_config
    kv = runner.kv_cache_config
    groups = []
    for g, group in enumerate(kv.kv_cache_groups):
        spec = group.kv_cache_spec
        attn = (getattr(runner, "attn_groups", None) or [[]] * (g + 1))[g]
        backend = attn[0].backend.get_name() if attn else None
        window = getattr(spec, "sliding_window", None)
        kind = ("state" if "mamba" in type(spec).__name__.lower() else
                "sliding_window" if isinstance(window, int) else "attention")
        kbs = getattr(attn[0], "kernel_block_size", None) if attn else None
        groups.append({"kind": kind, "spec": type(spec).__name__, "block_size": int(spec.block_size),
                       "kernel_block_size": int(kbs) if isinstance(kbs, int) else int(spec.block_size),
                       "sliding_window": window if isinstance(window, int) else None,
                       "attn_backend": backend, "num_layers": len(group.layer_names)})
    model = cfg.model_config
    scheduler = _knobs(cfg.scheduler_config, _SCHEDULER_KNOBS)
    scheduler.setdefault("max_model_len", getattr(model, "max_model_len", None))
    return {"vllm": session.release, "vllm_version": session.version, "runner": runner_kind,
            "attn_backend": groups[0]["attn_backend"] if groups else None,
            "block_size": groups[0]["block_size"] if groups else None,
            "kernel_block_size": groups[0]["kernel_block_size"] if groups else None,
            "num_blocks": int(kv.num_blocks), "groups": groups, "scheduler": scheduler,
            "cache": _knobs(cfg.cache_config, _CACHE_KNOBS), "parallel": _knobs(cfg.parallel_config, _PARALLEL_KNOBS),
            "model": {"model": str(getattr(model, "model", "")), "dtype": _plain(getattr(model, "dtype", None)),
                      "max_model_len": getattr(model, "max_model_len", None)},
            "speculative": cfg.speculative_config is not None,
            "device": str(getattr(runner, "device", ""))}


def _step_number(runner, out) -> tuple[int, dict | None]:
    step = getattr(out, "kvviz_step", None)
    if step is None:                      # the scheduler is not wrapped here: the worker counts
        step = getattr(runner, "_kvviz_own_step", 0)
        runner._kvviz_own_step = step + 1
    return int(step), getattr(out, "kvviz_scheduler", None)


def _submit(session, runner, out, runner_kind: str, step: int, side, build) -> None:
    if not session.config.wants(step) or not _first_rank(runner):
        return
    writer = getattr(runner, "_kvviz_writer", None)
    if writer is None:                    # this engine's first step: its run's directory is the one its
        directory = getattr(out, "kvviz_dir", None) or session.new_run_dir()     # scheduler chose
        writer = runner._kvviz_writer = session.writer(manifest(session, runner, runner_kind), directory)
    meta, groups = build()
    meta["scheduler"] = None if side is None else {k: v for k, v in side.items()
                                                   if k not in ("ref_cnt", "free_block_ids")}
    writer.submit_step(step, meta, groups)


def capture_v1(session, runner, out, args: dict) -> None:
    step, side = _step_number(runner, out)
    n = int(args["num_reqs"])
    n_pad = int(args.get("num_reqs_padded") or n)
    t = int(args["num_tokens"])
    t_pad = int(args.get("num_tokens_padded") or t)

    def build():
        groups = worker_v1.step_groups(runner, release=session.release, num_reqs=n, num_reqs_padded=n_pad,
                                       num_tokens_padded=t_pad, slot_mappings=args.get("slot_mappings"), side=side)
        meta = worker_v1.step_meta(runner, num_reqs=n, num_reqs_padded=n_pad, num_tokens=t,
                                   num_tokens_padded=t_pad, scheduler_output=out)
        return meta, groups

    _submit(session, runner, out, "v1", step, side, build)


def capture_v2(session, runner, out, input_batch, result) -> None:
    step, side = _step_number(runner, out)
    gathered, slot_mappings = result

    def build():
        groups = worker_v2.step_groups(runner, input_batch, gathered, slot_mappings, release=session.release,
                                       side=side)
        return worker_v2.step_meta(runner, input_batch, out), groups

    _submit(session, runner, out, "v2", step, side, build)
