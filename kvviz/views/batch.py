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

from dataclasses import asdict, dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID
from kvviz.core.layout import DEFAULT_CACHE_LAYOUT, CacheGeometry
from kvviz.core.manager import KVCacheManager, Request
from kvviz.errors import BadInput
from kvviz.core.runner_v2 import batch_v2_tables
from kvviz.core.scenario import token_stream
from kvviz.core.step import StepInputs, build_step
# the editor's inputs live in batch_inputs; handed on here, where the pages and tests take them
from kvviz.views.batch_inputs import (  # noqa: F401
    COLUMNS, DEFAULT_ROWS, DEFAULT_TOKEN, LIMITS, PRESETS, BatchConfig, RequestRow, _validate_rows, batch_key, big_rows,
    default_rows, frame_to_rows, kernel_block_size_after, preset, rows_to_frame, validate_config)

CUDAGRAPH_SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]


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
    notes: list[tuple[str, dict]] = field(default_factory=list)   # the warnings as (text key, fields)

    @property
    def bpk(self) -> int:
        """Kernel blocks per manager block."""
        return self.config.geometry.blocks_per_kv_block

    @property
    def tokens_per_block(self) -> int:
        """Positions one manager block id stands for (every DCP rank's share)."""
        return self.config.geometry.virtual_block_size

    def cache(self, layout: str, cache_layout: str = DEFAULT_CACHE_LAYOUT) -> CacheGeometry:
        """Byte addresses in one layer's cache of the whole pool, in ``layout`` (NHD / HND) of the
        ``cache_layout`` family."""
        geo = self.config.geometry.with_cache(layout=layout, cache_layout=cache_layout)
        return geo.cache(self.num_kernel_blocks)

    def chain(self, token: int, head: int = 0, dim: int = 0, kv: str = "k",
              cache_layout: str = DEFAULT_CACHE_LAYOUT) -> dict:
        """Everything about one scheduled token: row, position, logical block, physical block,
        slot, and its byte offsets in both layouts of the ``cache_layout`` family."""
        t = self.tokens.iloc[token]
        out = {k: (v.item() if hasattr(v, "item") else v) for k, v in t.to_dict().items()}
        slot = int(t["slot"])
        if slot != PAD_SLOT_ID:
            for lay in ("NHD", "HND"):
                out[f"{lay}_byte"] = self.cache(lay, cache_layout).address(slot, head, dim, kv)["byte_offset"]
        return out

    def row_kernel_blocks(self) -> np.ndarray:
        """Kernel blocks each request row holds (its valid table prefix)."""
        return self.requests["num_blocks"].to_numpy() * self.bpk

    def shown_columns(self) -> int:
        """Table columns worth drawing: the widest row plus two (at least 8, at most the width)."""
        used = int(self.requests["num_blocks"].max()) * self.bpk
        return min(self.width, max(used + 2, 8))

    def buffer_window(self, centre: int | None) -> tuple[int, int]:
        """Kernel blocks [first, last] of the slot buffer to draw: every block in use (and two
        manager blocks more) while that is under 64 kernel blocks, else 32 round ``centre`` (the
        selected token's block; None: block 1)."""
        nkb = self.num_kernel_blocks
        top_used = int(max(max((max(b) for b in self.block_ids if b), default=1) + 1, 1) * self.bpk - 1)
        if top_used < 64:
            return 0, min(nkb - 1, top_used + 2 * self.bpk)
        first = max(0, min((1 if centre is None else centre) - 16, nkb - 32))
        return first, min(nkb - 1, first + 31)

    def slot_owners(self, first_block: int, last_block: int) -> dict:
        """Who holds each slot of kernel blocks [first_block, last_block]: arrays
        [blocks, kbs] of row (-1 free), position, written-this-step flag, sharing count."""
        geo = self.step.geometry
        kbs = geo.kernel_block_size
        nb = last_block - first_block + 1
        row = np.full((nb, kbs), -1, dtype=np.int64)
        pos = np.full((nb, kbs), -1, dtype=np.int64)
        new = np.zeros((nb, kbs), dtype=bool)
        share = np.zeros((nb, kbs), dtype=np.int64)
        seq = self.requests["seq_len"].to_numpy()
        first_new = self.requests["computed_eff"].to_numpy()
        off = np.arange(kbs)
        for r, ids in enumerate(self.block_ids):
            kids = np.asarray(geo.kernel_blocks(ids), dtype=np.int64)
            cols = np.nonzero((kids >= first_block) & (kids <= last_block) & (kids != NULL_BLOCK_ID))[0]
            for col in cols:
                b = kids[col] - first_block
                p = geo.position_of(int(col), off)
                valid = p < seq[r]
                share[b] += 1
                take = valid & (row[b] == -1)
                row[b] = np.where(take, r, row[b])
                pos[b] = np.where(take, p, pos[b])
                new[b] |= valid & (p >= first_new[r]) & take
        return {"row": row, "pos": pos, "new": new, "share": share, "first_block": first_block}

    def to_json(self, runner: str = "v1") -> dict:
        out = {"config": asdict(self.config), "requests": self.requests.to_dict("records"),
               "step": self.step.to_json(backend="reference (numpy)")}
        if runner == "v2":   # as `kvviz compute --runner v2` adds them
            out["step"].update(batch_v2_tables(self.step))
            out["runner"] = "v2"
        return out

    # --- Model Runner V2's view of the same batch -------------------------------------------------
    @cached_property
    def v2(self) -> dict:
        """Model Runner V2's tables of this batch (``kvviz.core.runner_v2.batch_v2_tables``) as
        arrays: ``idx_mapping`` (batch position -> request-state index), ``state_block_table``
        (rows by state index) and ``state_num_blocks``. The step's ``block_table`` is the gathered
        input table (batch order, padded rows 0)."""
        t = batch_v2_tables(self.step)
        rows = len(t["state_num_blocks"])
        return {"idx_mapping": np.asarray(t["idx_mapping"], dtype=np.int64),
                "state_block_table": np.asarray(t["state_block_table"], dtype=np.int32).reshape(
                    rows, self.step.block_table.shape[1]),
                "state_num_blocks": np.asarray(t["state_num_blocks"], dtype=np.int64)}

    def state_holders(self) -> list[int | None]:
        """Per request-state index: the batch position (request row) holding it (None: free)."""
        out: list[int | None] = [None] * len(self.v2["state_num_blocks"])
        for i, st in enumerate(self.v2["idx_mapping"]):
            out[int(st)] = i
        return out

    def idx_mapping_frame(self) -> pd.DataFrame:
        """V2's idx_mapping, one line per batch position: its state index and kernel blocks."""
        idx = self.v2["idx_mapping"]
        return pd.DataFrame({"batch position": np.arange(len(idx)), "state index": idx,
                             "num_blocks": self.v2["state_num_blocks"][idx] if len(idx) else idx})


