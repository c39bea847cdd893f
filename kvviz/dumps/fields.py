"""A dump's vocabulary and limits, and the readers of one untrusted field: a scalar, an integer
array, a short string, a table's shape. ``format`` builds a Dump from them; ``kernel_table`` checks
its key with them."""
from __future__ import annotations

import math

import numpy as np

from kvviz.errors import BadInput

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


def scalar_field(m: dict, key: str, *, lo: int, hi: int, default=None, optional: bool = False):
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


def int_array(key: str, v, ndim: int, dtype) -> np.ndarray:
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


def text_field(m: dict, key: str, choices) -> str | None:
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


def nondecreasing(a: np.ndarray) -> bool:
    return a.size < 2 or bool((a[1:] >= a[:-1]).all())


def check_table_shape(key: str, shape) -> None:
    if len(shape) != 2:
        return  # int_array reports the dimension count
    r, w = int(shape[0]), int(shape[1])
    if r < 1 or w < 1:
        raise BadInput(f"{key!r} has shape {tuple(shape)}; it needs at least one row and one column")
    if r > MAX_ROWS or w > MAX_WIDTH or r * w > MAX_TABLE_ENTRIES:
        raise BadInput(f"{key!r} has shape ({r}, {w}); the limits are {MAX_ROWS} rows, {MAX_WIDTH} "
                       f"columns and {MAX_TABLE_ENTRIES} entries")


def check_declared_shape(key: str, shape: tuple) -> None:
    """An .npz member's shape, from its header, against the limits: refused before its data is read."""
    if key in TABLE_KEYS:
        check_table_shape(key, shape)
    elif key in VECTOR_KEYS:
        count = math.prod(shape)          # Python ints: a hostile header cannot overflow it
        if count > MAX_ARRAY_ENTRIES:
            raise BadInput(f"{key!r} declares {count} entries; the limit is {MAX_ARRAY_ENTRIES}")
