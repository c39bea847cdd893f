"""Every launcher in kernels/ refuses what it cannot do, before the launch, with one ValueError that
starts with the argument's name (kernels/contracts.py).

The table is device-agnostic: on a CUDA machine the tensors live on the GPU, so the same file runs
under the sanitizer (``compute-sanitizer --tool memcheck python3 -m pytest
tests/gpu/test_launcher_contracts.py``); here it runs in Triton's interpreter. "Wrong device" is a
``meta`` tensor, which is neither the CPU nor a GPU.

Also here: the KV write quantises K and V each by its own dtype, every key x value x cache dtype,
against a numpy reference (tests/gpu/e4m3.py's bit model, no torch or Triton cast).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import kvviz_kernels as kernels  # noqa: F401  (TRITON_INTERPRET before any kernel module)
import e4m3
from kvviz_kernels.empty import empty_launch
from kvviz_kernels.fused_step import fused_step_v1, fused_step_v2
from kvviz_kernels.kv_write import kv_write
from kvviz_kernels.mrv2_tables import compute_slot_mappings, gather_block_tables
from kvviz_kernels.page_indices import flashinfer_csr
from kvviz_kernels.paged_decode import paged_decode_block_table, paged_decode_csr
from kvviz_kernels.slot_mapping import (slot_mapping, slot_mapping_flat, slot_mapping_grid2d,
                                  slot_mapping_per_request, slot_mapping_torch)

DEV = "cuda" if torch.cuda.is_available() else "cpu"
I32, I64 = torch.int32, torch.int64


def t(values, dtype):
    return torch.tensor(values, dtype=dtype, device=DEV)


def strided(x):
    """The same values as a non-contiguous view (every other element of a buffer twice as long)."""
    big = torch.zeros((2 * x.shape[0],) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
    big[::2] = x
    return big[::2]


def last_dim_permuted(x):
    """The same values with the last dimension's stride not 1 (a permuted view)."""
    return x.transpose(-1, -2).contiguous().transpose(-1, -2)


def expanded(x):
    """A broadcast view of x's first row: every row the same memory (outputs must refuse it)."""
    return x[:1].expand(x.shape)


def meta(x):
    return x.to("meta")


# --- good calls: every launcher's arguments, small ------------------------------------------------

def slot_args():
    return dict(query_start_loc=t([0, 3, 5], I32), positions=t([0, 1, 2, 0, 1, 0], I64),
                block_table=t([[1, 2, 3, 4], [5, 6, 7, 8]], I32), num_reqs=2, block_size=4,
                num_tokens_padded=6, out=torch.empty(6, dtype=I64, device=DEV))


def _slot(fn, extra=None):
    def call(kw):
        kw = dict(kw)
        a = [kw.pop(k) for k in ("query_start_loc", "positions", "block_table")]
        return fn(*a, **kw, **(extra or {}))
    return call


def csr_args():
    return dict(block_table=t([[1, 2, 3, 4], [5, 6, 7, 8]], I32), seq_lens=t([5, 3], I32),
                seq_lens_host=np.array([5, 3], dtype=np.int32), page_size=4,
                indptr_buf=torch.zeros(3, dtype=I32), indices_out=torch.empty(3, dtype=I32, device=DEV),
                last_page_len_out=torch.empty(2, dtype=I32, device=DEV))


def _csr(kw):
    kw = dict(kw)
    a = [kw.pop(k) for k in ("block_table", "seq_lens", "seq_lens_host", "page_size")]
    return flashinfer_csr(*a, **kw)


def kv_args(cache_dtype=torch.float16):
    return dict(key=torch.ones((3, 2, 8), dtype=torch.float16, device=DEV),
                value=torch.ones((3, 2, 8), dtype=torch.float16, device=DEV),
                cache=torch.zeros((2, 4, 4, 2, 8), dtype=cache_dtype, device=DEV),
                slot_mapping=t([0, 5, 9], I64))


def _kv(kw):
    kw = dict(kw)
    a = [kw.pop(k) for k in ("key", "value", "cache", "slot_mapping")]
    return kv_write(*a, **kw)


