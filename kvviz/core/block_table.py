"""Block tables: the CPU array is the truth, the device mirror changes only on commit.

Row operations act on the CPU array alone (as vLLM's ``BlockTable`` does). The
mirror is a separate array standing in for the GPU copy; ``commit(n)`` copies
the first ``n`` rows at full width. Until then the mirror is stale, and that is
something the user is meant to see.
"""
from __future__ import annotations

import numpy as np

from kvviz.constants import NULL_BLOCK_ID
from kvviz.core.geometry import Geometry, cdiv  # noqa: F401 (cdiv re-exported)


def get_block_table_width(max_num_blocks: int, block_size: int, kernel_block_size: int | None = None,
                          *, alignment: str = "lcm") -> int:
    """Row width in kernel blocks (``Geometry.table_width``)."""
    return _geometry(block_size, kernel_block_size).table_width(max_num_blocks, alignment)


def map_to_kernel_blocks(block_ids, blocks_per_kv_block: int) -> list[int]:
    """Manager block m covers kernel blocks m*bpk .. m*bpk+bpk-1 (``Geometry.kernel_blocks``)."""
    return Geometry(blocks_per_kv_block, 1).kernel_blocks(block_ids)


def _geometry(block_size: int, kernel_block_size: int | None) -> Geometry:
    """The geometry the loose sizes stand for (no kernel block size: the manager block size),
    refusing a kernel block size that does not divide the block size with a ValueError."""
    kbs = kernel_block_size or block_size
    if block_size % kbs:
        raise ValueError(f"kernel block size {kbs} does not divide block size {block_size}")
    return Geometry(block_size, kbs)


ENTRY_BYTES = 4      # one table entry: an int32 block id


def row_width(geometry: Geometry, max_num_blocks_per_req: int, alignment: str = "lcm", *,
              has_slot_mapping: bool = True, manager_ids: bool = False) -> int:
    """A table row's entries: the kernel-block width (a state group's rows are not token-aligned),
    or, with ``manager_ids`` (v0.32.0+ split blocks), that width in KV-manager ids."""
    width = geometry.table_width(max_num_blocks_per_req, alignment if has_slot_mapping else "none")
    return width // geometry.blocks_per_kv_block if manager_ids else width


def commit_bytes(num_rows: int, width: int) -> int:
    """The host → device bytes of V1's commit: rows [0, num_rows) at full width."""
    return num_rows * width * ENTRY_BYTES


