"""Plain-Python references for every table a step produces.

Deliberately written as loops over tokens and requests, independent of the
vectorised core and of the Triton kernels, so that each can be checked
against it.
"""
from __future__ import annotations

import numpy as np

from kvviz.constants import PAD_SLOT_ID


def slot_of_position(pos: int, row, *, block_size: int, kernel_block_size: int | None = None,
                     dcp_world_size: int = 1, dcp_rank: int = 0, interleave: int = 1) -> int:
    """Slot of one token at position ``pos`` of a request whose table row is ``row``
    (kernel-block ids), or PAD_SLOT_ID if another DCP rank stores it."""
    kbs = kernel_block_size or block_size
    blocks_per_kv_block = block_size // kbs
    virtual_block = block_size * dcp_world_size
    vidx, voff = divmod(pos, virtual_block)
    if (voff // interleave) % dcp_world_size != dcp_rank:
        return PAD_SLOT_ID
    local_off = (voff // (dcp_world_size * interleave)) * interleave + voff % interleave
    col = vidx * blocks_per_kv_block + local_off // kbs
    return int(row[col]) * kbs + local_off % kbs


def slot_mapping(query_start_loc, positions, block_table, *, block_size: int,
                 num_reqs: int | None = None, num_tokens_padded: int | None = None,
                 kernel_block_size: int | None = None, dcp_world_size: int = 1,
                 dcp_rank: int = 0, interleave: int = 1) -> np.ndarray:
    qsl = [int(x) for x in query_start_loc]
    n_reqs = len(qsl) - 1 if num_reqs is None else num_reqs
    num_tokens = qsl[n_reqs]
    total = num_tokens if num_tokens_padded is None else num_tokens_padded
    out = [PAD_SLOT_ID] * total
    for r in range(n_reqs):
        for i in range(qsl[r], qsl[r + 1]):
            out[i] = slot_of_position(int(positions[i]), block_table[r], block_size=block_size,
                                      kernel_block_size=kernel_block_size,
                                      dcp_world_size=dcp_world_size, dcp_rank=dcp_rank,
                                      interleave=interleave)
    return np.array(out, dtype=np.int64)


def flashinfer_csr(block_table, seq_lens, page_size: int, *, empty_last_page_len_is_zero: bool = True):
    """(paged_kv_indptr, paged_kv_indices, paged_kv_last_page_len), all int32."""
    indptr = [0]
    indices: list[int] = []
    last = []
    for r, s in enumerate(int(x) for x in seq_lens):
        pages = -(-s // page_size)
        indices.extend(int(b) for b in block_table[r][:pages])
        indptr.append(indptr[-1] + pages)
        if s == 0:
            last.append(0 if empty_last_page_len_is_zero else page_size)
        else:
            rem = s % page_size
            last.append(page_size if rem == 0 else rem)
    return (np.array(indptr, dtype=np.int32), np.array(indices, dtype=np.int32),
            np.array(last, dtype=np.int32))