def decode_args():
    g = torch.Generator().manual_seed(0)
    return dict(q=torch.randn((2, 4, 8), generator=g).to(DEV),
                cache=torch.randn((2, 4, 4, 2, 8), generator=g).half().to(DEV),
                block_table=t([[1, 2, 0], [3, 0, 0]], I32), seq_lens=t([5, 3], I32),
                out=torch.empty((2, 4, 8), dtype=torch.float32, device=DEV),
                lse_out=torch.empty((2, 4), dtype=torch.float32, device=DEV))


def _decode(kw):
    kw = dict(kw)
    a = [kw.pop(k) for k in ("q", "cache", "block_table", "seq_lens")]
    return paged_decode_block_table(*a, **kw)


def decode_csr_args():
    kw = decode_args()
    del kw["block_table"], kw["seq_lens"]
    kw.update(indptr=t([0, 2, 3], I32), indices=t([1, 2, 3], I32), last_page_len=t([1, 3], I32))
    return kw


def _decode_csr(kw):
    kw = dict(kw)
    a = [kw.pop(k) for k in ("q", "cache", "indptr", "indices", "last_page_len")]
    return paged_decode_csr(*a, **kw)


def _tables(rows=4, width=3):
    return torch.arange(2 * rows * width, dtype=I32, device=DEV).reshape(2, rows, width) + 1


def gather_args():
    return dict(state_tables=_tables(), num_blocks=t([[1, 2, 3, 0], [3, 3, 1, 2]], I32), idx_mapping=t([2, 0], I32),
                num_reqs_padded=3, input_tables=torch.zeros((2, 4, 3), dtype=I32, device=DEV))


def _gather(kw):
    kw = dict(kw)
    a = [kw.pop(k) for k in ("state_tables", "num_blocks", "idx_mapping", "num_reqs_padded", "input_tables")]
    return gather_block_tables(*a, **kw)


def mrv2_slot_args():
    return dict(state_tables=_tables(), idx_mapping=t([2, 0], I32), query_start_loc=t([0, 3, 5], I32),
                positions=t([0, 1, 2, 0, 1, 0], I64), block_sizes=[4, 4],
                slot_mappings=torch.empty((2, 6), dtype=I64, device=DEV))


def _mrv2_slots(kw):
    kw = dict(kw)
    a = [kw.pop(k) for k in ("state_tables", "idx_mapping", "query_start_loc", "positions", "block_sizes",
                             "slot_mappings")]
    return compute_slot_mappings(*a, **kw)


def fused_v1_args():
    return dict(query_start_loc=t([0, 3, 5], I32), positions=t([0, 1, 2, 0, 1, 0], I64), seq_lens=t([3, 2], I32),
                block_tables=_tables(rows=2, width=4), block_sizes=[4, 4], num_reqs=2, num_reqs_padded=3,
                num_tokens_padded=6, slot_mappings=torch.empty((2, 6), dtype=I64, device=DEV),
                indptr=torch.empty(4, dtype=I32, device=DEV), indices=torch.empty(12, dtype=I32, device=DEV),
                last_page_len=torch.empty(3, dtype=I32, device=DEV))


def _fused_v1(kw):
    kw = dict(kw)
    a = [kw.pop(k) for k in ("query_start_loc", "positions", "seq_lens", "block_tables")]
    return fused_step_v1(*a, **kw)


def fused_v2_args():
    kw = fused_v1_args()
    del kw["block_tables"], kw["num_reqs"]
    kw.update(idx_mapping=t([2, 0], I32), state_tables=_tables(rows=4, width=4),
              num_blocks=t([[1, 1, 1, 1], [1, 1, 1, 1]], I32),
              input_tables=torch.zeros((2, 4, 4), dtype=I32, device=DEV))
    return kw


def _fused_v2(kw):
    kw = dict(kw)
    a = [kw.pop(k) for k in ("idx_mapping", "query_start_loc", "positions", "seq_lens", "state_tables",
                             "num_blocks", "input_tables")]
    return fused_step_v2(*a, **kw)


