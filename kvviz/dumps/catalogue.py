"""The checker's catalogue: every check's ID, title, concept and explanation, the concepts they
guard, and findings with their messages (templates in kvviz/texts/findings.py, three languages).

``Finding.message`` is the English rendering, exactly what ``python -m kvviz check`` prints: those
sentences are a contract (tests/data/findings_en.json pins them). The checks themselves are in
kvviz/dumps/checks_*.py (one function per check), the runner in kvviz/dumps/check.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from kvviz.texts.findings import STRINGS as _TEXTS


@dataclass(frozen=True)
class CheckInfo:
    """What one check guards, for the CLI's help, the page and the docs."""
    id: str
    title: str
    concept: str          # key of the concept the check guards (for the UI's links)
    needs: tuple          # dump keys beyond the required ones
    explanation: str      # what the invariant is and why it matters, for a student


CONCEPTS = {
    "mirror": "CPU table and device mirror: rows are edited on the CPU and copied to the GPU by one "
              "commit per step, of the first num_reqs rows.",
    "slot-mapping": "Slot mapping: token at position p of row r goes to slot "
                    "block_table[r, p // B] * B + p % B; padding tokens get -1.",
    "padding": "CUDA-graph padding: padded tokens get slot -1 (never written) and padded request "
               "rows are all block 0 (always safe to read).",
    "block-pool": "The block pool: blocks 1..N-1 are handed out, block 0 is the null block, each "
                  "block's ref count is the number of requests holding it, free blocks sit in the "
                  "free queue.",
    "allocation": "Allocation: a request of S tokens holds ceil(S / B) blocks, each listed once, in "
                  "the first num_blocks_per_row entries of its row.",
    "prefix-sharing": "Prefix sharing and copy-on-write: only full blocks may be shared; a forked "
                      "request gets its own copy of the partially filled last block.",
    "flashinfer-csr": "FlashInfer's CSR page table: indptr is the running total of pages, indices "
                      "the rows' block prefixes, last_page_len the fill of each last page.",
    "runner-v2": "Model Runner V2: block ids live in request-state rows (by state index); each step "
                 "gathers the scheduled rows in batch order through idx_mapping into the input table, "
                 "zeroing the padded rows.",
}

