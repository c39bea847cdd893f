"""Dumps: the tables of one step of a (possibly broken) run, in a file.

Format v1 is a ``.npz`` (read with pickling off) or a ``.json`` object with the
same keys; README.md, section Table dumps describes every key. Loading is defensive: a
file that is too big, truncated, corrupt, pickled, of the wrong dtype or shape,
or with impossible dimensions is refused with one ``BadInput`` sentence, and
nothing is half-loaded.
"""
from __future__ import annotations

import io
import json
import math
import os
from dataclasses import dataclass

import numpy as np

from kvviz.core.geometry import Geometry
from kvviz.core.versions import LAST_V1_RELEASE, PROFILES, RUNNERS, resolve_version, rules_for
from kvviz.dumps import kernel_table
from kvviz.dumps.npz import read_npz, short_error
from kvviz.files import atomic_writer, open_regular, read_bounded
from kvviz.errors import BadInput, parse_json

DUMP_VERSION = 1

MAX_DUMP_BYTES = 2 << 30          # an .npz file, and the sum of its arrays once unpacked
MAX_JSON_BYTES = 64 << 20         # a .json dump (the JSON parser needs ~10x that in memory)
MAX_ROWS = 1 << 20                # block-table rows (max_num_reqs)
MAX_WIDTH = 1 << 24               # block-table columns
MAX_TABLE_ENTRIES = 1 << 28       # rows * width: 1 GiB of int32
MAX_ARRAY_ENTRIES = 1 << 28       # any 1-D array
MAX_BLOCK_SIZE = 1 << 16
MAX_NUM_BLOCKS = (1 << 31) - 1    # block ids are int32

SCALAR_KEYS = ("kvviz_dump_version", "block_size", "num_blocks", "num_reqs", "num_reqs_padded",
               "sliding_window", "kernel_block_size", "dcp_world_size", "dcp_rank",
               "cp_kv_cache_interleave_size", "attention_chunk_size", "cascade_prefix_blocks",
               "previous_num_reqs")
TABLE_KEYS = ("block_table", "block_table_device", "state_block_table", "kernel_block_table")
# 1-D arrays and the dtype each is held in once loaded
VECTOR_KEYS = {
    "num_blocks_per_row": np.int32, "seq_lens": np.int32, "query_start_loc": np.int32,
    "positions": np.int64, "slot_mapping": np.int64, "paged_kv_indptr": np.int32,
    "paged_kv_indices": np.int32, "paged_kv_last_page_len": np.int32, "ref_cnt": np.int32,
    "free_block_ids": np.int32, "idx_mapping": np.int32, "state_num_blocks": np.int32,
}
V2_KEYS = ("idx_mapping", "state_block_table", "state_num_blocks")   # Model Runner V2's own tables
# short strings: a JSON string, or in an .npz a 1-D uint8 array of ASCII codes (no pickling)
TEXT_KEYS = ("profile", "group_kind", "vllm", "runner", "mamba_cache_mode")
MAX_TEXT_LEN = 64
GROUP_KINDS = ("attention", "state")
MAMBA_CACHE_MODES = ("none", "all", "align")
# num_blocks_per_row is required of a V1 dump; a V2 dump's follows from state_num_blocks and idx_mapping
REQUIRED_KEYS = ("kvviz_dump_version", "block_size", "num_blocks", "num_reqs", "block_table",
                 "num_blocks_per_row")
KNOWN_KEYS = frozenset(SCALAR_KEYS) | frozenset(TABLE_KEYS) | frozenset(VECTOR_KEYS) | frozenset(TEXT_KEYS)


