"""The bytes one step moves, for a vLLM release and a model runner: what crosses PCIe (host → device)
and what the GPU copies on its own side.

Counted with the very functions the step engine counts its records with, so that the PCIe page and
the Step through page cannot disagree: V1's commit is ``block_table.commit_bytes`` at the width
``block_table.row_width`` gives under the release's ``v1_table_rules``; MRV2's staged writes are
``runner_v2.staged_write_bytes`` per write (the ids ``runner_v2.staged_ids`` carries) and
``runner_v2.num_blocks_bytes`` for the counts.

V1 (up to v0.33.0): the commit copies rows [0, num_reqs) of the table at FULL width, changed or not
(the width from max_model_len: 128-token alignment from v0.21.0, KV-manager ids from v0.32.0 when
blocks are split); positions (int64 per token), query_start_loc and seq_lens (int32) come from the
host; before v0.19.0 the slot mapping too (int64 per token, computed on the host), after it the
slot-mapping kernel computes it on the device.

MRV2 (v0.12.0 on): ``apply_staged_writes`` copies only the changed entries (each staged write's ids
and its (row, start)) and the num_blocks counts, [groups, max_num_reqs] int32; ``prepare_inputs``
copies idx_mapping (one entry a request: ``Rules.mrv2_idx_mapping_bytes``) and the whole
query_start_loc buffer (max_num_reqs + 1 int32); positions, seq_lens and the slot mappings are
computed on the device; the gather copies each scheduled state row's first num_blocks entries into
the input tables ON the device: device bytes, no PCIe bytes.

Both: FlashInfer's paged_kv_indptr (num_reqs + 1) and last_page_len (num_reqs), int32, from the host;
its page indices gathered on the device (0 PCIe bytes), or, in the "host CSR indices" what-if, copied.
"""
from __future__ import annotations

from dataclasses import dataclass

from kvviz.core.block_table import ENTRY_BYTES, commit_bytes, row_width, v1_table_rules
from kvviz.core.geometry import Geometry, cdiv
from kvviz.core.runner_v2 import num_blocks_bytes, staged_ids, staged_write_bytes, v2_manager_ids
from kvviz.core.versions import Rules, resolve_runner, rules_for

INT32, INT64 = 4, 8
PCIE, DEVICE = "pcie", "device"


@dataclass(frozen=True)
class RowStep:
    """One scheduled request of a step: its tokens after the step, the tokens scheduled, the KV-manager
    blocks it was given this step, and whether it got its request state this step (``added``: MRV2
    stages every block it holds, from column 0)."""
    context_len: int
    query_len: int
    new_blocks: int = 0
    added: bool = False


@dataclass(frozen=True)
class Part:
    """One thing a step copies: its name (English, the CSV's), its bytes, and where they move:
    ``pcie`` (host → device) or ``device`` (on the GPU only, no PCIe byte)."""
    name: str
    nbytes: int
    link: str


@dataclass(frozen=True)
class StepBytes:
    release: str
    runner: str
    parts: tuple[Part, ...]

    @property
    def pcie(self) -> int:
        """Host → device bytes of the step."""
        return sum(p.nbytes for p in self.parts if p.link == PCIE)

    @property
    def device(self) -> int:
        """Bytes the GPU copies on its own side (MRV2's gather)."""
        return sum(p.nbytes for p in self.parts if p.link == DEVICE)

    def part(self, name: str) -> int:
        return next(p.nbytes for p in self.parts if p.name == name)

    def names(self) -> list[str]:
        return [p.name for p in self.parts]


@dataclass(frozen=True)
class Sizes:
    """The engine sizes a step's bytes depend on (one full-attention KV-cache group)."""
    block_size: int = 16
    kernel_block_size: int | None = None
    max_model_len: int = 32768
    max_num_reqs: int = 256
    host_csr_indices: bool = False

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.block_size, self.kernel_block_size or self.block_size)

    @property
    def max_blocks(self) -> int:
        return self.geometry.blocks_for(self.max_model_len)


def v1_width(release: str | Rules | None, sizes: Sizes) -> int:
    """Entries in one V1 table row under that release (what its commit copies per row)."""
    rules = rules_for(release)
    geo = sizes.geometry
    return row_width(geo, sizes.max_blocks, **v1_table_rules(rules, geo))


def v2_width(release: str | Rules | None, sizes: Sizes) -> int:
    """Entries in one MRV2 state row under that release."""
    rules = rules_for(release)
    return row_width(sizes.geometry, sizes.max_blocks, rules.width_alignment, manager_ids=v2_manager_ids(rules))


