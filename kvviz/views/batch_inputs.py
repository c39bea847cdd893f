"""The batch editor's inputs: the config and the request rows, their checks, their table form, and
the presets the page offers (no allocation here: ``kvviz.views.batch`` explores them)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from kvviz.core.geometry import Geometry
from kvviz.errors import BadInput

LIMITS = {"requests": 1024, "tokens_per_req": 1 << 17, "num_blocks": 1 << 20, "block_size": 1024,
          "max_model_len": 1 << 18, "dcp": 16, "step_tokens": 1 << 17, "table_entries": 1 << 24}

COLUMNS = ["prompt_len", "computed", "new_tokens", "prefix_group"]


@dataclass
class BatchConfig:
    block_size: int = 4
    num_blocks: int = 48
    kernel_block_size: int = 4
    max_model_len: int = 64
    dcp_world_size: int = 1
    dcp_rank: int = 0
    cudagraph: bool = False
    # cache geometry for byte offsets (the kernels also run with it)
    num_kv_heads: int = 2
    head_dim: int = 8
    dtype: str = "float16"

    def key(self) -> tuple:
        return tuple(asdict(self).values())

    @property
    def geometry(self) -> Geometry:
        """The batch's block geometry (one KV-cache group, interleave 1) and cache shape."""
        return Geometry(self.block_size, self.kernel_block_size, self.dcp_world_size, self.dcp_rank,
                        num_kv_heads=self.num_kv_heads, head_dim=self.head_dim, dtype=self.dtype)


@dataclass
class RequestRow:
    prompt_len: int
    computed: int
    new_tokens: int
    prefix_group: str = ""


DEFAULT_ROWS = [
    RequestRow(10, 0, 10, "sys"),   # prefill of a prompt that starts with a shared system prompt
    RequestRow(13, 0, 13, "sys"),   # same system prompt: its full blocks come from the cache
    RequestRow(7, 7, 1, ""),        # decode, inside its last block
    RequestRow(8, 8, 1, ""),        # decode that opens a new block
    RequestRow(20, 8, 6, ""),       # a chunk of a longer prefill
]


# the token a batch opens on: position 2 of row 0, offset 2 in its block, where NHD and HND put the
# element at different bytes in every release's layout (token 0, offset 0 of head 0, is byte
# block × page in both: the layout's point never showed)
DEFAULT_TOKEN = 2


def default_rows() -> list[RequestRow]:
    return [RequestRow(**asdict(r)) for r in DEFAULT_ROWS]


def rows_to_frame(rows: list[RequestRow]) -> pd.DataFrame:
    return pd.DataFrame([asdict(r) for r in rows], columns=COLUMNS)


def _as_int(v, what: str) -> int:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        raise BadInput(f"{what} is empty")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise BadInput(f"{what} must be a whole number, not {v!r}") from None
    if not f.is_integer():
        raise BadInput(f"{what} must be a whole number, not {v!r}")
    return int(f)


def frame_to_rows(df: pd.DataFrame) -> list[RequestRow]:
    """Editor table -> validated rows; BadInput naming the first bad cell."""
    if len(df) == 0:
        raise BadInput("the batch is empty: add at least one request")
    if len(df) > LIMITS["requests"]:
        raise BadInput(f"at most {LIMITS['requests']} requests")
    out = []
    for i, rec in enumerate(df.to_dict("records")):
        p = _as_int(rec.get("prompt_len"), f"row {i}: prompt length")
        c = _as_int(rec.get("computed"), f"row {i}: computed tokens")
        n = _as_int(rec.get("new_tokens"), f"row {i}: new tokens")
        g = rec.get("prefix_group")
        g = "" if g is None or (isinstance(g, float) and np.isnan(g)) else str(g).strip()[:16]
        out.append(RequestRow(p, c, n, g))
    return out


def kernel_block_size_after(block_size: int, kernel_block_size: int) -> int:
    """The kernel block size to keep once the block size becomes ``block_size``: the old one while it
    still divides the block size, else the block size itself (one kernel block per manager block: the
    only split every block size has). The page then says so; never a silent mix of both."""
    if kernel_block_size >= 1 and block_size >= 1 and block_size % kernel_block_size == 0:
        return kernel_block_size
    return block_size