@dataclass
class Dump:
    """One step's tables. Arrays are numpy; optional ones are None when not captured."""
    block_size: int
    num_blocks: int
    num_reqs: int
    block_table: np.ndarray                 # int32 [R, W], the CPU table (the truth)
    num_blocks_per_row: np.ndarray          # int32 [R]
    block_table_device: np.ndarray | None = None   # int32 [R', W], what the kernel reads
    num_reqs_padded: int | None = None
    seq_lens: np.ndarray | None = None
    query_start_loc: np.ndarray | None = None
    positions: np.ndarray | None = None
    slot_mapping: np.ndarray | None = None
    paged_kv_indptr: np.ndarray | None = None
    paged_kv_indices: np.ndarray | None = None
    paged_kv_last_page_len: np.ndarray | None = None
    ref_cnt: np.ndarray | None = None
    free_block_ids: np.ndarray | None = None
    sliding_window: int | None = None
    # extensions (kvviz, not in the list): hybrid kernel blocks and DCP
    kernel_block_size: int | None = None
    dcp_world_size: int = 1
    dcp_rank: int = 0
    cp_kv_cache_interleave_size: int = 1
    # the vLLM behaviour profile the run followed (a name in kvviz.core.versions.PROFILES); None: not said
    profile: str | None = None
    # "state": a state group (Mamba-like, one state block per request, no slots); None: attention
    group_kind: str | None = None
    # the vLLM release that ran (any version string kvviz.core.versions resolves) and its model runner
    vllm: str | None = None
    runner: str | None = None                       # "v1" | "v2"; None: v1
    # Model Runner V2 (runner "v2"): block_table is the gathered input table [num_reqs_padded.., W] in
    # batch order; these are the request-state rows it was gathered from
    idx_mapping: np.ndarray | None = None           # int32 [num_reqs]: batch position -> state index
    state_block_table: np.ndarray | None = None     # int32 [max_num_reqs, W], rows by state index
    state_num_blocks: np.ndarray | None = None      # int32 [max_num_reqs]
    # declared states that legitimately put null blocks or fewer pages in a row
    mamba_cache_mode: str | None = None             # "align": a state row holds null blocks (#30877)
    attention_chunk_size: int | None = None         # chunked-local attention: blocks before the chunk
    cascade_prefix_blocks: int | None = None        # cascade attention: shared pages left out of CSR
    kernel_block_table: np.ndarray | None = None    # v0.32.0+: the backend's table (kvviz.dumps.kernel_table)
    previous_num_reqs: int | None = None            # V2: the previous gather's num_reqs (dirty rows)

    # --- derived ----------------------------------------------------------------------
    @property
    def rows(self) -> int:
        return int(self.block_table.shape[0])

    @property
    def width(self) -> int:
        return int(self.block_table.shape[1])

    @property
    def padded_reqs(self) -> int:
        return self.num_reqs if self.num_reqs_padded is None else self.num_reqs_padded

    @property
    def kbs(self) -> int:
        """Kernel block size: what table entries, slots and FlashInfer pages count in."""
        return self.kernel_block_size or self.block_size

    @property
    def blocks_per_kv_block(self) -> int:
        return self.geometry.blocks_per_kv_block

    @property
    def geometry(self) -> Geometry:
        """The dump's block geometry (sizes and DCP settings), validated when the dump was read."""
        return Geometry(self.block_size, self.kbs, self.dcp_world_size, self.dcp_rank,
                        self.cp_kv_cache_interleave_size)

    @property
    def is_state_group(self) -> bool:
        return self.group_kind == "state"

    @property
    def is_v2(self) -> bool:
        """Model Runner V2's tables: block_table is the gathered input table."""
        return self.runner == "v2"

    @property
    def num_tokens(self) -> int | None:
        if self.query_start_loc is None:
            return None
        return int(self.query_start_loc[self.num_reqs])

    def present(self) -> list[str]:
        """Keys this dump carries, required ones included."""
        return list(self.to_mapping())

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k) for k in _ARRAY_FIELDS if getattr(self, k) is not None}

    def to_mapping(self) -> dict:
        """Every present key, arrays as numpy (the .npz form)."""
        out = {"kvviz_dump_version": DUMP_VERSION, "block_size": self.block_size,
               "num_blocks": self.num_blocks, "num_reqs": self.num_reqs}
        for k in ("num_reqs_padded", "sliding_window", "kernel_block_size", "attention_chunk_size",
                  "cascade_prefix_blocks", "previous_num_reqs", *TEXT_KEYS):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        if (self.dcp_world_size, self.dcp_rank, self.cp_kv_cache_interleave_size) != (1, 0, 1):
            out.update(dcp_world_size=self.dcp_world_size, dcp_rank=self.dcp_rank,
                       cp_kv_cache_interleave_size=self.cp_kv_cache_interleave_size)
        out.update(self.arrays())
        return out

    def to_json(self) -> dict:
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.to_mapping().items()}


_ARRAY_FIELDS = (*TABLE_KEYS, *VECTOR_KEYS)


# --- building and validating ----------------------------------------------------------

