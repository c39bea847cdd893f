"""What each DCP rank stores, and what is refused before any process starts (numpy only).

A DCP batch is a ``compute`` batch (``kvviz.core.step``) run on ``world`` ranks at once. Every rank
holds the *same* block table (vLLM hands every DCP rank the same block ids: a manager block id
stands for ``block_size x world`` positions, dealt ``interleave`` at a time round-robin); what
differs per rank is which positions it stores: its slot mapping is ``-1`` for every position
another rank owns, and its ``seq_lens`` for attention are the local counts.

Each request's tokens split in two: the *context* (positions ``0 .. S-Q-1``, written by earlier
steps) and this step's ``Q`` tokens (``S-Q .. S-1``). Both go through the slot-mapping and KV-write
kernels; the shared K/V values are indexed by (request, position) so every rank draws the same ones.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from kvviz.core.step import StepInputs, build_step, build_step_from_batch
from kvviz.errors import BadInput

MAX_WORLD = 16
RANK_MEMORY_BYTES = 768 << 20        # what one CPU rank needs (torch + the Triton interpreter)
RANKS_PER_CPU = 4                    # more CPU ranks than this per core only time out
MAX_POSITIONS = 1 << 22              # every position of every request, on every rank
MAX_KV_ELEMENTS = {"cuda": 1 << 30, "cpu": 1 << 25}    # the shared K/V values, each rank's copy
MAX_CACHE_BYTES = {"cuda": 8 << 30, "cpu": 512 << 20}  # one rank's KV cache (from the largest block id)
DTYPES = ("float16", "bfloat16", "float32")
LAYOUTS = ("NHD", "HND")
# merged output vs the fp32 reference over the K/V as stored; the partial outputs, the rescale
# and the all-reduce are fp32 here, so the figure seen is ~1e-6: the bound is what the dtype's
# own rounding of an output would allow
TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-4}
MAX_HEADS, MAX_HEAD_DIM = 128, 512


@dataclass(frozen=True)
class DcpConfig:
    """One ``kvviz dcp`` run, as every rank receives it (plain values: it is pickled to the ranks)."""
    world: int
    interleave: int
    backend: str = "gloo"            # resolved: "nccl" or "gloo"
    seed: int = 0
    num_kv_heads: int = 2
    num_q_heads: int = 4
    head_dim: int = 32
    dtype: str = "float16"
    layout: str = "NHD"
    repeat: int = 1                  # timed repetitions of each collective (median reported)
    timeout_s: float = 600.0

    @property
    def device_kind(self) -> str:
        return "cuda" if self.backend == "nccl" else "cpu"


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def dcp_batch(spec, world: int, interleave: int | None = None) -> tuple[dict, StepInputs]:
    """The batch as every rank reads it: ``dcp_world_size`` = ``world``, the interleave from
    ``interleave`` or the batch (default 1), ``dcp_rank`` dropped (each rank uses its own). Refused:
    a world outside 1..MAX_WORLD, a batch that declares another world size or another interleave,
    and whatever ``compute`` refuses (an interleave that does not divide the block size, block ids
    that cannot hold a request over ``world`` ranks, unknown keys, ...). Returns the normalised
    batch and rank 0's step."""
    if not _is_int(world) or not 1 <= world <= MAX_WORLD:
        raise BadInput(f"--world must be between 1 and {MAX_WORLD}, got {world}")
    if interleave is not None and (not _is_int(interleave) or interleave < 1):
        raise BadInput(f"--interleave must be a positive integer, got {interleave}")
    if not isinstance(spec, dict):
        build_step_from_batch(spec)          # names what the input is instead
        raise BadInput("the batch must be a JSON object")
    for key in ("dcp_world_size", "cp_kv_cache_interleave_size", "dcp_rank"):
        if key in spec and not _is_int(spec[key]):
            raise BadInput(f"{key!r} must be an integer, got {type(spec[key]).__name__}")
    declared = spec.get("dcp_world_size")
    if _is_int(declared) and declared != world:
        raise BadInput(f"the batch declares dcp_world_size {declared}, but --world is {world}")
    declared_i = spec.get("cp_kv_cache_interleave_size")
    if interleave is not None and _is_int(declared_i) and declared_i != interleave:
        raise BadInput(f"the batch declares cp_kv_cache_interleave_size {declared_i}, but --interleave is "
                       f"{interleave}")
    norm = {k: v for k, v in spec.items() if k != "dcp_rank"}
    norm["dcp_world_size"] = world
    if interleave is not None:
        norm["cp_kv_cache_interleave_size"] = interleave
    norm.setdefault("cp_kv_cache_interleave_size", 1)
    return norm, build_step_from_batch(norm)