def pad_sizes(num_reqs: int, num_tokens: int, uniform_decode: bool, cudagraph: bool) -> tuple[int, int]:
    """CUDA-graph padding: tokens up to the next capture size; rows too for a pure decode batch."""
    if not cudagraph or num_tokens == 0 or num_tokens > CUDAGRAPH_SIZES[-1]:
        return num_reqs, num_tokens
    t_pad = next(s for s in CUDAGRAPH_SIZES if s >= num_tokens)
    r_pad = t_pad if uniform_decode else num_reqs
    return max(r_pad, num_reqs), t_pad


def _prompt(i: int, r: RequestRow, shared_len: dict[str, int]) -> list[int]:
    if not shared_len:
        return [0] * r.prompt_len  # caching is off: token ids are never looked at
    if not r.prefix_group:
        # distinct requests never match each other's blocks; cheap when caching is off
        return token_stream(f"row{i}", r.prompt_len)
    k = shared_len[r.prefix_group]
    return token_stream("prefix:" + r.prefix_group, k) + token_stream(f"row{i}", r.prompt_len - k)


@dataclass
class _Allocation:
    """What the KV-cache manager gave each request row."""
    manager: KVCacheManager
    block_ids: list[list[int]]        # manager block ids per row
    hits: list[int]                   # prefix-cache hit tokens per row
    computed: list[int]               # computed tokens per row, raised to the cache hit
    warnings: list[str]
    notes: list[tuple[str, dict]] = field(default_factory=list)   # the warnings as (text key, fields)


