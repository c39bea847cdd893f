"""Model Runner V2's slot arithmetic and gather rules, release by release (the simulator's side of
``kernels/mrv2_tables.py``; vLLM ``vllm/v1/worker/gpu/block_table.py``).

Slot eras of ``_compute_slot_mappings_kernel`` (``Rules.mrv2_dcp_slots``), for a token at global
position ``p`` of a request whose state row is ``row``; ``kbs`` = kernel block size, ``bs`` = the
KV manager's block size, ``CP`` = DCP world size, ``I`` = interleave, and ``local(o)`` /
``loff(o)`` = "rank ``(o // I) % CP`` stores it" / ``(o // (I*CP)) * I + o % I``:

* ``kernel_block`` (up to v0.28.x): the virtual block is ``kbs * CP``; ``o = p % (kbs*CP)``;
  slot = ``row[p // (kbs*CP)] * kbs + loff(o)`` (row holds kernel block ids). With ``kbs < bs`` and
  CP > 1 each kernel block is dealt out to the ranks on its own, and an interleave above ``kbs``
  gives local offsets past the kernel block (slots of the next kernel block: collisions).
* ``kv_block`` (v0.29 .. v0.31): the virtual block is ``bs * CP``; the local position
  ``lp = (p // (bs*CP)) * bs + loff(p % (bs*CP))`` is split by ``kbs``: slot = ``row[lp // kbs] *
  kbs + lp % kbs`` (V1's arithmetic, ``Geometry.locate``).
* ``manager_ids`` (v0.32 on): rows hold manager block ids; slot = ``row[lp // bs] * bs + lp % bs``
  (the same numbers as ``kv_block``; only the rows differ).

Without DCP every era gives ``row[p // t] * t + p % t`` over the row's own entries ``t``: the same
slots. From v0.29 a group with ``slot_mapping_enabled`` False (vLLM's ``CircularBufferSpec``) gets
PAD for every real token; from v0.31 a group that is not DCP-sharded uses global positions and is
local on every rank, and a batch row whose ``idx_mapping`` is -1 reads no block and gets PAD. Before
v0.31 such a row would read state row -1 (memory before the table); kvviz reads the null block 0
there instead of another row. A column past the row's width reads the null block 0 too.
"""
from __future__ import annotations

import numpy as np

from kvviz.constants import PAD_SLOT_ID

DCP_ERAS = ("kernel_block", "kv_block", "manager_ids")


