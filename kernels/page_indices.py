"""FlashInfer's CSR page table from a vLLM block table.

* ``paged_kv_indptr``: prefix sum of pages per request, computed on the host
  from the host copy of seq_lens (no device->host read), then copied over.
* ``paged_kv_indices``: request r's first ``indptr[r+1]-indptr[r]`` table
  entries, packed one request after another, by a kernel.
* ``paged_kv_last_page_len``: entries used in each request's last page
  (a full page gives page_size, an empty request 0), written by the same kernel
  from the device seq_lens.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from .contracts import check_int, check_tensor

PAGE_TILE = 1024
MAX_TILES_PER_ROW = 16


@triton.jit(do_not_specialize=["bt_width"])
def _csr_kernel(bt_ptr, bt_stride0, bt_stride1, bt_width, indptr_ptr, seq_lens_ptr,
                indices_ptr, last_page_len_ptr,
                PAGE_SIZE: tl.constexpr, EMPTY_IS_ZERO: tl.constexpr, TILE: tl.constexpr,
                ROW_OVERRUN: tl.constexpr = False):
    r = tl.program_id(0)
    y = tl.program_id(1)
    ny = tl.num_programs(1)
    row_ptr = bt_ptr + r.to(tl.int64) * bt_stride0
    lanes = tl.arange(0, TILE)
    # this program's first tile is read before indptr arrives (bounded by the row width,
    # which the host knows), so the two reads overlap instead of queueing
    first = y * TILE + lanes
    if ROW_OVERRUN:
        # a page count past the row reads on into the next rows (vLLM's copy kernel has no width
        # mask: global page counts under DCP before v0.30.0); the host checked the table's end
        begin = tl.load(indptr_ptr + r).to(tl.int64)
        npages = tl.load(indptr_ptr + r + 1).to(tl.int64) - begin
        ids = tl.load(row_ptr + first * bt_stride1, mask=first < npages)
    else:
        ids = tl.load(row_ptr + first * bt_stride1, mask=first < bt_width)
        begin = tl.load(indptr_ptr + r).to(tl.int64)
        npages = tl.load(indptr_ptr + r + 1).to(tl.int64) - begin
        npages = tl.minimum(npages, bt_width)  # never read past the row
    tl.store(indices_ptr + begin + first, ids, mask=first < npages)
    for j in range((y + ny) * TILE, npages, ny * TILE):
        offs = j + lanes
        m = offs < npages
        ids = tl.load(row_ptr + offs * bt_stride1, mask=m)
        tl.store(indices_ptr + begin + offs, ids, mask=m)
    if y == 0:
        s = tl.load(seq_lens_ptr + r)
        rem = s % PAGE_SIZE
        last = tl.where(rem == 0, PAGE_SIZE, rem)
        if EMPTY_IS_ZERO:
            last = tl.where(s == 0, 0, last)
        tl.store(last_page_len_ptr + r, last.to(tl.int32))


def indptr_from_seq_lens(seq_lens_host, page_size: int) -> np.ndarray:
    """int32 [num_reqs + 1] on the host; element 0 is 0."""
    seq = np.asarray(seq_lens_host, dtype=np.int64)
    indptr = np.zeros(len(seq) + 1, dtype=np.int32)
    np.cumsum((seq + page_size - 1) // page_size, out=indptr[1:])
    return indptr


def flashinfer_csr(block_table, seq_lens, seq_lens_host, page_size: int, *,
                   empty_last_page_len_is_zero: bool = True, indptr_buf=None, indices_out=None,
                   last_page_len_out=None, row_overrun: bool = False):
    """(indptr, indices, last_page_len) as device int32 tensors.

    ``seq_lens`` is the device copy, ``seq_lens_host`` the host one (the same
    values); only the host copy decides sizes, so nothing is read back. Pass
    ``indptr_buf`` (pinned host int32 tensor) to stage the copy without a sync,
    and ``*_out`` buffers to reuse memory; ``indices_out`` then gets exactly
    ``indptr[-1]`` entries written. ``row_overrun``: a row's pages may run on into the rows after
    it (row-major; the table must be contiguous), as long as they stay inside the table."""
    import torch

    page_size = check_int("page_size", page_size, lo=1)
    num_reqs = len(seq_lens_host)
    # the table is read through both of its strides (row_overrun: contiguous, checked below)
    check_tensor("block_table", block_table, dtype=torch.int32, ndim=2, min_shape=(num_reqs, None))
    check_tensor("seq_lens", seq_lens, dtype=(torch.int32, torch.int64), ndim=1, min_numel=num_reqs,
                 contiguous=True, device=block_table)
    dev = block_table.device
    if num_reqs and int(np.min(np.asarray(seq_lens_host))) < 0:
        raise ValueError("seq_lens_host: needs lengths >= 0, got a negative one")
    indptr_np = indptr_from_seq_lens(seq_lens_host, page_size)
    if indptr_buf is None:
        indptr_host = torch.from_numpy(indptr_np)
        if dev.type == "cuda":
            indptr_host = indptr_host.pin_memory()
    else:
        check_tensor("indptr_buf", indptr_buf, dtype=torch.int32, ndim=1, min_numel=num_reqs + 1,
                     contiguous=True, device=torch.device("cpu"))
        indptr_host = indptr_buf[: num_reqs + 1]
        indptr_host.numpy()[:] = indptr_np
    indptr = indptr_host.to(dev, non_blocking=True)
    total = int(indptr_np[-1])
    if indices_out is None:
        indices_out = torch.empty(total, dtype=torch.int32, device=dev)
    else:
        check_tensor("indices_out", indices_out, dtype=torch.int32, ndim=1, min_numel=total, contiguous=True,
                     device=dev)
    if last_page_len_out is None:
        last_page_len_out = torch.empty(num_reqs, dtype=torch.int32, device=dev)
    else:
        check_tensor("last_page_len_out", last_page_len_out, dtype=torch.int32, ndim=1, min_numel=num_reqs,
                     contiguous=True, device=dev)
    if num_reqs:
        max_pages = int(np.max(np.diff(indptr_np)))
        width = block_table.shape[1]
        if row_overrun:
            if not block_table.is_contiguous():
                raise ValueError("block_table: row_overrun needs a contiguous block table")
            end = int(np.max(np.arange(num_reqs) * width + np.diff(indptr_np)))
            if end > block_table.numel():
                raise ValueError(f"block_table: a request's {max_pages} pages read past the end of the block table")
        elif max_pages > width:
            r = int(np.argmax(np.diff(indptr_np)))
            raise ValueError(f"block_table: request {r} needs {max_pages} pages of {page_size} tokens but a block-table row "
                             f"holds only {block_table.shape[1]}")
        ny = max(1, min(triton.cdiv(max_pages, PAGE_TILE), MAX_TILES_PER_ROW))
        _csr_kernel[(num_reqs, ny)](
            block_table, block_table.stride(0), block_table.stride(1), block_table.shape[1],
            indptr, seq_lens, indices_out, last_page_len_out,
            PAGE_SIZE=page_size, EMPTY_IS_ZERO=bool(empty_last_page_len_is_zero), TILE=PAGE_TILE,
            ROW_OVERRUN=bool(row_overrun))
    return indptr, indices_out, last_page_len_out
