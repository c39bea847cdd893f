"""Each check against the hand-worked dump of tests/dump_fixtures.py, one defect at a time."""
import json
from pathlib import Path

import numpy as np
import pytest

from dump_fixtures import base_dump, base_mapping, v2_dump, v2_mapping
from kvviz.dumps import check
from kvviz.dumps.check import CHECKS, CONCEPTS, applicable_checks, first_wrong_row


def ids(findings):
    return [(f.check, f.row, f.index) for f in findings]


@pytest.fixture
def run_checks(request):
    """``check.run_checks``, each dump it is given noted: after the test, every finding of those
    dumps (at the default limit and at limit 1) must be the recorded English one for
    ``<test name>#<n>`` (tests/data/findings_en.json; ``KVVIZ_RECORD_FINDINGS=1`` rewrites them)."""
    dumps = []

    def run(d, **kw):
        dumps.append(d)
        return check.run_checks(d, **kw)

    yield run
    _compare_or_record(request.node.originalname, [(f"{request.node.originalname}#{k}", d)
                                                  for k, d in enumerate(dumps)])


def test_clean_dump_has_no_findings(run_checks):
    d = base_dump()
    assert run_checks(d) == []
    v2_only = {c for c in CHECKS if c.startswith("v2-")}
    assert set(applicable_checks(d)) == set(CHECKS) - v2_only - {"kernel-table"}   # no kernel_block_table
    v2 = v2_dump()
    assert run_checks(v2) == []
    assert set(applicable_checks(v2)) == set(CHECKS) - {"pad-row", "mirror-stale", "kernel-table"}


def test_every_check_names_a_known_concept():
    assert len(CHECKS) == 20
    assert all(c.concept in CONCEPTS and c.explanation for c in CHECKS.values())


def test_one_function_per_check():
    """The runner runs one function per catalogued check, in catalogue order."""
    assert list(check.CHECK_FUNCTIONS) == list(CHECKS)
    assert len(set(check.CHECK_FUNCTIONS.values())) == len(CHECKS)


def test_the_geometry_the_checks_use():
    """The Geometry quantities the checks compare against (FlashInfer's last page, a slot's block and
    offset, kernel blocks per manager block) agree with the step builder's CSR and plain arithmetic."""
    from kvviz.core.geometry import Geometry
    from kvviz.core.step import compute_csr
    geo = Geometry(8, 4)
    seq = np.array([0, 1, 4, 5, 8, 9])
    bt = np.arange(60, dtype=np.int32).reshape(6, 10)
    for empty_zero in (True, False):
        want = compute_csr(bt, seq, 4, empty_last_page_len_is_zero=empty_zero)[2]
        assert geo.last_page_len(seq, empty_zero).tolist() == want.tolist()
    assert [geo.split_slot(s) for s in (0, 5, 11, -1)] == [(0, 0), (1, 1), (2, 3), (-1, 3)]
    assert geo.kernel_block_count(3) == 6 and geo.kernel_block_count(np.array([0, 1])).tolist() == [0, 2]


def test_mirror_stale_in_counted_prefix_only(run_checks):
    dev = base_mapping()["block_table_device"]
    dev[1, 1] = 9          # inside row 1's 2 counted blocks: stale
    dev[0, 3] = 7          # past row 0's 3 counted blocks: not looked at
    f = run_checks(base_dump(block_table_device=dev))
    assert ids(f) == [("mirror-stale", 1, 1)]
    assert "block 9 on the device but block 5 in the CPU table" in f[0].message


def test_slot_mismatch_names_expected_slot(run_checks):
    f = run_checks(base_dump(slot_mapping=np.array([12, 14, 20, -1])))
    assert ids(f) == [("slot-mismatch", 0, 1)]
    assert f[0].message.startswith("Token 1 (row 0, position 9) has slot 14")
    assert "block 3 at offset 1, which is slot 13" in f[0].message


def test_pad_slot(run_checks):
    f = run_checks(base_dump(slot_mapping=np.array([12, 13, 20, 0])))
    assert ids(f) == [("pad-slot", None, 3)]


