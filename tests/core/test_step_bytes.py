"""kvviz.core.step_bytes: one step's host → device (and on-device) bytes per release and runner, against
the step engine's own records (what the Step through page shows) and against figures worked by hand."""
import pytest

from kvviz.core import step_bytes as sb
from kvviz.core.engine import run_scenario
from kvviz.views import scenarios as stepper

RELEASES = ("v0.12.0", "v0.18.0", "v0.21.0", "main", "v0.28.0", "v0.31.0", "v0.32.0", "v0.34.0")


def _rows(rec) -> list[sb.RowStep]:
    """A record's scheduled requests as RowSteps, their new blocks read from the manager's alloc events
    (not from the runner's staged writes), added = got a request state this step."""
    alloc: dict[str, int] = {}
    for e in rec.events:
        if e["kind"] == "alloc" and e["group"] == 0:
            alloc[e["req"]] = alloc.get(e["req"], 0) + len(e["blocks"])
    added = {e["req"] for e in rec.events if e["kind"] == "add_state"}
    return [sb.RowStep(s.seq_len, s.num_tokens, alloc.get(s.req_id, 0), s.req_id in added) for s in rec.scheduled]


@pytest.mark.parametrize("kbs", [None, 2])
@pytest.mark.parametrize("runner", ["v1", "v2"])
@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("name", stepper.NAMES)
def test_the_step_through_records_bytes_are_the_core_functions(name, release, runner, kbs):
    """Every step of the built-in scenarios: V1's commit bytes, or MRV2's apply_staged_writes bytes
    (staged writes + counts), as the engine recorded them, equal step_bytes' parts."""
    if (runner == "v1" and release == "v0.34.0") or (runner == "v2" and release == "v0.11.0"):
        pytest.skip("the release does not ship that runner")
    sc = stepper.load(name, vllm=release, runner=runner)
    if kbs:
        sc.config.kernel_block_size = kbs
    c = sc.config
    sizes = sb.Sizes(c.block_size, c.kernel_block_size, c.max_model_len, c.max_num_reqs)
    history = run_scenario(sc)
    assert history and all(rec.runner == runner for rec in history)
    for rec in history:
        got = sb.step_bytes(release, runner, _rows(rec), sizes)
        counted = got.part("block table") if runner == "v1" else got.part("staged writes") + got.part("num_blocks")
        assert counted == rec.commit_bytes, (rec.index, got.parts)
    if runner == "v2":   # not only the counts: some step staged ids
        assert any(sb.step_bytes(release, runner, _rows(r), sizes).part("staged writes") > 0 for r in history)


SHAPE = sb.steady_rows(64, 2048, 1, 16)          # the PCIe page's default batch
SIZES = sb.Sizes(16, None, 32768, 256)


def test_v1_by_hand():
    """64 decode rows, 32768 tokens of max length in 16-token blocks: 2048 columns of int32 per row."""
    got = sb.step_bytes("main", "v1", SHAPE, SIZES)
    assert got.part("block table") == 64 * 2048 * 4 == 524_288
    assert (got.part("positions"), got.part("query_start_loc"), got.part("seq_lens")) == (64 * 8, 65 * 4, 64 * 4)
    assert (got.part("CSR indptr"), got.part("CSR last_page_len"), got.part("CSR indices")) == (260, 256, 0)
    assert got.part("slot mapping") == 0 and got.pcie == 524_288 + 512 + 260 + 256 + 260 + 256
    assert got.device == 0
    # before v0.19.0 (#32951) the slot mapping is computed on the host and copied: int64 a token
    old = sb.step_bytes("v0.18.0", "v1", SHAPE, SIZES)
    assert old.part("slot mapping") == 64 * 8 and old.pcie == got.pcie + 512
    assert next(p.link for p in old.parts if p.name == "slot mapping") == sb.PCIE
    assert next(p.link for p in got.parts if p.name == "slot mapping") == sb.DEVICE