def _csr(rows: list[RowStep], sizes: Sizes) -> list[Part]:
    n = len(rows)
    pages = int(sum(sizes.geometry.page_count([r.context_len for r in rows]))) if rows else 0
    return [Part("CSR indptr", (n + 1) * INT32, PCIE), Part("CSR last_page_len", n * INT32, PCIE),
            Part("CSR indices", pages * INT32, PCIE) if sizes.host_csr_indices else Part("CSR indices", 0, DEVICE)]


def v1_parts(rules: Rules, rows: list[RowStep], sizes: Sizes) -> list[Part]:
    """V1's copies of one step under ``rules`` (the commit, the host-built inputs, FlashInfer's CSR)."""
    n, tokens = len(rows), sum(r.query_len for r in rows)
    on_host = not rules.slot_mapping_from_device_table
    return [Part("block table", commit_bytes(n, v1_width(rules, sizes)), PCIE),
            Part("positions", tokens * INT64, PCIE), Part("query_start_loc", (n + 1) * INT32, PCIE),
            Part("seq_lens", n * INT32, PCIE),
            Part("slot mapping", tokens * INT64 if on_host else 0, PCIE if on_host else DEVICE),
            *_csr(rows, sizes)]


def staged_entries(rules: Rules, rows: list[RowStep], sizes: Sizes) -> list[int]:
    """The ids of each staged write of the step, in row order: a row given blocks stages them after
    its count, an added row every block it holds (an added row with none still stages an empty write)."""
    geo = sizes.geometry
    per_block = len(staged_ids(geo, v2_manager_ids(rules), [0]))
    out = []
    for r in rows:
        blocks = geo.blocks_for(r.context_len) if r.added else r.new_blocks
        if blocks or r.added:
            out.append(blocks * per_block)
    return out


def v2_parts(rules: Rules, rows: list[RowStep], sizes: Sizes) -> list[Part]:
    """MRV2's copies of one step under ``rules``: the staged writes and counts, idx_mapping and
    query_start_loc over PCIe; positions, seq_lens, slots and the gather on the device."""
    n = len(rows)
    geo = sizes.geometry
    writes = sum(staged_write_bytes(k) for k in staged_entries(rules, rows, sizes))
    per_block = len(staged_ids(geo, v2_manager_ids(rules), [0]))
    width = v2_width(rules, sizes)
    gathered = sum(min(geo.blocks_for(r.context_len) * per_block, width) for r in rows) * ENTRY_BYTES
    return [Part("staged writes", writes, PCIE), Part("num_blocks", num_blocks_bytes(1, sizes.max_num_reqs), PCIE),
            Part("idx_mapping", n * rules.mrv2_idx_mapping_bytes, PCIE),
            Part("query_start_loc", (sizes.max_num_reqs + 1) * INT32, PCIE),
            Part("positions, seq_lens", 0, DEVICE), Part("slot mapping", 0, DEVICE),
            Part("gather", gathered, DEVICE), *_csr(rows, sizes)]


def step_bytes(release: str | Rules | None, runner: str, rows: list[RowStep], sizes: Sizes = Sizes()) -> StepBytes:
    """The bytes of one step of ``rows`` under vLLM ``release`` (None: main) and ``runner`` (v1 | v2;
    ValueError with one sentence for a runner the release does not ship, or more requests than
    ``sizes.max_num_reqs``)."""
    rules = rules_for(release)
    runner = resolve_runner(rules, runner)
    if len(rows) > sizes.max_num_reqs:
        raise ValueError(f"{len(rows)} requests exceed max_num_reqs {sizes.max_num_reqs}")
    parts = v1_parts(rules, rows, sizes) if runner == "v1" else v2_parts(rules, rows, sizes)
    return StepBytes(rules.name, runner, tuple(parts))


def steady_rows(num_reqs: int, context_len: int, query_len: int, block_size: int) -> list[RowStep]:
    """A running batch in a steady state: ``num_reqs`` requests of ``context_len`` tokens after the
    step, ``query_len`` each, their block boundaries spread evenly, so the batch gains
    cdiv(num_reqs x query_len, block_size) blocks this step (a decode row one every block_size
    steps), as evenly over the rows as they go: the first rows get one more."""
    total = cdiv(num_reqs * query_len, block_size)
    base, extra = divmod(total, num_reqs)
    return [RowStep(context_len, query_len, base + (i < extra)) for i in range(num_reqs)]


def changed_rows(rows: list[RowStep]) -> int:
    """Rows whose table changes this step (given blocks, or added)."""
    return sum(1 for r in rows if r.new_blocks or r.added)
