#!/usr/bin/env python3
"""vLLM's own code, taken from a release's wheel at run time, as an oracle for kvviz.

usage: python scripts/vllm_wheel_oracle.py VERSION [--device cpu|cuda] [--cases N] [--seed S]
                                           [--json] [--json-out PATH] [--wheel PATH] [--cache DIR]
                                           [--no-download] [--tables t1,t2] [--slim DIR]
                                           [--mrv2-interpret] [--mrv2-cases N]

The wheel (``vllm-VERSION-*.whl``) is looked for in ``--wheel``, the cache folder
(``$KVVIZ_WHEEL_CACHE`` or ``~/.cache/kvviz/wheels/``, flat or in ``VERSION/``) and ``/tmp/wheels/VERSION/``;
when absent it is downloaded into the cache with ``pip download --no-deps --only-binary=:all:``
(``--no-download``: never; the GPU machine has no network, so fill its cache first: ``--slim DIR``
writes a small zip of only the vLLM files the oracle reads, ``vllm-VERSION-kvviz_slim.whl``, that
travels with a worktree). Nothing is installed: ``kvviz/vllm_wheel/extract.py`` takes the kernels and
functions out of the zip by AST into a temporary module.

Tables compared, each on random cases (block sizes 1..256, kernel-block splits, DCP worlds 1..8 with
interleaves up to the block size, 1..4 requests and groups, padded rows and tokens):

* ``width``       ``get_block_table_width`` (V1 ``worker/block_table.py``; ``kv_cache_interface.py`` in
                  v0.34.0) vs ``Geometry.table_width`` under the release's ``width_alignment``;
* ``v1_slots``    the V1 slot-mapping kernel (``_compute_slot_mapping_kernel`` /
                  ``ComputeSlotMappingKernel.kernel``), launched as the wheel launches it (grid
                  ``num_reqs + 1``, its constexprs), vs ``build_step``'s slot mapping and vs kvviz's
                  Triton ``kernels.slot_mapping.slot_mapping``; absent in v0.34.0;
* ``kernel_table`` the table the attention backend sees (V1's own row up to v0.31.0; from v0.32.0
                  ``AttentionGroup.map_to_kernel_block_table`` of the manager-id row) vs kvviz's row;
* ``csr``         FlashInfer's ``_compute_flashinfer_kv_metadata`` (run on a stub builder, with its
                  ``_copy_page_indices_kernel``; lengths through ``get_dcp_local_seq_lens`` where the
                  release's ``build`` converts before counting pages) vs ``compute_csr`` and kvviz's
                  ``kernels.page_indices.flashinfer_csr``;
* ``free_queue``  ``BlockPool.free_blocks`` run on a stub pool vs ``kvviz.core.pool.BlockPool``;
* ``layout``      ``compute_layout_strides`` (v0.29.0+) with the wheel's own ``KVCacheLayout`` on a stub
                  attention spec vs ``kvviz.core.kv_cache_layout.KVCacheGeometry``: the five byte strides
                  and four random byte addresses, random shapes, the six layouts (no kernel-block split,
                  no padded page; v0.34.0's extensible-cache padding is another function, not drawn);
* ``mrv2_width``  an attention group's MRV2 row width: the model runner's ``get_block_table_width`` times
                  ``blocks_per_kv_block`` where ``BlockTables.__init__`` expands (rows of kernel ids, to
                  v0.31.0) vs ``kvviz.core.runner_v2.make_states`` (no DCP; no pure wheel function
                  holds the whole rule, so the product is the oracle's);
* ``mrv2_gather``, ``mrv2_slots``  MRV2's ``BlockTables.gather_block_tables`` /
                  ``compute_slot_mappings`` (the wheel's own methods on a stub, so its launches are
                  mirrored by construction) vs ``kernels.mrv2_tables`` with the release's arguments
                  (``dcp_era``, kernel and KV block sizes, enabled/sharded masks, ``pad_unmapped_rows``,
                  the gather's ``num_computed``/reach/``dirty_rows``) and vs ``kvviz.core.runner_v2`` /
                  ``kvviz.core.slots_v2``, in the id kind both sides hold (manager ids from v0.32.0);
                  they pass raw uint64 data pointers (``_load_ptr``): ``--device cuda``; on the CPU
                  they are skipped ("needs cuda: skipped") unless ``--mrv2-interpret``: Triton 3.9's
                  interpreter does follow host data pointers, but refuses v0.31.0+'s bool mask
                  ``~dcp_sharded | is_local`` under DCP (those cases are counted "not run in the
                  interpreter"). Drawn per case where the release's kernels have them: a group with
                  ``slot_mapping_enabled`` False, a replicated (``dcp_sharded`` False) group, a
                  sliding-window reach with ``num_computed_tokens``, the previous batch's dirty rows,
                  and (v0.31.0+, ``is_real_req``) ``idx_mapping == -1`` rows in the slot mapping's
                  index (none in the gather's: its kernel would load state row -1's count).

The kvviz side of every table goes through one small adapter (``KVVIZ_*`` below), pointed at what
kvviz models for the release (``rules_for(VERSION)``), so it can be re-pointed when that changes. A
case where kvviz does not (yet) match the wheel is a disagreement, printed with its inputs, both
outputs and the kvviz rules involved. Every release in one go, from the cache only:
``scripts/wheel_oracle_all.sh [--device cuda]`` (one summary line per release).

Exit status: 0 every case agreed, 1 a disagreement (or a wheel function failed), 2 bad input
(unknown version, no wheel, --device cuda without CUDA).
"""
from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import random
import sys
import time
import types
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)


def _early_device() -> str:
    argv = sys.argv
    for i, a in enumerate(argv):
        if a == "--device" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--device="):
            return a.split("=", 1)[1]
    return "cpu"


if __name__ == "__main__" and _early_device() == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")

import numpy as np  # noqa: E402

from kvviz.vllm_wheel.extract import Extractor, WheelSource, function_source  # noqa: E402
from kvviz.vllm_wheel.locate import BadInput, cache_dir, find_wheel, normalize_version  # noqa: E402,F401

PAD = -1
POISON = -7                 # what an output buffer holds before a kernel writes it
TABLES = ("width", "v1_slots", "kernel_table", "csr", "free_queue", "layout", "mrv2_width", "mrv2_gather",
          "mrv2_slots")
# the kvviz rules each table depends on (printed with a disagreement)
RULES_OF = {
    "width": ("width_alignment", "kernel_block_table_per_group"),
    "v1_slots": ("kernel_block_table_per_group",),
    "kernel_table": ("kernel_block_table_per_group",),
    "csr": ("csr_dcp_local_lengths", "empty_last_page_len_is_zero"),
    "free_queue": ("prepend_unhashed_on_free", "prepend_when_caching_off"),
    "layout": ("cache_layout_era",),
    "mrv2_width": ("width_alignment", "mrv2_dcp_slots"),
    "mrv2_gather": ("mrv2_swa_gather_zero", "mrv2_zero_dirty_rows", "kernel_block_table_per_group"),
    "mrv2_slots": ("mrv2_dcp_slots", "mrv2_slot_mapping_enabled", "mrv2_dcp_sharded",
                   "kernel_block_table_per_group"),
}
# the files the oracle reads (what --slim keeps)
WHEEL_FILES = ("vllm/v1/worker/block_table.py", "vllm/v1/worker/gpu/block_table.py",
               "vllm/v1/worker/gpu/buffer_utils.py", "vllm/v1/attention/backends/flashinfer.py",
               "vllm/v1/attention/backends/utils.py", "vllm/v1/core/block_pool.py",
               "vllm/v1/kv_cache_interface.py", "vllm/v1/kv_cache_layout.py", "vllm/v1/worker/utils.py",
               "vllm/utils/math_utils.py", "vllm/utils/torch_utils.py", "vllm/triton_utils/__init__.py")


