"""Named behaviour profiles.

vLLM changed several bookkeeping rules over time. The current rules are the
default; an older rule is only ever used through a named profile, never mixed
in silently.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    # Blocks that reach ref 0 without a hash go to the *front* of the free queue
    # (reused first); hashed blocks go to the back (LRU). 2025-11: all to the back.
    prepend_unhashed_on_free: bool = True
    # FlashInfer last_page_len of an empty request (seq_len 0): 0 now, page size before 2025-11-14.
    empty_last_page_len_is_zero: bool = True
    # move_row zeroes the vacated source prefix (since 2026-07-29).
    move_row_clears_source: bool = True
    # remove_request zeroes the row's counted prefix and count (clear_row, since 2026-03-24, #37728);
    # before, the vacated row kept its ids and count until a later add_row or move_row overwrote it.
    remove_clears_row: bool = True
    # The slot mapping is computed on the device from the committed mirror (a Triton kernel, since
    # 2026-03-23, #32951); before, numpy computed it on the CPU from the CPU table and copied it, so
    # a skipped commit left the attention's block table stale but not the slots.
    slot_mapping_from_device_table: bool = True
    # Block-table width rounded up so a row covers a multiple of 128 tokens
    # ("lcm" since 2026-07-31; "none" before 2026-05).
    width_alignment: str = "lcm"


CURRENT = Profile(
    name="current",
    description="vLLM V1 main, 2026-08: hash-less blocks prepended on free, last_page_len 0 for "
    "empty rows, move_row clears its source, rows aligned to 128 tokens.",
)

V2025_11 = Profile(
    name="2025-11",
    description="vLLM ~v0.11 (Nov 2025): every freed block appended to the free queue, no clear_row on "
    "removal, move_row leaves its source as it was, slot mapping computed on the CPU from the CPU table, "
    "no width alignment; last_page_len already 0 for empty rows.",
    prepend_unhashed_on_free=False,
    empty_last_page_len_is_zero=True,
    move_row_clears_source=False,
    remove_clears_row=False,
    slot_mapping_from_device_table=False,
    width_alignment="none",
)

V2025_EARLY = Profile(
    name="2025-early",
    description="Before vLLM #25438 (2025-11-14): an empty request gets last_page_len = page size; "
    "otherwise as 2025-11.",
    prepend_unhashed_on_free=False,
    empty_last_page_len_is_zero=False,
    move_row_clears_source=False,
    remove_clears_row=False,
    slot_mapping_from_device_table=False,
    width_alignment="none",
)

PROFILES = {p.name: p for p in (CURRENT, V2025_11, V2025_EARLY)}


def get_profile(name: str | Profile | None) -> Profile:
    if name is None:
        return CURRENT
    if isinstance(name, Profile):
        return name
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of {sorted(PROFILES)}") from None