def check_world(ranks: int, backend: str, gpus: int) -> None:
    """Refuse a world this machine cannot start: NCCL needs a GPU per rank; gloo ranks run on the
    CPU (the Triton interpreter), at most RANKS_PER_CPU per core and RANK_MEMORY_BYTES each."""
    if backend == "nccl":
        if ranks > gpus:
            raise BadInput(f"--backend nccl needs a GPU per rank: --world {ranks}, {gpus} GPU(s) visible")
        return
    cpus = os.cpu_count() or 1
    if ranks > RANKS_PER_CPU * cpus:
        raise BadInput(f"--world {ranks} is more CPU ranks than this machine can run ({cpus} core(s), at most "
                       f"{RANKS_PER_CPU} ranks per core)")
    avail = _available_memory()
    need = ranks * RANK_MEMORY_BYTES
    if avail is not None and need > avail:
        raise BadInput(f"--world {ranks} CPU ranks need about {need >> 20} MiB; "
                       f"{avail >> 20} MiB is available")


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_sizes(cfg: DcpConfig, step: StepInputs) -> None:
    """Refuse, before a rank starts, what one rank could not hold: too many positions, too many
    shared K/V values, or a cache (sized by the largest block id) over the device's limit."""
    if cfg.dtype not in DTYPES:
        raise BadInput(f"--dtype must be one of {', '.join(DTYPES)}, not {cfg.dtype!r}")
    if cfg.layout not in LAYOUTS:
        raise BadInput(f"--layout must be NHD or HND, not {cfg.layout!r}")
    for name, v, hi in (("--num-kv-heads", cfg.num_kv_heads, MAX_HEADS), ("--num-q-heads", cfg.num_q_heads, MAX_HEADS),
                        ("--head-dim", cfg.head_dim, MAX_HEAD_DIM)):
        if not 1 <= v <= hi:
            raise BadInput(f"{name} must be between 1 and {hi}, got {v}")
    if cfg.num_q_heads % cfg.num_kv_heads:
        raise BadInput(f"--num-q-heads {cfg.num_q_heads} is not a multiple of --num-kv-heads {cfg.num_kv_heads}")
    total = int(step.seq_lens.astype(np.int64).sum())
    if total > MAX_POSITIONS:
        raise BadInput(f"the batch holds {total} positions; the limit is {MAX_POSITIONS}")
    dev = cfg.device_kind
    elements = total * cfg.num_kv_heads * cfg.head_dim
    if elements > MAX_KV_ELEMENTS[dev]:
        raise BadInput(f"{total} positions x {cfg.num_kv_heads} KV heads x {cfg.head_dim} is {elements} K values; "
                       f"the limit on {dev} is {MAX_KV_ELEMENTS[dev]}")
    cache_bytes = cache_geometry(cfg, step).total_bytes
    if cache_bytes > MAX_CACHE_BYTES[dev]:
        raise BadInput(f"a rank's KV cache up to the largest block id would be {cache_bytes >> 20} MiB; the limit on "
                       f"{dev} is {MAX_CACHE_BYTES[dev] >> 20} MiB")


def cache_geometry(cfg: DcpConfig, step: StepInputs):
    """One rank's cache: every kernel block the (shared) table names, in the flash_attn family
    ``[2, B, N, H, D]`` (NHD) or ``[2, B, H, N, D]`` (HND) that kvviz's KV-write kernel writes."""
    nblocks = int(step.block_table.max()) + 1 if step.block_table.size else 1
    geo = step.geometry.with_cache(num_kv_heads=cfg.num_kv_heads, head_dim=cfg.head_dim, dtype=cfg.dtype,
                                   layout=cfg.layout, cache_layout="flash_attn")
    return geo.cache(nblocks)


@dataclass
class RankTables:
    """One rank's view of the batch. ``*_index``: where each token's K/V sits in the shared values
    (request-major, position order: ``seq_start[r] + position``)."""
    rank: int
    step: StepInputs              # this step's tokens (the batch's query_len per request)
    context: StepInputs           # the earlier tokens, positions 0 .. S-Q-1, written first
    local_seq_lens: np.ndarray    # int32 [num_reqs_padded]: what this rank's attention reads
    seq_start: np.ndarray         # int64 [num_reqs + 1]
    context_index: np.ndarray     # int64 [context tokens]
    step_index: np.ndarray        # int64 [step tokens] (the padded tail excluded)

    @property
    def total_positions(self) -> int:
        return int(self.seq_start[-1])


def _token_index(step: StepInputs, seq_start: np.ndarray) -> np.ndarray:
    qsl = step.query_start_loc[: step.num_reqs + 1].astype(np.int64)
    req = np.repeat(np.arange(step.num_reqs), np.diff(qsl))
    return seq_start[req] + step.positions[: step.num_tokens]


def rank_tables(norm: dict, rank: int) -> RankTables:
    """Rank ``rank``'s tables for a batch normalised by ``dcp_batch``."""
    step = build_step_from_batch({**norm, "dcp_rank": rank})
    geo = step.geometry
    n = step.num_reqs
    seq = step.seq_lens[:n].astype(np.int64)
    q = np.diff(step.query_start_loc[: n + 1].astype(np.int64))
    context = build_step(step.block_table, seq - q, seq - q, geometry=geo, num_reqs_padded=step.num_reqs_padded)
    seq_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(seq, out=seq_start[1:])
    return RankTables(rank, step, context, geo.local_seq_lens(step.seq_lens), seq_start,
                      _token_index(context, seq_start), _token_index(step, seq_start))