def test_pad_row_device_and_cpu_leftovers(run_checks):
    dev = base_mapping()["block_table_device"]
    dev[2, 2] = 6
    f = run_checks(base_dump(block_table_device=dev))
    assert ids(f) == [("pad-row", 2, 2)]
    # a vacated CPU row that still counts its blocks (move_row without clearing)
    m = base_mapping()
    m["block_table"][2, :2] = [4, 5]
    m["num_blocks_per_row"][2] = 2
    f = run_checks(base_dump(block_table=m["block_table"], num_blocks_per_row=m["num_blocks_per_row"]))
    assert ids(f) == [("pad-row", 2, 0)]
    assert "still counts 2 block(s)" in f[0].message
    # rows past num_reqs_padded are not read
    dev = base_mapping()["block_table_device"]
    dev[3, 0] = 6
    assert run_checks(base_dump(block_table_device=dev)) == []


def test_out_of_range_and_null(run_checks):
    m = base_mapping()
    m["block_table"][0, 1] = 16          # pool has 0..15
    m["block_table"][1, 0] = 0           # null block inside a live prefix
    d = base_dump(block_table=m["block_table"], block_table_device=m["block_table"].copy())
    got = ids(run_checks(d))
    assert ("block-out-of-range", 0, 1) in got
    assert ("null-in-live-row", 1, 0) in got
    assert got.index(("block-out-of-range", 0, 1)) < got.index(("null-in-live-row", 1, 0))


def test_null_allowed_with_sliding_window(run_checks):
    m = base_mapping()
    m["block_table"][0, 0] = 0           # fell out of an 8-token window (seq 10: tokens 0..2 gone)
    m["ref_cnt"][1] = 0
    m["free_block_ids"] = np.concatenate(([1], m["free_block_ids"])).astype(np.int32)
    d = base_dump(block_table=m["block_table"], block_table_device=m["block_table"].copy(),
                  ref_cnt=m["ref_cnt"], free_block_ids=m["free_block_ids"], sliding_window=8,
                  paged_kv_indices=np.array([0, 2, 3, 4, 5], np.int32))
    assert run_checks(d) == []


def test_too_few_blocks(run_checks):
    f = run_checks(base_dump(seq_lens=np.array([13, 5, 0], np.int32),
                             paged_kv_last_page_len=np.array([1, 1, 0], np.int32),
                             paged_kv_indptr=np.array([0, 4, 6, 6], np.int32),
                             paged_kv_indices=np.array([1, 2, 3, 0, 4, 5], np.int32)))
    assert ("too-few-blocks", 0, 3) in ids(f)
    msg = next(x.message for x in f if x.check == "too-few-blocks")
    assert msg == "Row 0 counts 3 block(s), but its 13 tokens need ceil(13 / 4) = 4 block(s) of 4 tokens."


def test_freed_block_in_use_and_refcount(run_checks):
    m = base_mapping()
    m["ref_cnt"][4] = 0
    m["free_block_ids"] = np.array([4, 6, 7], np.int32)
    f = run_checks(base_dump(ref_cnt=m["ref_cnt"], free_block_ids=m["free_block_ids"]))
    assert ids(f) == [("freed-block-in-use", 1, 0), ("refcount-mismatch", None, 4)]
    assert "free-list position 0" in f[0].message and "ref count 0" in f[0].message
    assert f[1].message.startswith("Block 4 has ref count 0 but 1 live row holds it")


def test_refcount_leak_and_null_block_ignored(run_checks):
    ref = base_mapping()["ref_cnt"]
    ref[7] = 2          # nobody holds 7
    ref[0] = 99         # the null block's count is not maintained
    f = run_checks(base_dump(ref_cnt=ref))
    assert ids(f) == [("refcount-mismatch", None, 7)]
    assert "ref count 2 but 0 live rows hold it" in f[0].message