def write_slim(wheel: Path, version: str, out_dir: Path) -> Path:
    """A zip of only the files the oracle reads (a few MB instead of hundreds), same layout."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"vllm-{version}-kvviz_slim.whl"
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        names = set(src.namelist())
        for n in WHEEL_FILES:
            if n in names:
                dst.writestr(n, src.read(n))
        for n in names:
            if n.endswith(".dist-info/METADATA"):
                dst.writestr(n, src.read(n))
    return out


class WheelCode:
    """What the oracle takes from one wheel: functions (None where the release has none) and the
    rules read from its source."""

    def __init__(self, path: Path):
        self.src = WheelSource(path)
        self.ex = Extractor(self.src)
        self.notes: list[str] = []
        self.version = self.src.version()
        # V1 block table
        v1 = self.ex.extract("vllm.v1.worker.block_table",
                             ["get_block_table_width", "_compute_slot_mapping_kernel",
                              "ComputeSlotMappingKernel.kernel", "PAD_SLOT_ID"], tag="v1")
        self.v1_kernel = v1.get("_compute_slot_mapping_kernel") or v1.get("ComputeSlotMappingKernel__kernel")
        self.width_fn = v1.get("get_block_table_width")
        self.width_where = "vllm/v1/worker/block_table.py"
        if self.width_fn is None:
            kvi = self.ex.extract("vllm.v1.kv_cache_interface", ["get_block_table_width"], tag="kvi")
            self.width_fn = kvi.get("get_block_table_width")
            self.width_where = "vllm/v1/kv_cache_interface.py"
        self.pad = getattr(v1.module, "PAD_SLOT_ID", None)
        v1_src = self.src.read("vllm/v1/worker/block_table.py")
        self.has_v1 = v1_src is not None
        # the triton BLOCK_SIZE the wheel launches the V1 kernel with (a literal or the class attr)
        self.v1_block = 1024
        if v1_src and "triton_block_size = " in v1_src:
            self.v1_block = int(v1_src.split("triton_block_size = ")[1].split()[0])
        # V1 rows hold kernel-block ids (expanded at append) up to v0.31.0, manager ids after
        self.v1_rows = None
        if self.has_v1:
            self.v1_rows = "kernel" if function_source(self.src, "vllm.v1.worker.block_table",
                                                       "BlockTable.map_to_kernel_blocks") else "manager"
        # the attention group's kernel-block table (v0.32.0+)
        ag = self.ex.extract("vllm.v1.worker.utils", [], class_subsets={"AttentionGroup": ["map_to_kernel_block_table"]},
                             tag="ag")
        self.attn_group_cls = getattr(ag.module, "AttentionGroup", None) if "AttentionGroup" in ag.found and not any(
            m.startswith("AttentionGroup.") for m in ag.missing) else None
        # FlashInfer CSR
        fi = self.ex.extract("vllm.v1.attention.backends.flashinfer", ["_copy_page_indices_kernel"],
                             class_subsets={"FlashInferMetadataBuilder": ["_compute_flashinfer_kv_metadata"]},
                             tag="fi")
        self.copy_kernel = fi.get("_copy_page_indices_kernel")
        if fi.stubbed:
            self.notes.append(f"flashinfer.py: {', '.join(fi.stubbed)} bound to None (computed by vLLM at import)")
        self.fi_builder = getattr(fi.module, "FlashInferMetadataBuilder", None) if not any(
            m.startswith("FlashInferMetadataBuilder") for m in fi.missing) else None
        ut = self.ex.extract("vllm.v1.attention.backends.utils", ["get_dcp_local_seq_lens"], tag="ut")
        self.local_seq_lens = ut.get("get_dcp_local_seq_lens")
        build = function_source(self.src, "vllm.v1.attention.backends.flashinfer", "FlashInferMetadataBuilder.build") or ""
        i_local, i_pages = build.find("get_dcp_local_seq_lens("), build.find("num_blocks_np = (seq_lens_np")
        self.csr_local = 0 <= i_local < i_pages if i_pages >= 0 else None
        # block pool
        bp = self.ex.extract("vllm.v1.core.block_pool", [], class_subsets={"BlockPool": ["free_blocks"]}, tag="bp")
        self.pool_cls = getattr(bp.module, "BlockPool", None) if not bp.missing else None
        # layout strides (v0.29.0+)
        lay = self.ex.extract("vllm.v1.kv_cache_interface", ["compute_layout_strides"], tag="lay")
        self.layout_fn = lay.get("compute_layout_strides")
        self.layout_enum = None
        if self.layout_fn is not None:
            kl = self.ex.extract("vllm.v1.kv_cache_layout", ["KVCacheLayout"], tag="kl")
            self.layout_enum = kl.get("KVCacheLayout")
            if self.layout_enum is None:
                self.layout_fn = None
        # MRV2
        mr = self.ex.extract("vllm.v1.worker.gpu.block_table", ["_gather_block_tables_kernel",
                                                                "_compute_slot_mappings_kernel"],
                             class_subsets={"BlockTables": ["init_block_table_layout_tensors", "_make_ptr_tensor",
                                                            "gather_block_tables", "compute_slot_mappings"]},
                             tag="mrv2")
        self.mrv2_cls = getattr(mr.module, "BlockTables", None) if not mr.missing else None
        self.mrv2_missing = mr.missing
        gsrc = function_source(self.src, "vllm.v1.worker.gpu.block_table", "BlockTables.append_block_ids") or ""
        self.mrv2_rows = "kernel" if ("bpk" in gsrc or "blocks_per_kv_block" in gsrc) else "manager"
        ksrc = function_source(self.src, "vllm.v1.worker.gpu.block_table", "_compute_slot_mappings_kernel") or ""
        self.mrv2_params = set(_params(getattr(mr.module, "_compute_slot_mappings_kernel", None)))
        self.mrv2_has_real_req = "is_real_req" in ksrc
        gk = getattr(mr.module, "_gather_block_tables_kernel", None)
        self.mrv2_gather_params = set(_params(gk))

    def presence(self) -> dict:
        return {"v1_slot_kernel": self.v1_kernel is not None, "get_block_table_width": self.width_where
                if self.width_fn else None, "copy_page_indices_kernel": self.copy_kernel is not None,
                "flashinfer_kv_metadata": self.fi_builder is not None,
                "free_blocks": self.pool_cls is not None, "compute_layout_strides": self.layout_fn is not None,
                "mrv2_block_tables": self.mrv2_cls is not None, "v1_rows": self.v1_rows,
                "mrv2_rows": self.mrv2_rows, "csr_local_lengths": self.csr_local}


def _params(fn) -> list[str]:
    if fn is None:
        return []
    f = getattr(fn, "fn", fn)
    return list(inspect.signature(f).parameters)


# ----------------------------------------------------------------------------------------------
# random cases
# ----------------------------------------------------------------------------------------------

def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def random_geometry(rng: random.Random, *, dcp: bool = True) -> dict:
    bs = rng.choice([1, 2, 4, 8, 16, 16, 32, 64, 128, 256, rng.randint(1, 256), rng.randint(1, 64)])
    kbs = rng.choice(divisors(bs)) if rng.random() < 0.5 else bs
    world = rng.choice([1, 1, 1, 2, 4, 8, rng.randint(1, 8)]) if dcp else 1
    inter = rng.choice(divisors(bs)) if world > 1 else 1
    return {"block_size": bs, "kernel_block_size": kbs, "dcp_world_size": world,
            "dcp_rank": rng.randrange(world), "interleave": inter}


def random_requests(rng: random.Random, g: dict, ids: list[int] | None = None, max_reqs: int = 4) -> dict:
    vbs = g["block_size"] * g["dcp_world_size"]
    n = rng.randint(1, max_reqs)
    pool = list(range(1, 5000))
    rng.shuffle(pool)
    reqs = []
    for _ in range(n):
        seq = rng.choice([0, 1, rng.randint(1, 3 * vbs), rng.randint(1, min(600, 4 * vbs)),
                          vbs, 2 * vbs, rng.randint(1, 300)])
        q = rng.choice([0, 1, 1, rng.randint(0, min(seq, 24)), min(seq, rng.randint(1, 64))]) if seq else 0
        q = min(q, seq)
        nb = -(-seq // vbs)
        reqs.append({"seq_len": seq, "query_len": q, "block_ids": [pool.pop() for _ in range(nb)]})
    max_blocks = max(1, max(len(r["block_ids"]) for r in reqs) + rng.choice([0, 0, 1, 3]))
    return {"requests": reqs, "max_blocks": max_blocks, "pad_rows": rng.choice([0, 0, 1, 2]),
            "pad_tokens": rng.choice([0, 0, 1, 3, 17])}


def step_arrays(case: dict):
    reqs = case["requests"]
    q = np.array([r["query_len"] for r in reqs], np.int64)
    s = np.array([r["seq_len"] for r in reqs], np.int64)
    n = len(reqs)
    t = int(q.sum())
    t_pad = t + case["pad_tokens"]
    qsl = np.zeros(n + 1, np.int32)
    np.cumsum(q, out=qsl[1:])
    pos = np.zeros(t_pad, np.int64)
    k = 0
    for r in reqs:
        for p in range(r["seq_len"] - r["query_len"], r["seq_len"]):
            pos[k] = p
            k += 1
    return qsl, pos, s, t, t_pad


def kernel_ids(ids, k: int) -> list[int]:
    return [b * k + j for b in ids for j in range(k)] if k > 1 else list(ids)


def compact(obj, limit: int = 400) -> str:
    text = json.dumps(obj, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o), separators=(",", ":"))
    return text if len(text) <= limit else text[:limit] + "..."


# ----------------------------------------------------------------------------------------------
# kvviz's side: one adapter per table (re-point these when kvviz models a rule differently)
# ----------------------------------------------------------------------------------------------

def _geo(g: dict):
    from kvviz.core.geometry import Geometry

    return Geometry(g["block_size"], g["kernel_block_size"], g["dcp_world_size"], g["dcp_rank"], g["interleave"])


def _v1_manager(rules, g: dict) -> bool:
    """Whether kvviz's persistent V1 row holds KV-manager ids under ``rules`` (v0.32.0+,
    ``kernel_block_table_per_group``; ``kvviz.core.block_table.v1_tables``)."""
    return bool(rules.kernel_block_table_per_group) and g["block_size"] != g["kernel_block_size"]


def KVVIZ_width(rules, g: dict, max_blocks: int) -> int:
    """The persistent V1 table's width as kvviz's ``BlockTable`` allocates it: kernel blocks up to
    v0.31.0; from v0.32.0 (``kernel_block_table_per_group``) a split group's row holds manager ids and
    is ``table_width / blocks_per_kv_block`` wide (``BlockTable.width``)."""
    from kvviz.core.block_table import BlockTable

    t = BlockTable(1, max_blocks, geometry=_geo(g), alignment=rules.width_alignment,
                   manager_ids=_v1_manager(rules, g))
    return int(t.width)


def KVVIZ_table(rules, g: dict, case: dict) -> np.ndarray:
    """kvviz's persistent V1 table for a batch (``_batch_block_table``): kernel-block ids up to
    v0.31.0, KV-manager ids from v0.32.0 (split groups); NULL-padded to the case's width."""
    from kvviz.core.step import _batch_block_table

    geo = _geo(g)
    man = _v1_manager(rules, g)
    rows = [r["block_ids"] for r in case["requests"]]
    bt = _batch_block_table(rows, len(rows) + case["pad_rows"], geo, rules.width_alignment, manager_ids=man)
    width = geo.table_width(case["max_blocks"], rules.width_alignment)
    if man:
        width //= geo.blocks_per_kv_block
    if bt.shape[1] < width:
        bt = np.pad(bt, ((0, 0), (0, width - bt.shape[1])))
    return bt


