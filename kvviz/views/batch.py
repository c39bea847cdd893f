"""The batch explorer: editor rows -> real allocation -> one step's tables, token by token.

A row of the editor is one request: its prompt length, how many tokens are already
computed, how many new tokens this step schedules, and an optional shared-prefix
group. Requests of one group start with the same tokens (as many as the group's
shortest prompt), so the prefix cache makes them share the full blocks of that
prefix. Allocation goes through the real ``KVCacheManager`` in row order, exactly
as the scheduler would admit them; the step is then built with ``build_step``.

Everything the batch page shows (the chain row -> logical block -> physical block
-> slot -> byte offset) comes from ``ExploredBatch``.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from kvviz.core.block_table import cdiv, get_block_table_width, map_to_kernel_blocks
from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID
from kvviz.errors import BadInput
from kvviz.core.layout import CacheGeometry
from kvviz.core.manager import KVCacheManager, Request
from kvviz.core.scenario import token_stream
from kvviz.core.step import StepInputs, build_step

CUDAGRAPH_SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
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


@dataclass
class ExploredBatch:
    config: BatchConfig
    rows: list[RequestRow]
    step: StepInputs
    requests: pd.DataFrame            # one line per request row
    tokens: pd.DataFrame              # one line per scheduled token (padding tail included)
    block_ids: list[list[int]]        # manager block ids per row
    ref_counts: np.ndarray            # per manager block
    width: int                        # table width in kernel blocks
    num_kernel_blocks: int            # num_blocks * blocks per manager block
    warnings: list[str] = field(default_factory=list)

    @property
    def bpk(self) -> int:
        return self.config.block_size // self.config.kernel_block_size

    @property
    def tokens_per_block(self) -> int:
        return self.config.block_size * self.config.dcp_world_size

    def geometry(self, layout: str) -> CacheGeometry:
        c = self.config
        return CacheGeometry(layout, self.num_kernel_blocks, c.kernel_block_size, c.num_kv_heads,
                             c.head_dim, c.dtype)

    def chain(self, token: int, head: int = 0, dim: int = 0, kv: str = "k") -> dict:
        """Everything about one scheduled token: row, position, logical block, physical block,
        slot, and its byte offsets in both layouts."""
        t = self.tokens.iloc[token]
        out = {k: (v.item() if hasattr(v, "item") else v) for k, v in t.to_dict().items()}
        slot = int(t["slot"])
        if slot != PAD_SLOT_ID:
            for lay in ("NHD", "HND"):
                out[f"{lay}_byte"] = self.geometry(lay).address(slot, head, dim, kv)["byte_offset"]
        return out

    def slot_owners(self, first_block: int, last_block: int) -> dict:
        """Who holds each slot of kernel blocks [first_block, last_block]: arrays
        [blocks, kbs] of row (-1 free), position, written-this-step flag, sharing count."""
        c = self.config
        kbs = c.kernel_block_size
        nb = last_block - first_block + 1
        row = np.full((nb, kbs), -1, dtype=np.int64)
        pos = np.full((nb, kbs), -1, dtype=np.int64)
        new = np.zeros((nb, kbs), dtype=bool)
        share = np.zeros((nb, kbs), dtype=np.int64)
        W, I, rank = c.dcp_world_size, self.step.interleave, c.dcp_rank
        seq = self.requests["seq_len"].to_numpy()
        first_new = self.requests["computed_eff"].to_numpy()
        off = np.arange(kbs)
        for r, ids in enumerate(self.block_ids):
            kids = np.asarray(map_to_kernel_blocks(ids, self.bpk), dtype=np.int64)
            cols = np.nonzero((kids >= first_block) & (kids <= last_block) & (kids != NULL_BLOCK_ID))[0]
            for col in cols:
                b = kids[col] - first_block
                vidx, sub = divmod(int(col), self.bpk)
                loff = sub * kbs + off
                voff = (loff // I) * (W * I) + rank * I + loff % I
                p = vidx * c.block_size * W + voff
                valid = p < seq[r]
                share[b] += 1
                take = valid & (row[b] == -1)
                row[b] = np.where(take, r, row[b])
                pos[b] = np.where(take, p, pos[b])
                new[b] |= valid & (p >= first_new[r]) & take
        return {"row": row, "pos": pos, "new": new, "share": share, "first_block": first_block}

    def to_json(self) -> dict:
        return {"config": asdict(self.config), "requests": self.requests.to_dict("records"),
                "step": self.step.to_json(backend="reference (numpy)")}


def pad_sizes(num_reqs: int, num_tokens: int, uniform_decode: bool, cudagraph: bool) -> tuple[int, int]:
    """CUDA-graph padding: tokens up to the next capture size; rows too for a pure decode batch."""
    if not cudagraph or num_tokens == 0 or num_tokens > CUDAGRAPH_SIZES[-1]:
        return num_reqs, num_tokens
    t_pad = next(s for s in CUDAGRAPH_SIZES if s >= num_tokens)
    r_pad = t_pad if uniform_decode else num_reqs
    return max(r_pad, num_reqs), t_pad


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


def _prompt(i: int, r: RequestRow, shared_len: dict[str, int]) -> list[int]:
    if not shared_len:
        return [0] * r.prompt_len  # caching is off: token ids are never looked at
    if not r.prefix_group:
        # distinct requests never match each other's blocks; cheap when caching is off
        return token_stream(f"row{i}", r.prompt_len)
    k = shared_len[r.prefix_group]
    return token_stream("prefix:" + r.prefix_group, k) + token_stream(f"row{i}", r.prompt_len - k)


def explore(rows: list[RequestRow], config: BatchConfig) -> ExploredBatch:
    """Allocate every request through the KV-cache manager and build the step. BadInput with
    one clear sentence when the batch cannot exist (pool too small, bad sizes, ...)."""
    c = config
    validate_config(c)
    if not rows:
        raise BadInput("the batch is empty: add at least one request")
    if len(rows) > LIMITS["requests"]:
        raise BadInput(f"at most {LIMITS['requests']} requests")
    warnings = []
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
        if r.computed < r.prompt_len and r.computed + r.new_tokens > r.prompt_len and r.new_tokens > 1:
            pass  # a prefill that runs into the first output tokens: allowed (speculative-like)
    if sum(r.new_tokens for r in rows) > LIMITS["step_tokens"]:
        raise BadInput(f"more than {LIMITS['step_tokens']} new tokens in one step")
    if sum(r.new_tokens for r in rows) == 0:
        raise BadInput("no request has a new token in this step: give at least one request new tokens")

    groups = {r.prefix_group for r in rows if r.prefix_group}
    shared_len = {g: min(r.prompt_len for r in rows if r.prefix_group == g) for g in groups}
    tpb = c.block_size * c.dcp_world_size
    mgr = KVCacheManager(c.num_blocks, c.block_size, enable_caching=bool(groups),
                         dcp_world_size=c.dcp_world_size)
    block_ids, hits, eff_computed = [], [], []
    for i, r in enumerate(rows):
        total = r.computed + r.new_tokens
        prompt = _prompt(i, r, shared_len)
        # tokens past the prompt are outputs sampled earlier (or being verified now)
        output = [0] * max(0, total - r.prompt_len)
        req = Request(f"row{i}", prompt, max_tokens=len(output) + 1, output=output)
        hit_blocks, n_hit = mgr.get_computed_blocks(req)
        if n_hit > total - 1:  # keep at least one token to compute
            k = (total - 1) // tpb
            hit_blocks, n_hit = [g[:k] for g in hit_blocks], k * tpb
        req.num_computed_tokens = 0
        ids = mgr.allocate_slots(req, total - n_hit, hit_blocks, n_hit)
        if ids is None:
            need = cdiv(total, tpb) - len(hit_blocks[0])
            raise BadInput(f"the pool is too small: row {i} needs {need} more block(s) of {tpb} tokens "
                           f"but only {mgr.pool.num_free} of {c.num_blocks} are free "
                           f"(block 0 is the null block); raise the pool size")
        block_ids.append(mgr.block_ids(req.req_id)[0])
        hits.append(n_hit)
        eff = max(r.computed, n_hit)
        if eff > r.computed:
            warnings.append(f"row {i}: {n_hit} tokens found in the prefix cache, so computed is "
                            f"{eff}, not {r.computed}")
        eff_computed.append(eff)

    seq_lens = [r.computed + r.new_tokens for r in rows]
    q_lens = [s - e for s, e in zip(seq_lens, eff_computed)]
    max_blocks = cdiv(c.max_model_len, tpb)
    width = get_block_table_width(max_blocks, c.block_size, c.kernel_block_size)
    uniform = all(q == 1 for q in q_lens)
    r_pad, t_pad = pad_sizes(len(rows), sum(q_lens), uniform, c.cudagraph)
    bpk = c.block_size // c.kernel_block_size
    if r_pad * width > LIMITS["table_entries"]:
        raise BadInput(f"the block table would be {r_pad} rows x {width} columns; the limit is "
                       f"{LIMITS['table_entries']} entries (lower the max model length or raise the block size)")
    bt = np.full((r_pad, width), NULL_BLOCK_ID, dtype=np.int32)
    for i, ids in enumerate(block_ids):
        k = map_to_kernel_blocks(ids, bpk)
        bt[i, : len(k)] = k
    step = build_step(bt, seq_lens, q_lens, block_size=c.block_size, kernel_block_size=c.kernel_block_size,
                      num_reqs_padded=r_pad, num_tokens_padded=t_pad, dcp_world_size=c.dcp_world_size,
                      dcp_rank=c.dcp_rank)

    ref = np.asarray(mgr.pool.ref_counts(), dtype=np.int64)
    req_df = pd.DataFrame({
        "row": np.arange(len(rows)),
        "prompt_len": [r.prompt_len for r in rows],
        "computed": [r.computed for r in rows],
        "cache_hit_tokens": hits,
        "computed_eff": eff_computed,
        "new_tokens": q_lens,
        "seq_len": seq_lens,
        "prefix_group": [r.prefix_group for r in rows],
        "num_blocks": [len(b) for b in block_ids],
        "blocks": [" ".join(map(str, b)) for b in block_ids],
        "shared_blocks": [sum(1 for b in ids if ref[b] > 1) for ids in block_ids],
    })
    tokens = _token_frame(step, c, q_lens)
    return ExploredBatch(c, list(rows), step, req_df, tokens, block_ids, ref, width,
                         c.num_blocks * bpk, warnings)


def _token_frame(step: StepInputs, c: BatchConfig, q_lens: list[int]) -> pd.DataFrame:
    n, npad = step.num_tokens, step.num_tokens_padded
    rows = np.full(npad, -1, dtype=np.int64)
    rows[:n] = np.repeat(np.arange(len(q_lens)), q_lens)
    pos = step.positions.astype(np.int64).copy()
    pos[n:] = -1
    tpb = c.block_size * c.dcp_world_size
    logical = np.where(pos >= 0, pos // tpb, -1)
    slot = step.slot_mapping.astype(np.int64)
    kbs = c.kernel_block_size
    phys = np.where(slot >= 0, slot // kbs, -1)
    off = np.where(slot >= 0, slot % kbs, -1)
    # the table column the slot came from (kernel blocks); -1 for pad / other DCP ranks
    W, I = c.dcp_world_size, step.interleave
    voff = np.where(pos >= 0, pos % tpb, 0)
    loff = (voff // (W * I)) * I + voff % I
    col = np.where(slot >= 0, logical * (c.block_size // kbs) + loff // kbs, -1)
    kind = np.where(np.arange(npad) >= n, "CUDA-graph pad", np.where(slot >= 0, "written", "other DCP rank"))
    return pd.DataFrame({"token": np.arange(npad), "row": rows, "position": pos, "logical_block": logical,
                         "column": col, "physical_block": phys, "offset": off, "slot": slot, "kind": kind})


MAX_TABLE_FIGURE_CELLS = 200_000   # beyond this the batch page draws a window of rows
TABLE_WINDOW_ROWS = 48


def table_row_window(rows: int, cols: int, center: int) -> tuple[int, int] | None:
    """Rows [r0, r1) of the block-table heatmap to draw: all of them when the figure stays small,
    else TABLE_WINDOW_ROWS rows around ``center`` (the selected token's row). A 256 x 2048 table
    is 0.5 M cells: 4 MB of figure per rerun, and seconds of rendering in the browser."""
    if rows * cols <= MAX_TABLE_FIGURE_CELLS:
        return None
    n = max(1, min(TABLE_WINDOW_ROWS, MAX_TABLE_FIGURE_CELLS // max(cols, 1)))
    r0 = max(0, min(int(center) - n // 2, rows - n))
    return r0, min(rows, r0 + n)


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


def csr_view(eb: ExploredBatch, extra_empty_rows: int = 0, empty_last_page_len_is_zero: bool = True):
    """The step's block table with ``extra_empty_rows`` padded (seq_len 0) rows added, this rank's
    seq_lens, and the FlashInfer CSR (vectorised core) over them: (step, seq_lens, (indptr, indices, lpl))."""
    from dataclasses import replace as _replace

    from kvviz.core.step import compute_csr, dcp_local_seq_lens

    s = eb.step
    k = max(0, int(extra_empty_rows))
    bt = np.vstack([s.block_table, np.full((k, s.block_table.shape[1]), NULL_BLOCK_ID, np.int32)])
    seq = np.concatenate([s.seq_lens, np.zeros(k, np.int32)]).astype(np.int32)
    local = dcp_local_seq_lens(seq, block_size=s.block_size, dcp_world_size=s.dcp_world_size,
                               dcp_rank=s.dcp_rank, interleave=s.interleave)
    csr = compute_csr(bt, local, s.kernel_block_size, empty_last_page_len_is_zero=empty_last_page_len_is_zero)
    return _replace(s, block_table=bt, num_reqs_padded=len(seq), seq_lens=seq), local, csr