class BlockTable:
    """One KV-cache group's table: ``[max_num_reqs, width]`` int32 in kernel blocks, or in KV-manager
    block ids with ``manager_ids`` (vLLM v0.32.0+, v1/worker/block_table.py: no expansion at append,
    the aligned manager width; the backend's kernel-block table is then mapped per attention group,
    ``kvviz.core.kernel_tables.kernel_block_table``).

    ``geometry`` says how manager block ids become the kernel block ids of a row; the loose
    ``block_size`` / ``kernel_block_size`` are a shorthand for ``Geometry(block_size, kernel_block_size)``."""

    def __init__(self, max_num_reqs: int, max_num_blocks_per_req: int, block_size: int | None = None,
                 kernel_block_size: int | None = None, *, geometry: Geometry | None = None,
                 has_slot_mapping: bool = True, move_row_clears_source: bool = True, alignment: str = "lcm",
                 manager_ids: bool = False):
        self.geometry = geometry or _geometry(block_size, kernel_block_size)
        self.has_slot_mapping = has_slot_mapping
        self.move_row_clears_source = move_row_clears_source
        self.manager_ids = manager_ids
        # state tables (Mamba-like) hold state indices and are not token-aligned
        # the kernel-block width the backend reads
        self.kernel_width = row_width(self.geometry, max_num_blocks_per_req, alignment,
                                      has_slot_mapping=has_slot_mapping)
        width = row_width(self.geometry, max_num_blocks_per_req, alignment, has_slot_mapping=has_slot_mapping,
                          manager_ids=manager_ids)
        self.max_num_reqs = max_num_reqs
        self.width = width
        self.cpu = np.zeros((max_num_reqs, width), dtype=np.int32)
        self.device = np.zeros((max_num_reqs, width), dtype=np.int32)
        self.num_blocks_per_row = np.zeros(max_num_reqs, dtype=np.int32)
        self.dirty = np.zeros(max_num_reqs, dtype=bool)  # rows changed since the last commit

    @property
    def block_size(self) -> int:
        """Tokens per kernel block: what the backend's table entries, slots and kernels count in."""
        return self.geometry.kernel_block_size

    @property
    def blocks_per_kv_block(self) -> int:
        return self.geometry.blocks_per_kv_block

    # --- row operations (CPU only) -------------------------------------------------
    def append_row(self, block_ids, row: int) -> None:
        if len(block_ids) == 0:
            return
        ids = [int(b) for b in block_ids] if self.manager_ids else self.geometry.kernel_blocks(block_ids)
        start = int(self.num_blocks_per_row[row])
        end = start + len(ids)
        if end > self.width:
            raise ValueError(f"row {row} would hold {end} blocks; the table is {self.width} wide")
        self.cpu[row, start:end] = ids
        self.num_blocks_per_row[row] = end
        self.dirty[row] = True

    def add_row(self, block_ids, row: int) -> None:
        # Resets the count only: entries past the new prefix keep their old values.
        self.num_blocks_per_row[row] = 0
        self.dirty[row] = True
        self.append_row(block_ids, row)

    def clear_row(self, row: int) -> None:
        n = int(self.num_blocks_per_row[row])
        self.cpu[row, :n] = NULL_BLOCK_ID
        self.num_blocks_per_row[row] = 0
        self.dirty[row] = True

    def move_row(self, src: int, tgt: int) -> None:
        n = int(self.num_blocks_per_row[src])
        self.cpu[tgt, :n] = self.cpu[src, :n]
        self.num_blocks_per_row[tgt] = n
        if self.move_row_clears_source:
            # A dummy run may dereference the vacated row after its blocks were reused.
            self.cpu[src, :n] = NULL_BLOCK_ID
            self.num_blocks_per_row[src] = 0
        self.dirty[[src, tgt]] = True

    def swap_row(self, a: int, b: int) -> None:
        self.cpu[[a, b]] = self.cpu[[b, a]]
        self.num_blocks_per_row[[a, b]] = self.num_blocks_per_row[[b, a]]
        self.dirty[[a, b]] = True

    # --- the one boundary between truth and mirror ----------------------------------
    def commit(self, num_rows: int) -> int:
        """Copy rows [0, num_rows) at full width to the mirror; returns the bytes moved."""
        self.device[:num_rows] = self.cpu[:num_rows]
        self.dirty[:num_rows] = False
        return commit_bytes(num_rows, self.width)

    def row_prefix(self, row: int) -> np.ndarray:
        return self.cpu[row, : int(self.num_blocks_per_row[row])]

    def device_view(self, num_reqs: int, num_reqs_padded: int | None = None, *,
                    fill: int | None = NULL_BLOCK_ID) -> np.ndarray:
        """What the attention kernel reads: mirror rows [0, num_reqs_padded). Padded rows are filled
        with ``fill``: the null block (v0.20.0+), -1 (v0.12.0 to v0.19.x), or None: never written,
        so the mirror's rows as an earlier commit left them (v0.11.x)."""
        n_pad = num_reqs if num_reqs_padded is None else num_reqs_padded
        view = self.device[:n_pad].copy()
        if fill is not None:
            view[num_reqs:n_pad] = fill
        return view

    def cpu_view(self, num_reqs: int, num_reqs_padded: int | None = None) -> np.ndarray:
        """The CPU table laid out like device_view (the 2025 CPU-side slot mapping read this)."""
        n_pad = num_reqs if num_reqs_padded is None else num_reqs_padded
        view = self.cpu[:n_pad].copy()
        view[num_reqs:n_pad] = NULL_BLOCK_ID
        return view


class MultiGroupBlockTable:
    """One BlockTable per KV-cache group; every row operation fans out."""

    def __init__(self, tables: list[BlockTable]):
        if not tables:
            raise ValueError("at least one KV-cache group is needed")
        self.tables = tables

    def __getitem__(self, gid: int) -> BlockTable:
        return self.tables[gid]

    def __len__(self) -> int:
        return len(self.tables)

    def append_row(self, block_ids_per_group, row: int) -> None:
        for t, ids in zip(self.tables, block_ids_per_group):
            t.append_row(ids, row)

    def add_row(self, block_ids_per_group, row: int) -> None:
        for t, ids in zip(self.tables, block_ids_per_group):
            t.add_row(ids, row)

    def clear_row(self, row: int) -> None:
        for t in self.tables:
            t.clear_row(row)

    def move_row(self, src: int, tgt: int) -> None:
        for t in self.tables:
            t.move_row(src, tgt)

    def swap_row(self, a: int, b: int) -> None:
        for t in self.tables:
            t.swap_row(a, b)

    def commit(self, num_rows: int) -> int:
        return sum(t.commit(num_rows) for t in self.tables)


def v1_tables(config, profile, *, move_row_clears_source: bool) -> list[BlockTable]:
    """The V1 runner's tables of an engine config, one per KV-cache group, under ``profile``'s rules:
    a state group holds one state index a row, never split; from v0.32.0 (``kernel_block_table_per_group``)
    a split attention group's table holds KV-manager ids."""
    max_blocks = config.geometry.blocks_for(config.max_model_len)
    out = []
    for g in config.groups:
        geo = config.group_geometry(g)
        state = g.kind == "state"
        out.append(BlockTable(config.max_num_reqs, 1 if state else max_blocks, geometry=geo,
                              move_row_clears_source=move_row_clears_source, **v1_table_rules(profile, geo, state)))
    return out


def v1_table_rules(profile, geometry: Geometry, state: bool = False) -> dict:
    """How ``profile``'s V1 runner lays out one group's rows: the width alignment, whether the rows
    carry slots (not a state group) and whether they hold KV-manager ids (v0.32.0+, split blocks)."""
    return {"alignment": profile.width_alignment, "has_slot_mapping": not state,
            "manager_ids": profile.kernel_block_table_per_group and not state and geometry.blocks_per_kv_block > 1}