LAUNCHERS = {
    "empty_launch": (lambda: dict(buf=torch.empty(1, device=DEV), n=0), lambda kw: empty_launch(**kw)),
    "slot_mapping_per_request": (slot_args, _slot(slot_mapping_per_request)),
    "slot_mapping_flat": (slot_args, _slot(slot_mapping_flat)),
    "slot_mapping_grid2d": (slot_args, _slot(slot_mapping_grid2d, {"max_query_len": 3})),
    "slot_mapping": (slot_args, _slot(slot_mapping, {"max_query_len": 3})),
    "slot_mapping_torch": (slot_args, _slot(slot_mapping_torch, {"num_tokens": 5})),
    "flashinfer_csr": (csr_args, _csr),
    "kv_write": (kv_args, _kv),
    "paged_decode_block_table": (decode_args, _decode),
    "paged_decode_csr": (decode_csr_args, _decode_csr),
    "gather_block_tables": (gather_args, _gather),
    "compute_slot_mappings": (mrv2_slot_args, _mrv2_slots),
    "fused_step_v1": (fused_v1_args, _fused_v1),
    "fused_step_v2": (fused_v2_args, _fused_v2),
}


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_good_call_runs(launcher):
    """The table's baseline: each launcher takes its good arguments (so each bad case below fails
    for the one argument it spoils)."""
    make, call = LAUNCHERS[launcher]
    call(make())


# --- the table: launcher x bad argument -------------------------------------------------------------

def _set(arg, fn):
    """A spoiler: replace argument ``arg`` by ``fn(its good value)``."""
    def spoil(kw):
        kw[arg] = fn(kw.get(arg))
        return kw
    return spoil


def _val(arg, value):
    return _set(arg, lambda _: value)


def _dtype(arg, dtype):
    return _set(arg, lambda x: x.to(dtype))


def _first(arg, n):
    return _set(arg, lambda x: x[:n])


SLOT_BAD = [
    ("query_start_loc", "too_small", _first("query_start_loc", 2)),
    ("query_start_loc", "dtype", _dtype("query_start_loc", I64)),
    ("query_start_loc", "non_contiguous", _set("query_start_loc", strided)),
    ("query_start_loc", "device", _set("query_start_loc", meta)),
    ("positions", "dtype", _dtype("positions", I32)),
    ("positions", "non_contiguous", _set("positions", strided)),
    ("positions", "2d", _set("positions", lambda x: x[None])),
    ("block_table", "too_small", _first("block_table", 1)),
    ("block_table", "dtype", _dtype("block_table", I64)),
    ("block_table", "1d", _set("block_table", lambda x: x[0])),
    ("block_table", "device", _set("block_table", meta)),
    ("out", "too_small", _first("out", 5)),
    ("out", "dtype", _dtype("out", I32)),
    ("out", "non_contiguous", _set("out", strided)),
    ("out", "device", _set("out", meta)),
    ("num_reqs", "negative", _val("num_reqs", -1)),
    ("block_size", "zero", _val("block_size", 0)),
    ("num_tokens_padded", "negative", _val("num_tokens_padded", -1)),
    ("num_tokens_padded", "too_big", _val("num_tokens_padded", 7)),
    ("kernel_block_size", "not_a_divisor", _val("kernel_block_size", 3)),
    ("dcp_rank", "outside", _val("dcp_rank", 1)),
    ("interleave", "zero", _val("interleave", 0)),
]

CSR_BAD = [
    ("block_table", "too_small", _first("block_table", 1)),
    ("block_table", "dtype", _dtype("block_table", I64)),
    ("block_table", "narrow", _set("block_table", lambda x: x[:, :1])),
    ("seq_lens", "too_small", _first("seq_lens", 1)),
    ("seq_lens", "dtype", _dtype("seq_lens", torch.float32)),
    ("seq_lens", "non_contiguous", _set("seq_lens", strided)),
    ("seq_lens", "device", _set("seq_lens", meta)),
    ("seq_lens_host", "negative", _val("seq_lens_host", np.array([5, -3]))),
    ("page_size", "zero", _val("page_size", 0)),
    ("indptr_buf", "too_small", _first("indptr_buf", 2)),
    ("indptr_buf", "dtype", _dtype("indptr_buf", I64)),
    ("indptr_buf", "device", _set("indptr_buf", meta)),
    ("indices_out", "too_small", _first("indices_out", 2)),
    ("indices_out", "dtype", _dtype("indices_out", I64)),
    ("indices_out", "non_contiguous", _set("indices_out", strided)),
    ("indices_out", "device", _set("indices_out", meta)),
    ("last_page_len_out", "too_small", _first("last_page_len_out", 1)),
    ("last_page_len_out", "dtype", _dtype("last_page_len_out", I64)),
    ("last_page_len_out", "non_contiguous", _set("last_page_len_out", strided)),
    ("last_page_len_out", "device", _set("last_page_len_out", meta)),
]