def mrv2_token_slots(era: str, row_table, state_of_token, positions, *, block_size: int,
                     kernel_block_size: int, cp_size: int = 1, cp_rank: int = 0, interleave: int = 1,
                     enabled: bool = True, sharded: bool = True, pad_unmapped: bool = False) -> np.ndarray:
    """Slots (int64) of tokens at ``positions``; token i reads state row ``state_of_token[i]`` of
    ``row_table`` ([rows, W]: kernel ids for the first two eras, manager ids for ``manager_ids``)."""
    if era not in DCP_ERAS:
        raise ValueError(f"unknown MRV2 slot era {era!r}; known: {DCP_ERAS}")
    pos = np.asarray(positions, dtype=np.int64)
    s = np.asarray(state_of_token, dtype=np.int64)
    table = np.asarray(row_table)
    if not enabled or pos.size == 0:
        return np.full(pos.shape, PAD_SLOT_ID, dtype=np.int64)
    entry = block_size if era == "manager_ids" else kernel_block_size    # what one column holds
    base = kernel_block_size if era == "kernel_block" else block_size    # the virtual block's unit
    if cp_size == 1 or not sharded:
        local = np.ones(pos.shape, dtype=bool)
        lp = pos
    else:
        vidx, voff = np.divmod(pos, base * cp_size)
        local = (voff // interleave) % cp_size == cp_rank
        loff = (voff // (interleave * cp_size)) * interleave + voff % interleave
        if era == "kernel_block":
            # the column is the virtual block itself and the local offset is added as it is
            col = vidx
            blk = _read(table, s, col, local)
            slot = blk * kernel_block_size + loff
            return _finish(slot, local, s, pad_unmapped)
        lp = vidx * base + loff
    col, off = np.divmod(lp, entry)
    blk = _read(table, s, col, local)
    return _finish(blk * entry + off, local, s, pad_unmapped)


def _read(table, s, col, local):
    """Row entries where the rank stores the token; the null block 0 for a column past the width
    or a row outside the table (kvviz never reads another row)."""
    rows, width = table.shape
    ok = local & (col >= 0) & (col < width) & (s >= 0) & (s < rows)
    out = np.zeros(col.shape, dtype=np.int64)
    out[ok] = table[s[ok], col[ok]]
    return out


def _finish(slot, local, s, pad_unmapped):
    keep = local & (s >= 0) if pad_unmapped else local
    return np.where(keep, slot, PAD_SLOT_ID).astype(np.int64)


def mrv2_slot_mapping(rules, row_table, idx_mapping, query_start_loc, positions, num_tokens_padded: int,
                      *, geometry, enabled: bool = True, sharded: bool = True) -> np.ndarray:
    """One group's slot mapping ([num_tokens_padded], PAD tail) under ``rules``: batch row b's
    tokens ``[qsl[b], qsl[b+1])`` read state row ``idx_mapping[b]``."""
    idx = np.asarray(idx_mapping, dtype=np.int64)
    qsl = np.asarray(query_start_loc, dtype=np.int64)
    n = len(idx)
    total = int(qsl[n]) if n else 0
    out = np.full(int(num_tokens_padded), PAD_SLOT_ID, dtype=np.int64)
    if total:
        per_token = np.repeat(idx, np.diff(qsl[:n + 1]))
        out[:total] = mrv2_token_slots(
            rules.mrv2_dcp_slots, row_table, per_token, np.asarray(positions)[:total],
            block_size=geometry.block_size, kernel_block_size=geometry.kernel_block_size,
            cp_size=geometry.dcp_world_size, cp_rank=geometry.dcp_rank, interleave=geometry.interleave,
            enabled=enabled or not rules.mrv2_slot_mapping_enabled,
            sharded=sharded or not rules.mrv2_dcp_sharded, pad_unmapped=rules.mrv2_dcp_sharded)
    return out


def expand_kernel_blocks(rows, blocks_per_kv_block: int) -> np.ndarray:
    """The kernel-block table an attention group writes from manager-id rows (v0.32 on,
    ``AttentionGroup.map_to_kernel_block_table``): entry ``b`` becomes ``b*r + j`` for j < r, for
    every column of every row passed in (zeros become 0 .. r-1)."""
    rows = np.asarray(rows, dtype=np.int64)
    r = int(blocks_per_kv_block)
    if r == 1:
        return rows.astype(np.int32)
    out = rows[:, :, None] * r + np.arange(r, dtype=np.int64)[None, None, :]
    return out.reshape(rows.shape[0], rows.shape[1] * r).astype(np.int32)


def swa_reach(kind: str, sliding_window: int | None, cp_size: int, *, extra_retained_tokens: int = 0) -> int:
    """Tokens below a request's first scheduled position a sliding-window group still reads
    (``SlidingWindowSpec.num_retained_tokens``: window - 1 + extra); 0 for other groups and under
    context parallelism (``BlockTables.__init__`` in v0.33.0 disables the masking there)."""
    if kind != "sliding_window" or not sliding_window or cp_size > 1:
        return 0
    return int(sliding_window) - 1 + int(extra_retained_tokens)


def swa_null_columns(reach: int, num_computed: int, entry_block_size: int) -> int:
    """Leading columns v0.33's gather writes as 0: ``max(num_computed - reach, 0) // block_size``
    (none where reach is 0)."""
    if reach <= 0:
        return 0
    return max(int(num_computed) - reach, 0) // int(entry_block_size)
