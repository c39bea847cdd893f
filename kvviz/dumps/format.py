"""Dumps: the tables of one step of a (possibly broken) run, in a file.

Format v1 is a ``.npz`` (read with pickling off) or a ``.json`` object with the
same keys; docs/dumps.md describes every key. Loading is defensive: a
file that is too big, truncated, corrupt, pickled, of the wrong dtype or shape,
or with impossible dimensions is refused with one ``BadInput`` sentence, and
nothing is half-loaded.
"""
from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass

import numpy as np

from kvviz.core.geometry import Geometry
from kvviz.core.versions import LAST_V1_RELEASE, PROFILES, RUNNERS, resolve_version, rules_for
from kvviz.dumps import kernel_table
from kvviz.dumps.fields import (  # noqa: F401 - the vocabulary and limits, handed on
    DUMP_VERSION, GROUP_KINDS, KNOWN_KEYS, MAMBA_CACHE_MODES, MAX_ARRAY_ENTRIES, MAX_BLOCK_SIZE, MAX_DUMP_BYTES,
    MAX_JSON_BYTES, MAX_NUM_BLOCKS, MAX_ROWS, MAX_TABLE_ENTRIES, MAX_TEXT_LEN, MAX_WIDTH, REQUIRED_KEYS,
    SCALAR_KEYS, TABLE_KEYS, TEXT_KEYS, V2_KEYS, VECTOR_KEYS, check_declared_shape, check_table_shape,
    int_array, nondecreasing, scalar_field, text_field, text_to_npz)
from kvviz.dumps.npz import read_npz, short_error
from kvviz.files import atomic_writer, open_regular, read_bounded
from kvviz.errors import BadInput, ScenarioNotDump, parse_json, size_text



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

def dump_from_mapping(m: dict) -> Dump:
    """Validate an untrusted key -> value mapping (from .npz or JSON); BadInput on any problem.
    The stages run in a fixed order, so a mapping with several problems always reports the same one."""
    _check_keys(m)
    head = _header(m)
    bt = int_array("block_table", m["block_table"], 2, np.int32)
    check_table_shape("block_table", bt.shape)
    R = bt.shape[0]
    num_reqs = scalar_field(m, "num_reqs", lo=0, hi=R)
    padded = scalar_field(m, "num_reqs_padded", lo=num_reqs, hi=R, optional=True)
    vec = _vectors(m)
    per = Geometry(head["block_size"], head["kernel_block_size"]).blocks_per_kv_block
    state_bt = _v2_tables(m, head["runner"], vec, bt.shape, num_reqs, per)
    _check_counts(vec["num_blocks_per_row"], bt.shape)
    dev = _device_table(m, bt.shape, num_reqs if padded is None else padded)
    _check_step_arrays(vec, num_reqs, R)
    _check_csr_and_pool(vec, num_reqs, R, head["num_blocks"])
    cascade = scalar_field(m, "cascade_prefix_blocks", lo=0, hi=bt.shape[1], optional=True)
    kbt = kernel_table.validate(m, head, bt.shape, num_reqs if padded is None else padded)
    prev = scalar_field(m, "previous_num_reqs", lo=0, hi=R, optional=True)
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
    st = int_array("state_block_table", m["state_block_table"], 2, np.int32)
    check_table_shape("state_block_table", st.shape)
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
    if "requests" in m and "block_table" not in m and "kvviz_dump_version" not in m:
        raise ScenarioNotDump("this is a kvviz scenario, not a table dump: open it on the Step through page "
                              "(Your own scenario) or replay it with `kvviz run`")
    missing = [k for k in REQUIRED_KEYS if k not in m and k != "num_blocks_per_row"]   # see _v2_tables
    if missing:
        raise BadInput(f"the dump lacks the required key{'s' if len(missing) > 1 else ''} "
                       + ", ".join(repr(k) for k in missing))