KV_BAD = [
    ("key", "too_small", _first("key", 2)),
    ("key", "wrong_heads", _set("key", lambda x: x[:, :1])),
    ("key", "dtype", _dtype("key", torch.float32)),
    ("key", "permuted", _set("key", last_dim_permuted)),
    ("key", "device", _set("key", meta)),
    ("value", "too_small", _first("value", 2)),
    ("value", "dtype", _dtype("value", torch.bfloat16)),
    ("value", "permuted", _set("value", last_dim_permuted)),
    ("value", "device", _set("value", meta)),
    ("cache", "4d", _set("cache", lambda x: x[0])),
    ("cache", "dtype", _dtype("cache", I32)),
    ("cache", "three_planes", _set("cache", lambda x: torch.cat([x, x[:1]]))),
    ("cache", "permuted", _set("cache", last_dim_permuted)),
    ("slot_mapping", "dtype", _dtype("slot_mapping", I32)),
    ("slot_mapping", "non_contiguous", _set("slot_mapping", strided)),
    ("slot_mapping", "2d", _set("slot_mapping", lambda x: x[None])),
    ("slot_mapping", "device", _set("slot_mapping", meta)),
    ("layout", "unknown", _val("layout", "NDH")),
]


def _fp8_cache_zero_scale(kw):
    kw["cache"] = kw["cache"].to(torch.float8_e4m3fn)
    kw["k_scale"] = 0.0
    return kw


KV_BAD.append(("k_scale", "zero", _fp8_cache_zero_scale))

DECODE_OUT_BAD = [
    ("out", "one_row_for_two_requests", _first("out", 1)),          # the probe: exit 134 before
    ("out", "permuted", _set("out", last_dim_permuted)),             # the probe: values off by 100 before
    ("out", "expanded", _set("out", expanded)),
    ("out", "wrong_heads", _set("out", lambda x: x[:, :2])),
    ("out", "dtype", _dtype("out", torch.float16)),
    ("out", "device", _set("out", meta)),
    ("lse_out", "too_small", _first("lse_out", 1)),
    ("lse_out", "wrong_heads", _set("lse_out", lambda x: x[:, :2])),
    ("lse_out", "dtype", _dtype("lse_out", torch.float64)),
    ("lse_out", "expanded", _set("lse_out", expanded)),
    ("lse_out", "device", _set("lse_out", meta)),
    ("q", "head_dim", _set("q", lambda x: x[..., :4])),
    ("q", "dtype", _dtype("q", I32)),
    ("q", "permuted", _set("q", last_dim_permuted)),
    ("q", "device", _set("q", meta)),
    ("q", "heads_do_not_group", _set("q", lambda x: x[:, :3])),
    ("cache", "dtype", _dtype("cache", I32)),
    ("cache", "permuted", _set("cache", last_dim_permuted)),
    ("num_reqs", "negative", _val("num_reqs", -1)),
    ("num_reqs", "past_q", _val("num_reqs", 3)),
    ("layout", "unknown", _val("layout", "NDH")),
]

DECODE_BAD = DECODE_OUT_BAD + [
    ("block_table", "too_small", _first("block_table", 1)),
    ("block_table", "dtype", _dtype("block_table", torch.float32)),
    ("block_table", "device", _set("block_table", meta)),
    ("seq_lens", "too_small", _first("seq_lens", 1)),
    ("seq_lens", "dtype", _dtype("seq_lens", torch.float32)),
    ("seq_lens", "non_contiguous", _set("seq_lens", strided)),
    ("seq_lens", "device", _set("seq_lens", meta)),
]

DECODE_CSR_BAD = DECODE_OUT_BAD + [
    ("indptr", "too_small", _first("indptr", 2)),
    ("indptr", "dtype", _dtype("indptr", torch.float32)),
    ("indptr", "non_contiguous", _set("indptr", strided)),
    ("indptr", "device", _set("indptr", meta)),
    ("indices", "dtype", _dtype("indices", torch.float32)),
    ("indices", "non_contiguous", _set("indices", strided)),
    ("indices", "device", _set("indices", meta)),
    ("last_page_len", "too_small", _first("last_page_len", 1)),
    ("last_page_len", "dtype", _dtype("last_page_len", torch.float32)),
    ("last_page_len", "device", _set("last_page_len", meta)),
]