class KeyedBadInput(BadInput):
    """A BadInput that also carries a text key of kvviz/texts/batch.py and its fields, so that a page
    says it in its own language (``str()`` stays the English sentence for the CLI and the JSON)."""

    def __init__(self, message: str, key: str, **fields):
        super().__init__(message)
        self.key, self.fields = key, fields


def _allocate(rows: list[RequestRow], c: BatchConfig) -> _Allocation:
    """Admit every row through the real KV-cache manager, in row order, as the scheduler would."""
    geo = c.geometry
    groups = {r.prefix_group for r in rows if r.prefix_group}
    shared_len = {g: min(r.prompt_len for r in rows if r.prefix_group == g) for g in groups}
    mgr = KVCacheManager(c.num_blocks, c.block_size, enable_caching=bool(groups),
                         dcp_world_size=c.dcp_world_size)
    out = _Allocation(mgr, [], [], [], [], [])
    for i, r in enumerate(rows):
        total = r.computed + r.new_tokens
        prompt = _prompt(i, r, shared_len)
        # tokens past the prompt are outputs sampled earlier (or being verified now)
        output = [0] * max(0, total - r.prompt_len)
        req = Request(f"row{i}", prompt, max_tokens=len(output) + 1, output=output)
        hit_blocks, n_hit = mgr.get_computed_blocks(req)
        if n_hit > total - 1:  # keep at least one token to compute
            k = geo.full_blocks(total - 1)
            hit_blocks, n_hit = [g[:k] for g in hit_blocks], geo.tokens_held(k)
        req.num_computed_tokens = 0
        if mgr.allocate_slots(req, total - n_hit, hit_blocks, n_hit) is None:
            need = geo.blocks_for(total) - len(hit_blocks[0])
            raise KeyedBadInput(f"the pool is too small: row {i} needs {need} more block(s) of "
                                f"{geo.virtual_block_size} tokens but only {mgr.pool.num_free} of "
                                f"{c.num_blocks} are free (block 0 is the null block); raise the pool size",
                                "err_pool_small", row=i, need=need, bs=geo.virtual_block_size,
                                free=mgr.pool.num_free, total=c.num_blocks)
        out.block_ids.append(mgr.block_ids(req.req_id)[0])
        out.hits.append(n_hit)
        eff = max(r.computed, n_hit)
        if eff > r.computed:
            out.warnings.append(f"row {i}: {n_hit} tokens found in the prefix cache, so computed is "
                                f"{eff}, not {r.computed}")
            out.notes.append(("note_prefix_hit", {"row": i, "hit": n_hit, "eff": eff, "asked": r.computed}))
        out.computed.append(eff)
    _note_shared(out)
    return out


def _note_shared(out: _Allocation) -> None:
    """A note naming each block two or more rows hold (prefix caching shares full blocks; a row never
    holds one block twice, and compute refuses a batch where one does)."""
    holders: dict[int, list[int]] = {}
    for row, ids in enumerate(out.block_ids):
        for b in dict.fromkeys(ids):
            holders.setdefault(int(b), []).append(row)
    shared = {b: rows for b, rows in holders.items() if len(rows) > 1}
    if shared:
        text = "; ".join(f"{b} ({', '.join(map(str, rows))})" for b, rows in sorted(shared.items()))
        out.warnings.append(f"shared blocks (the rows holding each): {text}: prefix caching lets two requests "
                            "share a full block; one row never holds a block twice")
        out.notes.append(("note_shared", {"blocks": text}))