def _kvviz_step(rules, g: dict, case: dict):
    from kvviz.core.step import build_step

    bt = KVVIZ_table(rules, g, case)
    reqs = case["requests"]
    return build_step(bt, [r["seq_len"] for r in reqs], [r["query_len"] for r in reqs], geometry=_geo(g),
                      num_reqs_padded=len(reqs) + case["pad_rows"],
                      num_tokens_padded=sum(r["query_len"] for r in reqs) + case["pad_tokens"],
                      padded_row_fill=rules.padded_row_fill,
                      kernel_block_table_per_group=_v1_manager(rules, g))


def KVVIZ_v1_slots_ref(rules, g: dict, case: dict) -> np.ndarray:
    return _kvviz_step(rules, g, case).slot_mapping


def KVVIZ_v1_slots_kernel(rules, g: dict, case: dict, device: str) -> np.ndarray:
    """kvviz's Triton V1 slot kernel on the kernel-block table the step hands the backend."""
    import torch

    from kvviz_kernels.slot_mapping import slot_mapping

    bt = np.ascontiguousarray(_kvviz_step(rules, g, case).block_table)
    qsl, pos, _, t, t_pad = step_arrays(case)
    n = len(case["requests"])
    out = torch.full((t_pad,), POISON, dtype=torch.int64, device=device)
    maxq = max([r["query_len"] for r in case["requests"]] + [0])
    slot_mapping(torch.from_numpy(qsl).to(device), torch.from_numpy(pos).to(device),
                 torch.from_numpy(bt).to(device), num_reqs=n, block_size=g["block_size"], max_query_len=maxq,
                 kernel_block_size=g["kernel_block_size"], num_tokens_padded=t_pad,
                 dcp_world_size=g["dcp_world_size"], dcp_rank=g["dcp_rank"], interleave=g["interleave"], out=out)
    return out.cpu().numpy()


def KVVIZ_kernel_table(rules, g: dict, case: dict) -> np.ndarray:
    """The rows the attention backend reads, padded rows included: the step's kernel-block table,
    from v0.32.0 ``kvviz.core.kernel_tables.kernel_block_table`` of the manager rows (unused columns
    and padded rows ``0..r-1``)."""
    return _kvviz_step(rules, g, case).block_table


def KVVIZ_csr_lengths(rules, g: dict, seq) -> np.ndarray:
    """The lengths FlashInfer's pages are counted from: rank-local under DCP from v0.30.0."""
    geo = _geo(g)
    if geo.dcp_world_size > 1 and rules.csr_dcp_local_lengths:
        return geo.local_seq_lens(seq).astype(np.int64)
    return np.asarray(seq, np.int64)


def KVVIZ_csr_ref(rules, g: dict, table: np.ndarray, seq) -> tuple:
    from kvviz.core.step import compute_csr

    lens = KVVIZ_csr_lengths(rules, g, seq)
    ip, ind, last = compute_csr(table, lens, g["kernel_block_size"],
                                empty_last_page_len_is_zero=rules.empty_last_page_len_is_zero)
    return ip, ind, last


def KVVIZ_csr_kernel(rules, g: dict, table: np.ndarray, seq, device: str) -> tuple:
    import torch

    from kvviz_kernels.page_indices import flashinfer_csr

    lens = KVVIZ_csr_lengths(rules, g, seq)
    ip, ind, last = flashinfer_csr(torch.from_numpy(np.ascontiguousarray(table)).to(device),
                                   torch.from_numpy(lens.astype(np.int32)).to(device), lens,
                                   g["kernel_block_size"],
                                   empty_last_page_len_is_zero=rules.empty_last_page_len_is_zero)
    return ip.cpu().numpy(), ind.cpu().numpy(), last.cpu().numpy()


def KVVIZ_free_queue(rules, case: dict) -> list[int]:
    from kvviz.core.pool import BlockPool

    pool = BlockPool(case["num_blocks"], enable_caching=case["caching"], profile=rules)
    blocks = _kvviz_pool_setup(pool, case)
    pool.free_blocks([blocks[i] for i in case["free_order"]])
    return pool.free_block_ids()


def _kvviz_pool_setup(pool, case) -> dict:
    """Allocate every block of the case (ref counts as the case says, hashes on the hashed ones)."""
    taken = pool.get_new_blocks(case["num_blocks"] - 1 - case["left_free"])
    by_id = {b.block_id: b for b in taken}
    for b in taken:
        b.ref_cnt = case["refs"].get(b.block_id, 1)
        if b.block_id in case["hashed"]:
            b.block_hash = b"h%d" % b.block_id
    by_id[0] = pool.null_block
    return by_id


def KVVIZ_layout(rules, spec: dict) -> dict:
    """``KVCacheGeometry``'s byte strides (logical L, B, H, N, C) and the byte address of each of
    ``spec["coords"]`` (layer, block, token, head, kv, dim)."""
    from kvviz.core.kv_cache_layout import AXES, KVCacheGeometry

    kg = KVCacheGeometry(spec["num_layers"], spec["num_blocks"], spec["block_size"], spec["num_kv_heads"],
                         spec["head_dim"], spec["dtype"], spec["layout"], head_dim_v=spec["head_dim_v"])
    st = kg.strides
    return {"strides": [int(st[a]) for a in AXES],
            "addresses": [int(kg.address(*c)) for c in spec["coords"]]}


def _mrv2_manager(rules) -> bool:
    """kvviz's MRV2 state and input rows hold KV-manager ids from v0.32.0 (``mrv2_dcp_slots``
    "manager_ids"; ``runner_v2.make_states``), kernel-block ids before."""
    return rules.mrv2_dcp_slots == "manager_ids"


def _mrv2_case_rows(rules, case: dict):
    """(state rows, counts, prior input rows) per group in the id kind kvviz's rules say."""
    if _mrv2_manager(rules):
        return case["mgr_state"], case["mgr_num_blocks"], case["mgr_input_before"]
    return case["kv_state"], case["kv_num_blocks"], case["input_before"]


def KVVIZ_mrv2_gather(rules, case: dict, device: str) -> list[np.ndarray]:
    """kvviz's MRV2 gather kernel with the release's arguments: manager-id rows from v0.32.0; v0.33.0
    (``mrv2_swa_gather_zero``) the sliding-window reach, ``num_computed`` by state row and the
    tokens one entry covers; (``mrv2_zero_dirty_rows``) the previous batch's row count. Every row
    of the input tables comes back."""
    import torch

    from kvviz_kernels.mrv2_tables import gather_block_tables, stack_tables

    state_np, nb_np, before_np = _mrv2_case_rows(rules, case)
    man = _mrv2_manager(rules)
    state = [torch.from_numpy(np.array(s, copy=True)).to(device) for s in state_np]
    inp = [torch.from_numpy(np.array(s, copy=True)).to(device) for s in before_np]
    st, _ = stack_tables(state)
    it, _ = stack_tables(inp)
    nb = torch.from_numpy(np.stack(nb_np).astype(np.int32)).to(device)
    idx = torch.from_numpy(np.array(case["idx_mapping"], np.int32)).to(device)
    kw = {}
    if rules.mrv2_swa_gather_zero:
        kw = {"num_computed": torch.from_numpy(case["num_computed_tokens"].astype(np.int32)).to(device),
              "sliding_window_reach": list(case["sliding_window_reach"]),
              "block_sizes": [gg["block_size"] if man else gg["kernel_block_size"] for gg in case["groups"]]}
    gather_block_tables(st, nb, idx, case["num_reqs_padded"], it, widths=[s.shape[1] for s in state_np],
                        dirty_rows=case["previous_num_reqs"] if rules.mrv2_zero_dirty_rows else 0, **kw)
    return [it[g, :, :s.shape[1]].cpu().numpy() for g, s in enumerate(state_np)]