GATHER_BAD = [
    ("state_tables", "dtype", _dtype("state_tables", I64)),
    ("state_tables", "2d", _set("state_tables", lambda x: x[0])),
    ("input_tables", "groups", _first("input_tables", 1)),
    ("input_tables", "too_few_rows", _set("input_tables", lambda x: x[:, :2])),
    ("input_tables", "width", _set("input_tables", lambda x: x[:, :, :2])),
    ("input_tables", "dtype", _dtype("input_tables", I64)),
    ("input_tables", "expanded", _set("input_tables", lambda x: x[:, :1].expand(x.shape))),
    ("input_tables", "device", _set("input_tables", meta)),
    ("num_blocks", "too_small", _set("num_blocks", lambda x: x[:, :2])),
    ("num_blocks", "dtype", _dtype("num_blocks", torch.float32)),
    ("num_blocks", "device", _set("num_blocks", meta)),
    ("idx_mapping", "dtype", _dtype("idx_mapping", torch.float32)),
    ("idx_mapping", "non_contiguous", _set("idx_mapping", strided)),
    ("idx_mapping", "device", _set("idx_mapping", meta)),
    ("num_reqs_padded", "negative", _val("num_reqs_padded", -1)),
    ("input_tables", "fewer_rows_than_num_reqs_padded", _val("num_reqs_padded", 5)),
    ("num_reqs", "negative", _val("num_reqs", -1)),
    ("num_reqs", "past_idx_mapping", _val("num_reqs", 3)),
    ("dirty_rows", "negative", _val("dirty_rows", -1)),
    ("widths", "dtype", _val("widths", t([3, 3], I64))),
    ("widths", "device", _val("widths", meta(t([3, 3], I32)))),
    ("widths", "too_few", _val("widths", t([3], I32))),
    ("widths", "too_wide", _val("widths", [3, 4])),
    ("block", "not_a_power_of_two", _val("block", 3)),
]

# rows the MRV2 slot launcher and the fused step share (the same argument names and checks)
QSL_POSITIONS_BAD = [
    ("query_start_loc", "too_small", _first("query_start_loc", 2)),
    ("query_start_loc", "dtype", _dtype("query_start_loc", I64)),
    ("query_start_loc", "non_contiguous", _set("query_start_loc", strided)),
    ("query_start_loc", "device", _set("query_start_loc", meta)),
    ("positions", "dtype", _dtype("positions", I32)),
    ("positions", "non_contiguous", _set("positions", strided)),
    ("positions", "device", _set("positions", meta)),
]
SLOT_MAPPINGS_BAD = [
    ("slot_mappings", "groups", _first("slot_mappings", 1)),
    ("slot_mappings", "dtype", _dtype("slot_mappings", I32)),
    ("slot_mappings", "expanded", _set("slot_mappings", expanded)),
    ("slot_mappings", "device", _set("slot_mappings", meta)),
]

MRV2_SLOT_BAD = [
    ("state_tables", "dtype", _dtype("state_tables", I64)),
    *QSL_POSITIONS_BAD,
    *SLOT_MAPPINGS_BAD,
    ("idx_mapping", "device", _set("idx_mapping", meta)),
    ("num_reqs", "negative", _val("num_reqs", -1)),
    ("block_sizes", "zero", _val("block_sizes", [0, 4])),
    ("block_sizes", "device", _val("block_sizes", meta(t([4, 4], I32)))),
    ("cp_size", "zero", _val("cp_size", 0)),
    ("cp_rank", "outside", _val("cp_rank", 1)),
    ("cp_interleave", "zero", _val("cp_interleave", 0)),
    ("tile", "not_a_power_of_two", _val("tile", 24)),
    ("dcp_era", "unknown", _val("dcp_era", "v0")),
]