def test_shared_partial_block_and_shared_full_block(run_checks):
    m = base_mapping()
    bt = m["block_table"]
    bt[1, :2] = [1, 3]          # row 1 shares full block 1 (fine) and row 0's partial block 3
    ref = m["ref_cnt"]
    ref[1], ref[3], ref[4], ref[5] = 2, 2, 0, 0
    free = np.concatenate(([4, 5], m["free_block_ids"])).astype(np.int32)
    d = base_dump(block_table=bt, block_table_device=bt.copy(), ref_cnt=ref, free_block_ids=free,
                  slot_mapping=np.array([12, 13, 12, -1]), paged_kv_indices=np.array([1, 2, 3, 1, 3], np.int32))
    f = run_checks(d)
    # row 0: block 3 holds 2 of 4 tokens; row 1 (5 tokens) has block 3 as its last block too
    assert ids(f) == [("shared-partial-block", 0, 2), ("shared-partial-block", 1, 1)]
    assert "Row 0's last block 3 holds only 2 of 4 tokens yet 1 other live row (row 1)" in f[0].message


def test_duplicate_block_in_row(run_checks):
    m = base_mapping()
    bt = m["block_table"]
    bt[0, 2] = 1
    ref = m["ref_cnt"]
    ref[3] = 0
    d = base_dump(block_table=bt, block_table_device=bt.copy(), ref_cnt=ref,
                  free_block_ids=np.concatenate(([3], m["free_block_ids"])).astype(np.int32),
                  slot_mapping=np.array([4, 5, 20, -1]), paged_kv_indices=np.array([1, 2, 1, 4, 5], np.int32))
    f = run_checks(d)
    assert ids(f) == [("duplicate-block-in-row", 0, 2)]
    assert "lists block 1 twice (columns 0 and 2)" in f[0].message


def test_csr_checks(run_checks):
    f = run_checks(base_dump(paged_kv_indptr=np.array([0, 3, 4, 5], np.int32)))
    assert ids(f)[:2] == [("csr-indptr", 1, 2), ("csr-indptr", 2, 3)]
    assert "gives row 1 1 page(s), but its 5 tokens need ceil(5 / 4) = 2 page(s)" in f[0].message
    f = run_checks(base_dump(paged_kv_indices=np.array([1, 2, 3, 4, 6], np.int32)))
    assert ids(f) == [("csr-indices", 1, 1)]
    assert "entry 4 (row 1, page 1) is 6" in f[0].message
    f = run_checks(base_dump(paged_kv_last_page_len=np.array([2, 1, 4], np.int32)))
    assert ids(f) == [("csr-last-page-len", 2, 0)]


def test_free_list_duplicates_and_null(run_checks):
    f = run_checks(base_dump(free_block_ids=np.array([6, 7, 0, 6, 8, 20], np.int32)))
    assert ids(f) == [("block-out-of-range", None, 5), ("free-list-duplicate", None, 2),
                      ("free-list-duplicate", None, 3)]
    assert "positions 0 and 3" in f[2].message


def test_order_is_by_row_then_check(run_checks):
    dev = base_mapping()["block_table_device"]
    dev[1, 0] = 9
    f = run_checks(base_dump(block_table_device=dev, slot_mapping=np.array([12, 14, 20, 5]),
                             ref_cnt=np.zeros(16, np.int32)))
    rows = [x.row for x in f]
    assert rows[:3] == [0, 0, 1] and rows[-1] is None
    assert first_wrong_row(f) == 0
    assert [x.check for x in f if x.row == 0] == ["freed-block-in-use", "slot-mismatch"]


def test_findings_capped_per_check(run_checks):
    bt = np.zeros((200, 4), np.int32)
    d = base_dump(block_table=bt, block_table_device=bt.copy(), num_reqs=120, num_reqs_padded=None,
                  num_blocks_per_row=(np.arange(200) < 120).astype(np.int32), seq_lens=None, query_start_loc=None,
                  positions=None, slot_mapping=None, paged_kv_indptr=None, paged_kv_indices=None,
                  paged_kv_last_page_len=None, ref_cnt=None, free_block_ids=None)
    f = [x for x in run_checks(d, limit=50) if x.check == "null-in-live-row"]
    assert len(f) == 51 and f[-1].row is None and f[-1].message.startswith("70 more rows")


