"""Host → device bytes per step: what each table costs, and cheaper what-if strategies.

The model (vLLM V1, decode or prefill steps of ``num_reqs`` requests):
  block table   commit copies rows [0, num_reqs) at FULL width: num_reqs × width × 4 B
                (width from max_model_len, aligned to 128 tokens, in kernel blocks)
  positions     int64 per scheduled token: num_tokens × 8 B
  query_start_loc  int32, num_reqs + 1 entries
  seq_lens      int32 per request
  CSR (FlashInfer) indptr (num_reqs + 1) and last_page_len (num_reqs) int32 from the host;
                indices are gathered on the device by the repack kernel (0 B), or, in the
                "host CSR indices" what-if, copied: total pages × 4 B.
What-ifs change only the block table's cost:
  valid prefix only   each row's used columns (a ragged copy): Σ cdiv(context, kbs) × 4 B
  dirty rows only     rows whose table changed this step (a decode row changes once every
                      block_size tokens): dirty × width × 4 B + 4 B per row index
  dirty rows, valid prefix   both.

The release's own bytes (``release_bytes``: V1's commit or MRV2's staged writes, the per-step
inputs, and MRV2's on-device gather) come from ``kvviz.core.step_bytes``, the functions the step
engine counts its records with; the what-ifs start from the V1 commit of the same release (of
v0.33.0, the last V1, for a release without V1).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from kvviz.core import step_bytes as core
from kvviz.core.geometry import Geometry
from kvviz.core.versions import LAST_V1_RELEASE, rules_for

INT32, INT64 = 4, 8
STRATEGIES = ("full width (vLLM)", "valid prefix only", "dirty rows only", "dirty rows, valid prefix")
# the link the model assumes when nothing is measured: a PCIe 4 x16 copy's rate and fixed cost
MODEL_GBPS = 25.0
MODEL_LATENCY_US = 8.0
BLOCK_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
# the what-if sweeps the PCIe page draws: one StepShape field, the values it takes
SWEEP_VALUES = {"num_reqs": (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
                "context_len": (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768),
                "block_size": BLOCK_SIZES}


@dataclass(frozen=True)
class StepShape:
    num_reqs: int = 64
    context_len: int = 2048       # tokens per request after this step
    block_size: int = 16
    max_model_len: int = 32768
    query_len: int = 1            # tokens scheduled per request (1 = decode)
    kernel_block_size: int | None = None
    host_csr_indices: bool = False
    vllm: str | None = None       # the release (None: main)
    max_num_reqs: int = 256       # request-state rows (MRV2's num_blocks counts, query_start_loc buffer)

    @property
    def kbs(self) -> int:
        return self.kernel_block_size or self.block_size

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.block_size, self.kbs)

    @property
    def sizes(self) -> core.Sizes:
        return core.Sizes(self.block_size, self.kernel_block_size, self.max_model_len, self.max_num_reqs,
                          self.host_csr_indices)

    @property
    def v1_release(self) -> str:
        """The release whose V1 the what-ifs follow: the chosen one, or the last with V1 (v0.33.0)."""
        rules = rules_for(self.vllm)
        return rules.name if rules.has_runner_v1 else LAST_V1_RELEASE

    @property
    def rows(self) -> list[core.RowStep]:
        return core.steady_rows(self.num_reqs, self.context_len, self.query_len, self.block_size)

    @property
    def width(self) -> int:
        """Block-table row width of the release's V1 (max_model_len's blocks, aligned as it does)."""
        return core.v1_width(self.v1_release, self.sizes)

    @property
    def pages_per_req(self) -> int:
        return int(self.geometry.page_count(self.context_len))

    @property
    def dirty_rows(self) -> int:
        """Expected rows whose table changes this step: a row gains a block every block_size tokens."""
        return core.changed_rows(self.rows)


def validate(s: StepShape) -> None:
    from kvviz.errors import BadInput

    if s.num_reqs < 1 or s.context_len < 1 or s.block_size < 1 or s.query_len < 1:
        raise BadInput("requests, context length, block size and query length must be positive")
    if s.context_len > s.max_model_len:
        raise BadInput(f"context length {s.context_len} exceeds the max model length {s.max_model_len}")
    if s.query_len > s.context_len:
        raise BadInput(f"query length {s.query_len} exceeds the context length {s.context_len}")
    if s.block_size % s.kbs:
        raise BadInput(f"kernel block size {s.kbs} does not divide block size {s.block_size}")
    if s.num_reqs > s.max_num_reqs:
        raise BadInput(f"{s.num_reqs} requests exceed max_num_seqs {s.max_num_reqs} (the request-state rows)")


def block_table_bytes(s: StepShape, strategy: str = STRATEGIES[0]) -> int:
    if strategy == STRATEGIES[0]:
        return core.commit_bytes(s.num_reqs, s.width)
    if strategy == STRATEGIES[1]:
        return s.num_reqs * s.pages_per_req * INT32
    if strategy == STRATEGIES[2]:
        return s.dirty_rows * (s.width + 1) * INT32
    if strategy == STRATEGIES[3]:
        return s.dirty_rows * (s.pages_per_req + 1) * INT32
    raise ValueError(f"unknown strategy {strategy!r}")


def release_bytes(s: StepShape, runner: str) -> core.StepBytes:
    """The bytes of this step under the shape's release and ``runner`` (v1 | v2), as the step engine
    counts them: V1's full-width commit or MRV2's staged writes, the per-step inputs, MRV2's gather."""
    return core.step_bytes(s.vllm, runner, s.rows, s.sizes)