FUSED_COMMON_BAD = [
    *QSL_POSITIONS_BAD,
    ("seq_lens", "too_small", _first("seq_lens", 1)),
    ("seq_lens", "dtype", _dtype("seq_lens", I64)),
    ("seq_lens", "non_contiguous", _set("seq_lens", strided)),
    ("seq_lens", "device", _set("seq_lens", meta)),
    ("slot_mappings", "too_small", _set("slot_mappings", lambda x: x[:, :5])),
    *SLOT_MAPPINGS_BAD,
    ("indptr", "too_small", _first("indptr", 3)),
    ("indptr", "dtype", _dtype("indptr", I64)),
    ("indptr", "non_contiguous", _set("indptr", strided)),
    ("indptr", "device", _set("indptr", meta)),
    ("indices", "dtype", _dtype("indices", I64)),
    ("indices", "non_contiguous", _set("indices", strided)),
    ("indices", "device", _set("indices", meta)),
    ("last_page_len", "too_small", _first("last_page_len", 2)),
    ("last_page_len", "dtype", _dtype("last_page_len", I64)),
    ("last_page_len", "device", _set("last_page_len", meta)),
    ("num_reqs_padded", "below_num_reqs", _val("num_reqs_padded", 1)),
    ("num_tokens_padded", "negative", _val("num_tokens_padded", -1)),
    ("num_tokens_padded", "past_positions", _val("num_tokens_padded", 7)),
    ("csr_group", "outside", _val("csr_group", 2)),
    ("csr_group", "negative", _val("csr_group", -1)),
    ("dcp_world_size", "zero", _val("dcp_world_size", 0)),
    ("dcp_rank", "outside", _val("dcp_rank", 1)),
    ("interleave", "zero", _val("interleave", 0)),
    ("block_sizes", "zero", _val("block_sizes", [0, 4])),
    ("kernel_block_sizes", "not_a_divisor", _val("kernel_block_sizes", [3, 4])),
    ("widths", "too_wide", _val("widths", [5, 4])),
    ("padded_last_page_len", "negative", _val("padded_last_page_len", -1)),
    ("tile", "not_a_power_of_two", _val("tile", 24)),
]

FUSED_V1_BAD = FUSED_COMMON_BAD + [
    ("block_tables", "too_few_rows", _set("block_tables", lambda x: x[:, :1])),
    ("block_tables", "dtype", _dtype("block_tables", I64)),
    ("num_reqs", "negative", _val("num_reqs", -1)),
]

FUSED_V2_BAD = FUSED_COMMON_BAD + [
    ("state_tables", "dtype", _dtype("state_tables", I64)),
    ("state_tables", "2d", _set("state_tables", lambda x: x[0])),
    ("input_tables", "too_few_rows", _set("input_tables", lambda x: x[:, :2])),
    ("input_tables", "dtype", _dtype("input_tables", I64)),
    ("input_tables", "expanded", _set("input_tables", lambda x: x[:, :1].expand(x.shape))),
    ("input_tables", "device", _set("input_tables", meta)),
    ("num_blocks", "too_small", _set("num_blocks", lambda x: x[:, :2])),
    ("num_blocks", "dtype", _dtype("num_blocks", torch.float32)),
    ("num_blocks", "device", _set("num_blocks", meta)),
    ("idx_mapping", "dtype", _dtype("idx_mapping", torch.float32)),
    ("idx_mapping", "non_contiguous", _set("idx_mapping", strided)),
    ("idx_mapping", "device", _set("idx_mapping", meta)),
    ("num_reqs", "negative", _val("num_reqs", -1)),
    ("dirty_rows", "negative", _val("dirty_rows", -1)),
]

BAD = {
    "empty_launch": [("buf", "not_a_tensor", _val("buf", [1.0])), ("n", "negative", _val("n", -1))],
    "slot_mapping_per_request": SLOT_BAD, "slot_mapping_flat": SLOT_BAD, "slot_mapping_grid2d": SLOT_BAD,
    "slot_mapping": SLOT_BAD, "slot_mapping_torch": SLOT_BAD, "flashinfer_csr": CSR_BAD, "kv_write": KV_BAD,
    "paged_decode_block_table": DECODE_BAD, "paged_decode_csr": DECODE_CSR_BAD,
    "gather_block_tables": GATHER_BAD, "compute_slot_mappings": MRV2_SLOT_BAD,
    "fused_step_v1": FUSED_V1_BAD, "fused_step_v2": FUSED_V2_BAD,
}
TABLE = [pytest.param(launcher, arg, spoil, id=f"{launcher}-{arg}-{what}")
         for launcher, cases in BAD.items() for arg, what, spoil in cases]