def _step_of(alloc: _Allocation, seq_lens: list[int], q_lens: list[int], c: BatchConfig
             ) -> tuple[StepInputs, int]:
    """The step's inputs (CUDA-graph padded) from the allocation, and the table width."""
    geo = c.geometry
    width = geo.table_width(geo.blocks_for(c.max_model_len))
    uniform = all(q == 1 for q in q_lens)
    r_pad, t_pad = pad_sizes(len(seq_lens), sum(q_lens), uniform, c.cudagraph)
    if r_pad * width > LIMITS["table_entries"]:
        raise BadInput(f"the block table would be {r_pad} rows x {width} columns; the limit is "
                       f"{LIMITS['table_entries']} entries (lower the max model length or raise the block size)")
    bt = np.full((r_pad, width), NULL_BLOCK_ID, dtype=np.int32)
    for i, ids in enumerate(alloc.block_ids):
        k = geo.kernel_blocks(ids)
        bt[i, : len(k)] = k
    step = build_step(bt, seq_lens, q_lens, block_size=c.block_size, kernel_block_size=c.kernel_block_size,
                      num_reqs_padded=r_pad, num_tokens_padded=t_pad, dcp_world_size=c.dcp_world_size,
                      dcp_rank=c.dcp_rank)
    return step, width


def _requests_frame(rows: list[RequestRow], alloc: _Allocation, seq_lens: list[int], q_lens: list[int],
                    ref: np.ndarray) -> pd.DataFrame:
    """One line per request row: what was asked, what the cache and the manager gave it."""
    return pd.DataFrame({
        "row": np.arange(len(rows)),
        "prompt_len": [r.prompt_len for r in rows],
        "computed": [r.computed for r in rows],
        "cache_hit_tokens": alloc.hits,
        "computed_eff": alloc.computed,
        "new_tokens": q_lens,
        "seq_len": seq_lens,
        "prefix_group": [r.prefix_group for r in rows],
        "num_blocks": [len(b) for b in alloc.block_ids],
        "blocks": [" ".join(map(str, b)) for b in alloc.block_ids],
        "shared_blocks": [sum(1 for b in ids if ref[b] > 1) for ids in alloc.block_ids],
    })


def chain_line(ch: dict, names: dict[str, str] | None = None) -> str:
    """The picked token's chain in one copyable line, every number in full, e.g. "row 3 · position
    2047 · logical block 127 · column 127 · physical block 11462 · slot 183407 · NHD byte 9390592 ·
    HND byte 9388544" (what a padding token lacks is left out). ``names``: the labels in another
    language, by their English name ("row", "logical block", ...); a missing one stays English."""
    parts = [("row", ch.get("row")), ("position", ch.get("position")), ("logical block", ch.get("logical_block")),
             ("column", ch.get("column")), ("physical block", ch.get("physical_block")), ("slot", ch.get("slot")),
             ("NHD byte", ch.get("NHD_byte")), ("HND byte", ch.get("HND_byte"))]
    names = names or {}
    return " · ".join(f"{names.get(name, name)} {value}" for name, value in parts if value is not None)


def kernel_table(rows: list[dict], timed: bool) -> list[dict]:
    """The kernel check's rows (``BackendResult.rows``) as the Batch page's small table shows them:
    a mark for passed, the error in two significant digits, the time (on a GPU) in tenths of a µs,
    "—" where there is none; the detail sentence is listed under the table, not in it."""
    def num(v, fmt):
        return "—" if v is None else format(v, fmt)

    out = []
    for r in rows:
        row = {"kernel": r["kernel"], "passed": "✔" if r["passed"] else "✘", "max_error": num(r["max_error"], ".2g")}
        if timed:
            row["us"] = num(r["us"], ".1f")
        out.append(row)
    return out


def rows_past_prompt(rows: list[RequestRow]) -> list[int]:
    """The request rows whose tokens go past their prompt (computed + new > prompt): decode tokens."""
    return [i for i, r in enumerate(rows) if r.computed + r.new_tokens > r.prompt_len]