def step_bytes(s: StepShape, strategy: str = STRATEGIES[0]) -> dict[str, int]:
    """Bytes per table for one V1 step (the release's, ``StepShape.v1_release``), the block table's
    as ``strategy`` would copy it; the slot mapping only where it is copied (before v0.19.0)."""
    parts = core.v1_parts(rules_for(s.v1_release), s.rows, s.sizes)
    out = {p.name: p.nbytes for p in parts if p.link == core.PCIE or p.name == "CSR indices"}
    out["block table"] = block_table_bytes(s, strategy)
    return out


def total_bytes(s: StepShape, strategy: str = STRATEGIES[0]) -> int:
    return sum(step_bytes(s, strategy).values())


def components_frame(s: StepShape) -> pd.DataFrame:
    """One line per table, one column per strategy."""
    data = {st: step_bytes(s, st) for st in STRATEGIES}
    df = pd.DataFrame(data)
    df.index.name = "table"
    df.loc["total"] = df.sum()
    return df.reset_index()


def sweep_values(field: str, here: int) -> list[int]:
    """The swept values of ``field``, always including the chosen one (``here``): a 1M-token
    context is drawn on the curve, not past its end."""
    return sorted(set(SWEEP_VALUES[field]) | {int(here)})


def swept_shape(s: StepShape, field: str, value: int) -> StepShape:
    """``s`` with ``field`` = ``value``, the sizes it bounds or is bounded by adjusted to stay a valid
    step (a longer context raises max_model_len, a query never exceeds its context, more requests
    raise max_num_reqs)."""
    x = replace(s, **{field: int(value)})
    if field == "context_len" and x.context_len > x.max_model_len:
        x = replace(x, max_model_len=x.context_len)
    if x.query_len > x.context_len:
        x = replace(x, query_len=x.context_len)
    if x.num_reqs > x.max_num_reqs:
        x = replace(x, max_num_reqs=x.num_reqs)
    return x


def sweep(s: StepShape, field: str, values) -> pd.DataFrame:
    """Total bytes per strategy as ``field`` takes each of ``values`` (others fixed)."""
    rows = []
    for v in values:
        x = swept_shape(s, field, v)
        rows.append({field: int(v), **{st: total_bytes(x, st) for st in STRATEGIES}})
    return pd.DataFrame(rows)


def model_us(nbytes: int, gbps: float = MODEL_GBPS, latency_us: float = MODEL_LATENCY_US) -> float:
    """A copy's time in the model: a fixed latency plus bytes at the link bandwidth."""
    return latency_us + nbytes / (gbps * 1e3)


def strategy_totals(s: StepShape) -> list[int]:
    """Total bytes of a step under each strategy, in STRATEGIES order."""
    return [total_bytes(s, st) for st in STRATEGIES]


def model_vs_measured(sizes: list[int], measured: list[float] | None, not_measured: str = "—") -> pd.DataFrame:
    """Per strategy: its bytes, the model's µs for them and the measured µs; ``not_measured`` (a
    sentence such as "—, no GPU here") stands in each cell when nothing was measured, never None."""
    model = [model_us(b) for b in sizes]
    cells = [f"{m:.1f}" for m in measured] if measured else [not_measured] * len(sizes)
    return pd.DataFrame({"strategy": STRATEGIES, "bytes": sizes, "model µs": np.round(model, 1),
                         "measured µs": cells})


def measure_h2d_us(nbytes_list, repeats: int = 20) -> list[float] | None:
    """Median µs of a pinned host → device copy of each size; None without a GPU."""
    try:
        import torch
    except Exception:
        return None
    if not torch.cuda.is_available():
        return None
    import statistics
    import time

    out = []
    for nbytes in nbytes_list:
        n = max(int(nbytes) // 4, 1)
        src = torch.ones(n, dtype=torch.int32).pin_memory()
        dst = torch.empty(n, dtype=torch.int32, device="cuda")
        times = []
        for _ in range(repeats + 3):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            dst.copy_(src, non_blocking=True)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e6)
        out.append(statistics.median(times[3:]))
    return out