@pytest.mark.parametrize("launcher, arg, spoil", TABLE)
def test_bad_argument_is_refused_by_name(launcher, arg, spoil):
    make, call = LAUNCHERS[launcher]
    kw = spoil(make())
    with pytest.raises(ValueError, match=rf"^{arg}: "):
        call(kw)


# --- the two probes, as they were seen -------------------------------------------------------------

def test_probe_one_row_out_for_two_requests_is_refused_before_any_write():
    kw = decode_args()
    big = torch.full((3, 4, 8), 7.0, device=DEV)
    kw["out"] = big[:1]
    with pytest.raises(ValueError, match=r"^out: needs shape at least \(2, 4, 8\), got \(1, 4, 8\)"):
        _decode(kw)
    assert (big == 7.0).all(), "nothing may be written before the refusal"


def test_probe_permuted_out_is_refused():
    kw = decode_args()
    kw["out"] = torch.empty((2, 8, 4), device=DEV).permute(0, 2, 1)   # (2, 4, 8), head dim stride 4
    with pytest.raises(ValueError, match=r"^out: needs a unit stride in its last dimension"):
        _decode(kw)


def test_out_windows_with_a_unit_head_dim_stride_are_written_right():
    """What the contract still takes: ``out`` through its row and head strides (a window of a larger
    buffer, heads and rows swapped), as long as the head dim is contiguous; the values equal those of a
    fresh output and nothing outside the window changes."""
    kw = decode_args()
    kw.pop("out")
    want = _decode(dict(kw))
    big = torch.full((5, 3, 6, 9), 7.0, device=DEV)            # [head, ?, request, dim]
    out = big[:4, 1, 1:3, :8].permute(1, 0, 2)                  # (2, 4, 8), strides (9, 162, 1)
    _decode(dict(kw, out=out))
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    mask = torch.ones_like(big, dtype=torch.bool)
    mask[:4, 1, 1:3, :8] = False
    assert (big[mask] == 7.0).all()


# --- the KV write quantises K and V each by its own dtype --------------------------------------------

KV_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp8": torch.float8_e4m3fn}
K_SCALE, V_SCALE = 4.0, 2.0
FP8_OK = [c for c in e4m3.FINITE if c not in (0x00, 0x80)]   # every finite e4m3 code but the zeros


def _source(codes, dtype, scale):
    """Tokens whose e4m3 quantisation by ``scale`` is ``codes`` exactly: fp8 inputs ARE the codes,
    wider ones the decoded values times the scale (a power of two: exact in fp16/bf16/fp32)."""
    if dtype == torch.float8_e4m3fn:
        return torch.from_numpy(codes.astype(np.uint8)).view(torch.float8_e4m3fn)
    return torch.from_numpy(e4m3.TABLE[codes] * scale).to(dtype)


def _np_bits(x: torch.Tensor) -> np.ndarray:
    """Bytes of a tensor as unsigned ints of its width, without any float cast."""
    view = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[x.element_size()]
    return x.cpu().contiguous().view(view).numpy()


def _np_expected(cache_bits, layout, slots, bits_k, bits_v):
    """The numpy reference scatter: token i's row of K/V bits goes to its slot, PAD writes nothing."""
    want = cache_bits.copy()
    bs = want.shape[2] if layout == "NHD" else want.shape[3]
    for i, s in enumerate(slots):
        if s < 0:
            continue
        b, o = divmod(int(s), bs)
        for plane, bits in ((0, bits_k), (1, bits_v)):
            if layout == "NHD":
                want[plane, b, o] = bits[i]
            else:
                want[plane, b, :, o] = bits[i]
    return want