def validate_config(c: BatchConfig) -> None:
    def rng(name, v, lo, hi):
        if not lo <= v <= hi:
            raise BadInput(f"{name} must be between {lo} and {hi}, got {v}")
    rng("block size", c.block_size, 1, LIMITS["block_size"])
    rng("kernel block size", c.kernel_block_size, 1, c.block_size)
    if c.block_size % c.kernel_block_size:
        raise BadInput(f"kernel block size {c.kernel_block_size} does not divide block size "
                       f"{c.block_size}: a manager block must split into whole kernel blocks")
    rng("pool size (blocks)", c.num_blocks, 2, LIMITS["num_blocks"])
    rng("max model length", c.max_model_len, 1, LIMITS["max_model_len"])
    rng("DCP world size", c.dcp_world_size, 1, LIMITS["dcp"])
    rng("DCP rank", c.dcp_rank, 0, c.dcp_world_size - 1)
    rng("KV heads", c.num_kv_heads, 1, 64)
    rng("head dim", c.head_dim, 1, 512)
    if c.dtype not in ("float16", "bfloat16", "fp8"):
        raise BadInput(f"dtype must be float16, bfloat16 or fp8, not {c.dtype!r}")


def _validate_rows(rows: list[RequestRow], c: BatchConfig) -> None:
    """BadInput naming the first request row that cannot be scheduled under ``c``."""
    if not rows:
        raise BadInput("the batch is empty: add at least one request")
    if len(rows) > LIMITS["requests"]:
        raise BadInput(f"at most {LIMITS['requests']} requests")
    for i, r in enumerate(rows):
        if r.prompt_len < 1:
            raise BadInput(f"row {i}: the prompt needs at least 1 token")
        if r.prompt_len > c.max_model_len or r.prompt_len > LIMITS["tokens_per_req"]:
            raise BadInput(f"row {i}: a prompt of {r.prompt_len} tokens exceeds the max model length "
                           f"{min(c.max_model_len, LIMITS['tokens_per_req'])}")
        if r.computed < 0 or r.new_tokens < 0:
            raise BadInput(f"row {i}: computed and new tokens cannot be negative")
        if r.computed + r.new_tokens < 1:
            raise BadInput(f"row {i}: computed + new tokens must be at least 1")
        if r.computed + r.new_tokens > c.max_model_len:
            raise BadInput(f"row {i}: computed + new = {r.computed + r.new_tokens} tokens exceeds the "
                           f"max model length {c.max_model_len}")
    if sum(r.new_tokens for r in rows) > LIMITS["step_tokens"]:
        raise BadInput(f"more than {LIMITS['step_tokens']} new tokens in one step")
    if sum(r.new_tokens for r in rows) == 0:
        raise BadInput("no request has a new token in this step: give at least one request new tokens")


def batch_key(rows: list[RequestRow], config: BatchConfig) -> str:
    blob = json.dumps([asdict(config), [asdict(r) for r in rows]], sort_keys=True)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def big_rows(num_reqs: int = 256, blocks_per_req: int = 2048, block_size: int = 16) -> tuple[list[RequestRow], BatchConfig]:
    """The large benchmark batch: ``num_reqs`` decodes, each holding ``blocks_per_req`` blocks."""
    ctx = blocks_per_req * block_size
    rows = [RequestRow(ctx - 1 - (i % block_size), ctx - 1 - (i % block_size), 1) for i in range(num_reqs)]
    cfg = BatchConfig(block_size=block_size, kernel_block_size=block_size,
                      num_blocks=num_reqs * blocks_per_req + 1, max_model_len=ctx)
    return rows, cfg


def preset(name: str) -> tuple[list[RequestRow], BatchConfig]:
    """The batches offered by the page's preset menu."""
    if name == "default":
        return default_rows(), BatchConfig()
    if name == "decode":
        rows = [RequestRow(p, p, 1) for p in (5, 12, 16, 23, 31)]
        return rows, BatchConfig(block_size=8, kernel_block_size=8, num_blocks=32, max_model_len=128,
                                 cudagraph=True)
    if name == "prefix":
        rows = [RequestRow(n, 0, n, "sys") for n in (18, 21, 26, 30)]
        return rows, BatchConfig(block_size=4, kernel_block_size=4, num_blocks=40, max_model_len=64)
    if name == "kernel":
        rows = [RequestRow(20, 0, 20), RequestRow(9, 9, 1), RequestRow(33, 32, 1)]
        return rows, BatchConfig(block_size=16, kernel_block_size=8, num_blocks=12, max_model_len=128)
    if name == "dcp":
        rows = [RequestRow(13, 0, 13), RequestRow(9, 9, 1), RequestRow(6, 6, 1)]
        return rows, BatchConfig(block_size=4, kernel_block_size=4, num_blocks=16, max_model_len=64,
                                 dcp_world_size=2, dcp_rank=0)
    if name == "big":
        return big_rows()
    raise KeyError(name)


PRESETS = ["default", "decode", "prefix", "kernel", "dcp", "big"]