def KVVIZ_mrv2_gather_ref(rules, case: dict) -> list[np.ndarray]:
    """kvviz.core.runner_v2's gather (numpy) on the same state, under the release's rules
    (``RequestStates(rules=...)``: manager ids, sliding-window reach, dirty rows)."""
    from kvviz.core.geometry import Geometry
    from kvviz.core.runner_v2 import GroupTables, RequestStates

    state_np, nb_np, before_np = _mrv2_case_rows(rules, case)
    groups = []
    for gi, s in enumerate(state_np):
        gg = case["groups"][gi]
        gt = GroupTables(Geometry(gg["block_size"], gg["kernel_block_size"]), s.shape[1], max_num_reqs=s.shape[0],
                         manager_ids=_mrv2_manager(rules), reach=int(case["sliding_window_reach"][gi]))
        gt.state[:] = s
        gt.input[:] = before_np[gi]
        gt.num_blocks[:] = nb_np[gi]
        groups.append(gt)
    rs = RequestStates(state_np[0].shape[0], groups, rules=rules)
    rs.num_dirty_rows = case["previous_num_reqs"]
    idx = np.array(case["idx_mapping"], np.int32)
    rs.gather(idx, case["num_reqs_padded"], num_computed=[int(case["num_computed_tokens"][s]) for s in idx])
    return [g.input.copy() for g in groups]


def KVVIZ_mrv2_slots(rules, case: dict, device: str) -> np.ndarray:
    """kvviz's MRV2 slot kernel with the release's arguments: ``dcp_era`` = ``mrv2_dcp_slots``, the
    kernel and KV block sizes, the enabled mask (v0.29.0+), the sharded mask and PAD for
    ``idx_mapping`` -1 rows (v0.31.0+, ``mrv2_dcp_sharded``)."""
    import torch

    from kvviz_kernels.mrv2_tables import compute_slot_mappings, stack_tables

    state_np, _, _ = _mrv2_case_rows(rules, case)
    state = [torch.from_numpy(np.array(s, copy=True)).to(device) for s in state_np]
    st, _ = stack_tables(state)
    qsl, pos = case["qsl"], case["pos"]
    out = torch.full((len(state), case["max_num_tokens"]), POISON, dtype=torch.int64, device=device)
    compute_slot_mappings(st, torch.from_numpy(np.array(case["slot_idx_mapping"], np.int32)).to(device),
                          torch.from_numpy(qsl).to(device), torch.from_numpy(pos).to(device),
                          [gg["kernel_block_size"] for gg in case["groups"]], out,
                          widths=[s.shape[1] for s in state_np],
                          cp_size=case["cp"]["dcp_world_size"], cp_rank=case["cp"]["dcp_rank"],
                          cp_interleave=case["cp"]["interleave"], dcp_era=rules.mrv2_dcp_slots,
                          kv_block_sizes=[gg["block_size"] for gg in case["groups"]],
                          slot_mapping_enabled=case["slot_mapping_enabled"] if rules.mrv2_slot_mapping_enabled
                          else None,
                          dcp_sharded=case["dcp_sharded"] if rules.mrv2_dcp_sharded else None,
                          pad_unmapped_rows=rules.mrv2_dcp_sharded)
    return out.cpu().numpy()


def KVVIZ_mrv2_slots_ref(rules, case: dict) -> np.ndarray:
    """``kvviz.core.slots_v2.mrv2_slot_mapping`` per group (the release's DCP era, enabled and
    sharded flags, idx -1 rows) on a ``Geometry(block_size, kernel_block_size, CP, rank, interleave)``:
    the interleave divides the KV block (vLLM's config check), not necessarily the kernel block."""
    from kvviz.core.geometry import Geometry
    from kvviz.core.slots_v2 import mrv2_slot_mapping

    cp = case["cp"]
    state_np, _, _ = _mrv2_case_rows(rules, case)
    out = []
    for gi, gg in enumerate(case["groups"]):
        geo = Geometry(gg["block_size"], gg["kernel_block_size"], cp["dcp_world_size"], cp["dcp_rank"],
                       cp["interleave"])
        out.append(mrv2_slot_mapping(rules, state_np[gi], case["slot_idx_mapping"], case["qsl"], case["pos"],
                                     case["max_num_tokens"], geometry=geo,
                                     enabled=case["slot_mapping_enabled"][gi], sharded=case["dcp_sharded"][gi]))
    return np.stack(out)


def KVVIZ_mrv2_width(rules, block_size: int, kernel_block_size: int, max_model_len: int) -> int:
    """One attention group's MRV2 row width from ``kvviz.core.runner_v2.make_states`` (kernel blocks
    up to v0.31.0, manager blocks from v0.32.0)."""
    from kvviz.core.geometry import Geometry
    from kvviz.core.runner_v2 import make_states

    geo = Geometry(block_size, kernel_block_size)
    cfg = types.SimpleNamespace(geometry=geo, max_model_len=max_model_len, max_num_reqs=1,
                                groups=[types.SimpleNamespace(kind="full", sliding_window=None)])
    rs = make_states(cfg, rules, [types.SimpleNamespace(geometry=geo)], [], set())
    return int(rs.groups[0].width)


# ----------------------------------------------------------------------------------------------
# the wheel's side
# ----------------------------------------------------------------------------------------------

def wheel_v1_table(code: WheelCode, g: dict, case: dict) -> np.ndarray:
    bs, kbs = g["block_size"], g["kernel_block_size"]
    k = bs // kbs
    width = wheel_width(code, g, case["max_blocks"])
    n = len(case["requests"])
    bt = np.zeros((n + case["pad_rows"], width), np.int32)
    for i, r in enumerate(case["requests"]):
        ids = kernel_ids(r["block_ids"], k) if _rows_kind(code) == "kernel" else r["block_ids"]
        bt[i, : len(ids)] = ids
    return bt


def _rows_kind(code: WheelCode) -> str:
    """What a persistent row holds: V1's rule, or MRV2's where V1 is gone (v0.34.0)."""
    return code.v1_rows or code.mrv2_rows


def wheel_width(code: WheelCode, g: dict, max_blocks: int) -> int:
    fn = code.width_fn
    if "kernel_block_size" in _params(fn):
        return int(fn(max_blocks, g["block_size"], g["kernel_block_size"]))
    return int(fn(max_blocks, g["block_size"]))


def wheel_v1_slots(code: WheelCode, g: dict, case: dict, device: str) -> np.ndarray:
    """The V1 kernel, launched as ``BlockTable.compute_slot_mapping`` launches it: grid
    (num_reqs + 1,), num_tokens = the real tokens, max_num_tokens = the buffer (here the padded
    count), BLOCK_SIZE = the wheel's triton block size; arguments matched by name."""
    import torch

    bt = torch.from_numpy(wheel_v1_table(code, g, case)).to(device)
    qsl, pos, _, t, t_pad = step_arrays(case)
    out = torch.full((t_pad,), POISON, dtype=torch.int64, device=device)
    n = len(case["requests"])
    values = {
        "num_tokens": t, "max_num_tokens": t_pad,
        "query_start_loc_ptr": torch.from_numpy(qsl).to(device),
        "positions_ptr": torch.from_numpy(pos[: max(t, 1)] if t else pos[:1]).to(device),
        "block_table_ptr": bt, "block_table_stride": bt.stride(0),
        "block_size": g["kernel_block_size"], "slot_mapping_ptr": out,
        "KV_CACHE_BLOCK_SIZE": g["block_size"], "BLOCKS_PER_KV_BLOCK": g["block_size"] // g["kernel_block_size"],
        "TOTAL_CP_WORLD_SIZE": g["dcp_world_size"], "TOTAL_CP_RANK": g["dcp_rank"],
        "CP_KV_CACHE_INTERLEAVE_SIZE": g["interleave"], "PAD_ID": code.pad, "BLOCK_SIZE": code.v1_block,
    }
    names = _params(code.v1_kernel)
    unknown = [p for p in names if p not in values]
    if unknown:
        raise RuntimeError(f"V1 kernel parameters unknown to the oracle: {unknown}")
    code.v1_kernel[(n + 1,)](**{p: values[p] for p in names})
    return out.cpu().numpy()


def wheel_kernel_table(code: WheelCode, g: dict, case: dict, device: str) -> np.ndarray:
    """The table the attention backend reads: V1's row itself while rows hold kernel ids; from
    v0.32.0 ``AttentionGroup.map_to_kernel_block_table`` of the manager-id rows (run on a stub)."""
    import torch

    bt = wheel_v1_table(code, g, case)          # real rows, then the padded rows (0: the null block)
    if _rows_kind(code) == "kernel":
        return bt
    k = g["block_size"] // g["kernel_block_size"]
    if code.attn_group_cls is None:
        raise RuntimeError("AttentionGroup.map_to_kernel_block_table absent although rows hold manager ids")
    ag = code.attn_group_cls.__new__(code.attn_group_cls)
    ag.kernel_block_size = g["kernel_block_size"] if k > 1 else None
    ag.kv_cache_spec = types.SimpleNamespace(block_size=g["block_size"])
    ag.kernel_block_table = torch.zeros((1, bt.shape[0], bt.shape[1] * k), dtype=torch.int32, device=device)
    ag.kernel_block_offsets = torch.arange(k, dtype=torch.int32, device=device)
    ag.kernel_block_stride = None
    return ag.map_to_kernel_block_table(torch.from_numpy(bt).to(device)).cpu().numpy()