@pytest.mark.parametrize("layout", ["NHD", "HND"])
@pytest.mark.parametrize("cache_name", list(KV_DTYPES))
@pytest.mark.parametrize("v_name", list(KV_DTYPES))
@pytest.mark.parametrize("k_name", list(KV_DTYPES))
def test_kv_write_quantises_k_and_v_each_by_its_own_dtype(k_name, v_name, cache_name, layout):
    """Every key x value x cache dtype. A plane already in the cache's dtype is copied bit for bit;
    into an fp8 cache a 16/32-bit plane is divided by its OWN scale (k_scale 4, v_scale 2) and rounded
    as the e4m3 bit model says (saturating at 448); any other pair is refused naming the plane."""
    kd, vd, cd = KV_DTYPES[k_name], KV_DTYPES[v_name], KV_DTYPES[cache_name]
    rng = np.random.default_rng(hash((k_name, v_name, cache_name, layout)) % 2**32)
    T, H, D, B, N = 5, 2, 8, 4, 3
    kc = rng.choice(FP8_OK, size=(T, H, D))
    vc = rng.choice(FP8_OK, size=(T, H, D))
    key, value = _source(kc, kd, K_SCALE), _source(vc, vd, V_SCALE)
    if kd != torch.float8_e4m3fn:
        key[0, 0, 0] = 1000.0 * K_SCALE       # past e4m3's range: saturates to 448 (code 0x7E)
        kc[0, 0, 0] = 0x7E
    if vd != torch.float8_e4m3fn:
        value[1, 1, 3] = -1000.0 * V_SCALE   # -448 (code 0xFE)
        vc[1, 1, 3] = 0xFE
    shape = (2, N, B, H, D) if layout == "NHD" else (2, N, H, B, D)
    cache = torch.from_numpy(rng.integers(0, 256, size=int(np.prod(shape)) * torch.empty((), dtype=cd).element_size(),
                                          dtype=np.uint8)).view(cd).reshape(shape)
    slots = np.array([3, -1, 0, 11, 6], dtype=np.int64)
    before = _np_bits(cache)

    def ok(x_dtype):
        return x_dtype == cd or (cd == torch.float8_e4m3fn and x_dtype != torch.float8_e4m3fn)

    dev_cache = cache.to(DEV)
    args = (key.to(DEV), value.to(DEV), dev_cache, torch.from_numpy(slots).to(DEV))
    kw = dict(layout=layout, k_scale=K_SCALE, v_scale=V_SCALE)
    if not ok(kd) or not ok(vd):
        with pytest.raises(ValueError, match="^key: " if not ok(kd) else "^value: "):
            kv_write(*args, **kw)
        assert np.array_equal(_np_bits(dev_cache), before)
        return
    kv_write(*args, **kw)
    # the reference: the plane's own bits where it is copied, the bit model's codes where quantised
    bits_k = kc.astype(np.uint8) if cd == torch.float8_e4m3fn else _np_bits(key)
    bits_v = vc.astype(np.uint8) if cd == torch.float8_e4m3fn else _np_bits(value)
    if cd == torch.float8_e4m3fn:
        # the codes came from the bit model's own quantiser for the wide planes: check it agrees
        if kd != torch.float8_e4m3fn:
            assert np.array_equal(e4m3.quantise(key.double().numpy(), K_SCALE), bits_k)
        if vd != torch.float8_e4m3fn:
            assert np.array_equal(e4m3.quantise(value.double().numpy(), V_SCALE), bits_v)
    want = _np_expected(before, layout, slots, bits_k, bits_v)
    got = _np_bits(dev_cache)
    assert np.array_equal(got, want), np.argwhere(got != want)[:5]


def test_probe_fp8_key_fp16_value_divides_v_by_its_scale():
    """The probe: an fp8 key with an fp16 value, v_scale 2: V = 8 is stored as 4 (it was 8)."""
    cache = torch.zeros((2, 1, 1, 1, 1), dtype=torch.float8_e4m3fn, device=DEV)
    key = torch.tensor([[[2.0]]]).to(torch.float8_e4m3fn).to(DEV)
    value = torch.tensor([[[8.0]]], dtype=torch.float16, device=DEV)
    kv_write(key, value, cache, t([0], I64), k_scale=3.0, v_scale=2.0)
    assert cache[0].float().item() == 2.0 and cache[1].float().item() == 4.0


def test_probe_fp16_key_fp8_value_copies_v():
    """The other probe: an fp16 key with an fp8 value: V is copied, not divided again."""
    cache = torch.zeros((2, 1, 1, 1, 1), dtype=torch.float8_e4m3fn, device=DEV)
    key = torch.tensor([[[8.0]]], dtype=torch.float16, device=DEV)
    value = torch.tensor([[[6.0]]]).to(torch.float8_e4m3fn).to(DEV)
    kv_write(key, value, cache, t([0], I64), k_scale=2.0, v_scale=3.0)
    assert cache[0].float().item() == 4.0 and cache[1].float().item() == 6.0