CHECK_LIST = [
    CheckInfo("mirror-stale", "Device mirror is stale", "mirror", ("block_table_device",),
              "The device copy of a live row differs from the CPU table inside the row's counted "
              "blocks: the row was changed after the last commit, or the commit copied too few rows, "
              "so the attention kernel reads an old version of the row."),
    CheckInfo("block-out-of-range", "Block id outside the pool", "block-pool", (),
              "A counted entry (or a free-list entry) is negative or not below num_blocks: the kernel "
              "would read or write memory that belongs to no block."),
    CheckInfo("null-in-live-row", "Null block in a live row", "block-pool", (),
              "Block 0 is the null block used for padding. A live request must not have it among its "
              "counted blocks (sliding-window rows may, for blocks that fell out of the window)."),
    CheckInfo("duplicate-block-in-row", "Block listed twice in one row", "allocation", (),
              "Each of a request's blocks holds a different range of its tokens, so a block id may "
              "appear only once in a row's counted prefix."),
    CheckInfo("too-few-blocks", "Row holds too few blocks", "allocation", ("seq_lens",),
              "A request with S tokens needs ceil(S / B) blocks; with fewer, its last tokens have "
              "nowhere to live and the kernel reads past the row's counted prefix. (A state group "
              "holds one state block per request instead.)"),
    CheckInfo("freed-block-in-use", "Freed block still in use", "block-pool",
              ("ref_cnt", "free_block_ids"),
              "A block a live row counts is on the free list or has ref count 0, so the pool may hand "
              "it to another request, which would overwrite this one's keys and values."),
    CheckInfo("shared-partial-block", "Partially filled block is shared", "prefix-sharing", ("seq_lens",),
              "Two live rows hold the same block and it is the partially filled last block of one of "
              "them: the next token of one request overwrites the other's. It needs copy-on-write."),
    CheckInfo("slot-mismatch", "Slot does not match the table", "slot-mapping",
              ("slot_mapping", "positions", "query_start_loc"),
              "A real token's slot differs from block_table[row, pos // B] * B + pos % B computed from "
              "the CPU table, so its key and value are written to the wrong place."),
    CheckInfo("pad-slot", "Padding token has a real slot", "padding", ("slot_mapping", "query_start_loc"),
              "Slots after the last real token must be -1 so the KV write skips them; any other value "
              "makes a padding token overwrite a real slot."),
    CheckInfo("pad-row", "Padded row is not all 0", "padding", (),
              "Rows from num_reqs to num_reqs_padded are read by CUDA-graph replays and must point only "
              "at the null block 0; a stale id there lets a dummy request read or write a real block. "
              "In current vLLM every row past num_reqs must also count 0 blocks: remove_request and "
              "condense's move_row clear the row they vacate."),
    CheckInfo("stale-tail", "Entry past a row's count is not 0", "mirror", (),
              "From v0.27.0 vLLM zeroes every entry a row stops counting (clear_row on removal, move_row's "
              "source in condense), so entries past a row's count are 0. An old block id there is a row that "
              "was reused or moved without clearing its tail (vllm#39589): a reader of the whole row, such as "
              "a page copy that trusts another length, hands another request's blocks to the kernel."),
    CheckInfo("csr-indptr", "FlashInfer indptr is wrong", "flashinfer-csr", ("paged_kv_indptr", "seq_lens"),
              "paged_kv_indptr must start at 0 and grow by ceil(seq_len / page_size) per row."),
    CheckInfo("csr-indices", "FlashInfer page indices are wrong", "flashinfer-csr",
              ("paged_kv_indices", "paged_kv_indptr", "seq_lens"),
              "Row r's slice of paged_kv_indices must equal the first ceil(seq_len / page_size) entries "
              "of row r of the block table."),
    CheckInfo("csr-last-page-len", "FlashInfer last_page_len is wrong", "flashinfer-csr",
              ("paged_kv_last_page_len", "seq_lens"),
              "The last page holds seq_len % page_size tokens, except that a full last page counts as "
              "page_size and an empty row as 0."),
    CheckInfo("kernel-table", "Kernel-block table differs from the release's rule", "mirror",
              ("kernel_block_table",),
              "With kernel blocks smaller than the KV-manager blocks, the attention backend reads kernel "
              "blocks: manager block b stands for r*b .. r*b+r-1. From vLLM v0.32.0 the persistent table "
              "holds manager ids and each attention group writes r*b+j for every column of every row it "
              "is given, so unused columns and padded rows read 0, 1, .., r-1; before, the table itself "
              "held kernel ids, expanded at append, and unused entries and padded rows stay 0 (the "
              "release's padding fill)."),
    CheckInfo("refcount-mismatch", "Ref count differs from the holders", "block-pool", ("ref_cnt",),
              "A block's ref count must equal the number of live rows holding it (block 0's is not "
              "kept). Assumes every running request is in this batch."),
    CheckInfo("v2-idx-mapping", "idx_mapping is wrong", "runner-v2", ("idx_mapping",),
              "Model Runner V2: each live batch row names the request-state row it is gathered from. "
              "The index must name a state row, no two batch rows may name the same one, and a row "
              "with tokens must name a state that holds blocks."),
    CheckInfo("v2-gather", "Gathered row differs from its state row", "runner-v2",
              ("idx_mapping", "state_block_table", "state_num_blocks"),
              "Model Runner V2: a live row of the input table must equal the first state_num_blocks "
              "entries of the state row idx_mapping names; otherwise the gather ran before the state "
              "row was written, or not at all this step, and the kernel reads old block ids. (Entries "
              "past the count are left from earlier steps and never read.)"),
    CheckInfo("v2-pad-row", "Padded row of the gathered table is not all 0", "runner-v2", ("idx_mapping",),
              "Model Runner V2's gather zeroes the rows from num_reqs to num_reqs_padded every step; "
              "CUDA-graph replays read them, so a stale id there lets a padding request touch a real "
              "block."),
    CheckInfo("free-list-duplicate", "Free list repeats a block", "block-pool", ("free_block_ids",),
              "Each free block is in the free queue once, and the null block 0 never is; otherwise two "
              "requests can be handed the same block."),
]
CHECKS: dict[str, CheckInfo] = {c.id: c for c in CHECK_LIST}
CHECK_ORDER = {c.id: i for i, c in enumerate(CHECK_LIST)}


class Msg(NamedTuple):
    """A message template (a key of kvviz/texts/findings.py) and its parameters; a parameter may itself
    be a Msg (an optional clause, rendered in the same language) or "" (a clause left out)."""
    key: str
    params: dict


def render(key: str, params: dict, lang: str = "en") -> str:
    """The message ``key`` with ``params`` in ``lang`` (English where a translation is missing)."""
    entry = _TEXTS[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**{k: render(v.key, v.params, lang) if isinstance(v, Msg) else v
                          for k, v in params.items()})


def more_clause(k: int, what: str = "entries"):
    """The " (N more such <what> in this row)" clause, or "" when the row has one wrong entry."""
    return Msg(f"more.{what}", {"n": k - 1}) if k > 1 else ""


def plural_clause(n: int, key: str) -> Msg:
    """The ``key.one`` or ``key.many`` template, for a count ``n``."""
    return Msg(f"{key}.{'one' if n == 1 else 'many'}", {"n": n})


@dataclass
class Finding:
    """One broken invariant: the check, where (table row and entry index; None where it belongs to
    no row), and the message: English in ``message``, any language through ``text(lang)``."""
    check: str
    row: int | None
    index: int | None
    message: str                 # English, as `kvviz check` prints it
    key: str | None = field(default=None, compare=False, repr=False)
    params: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, check: str, row: int | None, index: int | None, msg: Msg) -> Finding:
        return cls(check, row, index, render(msg.key, msg.params), msg.key, msg.params)

    def text(self, lang: str = "en") -> str:
        """The message in ``lang``; ``message`` is the English one."""
        return self.message if self.key is None else render(self.key, self.params, lang)

    def to_json(self) -> dict:
        out = {"check": self.check}
        if self.row is not None:
            out["row"] = self.row
        if self.index is not None:
            out["index"] = self.index
        out["message"] = self.message
        return out

    def sort_key(self):
        """By row (findings of no row last), then check (catalogue order), then index."""
        return (self.row is None, self.row if self.row is not None else 0, CHECK_ORDER[self.check],
                self.index if self.index is not None else -1)