@pytest.mark.parametrize("world", [2])
def test_dcp_dump_skips_csr_and_uses_dcp_slots(world, run_checks):
    # 2 DCP ranks, interleave 1: rank 0 stores the even offsets of each virtual block of 8,
    # at local offset voff // 2. pos 5 -> rank 1 (-1); pos 6 -> block 1, offset 3 -> slot 7;
    # pos 8 -> virtual block 1 (id 5), offset 0 -> slot 20, but the dump says 16
    d = base_dump(dcp_world_size=world, dcp_rank=0, slot_mapping=np.array([-1, 7, 16, -1]),
                  positions=np.array([5, 6, 8, 0]), seq_lens=np.array([10, 9, 0], np.int32),
                  paged_kv_indptr=None, paged_kv_indices=None, paged_kv_last_page_len=None)
    f = run_checks(d)
    assert ids(f) == [("slot-mismatch", 1, 2)]
    assert "which is slot 20" in f[0].message


# --- the messages: English byte-identical to the recorded ones, and in every language ----------------

FINDINGS_EN = Path(__file__).resolve().parents[1] / "data" / "findings_en.json"


def _bare(**m):
    """A dump with only the required tables, plus ``m``."""
    base = dict(seq_lens=None, query_start_loc=None, positions=None, slot_mapping=None, paged_kv_indptr=None,
                paged_kv_indices=None, paged_kv_last_page_len=None, ref_cnt=None, free_block_ids=None,
                block_table_device=None, num_reqs_padded=None)
    base.update(m)
    return base_dump(**base)