def test_v1_width_per_release_by_hand():
    # 1000 tokens in 16-token blocks: 63 columns, 64 once aligned to 128 tokens (v0.21.0, #39324)
    rows = sb.steady_rows(3, 100, 1, 16)
    assert sb.step_bytes("v0.20.0", "v1", rows, sb.Sizes(16, None, 1000)).part("block table") == 3 * 63 * 4
    assert sb.step_bytes("v0.21.0", "v1", rows, sb.Sizes(16, None, 1000)).part("block table") == 3 * 64 * 4
    # 48-token blocks: lcm(128, 48) = 384 tokens, 3 of them = 24 blocks (v0.27.0, #50302)
    assert sb.step_bytes("v0.27.0", "v1", rows, sb.Sizes(48, None, 1000)).part("block table") == 3 * 24 * 4
    # 16-token blocks split in 8-token kernel blocks: 4096 kernel ids a row, 2048 manager ids from v0.32.0
    split = sb.Sizes(16, 8, 32768)
    assert sb.step_bytes("v0.31.0", "v1", rows, split).part("block table") == 3 * 4096 * 4
    assert sb.step_bytes("v0.32.0", "v1", rows, split).part("block table") == 3 * 2048 * 4


def test_v2_by_hand():
    """64 decode rows, one in 16 crosses a block boundary: 4 staged writes of one id (4 B + 8 B of row
    and start), the 256 states' counts, idx_mapping, the whole query_start_loc buffer."""
    got = sb.step_bytes("main", "v2", SHAPE, SIZES)
    assert got.part("staged writes") == 4 * (4 + 8) == 48
    assert got.part("num_blocks") == 256 * 4
    assert got.part("idx_mapping") == 64 * 4 and got.part("query_start_loc") == 257 * 4
    assert got.pcie == 48 + 1024 + 256 + 1028 + 260 + 256 == 2872
    # the gather: 128 entries of each of the 64 rows, read and written on the device, no PCIe byte
    assert got.part("gather") == 64 * 128 * 4 and got.device == 32_768
    assert got.part("positions, seq_lens") == 0 and got.part("slot mapping") == 0
    # idx_mapping: int32 to v0.27.x (main included), int64 in v0.28.0 .. v0.30.0, int32 in v0.31.0, int64 again
    # from v0.32.0 (each release's prepare_inputs: async_tensor_h2d(idx_mapping_np, dtype=...))
    assert sb.step_bytes("v0.27.1", "v2", SHAPE, SIZES).part("idx_mapping") == 64 * 4
    assert sb.step_bytes("v0.28.0", "v2", SHAPE, SIZES).part("idx_mapping") == 64 * 8
    assert sb.step_bytes("v0.31.0", "v2", SHAPE, SIZES).part("idx_mapping") == 64 * 4
    assert sb.step_bytes("v0.32.0", "v2", SHAPE, SIZES).part("idx_mapping") == 64 * 8
    assert sb.step_bytes("v0.34.0", "v2", SHAPE, SIZES).part("idx_mapping") == 64 * 8
    # split blocks: 2 kernel ids a block staged before v0.32.0, one manager id from it
    split = sb.Sizes(16, 8, 32768, 256)
    assert sb.step_bytes("v0.31.0", "v2", SHAPE, split).part("staged writes") == 4 * (2 * 4 + 8)
    assert sb.step_bytes("v0.32.0", "v2", SHAPE, split).part("staged writes") == 4 * (1 * 4 + 8)


def test_an_added_request_stages_every_block():
    """A new request of 9 tokens in 4-token blocks stages its 3 blocks from column 0 (one write: 3 ids +
    row and start), 8 states' counts: 20 + 32 = 52 B, the Step through page's first lifecycle step's
    share for one such request."""
    got = sb.step_bytes("main", "v2", [sb.RowStep(9, 9, 3, added=True)], sb.Sizes(4, None, 64, 8))
    assert got.part("staged writes") == 3 * 4 + 8 and got.part("num_blocks") == 8 * 4


def test_steady_rows_spread_the_new_blocks():
    assert [r.new_blocks for r in SHAPE].count(1) == 4 and sum(r.new_blocks for r in SHAPE) == 4
    assert [r.new_blocks for r in sb.steady_rows(4, 100, 40, 16)] == [3, 3, 2, 2]   # cdiv(160, 16) = 10
    assert sb.changed_rows(sb.steady_rows(10, 50, 16, 16)) == 10


def test_refusals():
    with pytest.raises(ValueError, match="no V1 model runner"):
        sb.step_bytes("v0.34.0", "v1", SHAPE, SIZES)
    with pytest.raises(ValueError, match="V2 first shipped"):
        sb.step_bytes("v0.11.0", "v2", SHAPE, SIZES)
    with pytest.raises(ValueError, match="exceed max_num_reqs"):
        sb.step_bytes("main", "v2", SHAPE, sb.Sizes(max_num_reqs=8))