def _scalar(m: dict, key: str, *, lo: int, hi: int, default=None, optional: bool = False):
    if key not in m or m[key] is None:
        if optional:
            return default
        raise BadInput(f"the dump has no {key!r}; it is required")
    v = m[key]
    if isinstance(v, np.ndarray):
        if v.size != 1 or v.ndim > 1:
            raise BadInput(f"{key!r} must be a single integer, got an array of shape {v.shape}")
        if v.dtype.kind not in "iu":
            raise BadInput(f"{key!r} must be an integer, got dtype {v.dtype}")
        v = int(v.reshape(()))
    elif isinstance(v, (np.integer,)):
        v = int(v)
    elif isinstance(v, bool) or not isinstance(v, int):
        raise BadInput(f"{key!r} must be an integer, got {type(v).__name__}")
    if not lo <= v <= hi:
        raise BadInput(f"{key!r} must be in [{lo}, {hi}], got {v}")
    return v


def _as_int_array(key: str, v, ndim: int, dtype) -> np.ndarray:
    """An untrusted value as an integer array of ``ndim`` dimensions in ``dtype``."""
    if not isinstance(v, np.ndarray):
        if not isinstance(v, list):
            raise BadInput(f"{key!r} must be a {'2-D ' if ndim == 2 else ''}list of integers, "
                           f"got {type(v).__name__}")
        try:
            v = np.array(v)
        except (ValueError, OverflowError, TypeError):
            raise BadInput(f"{key!r} is not a rectangular array of integers") from None
        if v.size == 0 and v.dtype.kind == "f":  # [] parses as float
            v = v.astype(dtype)
    if v.dtype.hasobject:
        raise BadInput(f"{key!r} holds Python objects; a dump holds integer arrays only")
    if v.dtype.kind not in "iu":
        raise BadInput(f"{key!r} has dtype {v.dtype}; integers are required")
    if v.ndim != ndim:
        raise BadInput(f"{key!r} must have {ndim} dimension{'s' if ndim > 1 else ''}, "
                       f"got shape {tuple(v.shape)}")
    if v.dtype != dtype:
        info = np.iinfo(dtype)
        if v.size and (int(v.min()) < info.min or int(v.max()) > info.max):
            raise BadInput(f"{key!r} has values outside the {np.dtype(dtype).name} range")
        v = v.astype(dtype)
    return v


def _text(m: dict, key: str, choices) -> str | None:
    """An optional short string key: a JSON string, or (from an .npz) a 1-D uint8 array of ASCII
    codes or a single-element string array; it must be one of ``choices``."""
    v = m.get(key)
    if v is None:
        return None
    if isinstance(v, np.ndarray):
        if v.dtype.kind in "US" and v.size == 1:
            v = v.reshape(-1)[0]
            v = v.decode("ascii", "replace") if isinstance(v, bytes) else str(v)
        elif v.dtype == np.uint8 and v.ndim == 1:
            if v.size > MAX_TEXT_LEN or (v.size and (int(v.min()) < 0x20 or int(v.max()) > 0x7E)):
                raise BadInput(f"{key!r} must be a short ASCII string (a uint8 array of at most "
                               f"{MAX_TEXT_LEN} printable ASCII codes)")
            v = v.tobytes().decode("ascii")
        else:
            raise BadInput(f"{key!r} must be a string (in an .npz: a 1-D uint8 array of ASCII codes), "
                           f"got an array of dtype {v.dtype} and shape {tuple(v.shape)}")
    elif not isinstance(v, str):
        raise BadInput(f"{key!r} must be a string, got {type(v).__name__}")
    if choices is not None and v not in choices:
        shown = v if len(v) <= MAX_TEXT_LEN else v[:MAX_TEXT_LEN] + "..."
        raise BadInput(f"{key!r} is {shown!r}; it must be one of {', '.join(choices)}")
    return v


def text_to_npz(value: str) -> np.ndarray:
    """How a string key is stored in an .npz: its ASCII codes as uint8 (np.load reads it without pickle)."""
    return np.frombuffer(value.encode("ascii"), dtype=np.uint8).copy()


def _nondecreasing(a: np.ndarray) -> bool:
    return a.size < 2 or bool((a[1:] >= a[:-1]).all())