def _extra_dumps():
    """Dumps reaching the branches of the messages the tests above leave out."""
    out = {}
    m = base_mapping()
    dev = m["block_table_device"]
    dev[0, :3] = [7, 8, 9]
    out["mirror-3-stale"] = base_dump(block_table_device=dev)
    m = base_mapping()
    m["block_table"][1, 2:4] = [9, 10]            # an old occupant's ids past live row 1's count (2)
    out["stale-tail-two"] = base_dump(block_table=m["block_table"])
    out["slots-2-wrong"] = base_dump(slot_mapping=np.array([4, 5, 20, -1]))
    out["slot-outside"] = base_dump(positions=np.array([8, 9, 40, 0]))
    out["pad-slot-many"] = base_dump(slot_mapping=np.array([12, 13, 20, 5, 6, 7]))
    out["indices-2-wrong"] = base_dump(paged_kv_indices=np.array([7, 8, 3, 4, 5], np.int32))
    out["indptr-start-past"] = base_dump(paged_kv_indptr=np.array([1, 3, 5, 5], np.int32))
    out["indptr-past"] = base_dump(paged_kv_indices=np.array([1, 2, 3, 4], np.int32))
    m = base_mapping()
    m["block_table"][0, :3] = [1, 1, 1]
    out["dup-repeats"] = base_dump(block_table=m["block_table"], block_table_device=m["block_table"].copy())
    m = base_mapping()
    m["ref_cnt"][4] = 0
    out["freed-ref-only"] = base_dump(ref_cnt=m["ref_cnt"], free_block_ids=None)
    out["freed-free-only"] = base_dump(ref_cnt=None, free_block_ids=np.array([4, 6, 7], np.int32))
    m = base_mapping()
    m["ref_cnt"][1] = 3
    m["ref_cnt"][2] = 0
    out["refcount-2-ways"] = base_dump(ref_cnt=m["ref_cnt"])
    bt = np.zeros((8, 4), np.int32)
    bt[:7, :2] = [1, 2]                       # 7 rows share full block 1 and partial block 2
    ref = np.zeros(16, np.int32)
    ref[1] = ref[2] = 1
    out["shared-by-7"] = _bare(block_table=bt, num_reqs=7, num_blocks_per_row=np.array([2] * 7 + [0], np.int32),
                               seq_lens=np.full(7, 6, np.int32), ref_cnt=ref)
    bt = np.zeros((4, 4), np.int32)
    bt[0, :3] = [4, 5, 6]                     # kernel blocks of 2 inside blocks of 4
    out["kernel-blocks"] = _bare(block_table=bt, num_reqs=1, num_blocks_per_row=np.array([3, 0, 0, 0], np.int32),
                                 seq_lens=np.array([10], np.int32), kernel_block_size=2)
    out["dcp-other-rank"] = base_dump(dcp_world_size=2, dcp_rank=0, slot_mapping=np.array([3, 7, 20, -1]),
                                      positions=np.array([5, 6, 8, 0]), seq_lens=np.array([10, 9, 0], np.int32),
                                      paged_kv_indptr=None, paged_kv_indices=None, paged_kv_last_page_len=None)
    bt = base_mapping()["block_table"]
    bt[2, 1] = 6                              # no device mirror: the padded row of the CPU table is read
    out["pad-row-cpu"] = base_dump(block_table=bt, block_table_device=None)
    out["free-list-2-out-of-range"] = base_dump(free_block_ids=np.array([16, 6, -1, 7], np.int32))
    m = base_mapping()
    m["block_table"][3, :2] = [4, 5]          # row 3 (past the padded rows) still counts D's old blocks
    cnt = m["num_blocks_per_row"]
    cnt[3] = 2
    out["vacated-row"] = base_dump(block_table=m["block_table"], num_blocks_per_row=cnt)
    out["vacated-count-only"] = base_dump(num_blocks_per_row=np.array([3, 2, 0, 1], np.int32))
    out["early-empty-row"] = base_dump(profile="2025-early")    # the empty padded row's last_page_len is 0
    out["early-empty-live-row"] = base_dump(profile="2025-early", num_reqs_padded=2,
                                            paged_kv_last_page_len=np.array([2, 0, 0], np.int32),
                                            seq_lens=np.array([10, 0], np.int32))   # a live row, 0 tokens: 4
    out["v0.15-padded-row-0"] = base_dump(profile="v0.15.0")     # -1 is what v0.12 .. v0.19 write
    g = v2_mapping()["block_table"]
    g[1, 1], g[2, 0] = 9, 7
    out["v2-stale-gather-and-pad"] = v2_dump(block_table=g)
    out["v2-idx-duplicate"] = v2_dump(idx_mapping=np.array([7, 7], np.int32))
    out["v2-idx-range"] = v2_dump(idx_mapping=np.array([7, 8], np.int32))
    out["v2-idx-empty-state"] = v2_dump(idx_mapping=np.array([7, 4], np.int32))
    bt = np.zeros((4, 1), np.int32)
    bt[:2, 0] = [3, 0]
    from kvviz.dumps.format import dump_from_mapping
    from test_real_states_corpus import _kernel_block_table_per_group as v032

    out["kernel-table-v0.31"] = dump_from_mapping({**v032(), "vllm": "v0.31.0"})
    m = v032()
    m["kernel_block_table"][2, 3] = 0
    out["kernel-table-v0.32-unmapped"] = dump_from_mapping({**m, "vllm": "v0.32.0"})
    out["state-no-block"] = _bare(block_table=bt, num_reqs=2, num_blocks_per_row=np.array([1, 0, 0, 0], np.int32),
                                  seq_lens=np.array([9, 4], np.int32), group_kind="state")
    return out


def _other_dumps() -> dict:
    """The dumps no test above builds: the bug pairs, the example dumps, the extra dumps."""
    from kvviz.dumps.faults import BUGS, bug_pair
    from kvviz.dumps.format import load_dump

    out = {}
    for bug in BUGS:
        for side, d in zip(("clean", "buggy"), bug_pair(bug)):
            out[f"bug:{bug}:{side}"] = d
    for p in sorted((Path(__file__).resolve().parents[2] / "examples" / "dumps").glob("*.json")):
        out[f"example:{p.name}"] = load_dump(str(p))
    out.update(sorted(_extra_dumps().items()))
    return out


def _findings(labelled):
    return [(label, limit, check.run_checks(d, limit=limit)) for label, d in labelled for limit in (50, 1)]


def _templates(f) -> list[str]:
    """The message templates a finding's text is made of (its own and those of nested messages)."""
    used, stack = set(), [(f.key, f.params)]
    while stack:
        key, params = stack.pop()
        used.add(key)
        stack += [(v.key, v.params) for v in params.values() if isinstance(v, check.Msg)]
    return sorted(used)