def explore(rows: list[RequestRow], config: BatchConfig) -> ExploredBatch:
    """Allocate every request through the KV-cache manager and build the step. BadInput with
    one clear sentence when the batch cannot exist (pool too small, bad sizes, ...)."""
    c = config
    validate_config(c)
    _validate_rows(rows, c)
    alloc = _allocate(rows, c)
    seq_lens = [r.computed + r.new_tokens for r in rows]
    q_lens = [s - e for s, e in zip(seq_lens, alloc.computed)]
    step, width = _step_of(alloc, seq_lens, q_lens, c)
    ref = np.asarray(alloc.manager.pool.ref_counts(), dtype=np.int64)
    return ExploredBatch(c, list(rows), step, _requests_frame(rows, alloc, seq_lens, q_lens, ref),
                         _token_frame(step), alloc.block_ids, ref, width,
                         c.num_blocks * c.geometry.blocks_per_kv_block, alloc.warnings, alloc.notes)


def token_frame(step: StepInputs) -> pd.DataFrame:
    """One line per token of the step (padding included): its row, position, logical block, table
    column, physical (kernel) block, offset and slot; -1 where it has none (the padded tail, and
    the column, block and offset of a token another DCP rank stores)."""
    geo = step.geometry
    n, npad = step.num_tokens, step.num_tokens_padded
    q = np.diff(step.query_start_loc[: step.num_reqs + 1])
    rows = np.full(npad, -1, dtype=np.int64)
    rows[:n] = np.repeat(np.arange(step.num_reqs), q)
    pos = step.positions.astype(np.int64).copy()
    pos[n:] = -1
    logical = np.where(pos >= 0, geo.logical_block(pos), -1)
    slot = step.slot_mapping.astype(np.int64)
    written = slot >= 0
    _, col, off = geo.locate(np.maximum(pos, 0))
    return pd.DataFrame({"token": np.arange(npad), "row": rows, "position": pos, "logical_block": logical,
                         "column": np.where(written, col, -1), "physical_block": geo.kernel_block_of_slot(slot),
                         "offset": np.where(written, off, -1), "slot": slot})


def _token_frame(step: StepInputs) -> pd.DataFrame:
    """``token_frame`` with each token's kind: written, another DCP rank's, or CUDA-graph padding."""
    frame = token_frame(step)
    n, npad = step.num_tokens, step.num_tokens_padded
    slot = frame["slot"].to_numpy()
    frame["kind"] = np.where(np.arange(npad) >= n, "CUDA-graph pad",
                             np.where(slot >= 0, "written", "other DCP rank"))
    return frame


MAX_TABLE_FIGURE_CELLS = 200_000   # beyond this the batch page draws a window of rows
TABLE_WINDOW_ROWS = 48


def table_row_window(rows: int, cols: int, center: int, max_cells: int = MAX_TABLE_FIGURE_CELLS
                     ) -> tuple[int, int] | None:
    """Rows [r0, r1) of the block-table heatmap to draw: all of them when the figure stays within
    ``max_cells``, else TABLE_WINDOW_ROWS rows (fewer for a very wide table) around ``center``
    (the selected token's row). A 256 x 2048 table is 0.5 M cells: 4 MB of figure per rerun, and
    seconds of rendering in the browser."""
    if rows * cols <= max_cells:
        return None
    n = max(1, min(TABLE_WINDOW_ROWS, max_cells // max(cols, 1)))
    r0 = max(0, min(int(center) - n // 2, rows - n))
    return r0, min(rows, r0 + n)


TABLE_WINDOW_COLS = 256


def table_col_window(cols: int, center: int, max_cols: int = TABLE_WINDOW_COLS) -> tuple[int, int] | None:
    """Columns [c0, c1) of a windowed block-table heatmap: all ``cols`` when they are at most
    ``max_cols``, else ``max_cols`` columns around ``center`` (the selected token's column; < 0: the
    first columns). With the 48-row window a 256 x 2048 table is then 12 k cells (~0.1 MB of figure)
    instead of 98 k (0.8 MB), which the browser parses and draws at every token change."""
    if cols <= max_cols:
        return None
    c0 = max(0, min(int(center) - max_cols // 2, cols - max_cols))
    return c0, c0 + max_cols


def short_list(values, limit: int = 16) -> str:
    """``[a, b, c]``, or its first ``limit`` entries and "… (n in all)" for a long list."""
    vals = [int(v) for v in values]
    if len(vals) <= limit:
        return str(vals)
    return "[" + ", ".join(map(str, vals[:limit])) + f", … ({len(vals)} in all)]"
