"""Every injectable bug: the clean dump is clean, the broken one raises exactly its checks."""
import pytest

from kvviz.dumps.faults import BUGS, bug_pair
from kvviz.dumps.check import first_wrong_row, run_checks

# (bug, first wrong row or None, the checks) worked out from the scenario in kvviz/bugs.py
EXPECTED = {
    "move_row_no_clear": (3, {"pad-row"}),              # D moved 3 -> 1; row 3 keeps [7, 4]
    "commit_too_few_rows": (3, {"mirror-stale", "slot-mismatch", "csr-indices"}),
    "skip_commit": (1, {"mirror-stale", "csr-indices"}),  # row 1 still holds B's [3, 4]
    "last_page_len_no_full_rule": (2, {"csr-last-page-len"}),   # C: 8 tokens, full last page
    "pad_swap": (3, {"pad-slot", "pad-row"}),
    "shared_partial_block": (0, {"shared-partial-block"}),      # A and its fork share block 9
    "wrong_block_size_slot": (0, {"slot-mismatch"}),
}


def test_all_seven_bugs_listed():
    assert set(BUGS) == set(EXPECTED)


@pytest.mark.parametrize("bug", sorted(EXPECTED))
def test_bug_flagged_and_clean_counterpart_clean(bug):
    clean, broken = bug_pair(bug)
    assert run_checks(clean) == []
    found = run_checks(broken)
    row, checks = EXPECTED[bug]
    assert {f.check for f in found} == checks == set(BUGS[bug].expected)
    assert first_wrong_row(found) == row


def test_move_row_dump_has_padding_and_the_stale_row():
    _, d = bug_pair("move_row_no_clear")
    assert (d.num_reqs, d.padded_reqs) == (3, 4)
    assert d.block_table[3, :2].tolist() == [7, 4] and d.num_blocks_per_row[3] == 2
    assert d.block_table[1, :2].tolist() == [7, 4]


def test_commit_too_few_rows_messages():
    _, d = bug_pair("commit_too_few_rows")
    f = run_checks(d)
    assert f[0].message.startswith("Row 3 column 0 is block 0 on the device but block 7 in the CPU table")
    assert "which is slot 28" in f[1].message     # D's position 0 in block 7: 7 * 4 + 0