class _Buf:
    """A CpuGpuBuffer stand-in: .cpu, .np (its numpy view), .gpu."""

    def __init__(self, n: int, device: str, dtype):
        import torch

        self.cpu = torch.zeros(n, dtype=dtype)
        self.np = self.cpu.numpy()
        self.gpu = torch.zeros(n, dtype=dtype, device=device)

    def copy_to_gpu(self, n: int | None = None):
        n = self.cpu.numel() if n is None else n
        self.gpu[:n].copy_(self.cpu[:n])
        return self.gpu[:n]

    def __getitem__(self, item):          # releases that keep a plain device tensor slice it
        return self.gpu[item]


def wheel_csr(code: WheelCode, g: dict, table: np.ndarray, seq, device: str) -> tuple:
    """``_compute_flashinfer_kv_metadata`` on a stub builder: the page counts from the lengths the
    release's ``build`` uses (rank-local through ``get_dcp_local_seq_lens`` where it converts before
    counting), its ``_copy_page_indices_kernel`` launch, its last_page_len rule."""
    import torch

    n = len(seq)
    page = g["kernel_block_size"]
    seq_t = torch.tensor(np.asarray(seq, np.int64), dtype=torch.int32)
    if g["dcp_world_size"] > 1 and code.csr_local:
        seq_t = code.local_seq_lens(seq_t, g["dcp_world_size"], g["dcp_rank"], g["interleave"])
    seq_np = seq_t.numpy().astype(np.int32)
    num_blocks_np = (seq_np + (page - 1)) // page
    b = code.fi_builder.__new__(code.fi_builder)
    total = int(num_blocks_np.sum()) + 8
    b.paged_kv_indptr = _Buf(n + 1, device, torch.int32)
    b.paged_kv_indptr_cpu_buffer = torch.zeros(n + 1, dtype=torch.int32)
    b.paged_kv_indices = _Buf(total, device, torch.int32)
    b.paged_kv_indices.gpu.fill_(POISON)
    b.paged_kv_last_page_len = _Buf(n, device, torch.int32)
    bt = torch.from_numpy(np.ascontiguousarray(table)).to(device)
    ind = b._compute_flashinfer_kv_metadata(num_blocks_np, seq_np, bt, n, page)
    ip = b.paged_kv_indptr.gpu[: n + 1].cpu().numpy()
    return ip, ind.cpu().numpy(), b.paged_kv_last_page_len.gpu[:n].cpu().numpy()


class _WBlock:
    __slots__ = ("block_id", "ref_cnt", "block_hash", "is_null", "pool", "prev_free_block", "next_free_block")

    def __init__(self, i):
        self.block_id, self.ref_cnt, self.block_hash, self.is_null, self.pool = i, 0, None, False, None


class _WQueue:
    def __init__(self, ids):
        self.ids = list(ids)

    def prepend_n(self, blocks):
        self.ids[:0] = [b.block_id for b in blocks]

    def append_n(self, blocks):
        self.ids += [b.block_id for b in blocks]


def wheel_free_queue(code: WheelCode, case: dict) -> list[int]:
    """``BlockPool.free_blocks`` on a stub pool: the same pre-state as kvviz's (blocks 1..N-1
    handed out in order, ``left_free`` of them still queued)."""
    pool = code.pool_cls.__new__(code.pool_cls)
    pool.enable_caching = case["caching"]
    pool._weak_self = None
    n = case["num_blocks"]
    blocks = {i: _WBlock(i) for i in range(n)}
    blocks[0].is_null = True
    taken = list(range(1, n - case["left_free"]))
    for i in taken:
        blocks[i].ref_cnt = case["refs"].get(i, 1)
        if i in case["hashed"]:
            blocks[i].block_hash = b"h%d" % i
    pool.free_block_queue = _WQueue(range(n - case["left_free"], n))
    pool.free_blocks([blocks[i] for i in case["free_order"]])
    return pool.free_block_queue.ids


# ----------------------------------------------------------------------------------------------
# MRV2 (CUDA only)
# ----------------------------------------------------------------------------------------------