def _header(m: dict) -> dict:
    """The format version, the block geometry, the pool size and the short strings, as ``Dump``
    fields."""
    version = scalar_field(m, "kvviz_dump_version", lo=0, hi=1 << 30)
    if version != DUMP_VERSION:
        raise BadInput(f"kvviz_dump_version is {version}; this kvviz reads version {DUMP_VERSION}")
    bs = scalar_field(m, "block_size", lo=1, hi=MAX_BLOCK_SIZE)
    nb = scalar_field(m, "num_blocks", lo=1, hi=MAX_NUM_BLOCKS)
    kbs = scalar_field(m, "kernel_block_size", lo=1, hi=bs, optional=True)
    if kbs is not None and bs % kbs:
        raise BadInput(f"kernel_block_size {kbs} does not divide block_size {bs}")
    world = scalar_field(m, "dcp_world_size", lo=1, hi=1024, default=1, optional=True)
    rank = scalar_field(m, "dcp_rank", lo=0, hi=world - 1, default=0, optional=True)
    inter = scalar_field(m, "cp_kv_cache_interleave_size", lo=1, hi=bs, default=1, optional=True)
    if bs % inter:
        raise BadInput(f"cp_kv_cache_interleave_size {inter} does not divide block_size {bs}")
    window = scalar_field(m, "sliding_window", lo=1, hi=1 << 40, optional=True)
    profile = text_field(m, "profile", sorted(PROFILES))
    kind = text_field(m, "group_kind", GROUP_KINDS)
    if kind == "state" and window is not None:
        raise BadInput("a state group (group_kind 'state') has no sliding_window")
    vllm = text_field(m, "vllm", None)
    if vllm is not None:
        try:
            resolve_version(vllm)
        except ValueError as e:
            raise BadInput(f"'vllm': {e}") from None
    runner = text_field(m, "runner", RUNNERS)
    if vllm is not None and (runner or "v1") == "v1" and not rules_for(vllm).has_runner_v1:
        said = "runner v1" if runner else "no runner key, so V1"
        raise BadInput(f"the dump declares vLLM {vllm[:40]} with {said}, but vLLM {rules_for(vllm).name} has no "
                       f"V1 model runner (v0.34.0 deleted it; {LAST_V1_RELEASE} is the last release with V1): "
                       f"declare an older vllm, or runner v2 with its tables")
    mamba = text_field(m, "mamba_cache_mode", MAMBA_CACHE_MODES)
    chunk = scalar_field(m, "attention_chunk_size", lo=1, hi=1 << 40, optional=True)
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
            a = int_array(key, m[key], 1, dtype)
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
    dev = int_array("block_table_device", dev, 2, np.int32)
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
        if not nondecreasing(qsl[: num_reqs + 1]):
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


# --- files ----------------------------------------------------------------------------

def _parse_json(raw: bytes, name: str) -> dict:
    return parse_json(raw, name, not_text=f"{name} is neither an .npz archive nor UTF-8 JSON")


def load_dump_bytes(data: bytes, name: str = "the upload", *, max_bytes: int = MAX_DUMP_BYTES,
                    max_json_bytes: int = MAX_JSON_BYTES) -> Dump:
    """A dump from the bytes of an .npz or .json file (an upload)."""
    if len(data) > max_bytes:
        raise BadInput(f"{name} is {size_text(len(data))}; the limit is {size_text(max_bytes)}")
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
        raise BadInput(f"{name} is {size_text(size)}; the limit is {size_text(max_bytes)}")

    return _from_source(head, size, lambda: path, lambda: read_bounded(path, max_bytes, name=name), name,
                        max_bytes, max_json_bytes, runner)


def _from_source(head: bytes, size: int, zip_src, read_all, name, max_bytes, max_json_bytes,
                 runner: str | None = None) -> Dump:
    if size == 0:
        raise BadInput(f"{name} is empty")
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):   # a zip archive: an .npz
        try:
            mapping = read_npz(zip_src(), name, max_bytes, KNOWN_KEYS, TEXT_KEYS, check_shape=check_declared_shape)
        except BadInput:
            raise
        except Exception as e:  # noqa: BLE001 - a hostile archive must never become a traceback
            raise BadInput(f"{name} is not a readable .npz archive ({type(e).__name__}: {short_error(e)})") from None
    elif head.startswith(b"\x93NUMPY"):
        raise BadInput(f"{name} is a single .npy array; a dump is an .npz archive or a JSON object")
    else:
        if size > max_json_bytes:
            raise BadInput(f"{name} is {size_text(size)} of JSON; the limit is {size_text(max_json_bytes)} "
                           "(use .npz for big tables)")
        mapping = _parse_json(read_all(), name)
    try:
        if runner is not None:
            given = mapping.get("runner")
            if given is not None and text_field(mapping, "runner", RUNNERS) != runner:
                raise BadInput(f"the dump says runner {text_field(mapping, 'runner', RUNNERS)!r}, --runner says {runner!r}")
            mapping = {**mapping, "runner": runner}
        return dump_from_mapping(mapping)
    except BadInput as e:
        raise type(e)(f"{name}: {e}") from None
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