def dump_from_mapping(m: dict) -> Dump:
    """Validate an untrusted key -> value mapping (from .npz or JSON); BadInput on any problem.
    The stages run in a fixed order, so a mapping with several problems always reports the same one."""
    _check_keys(m)
    head = _header(m)
    bt = _as_int_array("block_table", m["block_table"], 2, np.int32)
    _check_table_shape("block_table", bt.shape)
    R = bt.shape[0]
    num_reqs = _scalar(m, "num_reqs", lo=0, hi=R)
    padded = _scalar(m, "num_reqs_padded", lo=num_reqs, hi=R, optional=True)
    vec = _vectors(m)
    per = head["block_size"] // (head["kernel_block_size"] or head["block_size"])
    state_bt = _v2_tables(m, head["runner"], vec, bt.shape, num_reqs, per)
    _check_counts(vec["num_blocks_per_row"], bt.shape)
    dev = _device_table(m, bt.shape, num_reqs if padded is None else padded)
    _check_step_arrays(vec, num_reqs, R)
    _check_csr_and_pool(vec, num_reqs, R, head["num_blocks"])
    cascade = _scalar(m, "cascade_prefix_blocks", lo=0, hi=bt.shape[1], optional=True)
    kbt = kernel_table.validate(m, head, bt.shape, num_reqs if padded is None else padded)
    prev = _scalar(m, "previous_num_reqs", lo=0, hi=R, optional=True)
    if prev is not None and head["runner"] != "v2":
        raise BadInput("'previous_num_reqs' belongs to a Model Runner V2 dump; add \"runner\": \"v2\"")
    return Dump(num_reqs=num_reqs, block_table=bt, block_table_device=dev, num_reqs_padded=padded,
                state_block_table=state_bt, cascade_prefix_blocks=cascade, kernel_block_table=kbt,
                previous_num_reqs=prev,
                **head, **{k: vec.get(k) for k in VECTOR_KEYS})