def random_mrv2_case(rng: random.Random, code: WheelCode) -> dict:
    cp = random_geometry(rng)
    cp = {k: cp[k] for k in ("dcp_world_size", "dcp_rank")}
    n_groups = rng.randint(1, 4)
    groups = []
    for _ in range(n_groups):
        bs = rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256, rng.randint(1, 256)])
        groups.append({"block_size": bs, "kernel_block_size": rng.choice(divisors(bs)) if rng.random() < 0.5 else bs})
    common = math.gcd(*[gg["block_size"] for gg in groups])
    cp["interleave"] = rng.choice(divisors(common)) if cp["dcp_world_size"] > 1 else 1
    max_num_reqs = rng.randint(2, 8)
    n = rng.randint(1, max_num_reqs)
    pad_rows = rng.randint(0, max_num_reqs - n)
    states = rng.sample(range(max_num_reqs), n)
    seqs = [rng.choice([1, rng.randint(1, 200), rng.randint(1, 600)]) for _ in range(n)]
    qs = [min(s, rng.choice([1, 1, rng.randint(1, 24)])) for s in seqs]
    qsl = np.zeros(n + 1, np.int32)
    np.cumsum(qs, out=qsl[1:])
    t = int(qsl[-1])
    max_num_tokens = t + rng.choice([0, 1, 5, 40])
    pos = np.zeros(max_num_tokens, np.int64)
    k = 0
    for s, q in zip(seqs, qs):
        pos[k:k + q] = np.arange(s - q, s)
        k += q
    # a replicated (dcp_sharded False) group stores every position on every rank, so its rows are
    # sized by the KV block alone (v0.31.0 AttentionSpec.dcp_sharded: widths divide by DCP only
    # when sharded); drawn first so the tables can be sized for it
    sharded = [True] * n_groups
    if "dcp_sharded" in code.mrv2_params and cp["dcp_world_size"] > 1 and rng.random() < 0.4:
        sharded[rng.randrange(n_groups)] = False          # a replicated group under DCP
    kv_state, mgr_state, kv_nb, mgr_nb, before = [], [], [], [], []
    for gi, gg in enumerate(groups):
        vbs = gg["block_size"] * (cp["dcp_world_size"] if sharded[gi] else 1)
        r = gg["block_size"] // gg["kernel_block_size"]
        need = max(-(-s // vbs) for s in seqs)
        mwidth = need + rng.choice([0, 1, 4])
        mgr = np.zeros((max_num_reqs, mwidth), np.int32)
        kv = np.zeros((max_num_reqs, mwidth * r), np.int32)
        mnb = np.zeros(max_num_reqs, np.int32)
        for si in range(max_num_reqs):      # every state row holds something (stale rows too)
            cnt = rng.randint(0, mwidth)
            ids = rng.sample(range(1, 3000), cnt)
            mgr[si, :cnt] = ids
            kv[si, : cnt * r] = kernel_ids(ids, r)
            mnb[si] = cnt
        for b, si in enumerate(states):      # the scheduled ones hold their sequence
            cnt = -(-seqs[b] // vbs)
            cnt = max(cnt, int(mnb[si]) if rng.random() < 0.3 else cnt)
            ids = rng.sample(range(3000, 6000), cnt)
            mgr[si] = 0
            kv[si] = 0
            mgr[si, :cnt] = ids
            kv[si, : cnt * r] = kernel_ids(ids, r)
            mnb[si] = cnt
        mgr_state.append(mgr)
        kv_state.append(kv)
        mgr_nb.append(mnb)
        kv_nb.append(mnb * r)
        # what the input tables held before (stale rows and tails), as manager ids; kernel ids are
        # their expansion (the same prior state for both eras)
        before.append(np.array(rng.choices(range(7000, 7100), k=max_num_reqs * mwidth), np.int32).reshape(
            max_num_reqs, mwidth))
    # release features, drawn only where the wheel's kernels have them
    enabled = [True] * n_groups
    if "slot_mapping_enabled" in code.mrv2_params and rng.random() < 0.25:
        enabled[rng.randrange(n_groups)] = False          # a circular-buffer group: every token PAD
    reach = [0] * n_groups
    if "MASK_SLIDING_WINDOW" in code.mrv2_gather_params and cp["dcp_world_size"] == 1 and rng.random() < 0.3:
        reach[rng.randrange(n_groups)] = rng.choice([1, 4, 16, 100])   # a sliding-window group's reach
    dirty = 0
    if "_num_dirty_rows" in (function_source(code.src, "vllm.v1.worker.gpu.block_table",
                                             "BlockTables.gather_block_tables") or "") and rng.random() < 0.3:
        dirty = rng.randint(0, max_num_reqs)              # the previous batch's num_reqs
    num_computed = np.zeros(max_num_reqs, np.int32)
    for b, si in enumerate(states):
        num_computed[si] = seqs[b] - qs[b]
    # the slot mapping's idx_mapping: v0.31.0+ marks a dummy / excluded row with -1 (it owns no block:
    # PAD); the gather never gets one (it would read state row -1), so only the slots' copy has them
    slot_idx = list(states)
    if code.mrv2_has_real_req and rng.random() < 0.3:
        for b in rng.sample(range(n), rng.randint(1, n)):
            slot_idx[b] = -1
    return {"cp": cp, "groups": groups, "idx_mapping": states, "slot_idx_mapping": slot_idx, "slot_mapping_enabled": enabled,
            "dcp_sharded": sharded, "sliding_window_reach": reach, "previous_num_reqs": dirty,
            "num_computed_tokens": num_computed, "num_reqs_padded": n + pad_rows,
            "qsl": qsl, "pos": pos, "max_num_tokens": max_num_tokens, "kv_state": kv_state,
            "kv_num_blocks": kv_nb, "mgr_state": mgr_state, "mgr_num_blocks": mgr_nb,
            "input_before": [_expand(b, gg) for b, gg in zip(before, groups)], "mgr_input_before": before,
            "seqs": seqs}


def _wheel_block_tables(code: WheelCode, case: dict, device: str):
    """A stub ``BlockTables``: the attributes every release's ``__init__`` sets that the wheel's
    ``init_block_table_layout_tensors`` / ``gather_block_tables`` / ``compute_slot_mappings`` read,
    then the wheel's own ``init_block_table_layout_tensors``."""
    import torch

    bt = code.mrv2_cls.__new__(code.mrv2_cls)
    groups = case["groups"]
    manager = code.mrv2_rows == "manager"
    bt.block_sizes = [gg["block_size"] for gg in groups]
    bt.kernel_block_sizes = [gg["kernel_block_size"] for gg in groups]
    bt.max_num_reqs = case["kv_state"][0].shape[0]
    bt.max_num_batched_tokens = case["max_num_tokens"]
    bt.device = torch.device(device)
    bt.cp_size, bt.cp_rank, bt.cp_interleave = (case["cp"]["dcp_world_size"], case["cp"]["dcp_rank"],
                                                 case["cp"]["interleave"])
    bt.num_kv_cache_groups = len(groups)
    bt.blocks_per_kv_block = [gg["block_size"] // gg["kernel_block_size"] for gg in groups]
    bt._slot_mapping_enabled = list(case["slot_mapping_enabled"])
    bt.dcp_sharded = torch.tensor(case["dcp_sharded"], dtype=torch.bool, device=device)
    bt._sliding_window_reach = list(case["sliding_window_reach"])
    bt.has_sliding_window_groups = any(r > 0 for r in case["sliding_window_reach"])
    bt._num_dirty_rows = case["previous_num_reqs"]
    bt.redirect_writes_to_null_block = False
    state = case["mgr_state"] if manager else case["kv_state"]
    nb = case["mgr_num_blocks"] if manager else case["kv_num_blocks"]
    bt.block_tables = [types.SimpleNamespace(gpu=torch.from_numpy(s.copy()).to(device)) for s in state]
    bt.num_blocks = types.SimpleNamespace(gpu=torch.from_numpy(np.stack(nb).astype(np.int32)).to(device))
    before = case["mgr_input_before"] if manager else case["input_before"]
    # copies: on the CPU torch.from_numpy shares the case's arrays, which the kvviz side reads after
    bt.input_block_tables = [torch.from_numpy(np.array(b, copy=True)).to(device) for b in before]
    bt.slot_mappings = torch.full((len(groups), case["max_num_tokens"]), POISON, dtype=torch.int64, device=device)
    bt.init_block_table_layout_tensors()
    return bt


def wheel_mrv2_gather(code: WheelCode, bt, case: dict, device: str) -> list[np.ndarray]:
    """``BlockTables.gather_block_tables`` of the wheel on the stub (its own launch)."""
    import torch

    idx = torch.tensor(case["idx_mapping"], dtype=torch.int32, device=device)
    kw = {}
    if "num_computed_tokens" in _params(bt.gather_block_tables):
        kw["num_computed_tokens"] = torch.from_numpy(case["num_computed_tokens"]).to(device)
    bt.gather_block_tables(idx, case["num_reqs_padded"], **kw)
    # every row of the persistent input tables (rows past num_reqs_padded too: v0.33.0 zeroes the
    # previous batch's dirty rows)
    return [t.cpu().numpy() for t in bt.input_block_tables]


def wheel_mrv2_slots(code: WheelCode, bt, case: dict, device: str) -> np.ndarray:
    """``BlockTables.compute_slot_mappings`` of the wheel on the stub (its own launch); the whole
    buffer comes back (the PAD tail up to max_num_tokens included)."""
    import torch

    idx = torch.tensor(case["slot_idx_mapping"], dtype=torch.int32, device=device)
    bt.compute_slot_mappings(idx, torch.from_numpy(case["qsl"]).to(device),
                             torch.from_numpy(case["pos"]).to(device), case["max_num_tokens"])
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()
    return bt.slot_mappings.cpu().numpy()


def random_layout_spec(rng: random.Random) -> dict:
    from kvviz.constants import DTYPE_BYTES
    from kvviz.core.kv_cache_layout import KV_CACHE_LAYOUTS

    spec = {"layout": rng.choice(KV_CACHE_LAYOUTS), "num_layers": rng.choice([1, 1, 2, 3, rng.randint(1, 80)]),
            "num_blocks": rng.choice([1, 2, rng.randint(1, 64), rng.randint(1, 100000)]),
            "block_size": rng.choice([1, 16, 32, 64, rng.randint(1, 256)]),
            "num_kv_heads": rng.choice([1, 2, 8, rng.randint(1, 64)]),
            "head_dim": rng.choice([64, 128, rng.randint(1, 256)]), "dtype": rng.choice(sorted(DTYPE_BYTES))}
    spec["head_dim_v"] = spec["head_dim"] if rng.random() < 0.7 else rng.randint(0, 256)
    coords = []
    for _ in range(4):
        kv = "v" if spec["head_dim_v"] and rng.random() < 0.5 else "k"
        coords.append((rng.randrange(spec["num_layers"]), rng.randrange(spec["num_blocks"]),
                       rng.randrange(spec["block_size"]), rng.randrange(spec["num_kv_heads"]), kv,
                       rng.randrange(spec["head_dim"] if kv == "k" else spec["head_dim_v"])))
    spec["coords"] = coords
    return spec


def wheel_layout(code: WheelCode, spec: dict) -> dict:
    """``compute_layout_strides(spec, num_blocks, num_layers, KVCacheLayout[name])`` of the wheel on
    a stub attention spec (one token a kernel state, C = (D + Dv) * dtype bytes, no padded page, no
    kernel-block split), and each coordinate's byte address from those strides: layer, block, head,
    token dotted with them, plus K (0) or V (D * dtype bytes) and dim * dtype bytes within C."""
    from kvviz.constants import DTYPE_BYTES

    es = DTYPE_BYTES[spec["dtype"]]
    stub = types.SimpleNamespace(block_size=spec["block_size"], num_heads=spec["num_kv_heads"],
                                 get_num_kernel_states=lambda kbs: kbs,
                                 state_content_size_bytes=(spec["head_dim"] + spec["head_dim_v"]) * es,
                                 page_size_padded=None)
    st = code.layout_fn(stub, spec["num_blocks"], spec["num_layers"], code.layout_enum[spec["layout"]])
    addrs = []
    for layer, block, token, head, kv, dim in spec["coords"]:
        c = (0 if kv == "k" else spec["head_dim"] * es) + dim * es
        addrs.append(int(layer * st[0] + block * st[1] + head * st[2] + token * st[3] + c * st[4]))
    return {"strides": [int(x) for x in st], "addresses": addrs}


def wheel_mrv2_width(code: WheelCode, block_size: int, kernel_block_size: int, max_model_len: int) -> int:
    """One attention group's MRV2 row width as the wheel's model runner and ``BlockTables.__init__``
    make it: ``get_block_table_width(cdiv(max_model_len, block_size), block_size)`` (the runner's call,
    no DCP), times ``blocks_per_kv_block`` where ``__init__`` expands (rows of kernel ids)."""
    mb = -(-max_model_len // block_size)
    w = int(code.width_fn(mb, block_size))
    return w * (block_size // kernel_block_size) if code.mrv2_rows == "kernel" else w


# ----------------------------------------------------------------------------------------------
# the run
# ----------------------------------------------------------------------------------------------

class Tally:
    def __init__(self):
        self.t: dict[str, dict] = {}

    def add(self, table: str, ok: bool, detail=None, *, note: str | None = None):
        e = self.t.setdefault(table, {"cases": 0, "agreed": 0, "first_disagreement": None, "notes": []})
        e["cases"] += 1
        e["agreed"] += bool(ok)
        if not ok:
            # which features the disagreeing cases had ("plain": none of them, look there first)
            feats = (detail or {}).get("features") or ["plain"]
            by = e.setdefault("disagreements_by_feature", {})
            for f in feats:
                by[f] = by.get(f, 0) + 1
            combo = " + ".join(sorted(feats))
            byc = e.setdefault("disagreements_by_feature_set", {})
            byc[combo] = byc.get(combo, 0) + 1
        if not ok and e["first_disagreement"] is None:
            e["first_disagreement"] = detail
        if note and note not in e["notes"]:
            e["notes"].append(note)

    def skip(self, table: str, note: str):
        e = self.t.setdefault(table, {"cases": 0, "agreed": 0, "first_disagreement": None, "notes": []})
        if note not in e["notes"]:
            e["notes"].append(note)
        e["skipped"] = True

    def interp_skip(self, table: str, note: str):
        e = self.t.setdefault(table, {"cases": 0, "agreed": 0, "first_disagreement": None, "notes": []})
        e["interpreter_skipped"] = e.get("interpreter_skipped", 0) + 1
        if note not in e["notes"]:
            e["notes"].append(note)

    def error(self, table: str, err: str, detail):
        e = self.t.setdefault(table, {"cases": 0, "agreed": 0, "first_disagreement": None, "notes": []})
        e["cases"] += 1
        e.setdefault("errors", 0)
        e["errors"] += 1
        if e["first_disagreement"] is None:
            e["first_disagreement"] = {**detail, "error": err[:300]}


def _eq(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _rules_detail(rules, table):
    return {f: getattr(rules, f) for f in RULES_OF[table]}


def _features(g: dict) -> list[str]:
    out = []
    if g["kernel_block_size"] != g["block_size"]:
        out.append("kernel-block split")
    if g["dcp_world_size"] > 1:
        out.append("dcp")
    return out


def run_oracle(version: str, code: WheelCode, *, device: str = "cpu", cases: int = 1000, seed: int = 0,
               tables=TABLES, mrv2_interpret: bool = False, mrv2_cases: int | None = None) -> dict:
    from kvviz.core.versions import rules_for

    rules = rules_for(f"v{version}")
    tally = Tally()
    rng = random.Random(seed)
    t0 = time.time()
    if "width" in tables:
        if code.width_fn is None:
            tally.skip("width", "get_block_table_width absent in this release")
        else:
            for _ in range(cases):
                g = random_geometry(rng, dcp=False)
                mb = rng.choice([1, 2, 3, rng.randint(1, 64), rng.randint(1, 5000)])
                w, k = wheel_width(code, g, mb), KVVIZ_width(rules, g, mb)
                tally.add("width", w == k, {"features": _features(g),
                                            "block_size": g["block_size"], "kernel_block_size": g["kernel_block_size"],
                                            "max_num_blocks": mb, "wheel": w, "kvviz": k,
                                            "kvviz_rules": _rules_detail(rules, "width")},
                          note=f"wheel: {code.width_where} get_block_table_width")
                if "kernel_block_size" not in _params(code.width_fn):
                    # v0.32.0+: the attention group's kernel-block table is width x (bs / kbs) wide
                    # (AttentionGroup.__init__); kvviz's table_width counts those columns
                    wk = w * (g["block_size"] // g["kernel_block_size"])
                    kk = int(_geo(g).table_width(mb, rules.width_alignment))
                    tally.add("width_kernel_table", wk == kk, {"features": _features(g), "block_size": g["block_size"],
                              "kernel_block_size": g["kernel_block_size"], "max_num_blocks": mb, "wheel": wk,
                              "kvviz": kk}, note="wheel width x blocks_per_kv_block (AttentionGroup)")
    step_tables = [t for t in ("v1_slots", "kernel_table", "csr") if t in tables]
    for t in step_tables:
        if (t == "v1_slots" or (t == "kernel_table" and code.attn_group_cls is None)) and not code.has_v1:
            tally.skip(t, "absent in this release (vllm/v1/worker/block_table.py deleted)")
        if t == "csr" and (code.fi_builder is None or code.copy_kernel is None):
            tally.skip(t, "FlashInfer _compute_flashinfer_kv_metadata / _copy_page_indices_kernel absent")
    if step_tables and code.width_fn is not None:
        for _ in range(cases):
            g = random_geometry(rng)
            case = random_requests(rng, g)
            inputs = {**g, **case}
            feats = _features(g)
            if "v1_slots" in tables and code.has_v1:
                try:
                    w = wheel_v1_slots(code, g, case, device)
                    ref = KVVIZ_v1_slots_ref(rules, g, case)
                    ok = _eq(w, ref)
                    tally.add("v1_slots", ok, {"inputs": inputs, "features": feats, "wheel": w, "kvviz_build_step": ref,
                                               "kvviz_rules": _rules_detail(rules, "v1_slots")})
                    ker = KVVIZ_v1_slots_kernel(rules, g, case, device)
                    tally.add("v1_slots_kvviz_kernel", _eq(w, ker),
                              {"inputs": inputs, "features": feats, "wheel": w, "kvviz_kernel": ker})
                except Exception as e:  # noqa: BLE001
                    tally.error("v1_slots", repr(e), {"inputs": inputs})
            if "kernel_table" in tables and (code.has_v1 or code.attn_group_cls is not None):
                try:
                    w = wheel_kernel_table(code, g, case, device)
                    k = KVVIZ_kernel_table(rules, g, case)
                    tally.add("kernel_table", _eq(w, k), {"inputs": inputs, "features": feats, "wheel": w, "kvviz": k,
                                                          "kvviz_rules": _rules_detail(rules, "kernel_table")},
                              note=f"padded rows included (the oracle's persistent rows: 0); wheel rows hold "
                                   f"{_rows_kind(code)} ids" + (
                                  "" if code.has_v1 else "; no V1 table: MRV2's manager-id rows through "
                                  "AttentionGroup.map_to_kernel_block_table"))
                except Exception as e:  # noqa: BLE001
                    tally.error("kernel_table", repr(e), {"inputs": inputs})
            if "csr" in tables and code.fi_builder is not None and code.copy_kernel is not None:
                seq = [r["seq_len"] for r in case["requests"]]
                table = KVVIZ_kernel_table(rules, g, case)[: len(seq)]
                # a table wide enough for every page the lengths count (≤ v0.29.0 counts DCP pages
                # from global lengths: more pages than a rank's row holds)
                pages = -(-max(seq + [0]) // g["kernel_block_size"])
                if pages > table.shape[1]:
                    table = np.pad(table, ((0, 0), (0, pages - table.shape[1])))
                try:
                    wtable = wheel_kernel_table(code, g, case, device)[: len(seq)]
                    if wtable.shape[1] < table.shape[1]:
                        wtable = np.pad(wtable, ((0, 0), (0, table.shape[1] - wtable.shape[1])))
                    w = wheel_csr(code, g, wtable, seq, device)
                    ref = KVVIZ_csr_ref(rules, g, table, seq)
                    d = {"inputs": inputs, "features": feats, "wheel": w, "kvviz": ref,
                         "kvviz_rules": _rules_detail(rules, "csr")}
                    tally.add("csr", all(_eq(a, b) for a, b in zip(w, ref)), d,
                              note="lengths as the builder gets them (the DCP prefill context-only step is not covered)")
                    ker = KVVIZ_csr_kernel(rules, g, table, seq, device)
                    tally.add("csr_kvviz_kernel", all(_eq(a, b) for a, b in zip(w, ker)), {**d, "kvviz": ker})
                except Exception as e:  # noqa: BLE001
                    tally.error("csr", repr(e), {"inputs": inputs})
    if "free_queue" in tables:
        if code.pool_cls is None:
            tally.skip("free_queue", "BlockPool.free_blocks absent")
        else:
            for _ in range(cases):
                case = random_free_case(rng)
                try:
                    w, k = wheel_free_queue(code, case), KVVIZ_free_queue(rules, case)
                    tally.add("free_queue", w == k, {"inputs": case, "wheel": w, "kvviz": k,
                                                     "kvviz_rules": _rules_detail(rules, "free_queue")})
                except Exception as e:  # noqa: BLE001
                    tally.error("free_queue", repr(e), {"inputs": case})
    if "layout" in tables:
        if code.layout_fn is None:
            tally.skip("layout", "compute_layout_strides absent in this release")
        else:
            for _ in range(cases):
                spec = random_layout_spec(rng)
                try:
                    w, k = wheel_layout(code, spec), KVVIZ_layout(rules, spec)
                    tally.add("layout", w == k, {"inputs": spec, "features": [spec["layout"]], "wheel": w,
                                                 "kvviz": k, "kvviz_rules": _rules_detail(rules, "layout")},
                              note="strides and 4 byte addresses, the six layouts (no kernel-block split, "
                                   "no padded page, v0.34.0's extensible padding not drawn)")
                except Exception as e:  # noqa: BLE001
                    tally.error("layout", repr(e), {"inputs": spec})
    if "mrv2_width" in tables:
        if code.mrv2_cls is None or code.width_fn is None:
            tally.skip("mrv2_width", "MRV2 BlockTables or get_block_table_width absent")
        else:
            for _ in range(cases):
                g = random_geometry(rng, dcp=False)
                mml = rng.choice([1, 2, 100, rng.randint(1, 4096), rng.randint(1, 200000)])
                w = wheel_mrv2_width(code, g["block_size"], g["kernel_block_size"], mml)
                k = KVVIZ_mrv2_width(rules, g["block_size"], g["kernel_block_size"], mml)
                tally.add("mrv2_width", w == k, {"features": _features(g), "block_size": g["block_size"],
                                                 "kernel_block_size": g["kernel_block_size"], "max_model_len": mml,
                                                 "wheel": w, "kvviz": k,
                                                 "kvviz_rules": _rules_detail(rules, "mrv2_width")},
                          note=f"wheel: model_runner's get_block_table_width ({code.width_where}) x "
                               f"blocks_per_kv_block where BlockTables rows hold kernel ids ({code.mrv2_rows})")
    mr = [t for t in ("mrv2_gather", "mrv2_slots") if t in tables]
    if mr:
        if code.mrv2_cls is None:
            for t in mr:
                tally.skip(t, f"absent: {code.mrv2_missing}")
        elif device != "cuda" and not mrv2_interpret:
            for t in mr:
                tally.skip(t, "needs cuda: skipped (the kernels follow raw data pointers, _load_ptr; "
                              "--mrv2-interpret tries Triton's interpreter, which follows host pointers)")
        else:
            if device != "cuda":
                for t in mr:
                    tally.t.setdefault(t, {"cases": 0, "agreed": 0, "first_disagreement": None, "notes": []})[
                        "notes"].append("Triton interpreter on the CPU, following host data pointers")
            for _ in range(mrv2_cases or cases):
                case = random_mrv2_case(rng, code)
                inputs = {k: case[k] for k in ("cp", "groups", "idx_mapping", "slot_idx_mapping", "num_reqs_padded", "seqs",
                                               "max_num_tokens", "slot_mapping_enabled", "dcp_sharded",
                                               "sliding_window_reach", "previous_num_reqs")}
                feats = _mrv2_features(code, case)
                bt = wg = None
                try:
                    bt = _wheel_block_tables(code, case, device)
                    if "mrv2_gather" in tables:
                        wg = wheel_mrv2_gather(code, bt, case, device)
                except Exception as e:  # noqa: BLE001
                    tally.error("mrv2_gather", repr(e), {"inputs": inputs})
                    wg = None
                if wg is not None:
                    kv_rows = "manager" if _mrv2_manager(rules) else "kernel"
                    same = kv_rows == code.mrv2_rows
                    if not same and code.mrv2_rows == "manager":
                        # kvviz's rules and the wheel disagree on what a row holds: compare as kernel ids
                        wg = [_expand(x, gg) for x, gg in zip(wg, case["groups"])]
                    d = {"inputs": inputs, "features": feats, "wheel": wg,
                         "kvviz_rules": _rules_detail(rules, "mrv2_gather")}
                    note = (f"rows hold {code.mrv2_rows} ids on both sides" if same else
                            f"wheel rows hold {code.mrv2_rows} ids, kvviz's {kv_rows} (compared as kernel ids)")
                    for name, fn in (("mrv2_gather", lambda: KVVIZ_mrv2_gather(rules, case, device)),
                                     ("mrv2_gather_runner_v2", lambda: KVVIZ_mrv2_gather_ref(rules, case))):
                        try:
                            k = fn()
                            if not same and kv_rows == "manager":
                                k = [_expand(x, gg) for x, gg in zip(k, case["groups"])]
                            tally.add(name, all(_eq(a, b) for a, b in zip(wg, k)), {**d, "kvviz": k}, note=note)
                        except Exception as e:  # noqa: BLE001  kvviz cannot model the case: a disagreement
                            tally.add(name, False, {**d, "kvviz_error": repr(e)[:300]})
                if bt is None or "mrv2_slots" not in tables:
                    continue
                try:
                    ws = wheel_mrv2_slots(code, bt, case, device)
                except Exception as e:  # noqa: BLE001
                    if device != "cuda" and "unsupported dtype" in repr(e):
                        tally.interp_skip("mrv2_slots", "Triton 3.9's interpreter refuses the release's bool "
                                          "mask (~dcp_sharded | is_local) under DCP: those cases need cuda")
                    else:
                        tally.error("mrv2_slots", repr(e), {"inputs": inputs})
                    continue
                d = {"inputs": inputs, "features": feats, "wheel": ws,
                     "kvviz_rules": _rules_detail(rules, "mrv2_slots")}
                for name, fn in (("mrv2_slots", lambda: KVVIZ_mrv2_slots(rules, case, device)),
                                 ("mrv2_slots_geometry", lambda: KVVIZ_mrv2_slots_ref(rules, case))):
                    try:
                        k = fn()
                        tally.add(name, _eq(ws, k), {**d, "kvviz": k})
                    except Exception as e:  # noqa: BLE001
                        tally.add(name, False, {**d, "kvviz_error": repr(e)[:300]})
    return {"version": version, "wheel": str(code.src.path), "wheel_version": code.version, "device": device,
            "cases": cases, "seed": seed, "seconds": round(time.time() - t0, 1), "wheel_code": code.presence(),
            "notes": code.notes, "tables": tally.t, "agree": all(e["cases"] == e["agreed"] for e in tally.t.values())}


def _mrv2_features(code: WheelCode, case: dict) -> list[str]:
    out = []
    if any(gg["block_size"] != gg["kernel_block_size"] for gg in case["groups"]):
        out.append("kernel-block split")
    if case["cp"]["dcp_world_size"] > 1:
        out.append("dcp")
    if not all(case["slot_mapping_enabled"]):
        out.append("slot mapping disabled group")
    if not all(case["dcp_sharded"]):
        out.append("replicated (unsharded) group")
    if any(case["sliding_window_reach"]):
        out.append("sliding-window reach")
    if case["previous_num_reqs"] > case["num_reqs_padded"]:
        out.append("dirty rows of a larger batch")
    if -1 in case["slot_idx_mapping"]:
        out.append("idx_mapping -1 rows")
    return out


def _expand(table: np.ndarray, gg: dict) -> np.ndarray:
    r = gg["block_size"] // gg["kernel_block_size"]
    if r == 1:
        return table
    return (table.astype(np.int64)[:, :, None] * r + np.arange(r)).reshape(table.shape[0], -1).astype(np.int32)


def random_free_case(rng: random.Random) -> dict:
    n = rng.randint(3, 24)
    left_free = rng.randint(0, n - 2)
    taken = list(range(1, n - left_free))
    refs = {i: rng.choice([1, 1, 1, 2]) for i in taken}
    hashed = sorted(i for i in taken if rng.random() < 0.5)
    k = rng.randint(0, len(taken))
    order = rng.sample(taken, k)
    if rng.random() < 0.3:
        order.insert(rng.randint(0, len(order)), 0)       # the null block among the freed ones
    return {"num_blocks": n, "left_free": left_free, "refs": refs, "hashed": hashed, "free_order": order,
            "caching": rng.random() < 0.6}


def print_report(res: dict) -> None:
    print(f"vLLM {res['version']} ({res['wheel']}), device {res['device']}, {res['cases']} cases, seed {res['seed']}, "
          f"{res['seconds']} s")
    print("  wheel code: " + ", ".join(f"{k}={v}" for k, v in res["wheel_code"].items()))
    for n in res.get("notes", []):
        print(f"  note: {n}")
    for name, e in res["tables"].items():
        if e.get("skipped"):
            print(f"  {name:24s} skipped: {'; '.join(e['notes'])}")
            continue
        status = "agree" if e["cases"] == e["agreed"] else "DISAGREE"
        extra = f", {e['errors']} errors" if e.get("errors") else ""
        if e.get("interpreter_skipped"):
            extra += f", {e['interpreter_skipped']} not run in the interpreter"
        print(f"  {name:24s} {e['agreed']}/{e['cases']} {status}{extra}" + (f"  ({'; '.join(e['notes'])})" if e["notes"] else ""))
        if e.get("disagreements_by_feature"):
            print("      disagreeing cases by feature set: " + "; ".join(
                f"{k}: {v}" for k, v in sorted(e["disagreements_by_feature_set"].items(), key=lambda kv: -kv[1])))
        if e["first_disagreement"] is not None:
            print(f"      first: {compact(e['first_disagreement'], 900)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("version")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--wheel")
    ap.add_argument("--cache")
    ap.add_argument("--no-download", action="store_true")
    ap.add_argument("--tables", help=f"comma-separated subset of {','.join(TABLES)}")
    ap.add_argument("--slim", metavar="DIR", help="write a slim copy of the wheel into DIR and exit")
    ap.add_argument("--mrv2-interpret", action="store_true",
                    help="on the CPU, run the MRV2 kernels in Triton's interpreter too (it follows host pointers)")
    ap.add_argument("--mrv2-cases", type=int, help="cases for the MRV2 tables (default --cases)")
    ap.add_argument("--json-out", metavar="PATH", help="also write the JSON object to PATH")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        version = normalize_version(args.version)
        if args.cases < 1:
            raise BadInput("--cases must be >= 1")
        tables = TABLES if not args.tables else tuple(t.strip() for t in args.tables.split(","))
        bad = [t for t in tables if t not in TABLES]
        if bad:
            raise BadInput(f"unknown tables {bad}; choose from {', '.join(TABLES)}")
        wheel = find_wheel(version, args.wheel, Path(args.cache) if args.cache else None, not args.no_download)
        if args.slim:
            print(write_slim(wheel, version, Path(args.slim)))
            return 0
        if args.device == "cuda":
            import torch

            if not torch.cuda.is_available():
                raise BadInput("--device cuda: no CUDA device here")
        code = WheelCode(wheel)
        if code.version and code.version != version:
            raise BadInput(f"{wheel} is vLLM {code.version}, not {version}")
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    res = run_oracle(version, code, device=args.device, cases=args.cases, seed=args.seed, tables=tables,
                     mrv2_interpret=args.mrv2_interpret, mrv2_cases=args.mrv2_cases)
    text = json.dumps(res, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
    if args.json_out:
        Path(args.json_out).write_text(text)
    if args.json:
        print(text)
    else:
        print_report(res)
    return 0 if res["agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