def _rows(found):
    """[label, limit, check, row, index, English message, templates used] per finding."""
    return [[label, limit, f.check, f.row, f.index, f.message, _templates(f)] for label, limit, fs in found for f in fs]


from kvviz.texts.findings import STRINGS  # noqa: E402
from kvviz.texts.i18n import LANGS  # noqa: E402


def _assert_texts(found):
    """Each finding renders in every language: no placeholder left, Chinese in zh, Spanish not English."""
    import re

    for _, _, fs in found:
        for f in fs:
            assert f.key in STRINGS and f.text("en") == f.message
            for lang in LANGS:
                text = f.text(lang)
                assert text and not re.search(r"[{}]", text), (lang, f.key, text)
            assert re.search(r"[\u4e00-\u9fff]", f.text("zh")), f.key
            assert f.text("es") != f.message, f.key


def _source(label: str) -> str:
    return label.split("#")[0] if label.startswith("test_") else label


def _compare_or_record(source: str, labelled):
    """The English findings of ``labelled`` dumps equal the recorded rows of ``source``; with
    KVVIZ_RECORD_FINDINGS=1, they replace them in the file instead."""
    import os

    found = _findings(labelled)
    got = _rows(found)
    rows = json.loads(FINDINGS_EN.read_text())
    if os.environ.get("KVVIZ_RECORD_FINDINGS") == "1":
        rows = [r for r in rows if _source(r[0]) != source] + got
        FINDINGS_EN.write_text(json.dumps(sorted(rows, key=lambda r: r[0]), indent=0, ensure_ascii=False) + "\n")
    else:
        assert got == [r for r in rows if _source(r[0]) == source]
    _assert_texts(found)


OTHER = _other_dumps()


@pytest.mark.parametrize("label", list(OTHER))
def test_messages_match_the_recorded_english(label):
    """`kvviz check` prints ``message``: it must stay byte-identical to the recorded English sentences."""
    _compare_or_record(label, [(label, OTHER[label])])


def test_recorded_findings_cover_every_check_and_come_from_a_case():
    rows = json.loads(FINDINGS_EN.read_text())
    assert {r[2] for r in rows} == set(CHECKS)
    tests = {n for n, f in globals().items() if n.startswith("test_") and "run_checks" in f.__code__.co_varnames}
    assert {_source(r[0]) for r in rows} <= tests | set(OTHER)


def test_finding_texts_in_every_language():
    """(Each finding's texts are checked with its case, above.) Every template is reached by some
    recorded finding, and names the same placeholders in each language."""
    import re
    from kvviz.dumps.check import render
    from kvviz.texts.i18n import missing_translations

    assert missing_translations(["findings"]) == []
    used = {key for r in json.loads(FINDINGS_EN.read_text()) for key in r[6]}
    assert set(STRINGS) - used == set()
    for key, entry in STRINGS.items():
        names = {lang: set(re.findall(r"{(\w+)}", entry[lang])) for lang in LANGS}
        assert names["zh"] == names["en"] == names["es"], key
    assert render("more.tokens", {"n": 2}, "xx") == " (2 more such tokens in this row)"   # falls back to English


# record the English messages (before changing them): KVVIZ_RECORD_FINDINGS=1 pytest tests/dumps/test_check.py


def test_stale_tail_only_where_the_release_zeroes_what_a_row_stops_counting():
    """From v0.27.0 (move_row clears its source, #49757; clear_row on removal since v0.19.0, #37728)
    entries past a row's count are 0; before, an old id there is what the release itself leaves."""
    m = base_mapping()
    m["block_table"][1, 2:4] = [9, 10]
    dump = base_dump(block_table=m["block_table"])
    hits = {p: [f.row for f in check.run_checks(dump, profile=p) if f.check == "stale-tail"]
            for p in ("v0.26.0", "v0.27.0", "v0.32.0", "v0.18.0")}
    assert hits == {"v0.26.0": [], "v0.27.0": [1], "v0.32.0": [1], "v0.18.0": []}