def _v2_tables(m: dict, runner: str | None, vec: dict, shape, num_reqs: int, per: int = 1) -> np.ndarray | None:
    """Model Runner V2's tables: required with runner "v2" (and refused without it); the gathered
    table's counts (num_blocks_per_row), when not given, follow from state_num_blocks[idx_mapping].
    A state table 1/per as wide (per = block_size / kernel_block_size) holds manager ids (v0.32.0 on)."""
    R, W = shape
    present = [k for k in V2_KEYS if m.get(k) is not None]
    if runner != "v2":
        if present:
            raise BadInput(f"{present[0]!r} belongs to a Model Runner V2 dump; add \"runner\": \"v2\"")
        if "num_blocks_per_row" not in vec:
            raise BadInput("the dump lacks the required key 'num_blocks_per_row'")
        return None
    missing = [k for k in V2_KEYS if k not in present]
    if missing:
        raise BadInput(f"a Model Runner V2 dump (runner \"v2\") needs {', '.join(repr(k) for k in missing)}")
    if m.get("block_table_device") is not None:
        raise BadInput("a Model Runner V2 dump has no 'block_table_device': its 'block_table' is the "
                       "gathered input table the kernels read")
    st = _as_int_array("state_block_table", m["state_block_table"], 2, np.int32)
    _check_table_shape("state_block_table", st.shape)
    S = st.shape[0]
    if st.shape[1] != W and not (per > 1 and st.shape[1] * per == W):
        also = f" (or {W // per}: manager ids)" if per > 1 and W % per == 0 else ""
        raise BadInput(f"state_block_table is {st.shape[1]} wide; it must be as wide as block_table ({W}){also}")
    Ws = st.shape[1]
    cnt = vec["state_num_blocks"]
    if cnt.shape[0] != S:
        raise BadInput(f"state_num_blocks has {cnt.shape[0]} entries but state_block_table has {S} rows")
    if S and (int(cnt.min()) < 0 or int(cnt.max()) > Ws):
        r = int(np.nonzero((cnt < 0) | (cnt > Ws))[0][0])
        raise BadInput(f"state_num_blocks[{r}] = {int(cnt[r])} is outside [0, {Ws}], the table width")
    idx = vec["idx_mapping"]
    if not num_reqs <= idx.shape[0] <= max(R, S):
        raise BadInput(f"idx_mapping has {idx.shape[0]} entries; it needs one per live row ({num_reqs})")
    if "num_blocks_per_row" not in vec:
        live = idx[:num_reqs].astype(np.int64)
        ok = (live >= 0) & (live < S)
        counts = np.zeros(R, np.int32)
        counts[:num_reqs] = np.where(ok, cnt[np.clip(live, 0, max(S - 1, 0))] if S else 0, 0) * (W // Ws)
        vec["num_blocks_per_row"] = counts
    return st


def _check_keys(m) -> None:
    """The mapping is an object holding every required key."""
    if not isinstance(m, dict):
        raise BadInput("a dump must be a JSON object (or an .npz archive) of named arrays")
    missing = [k for k in REQUIRED_KEYS if k not in m and k != "num_blocks_per_row"]   # see _v2_tables
    if missing:
        raise BadInput(f"the dump lacks the required key{'s' if len(missing) > 1 else ''} "
                       + ", ".join(repr(k) for k in missing))


def _header(m: dict) -> dict:
    """The format version, the block geometry, the pool size and the short strings, as ``Dump``
    fields."""
    version = _scalar(m, "kvviz_dump_version", lo=0, hi=1 << 30)
    if version != DUMP_VERSION:
        raise BadInput(f"kvviz_dump_version is {version}; this kvviz reads version {DUMP_VERSION}")
    bs = _scalar(m, "block_size", lo=1, hi=MAX_BLOCK_SIZE)
    nb = _scalar(m, "num_blocks", lo=1, hi=MAX_NUM_BLOCKS)
    kbs = _scalar(m, "kernel_block_size", lo=1, hi=bs, optional=True)
    if kbs is not None and bs % kbs:
        raise BadInput(f"kernel_block_size {kbs} does not divide block_size {bs}")
    world = _scalar(m, "dcp_world_size", lo=1, hi=1024, default=1, optional=True)
    rank = _scalar(m, "dcp_rank", lo=0, hi=world - 1, default=0, optional=True)
    inter = _scalar(m, "cp_kv_cache_interleave_size", lo=1, hi=bs, default=1, optional=True)
    if bs % inter:
        raise BadInput(f"cp_kv_cache_interleave_size {inter} does not divide block_size {bs}")
    window = _scalar(m, "sliding_window", lo=1, hi=1 << 40, optional=True)
    profile = _text(m, "profile", sorted(PROFILES))
    kind = _text(m, "group_kind", GROUP_KINDS)
    if kind == "state" and window is not None:
        raise BadInput("a state group (group_kind 'state') has no sliding_window")
    vllm = _text(m, "vllm", None)
    if vllm is not None:
        try:
            resolve_version(vllm)
        except ValueError as e:
            raise BadInput(f"'vllm': {e}") from None
    runner = _text(m, "runner", RUNNERS)
    if vllm is not None and (runner or "v1") == "v1" and not rules_for(vllm).has_runner_v1:
        said = "runner v1" if runner else "no runner key, so V1"
        raise BadInput(f"the dump declares vLLM {vllm[:40]} with {said}, but vLLM {rules_for(vllm).name} has no "
                       f"V1 model runner (v0.34.0 deleted it; {LAST_V1_RELEASE} is the last release with V1): "
                       f"declare an older vllm, or runner v2 with its tables")
    mamba = _text(m, "mamba_cache_mode", MAMBA_CACHE_MODES)
    chunk = _scalar(m, "attention_chunk_size", lo=1, hi=1 << 40, optional=True)
    if chunk is not None and window is not None:
        raise BadInput("a group has a sliding_window or an attention_chunk_size, not both")
    return {"block_size": bs, "num_blocks": nb, "kernel_block_size": kbs, "dcp_world_size": world,
            "dcp_rank": rank, "cp_kv_cache_interleave_size": inter, "sliding_window": window,
            "profile": profile, "group_kind": kind, "vllm": vllm, "runner": runner,
            "mamba_cache_mode": mamba, "attention_chunk_size": chunk}


def _vectors(m: dict) -> dict[str, np.ndarray]:
    """The 1-D arrays present, each in its dtype and under the size limit."""
    vec = {}
    for key, dtype in VECTOR_KEYS.items():
        if key in m and m[key] is not None:
            a = _as_int_array(key, m[key], 1, dtype)
            if a.size > MAX_ARRAY_ENTRIES:
                raise BadInput(f"{key!r} has {a.size} entries; the limit is {MAX_ARRAY_ENTRIES}")
            vec[key] = a
    return vec


def _check_counts(cnt: np.ndarray, shape) -> None:
    """num_blocks_per_row: one count per table row, each within the table width."""
    R, W = shape
    if cnt.shape[0] != R:
        raise BadInput(f"num_blocks_per_row has {cnt.shape[0]} entries but block_table has {R} rows")
    if R and (int(cnt.min()) < 0 or int(cnt.max()) > W):
        r = int(np.nonzero((cnt < 0) | (cnt > W))[0][0])
        raise BadInput(f"num_blocks_per_row[{r}] = {int(cnt[r])} is outside [0, {W}], the table width")


def _device_table(m: dict, shape, need: int) -> np.ndarray | None:
    """block_table_device, when present: as wide as the CPU table, with ``need`` to all its rows."""
    dev = m.get("block_table_device")
    if dev is None:
        return None
    R, W = shape
    dev = _as_int_array("block_table_device", dev, 2, np.int32)
    if dev.shape[1] != W or not need <= dev.shape[0] <= R:
        raise BadInput(f"block_table_device has shape {tuple(dev.shape)}; it must be {W} wide "
                       f"with {need} to {R} rows like block_table")
    return dev


def _check_step_arrays(vec: dict, num_reqs: int, R: int) -> None:
    """seq_lens, query_start_loc, positions and slot_mapping against the live rows."""
    if "seq_lens" in vec:
        s = vec["seq_lens"]
        if s.shape[0] < num_reqs or s.shape[0] > R:
            raise BadInput(f"seq_lens has {s.shape[0]} entries; it needs one per live row "
                           f"({num_reqs}) and at most one per table row ({R})")
        if s.size and int(s.min()) < 0:
            raise BadInput(f"seq_lens[{int(np.argmin(s))}] is negative")
    qsl = vec.get("query_start_loc")
    if qsl is not None:
        if qsl.shape[0] < num_reqs + 1:
            raise BadInput(f"query_start_loc has {qsl.shape[0]} entries; {num_reqs} live rows need "
                           f"{num_reqs + 1}")
        if int(qsl[0]) != 0:
            raise BadInput(f"query_start_loc[0] is {int(qsl[0])}; it must be 0")
        if not _nondecreasing(qsl[: num_reqs + 1]):
            raise BadInput("query_start_loc decreases among the live rows; it must be a running total")
    for key in ("positions", "slot_mapping"):
        if key in vec and qsl is not None and vec[key].shape[0] < int(qsl[num_reqs]):
            raise BadInput(f"{key} has {vec[key].shape[0]} entries but query_start_loc counts "
                           f"{int(qsl[num_reqs])} tokens")


def _check_csr_and_pool(vec: dict, num_reqs: int, R: int, num_blocks: int) -> None:
    """FlashInfer's per-row arrays against the rows, ref_cnt against the pool."""
    if "paged_kv_indptr" in vec:
        n = vec["paged_kv_indptr"].shape[0] - 1
        if not num_reqs <= n <= R:
            raise BadInput(f"paged_kv_indptr has {n + 1} entries; it needs between {num_reqs + 1} "
                           f"(live rows + 1) and {R + 1} (table rows + 1)")
    if "paged_kv_last_page_len" in vec:
        n = vec["paged_kv_last_page_len"].shape[0]
        if not num_reqs <= n <= R:
            raise BadInput(f"paged_kv_last_page_len has {n} entries; it needs between {num_reqs} "
                           f"and {R}")
    if "ref_cnt" in vec and vec["ref_cnt"].shape[0] != num_blocks:
        raise BadInput(f"ref_cnt has {vec['ref_cnt'].shape[0]} entries; it needs one per block ({num_blocks})")


def _check_table_shape(key: str, shape) -> None:
    if len(shape) != 2:
        return  # _as_int_array reports the dimension count
    r, w = int(shape[0]), int(shape[1])
    if r < 1 or w < 1:
        raise BadInput(f"{key!r} has shape {tuple(shape)}; it needs at least one row and one column")
    if r > MAX_ROWS or w > MAX_WIDTH or r * w > MAX_TABLE_ENTRIES:
        raise BadInput(f"{key!r} has shape ({r}, {w}); the limits are {MAX_ROWS} rows, {MAX_WIDTH} "
                       f"columns and {MAX_TABLE_ENTRIES} entries")


def _check_declared_shape(key: str, shape: tuple) -> None:
    """An .npz member's shape, from its header, against the limits: refused before its data is read."""
    if key in TABLE_KEYS:
        _check_table_shape(key, shape)
    elif key in VECTOR_KEYS:
        count = math.prod(shape)          # Python ints: a hostile header cannot overflow it
        if count > MAX_ARRAY_ENTRIES:
            raise BadInput(f"{key!r} declares {count} entries; the limit is {MAX_ARRAY_ENTRIES}")


# --- files ----------------------------------------------------------------------------

def _parse_json(raw: bytes, name: str) -> dict:
    return parse_json(raw, name, not_text=f"{name} is neither an .npz archive nor UTF-8 JSON")


def load_dump_bytes(data: bytes, name: str = "the upload", *, max_bytes: int = MAX_DUMP_BYTES,
                    max_json_bytes: int = MAX_JSON_BYTES) -> Dump:
    """A dump from the bytes of an .npz or .json file (an upload)."""
    if len(data) > max_bytes:
        raise BadInput(f"{name} is {len(data)} bytes; the limit is {max_bytes}")
    return _from_source(data[:8], len(data), lambda: io.BytesIO(data), lambda: data, name,
                        max_bytes, max_json_bytes)


def load_dump(path: str, *, max_bytes: int = MAX_DUMP_BYTES, max_json_bytes: int = MAX_JSON_BYTES,
              runner: str | None = None) -> Dump:
    """A dump from an .npz or .json file; BadInput with one sentence on any problem. ``runner``
    ("v1" | "v2", `check --runner`): the model runner the dump comes from, for a dump without the
    key (one that names another is refused)."""
    name = os.path.basename(path) or path
    with open_regular(path) as f:   # devices, FIFOs, directories refused before a byte is read
        size = os.fstat(f.fileno()).st_size
        try:
            head = f.read(8)
        except OSError as e:
            raise BadInput(f"cannot read {path}: {e.strerror or e}") from None
    if size > max_bytes:
        raise BadInput(f"{name} is {size} bytes; the limit is {max_bytes}")

    return _from_source(head, size, lambda: path, lambda: read_bounded(path, max_bytes, name=name), name,
                        max_bytes, max_json_bytes, runner)


def _from_source(head: bytes, size: int, zip_src, read_all, name, max_bytes, max_json_bytes,
                 runner: str | None = None) -> Dump:
    if size == 0:
        raise BadInput(f"{name} is empty")
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):   # a zip archive: an .npz
        try:
            mapping = read_npz(zip_src(), name, max_bytes, KNOWN_KEYS, TEXT_KEYS, check_shape=_check_declared_shape)
        except BadInput:
            raise
        except Exception as e:  # noqa: BLE001 - a hostile archive must never become a traceback
            raise BadInput(f"{name} is not a readable .npz archive ({type(e).__name__}: {short_error(e)})") from None
    elif head.startswith(b"\x93NUMPY"):
        raise BadInput(f"{name} is a single .npy array; a dump is an .npz archive or a JSON object")
    else:
        if size > max_json_bytes:
            raise BadInput(f"{name} is {size} bytes of JSON; the limit is {max_json_bytes} "
                           "(use .npz for big tables)")
        mapping = _parse_json(read_all(), name)
    try:
        if runner is not None:
            given = mapping.get("runner")
            if given is not None and _text(mapping, "runner", RUNNERS) != runner:
                raise BadInput(f"the dump says runner {_text(mapping, 'runner', RUNNERS)!r}, --runner says {runner!r}")
            mapping = {**mapping, "runner": runner}
        return dump_from_mapping(mapping)
    except BadInput as e:
        raise BadInput(f"{name}: {e}") from None
    except MemoryError:
        raise BadInput(f"{name} is too large to load into memory") from None


def save_dump(dump: Dump, path: str, *, compress: bool = False) -> None:
    """Write ``path`` as JSON if it ends in .json, else as .npz; atomically (a temporary file in the
    same directory renamed into place), so an interrupted save leaves the old file intact."""
    with atomic_writer(path, "w" if path.endswith(".json") else "wb") as f:
        if path.endswith(".json"):
            json.dump(dump.to_json(), f, separators=(",", ":"))
        else:
            (np.savez_compressed if compress else np.savez)(f, **_npz_arrays(dump))


def _npz_arrays(dump: Dump) -> dict[str, np.ndarray]:
    return {k: text_to_npz(v) if k in TEXT_KEYS else np.asarray(v) for k, v in dump.to_mapping().items()}


def dump_to_npz_bytes(dump: Dump) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **_npz_arrays(dump))
    return buf.getvalue()

