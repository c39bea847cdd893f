"""Model Runner V2 dumps of the simulator, release by release (v0.31.0 .. v0.34.0), on the hybrid
scenario (block size 4, kernel block size 2, a full group, a sliding window of 8, a state group):
every step's dump of every group is clean under its release, and the states a release produces are
findings under one that never produces them:

* v0.32.0 on, vllm/v1/worker/utils.py:389 ``map_to_kernel_block_table``: manager-id state rows and
  the attention's ``b * r + j`` table; under v0.31.0 (kernel-id rows) a v2-gather finding;
* v0.33.0 on, vllm/v1/worker/gpu/block_table.py:315 (MASK_SLIDING_WINDOW): a sliding-window row's
  entries below the window gathered as the null block; under v0.32.0 a v2-gather finding;
* v0.33.0 on, block_table.py:191 (``_num_dirty_rows``): the dump carries ``previous_num_reqs``.

The expected tables are recomputed here from the state rows with plain loops."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kvviz.core.engine import Engine
from kvviz.core.scenario import parse_scenario
from kvviz.dumps.capture import dump_from_step
from kvviz.dumps.check import run_checks

ROOT = Path(__file__).resolve().parents[2]
HYBRID = ROOT / "examples/scenarios/hybrid.json"
RELEASES = ("v0.31.0", "v0.32.0", "v0.33.0", "v0.34.0")


def run(release, faults=()):
    sc = json.loads(HYBRID.read_text())
    sc["config"].update(runner="v2", vllm=release)
    engine = Engine(parse_scenario(sc), faults=set(faults))
    return engine, engine.run(40)


def checks(d, release=None):
    return {f.check for f in run_checks(d, profile=release)}


@pytest.mark.parametrize("release", RELEASES)
def test_every_step_and_group_is_clean_under_its_release(release):
    engine, recs = run(release)
    assert recs
    for r in recs:
        for g in range(len(engine.config.groups)):
            d = dump_from_step(r, engine.config, group=g)
            assert d.vllm == release and run_checks(d) == [], (release, r.index, g,
                                                               [f.message for f in run_checks(d)])


def expand(row, r):
    return [int(b) * r + j for b in row for j in range(r)]


@pytest.mark.parametrize("release", ("v0.32.0", "v0.33.0", "v0.34.0"))
def test_manager_id_rows_and_the_kernel_block_table(release):
    engine, recs = run(release)
    r = engine.config.block_size // engine.config.kbs
    assert r == 2
    for rec in recs:
        d = dump_from_step(rec, engine.config, group=0)            # the full-attention group
        assert d.state_block_table.shape[1] * r == d.width
        for b in range(d.num_reqs):
            s = int(d.idx_mapping[b])
            n = int(d.state_num_blocks[s])
            assert d.block_table[b, : n * r].tolist() == expand(d.state_block_table[s, :n], r)
        for b in range(d.num_reqs, d.padded_reqs):
            assert d.block_table[b].tolist() == [c % r for c in range(d.width)]
        if rec.num_reqs:
            assert "v2-gather" in checks(d, "v0.31.0"), rec.index


@pytest.mark.parametrize("release", ("v0.33.0", "v0.34.0"))
def test_sliding_window_nulls_are_clean_and_a_finding_before_v0_33(release):
    engine, recs = run(release)
    window = engine.config.groups[1].sliding_window
    r = engine.config.block_size // engine.config.kbs
    nulled_steps = 0
    for rec in recs:
        d = dump_from_step(rec, engine.config, group=1)
        assert d.sliding_window == window
        nulled = False
        for b in range(d.num_reqs):
            s = int(d.idx_mapping[b])
            q = int(d.query_start_loc[b + 1] - d.query_start_loc[b])
            num_null = max(int(d.seq_lens[b]) - q - (window - 1), 0) // engine.config.block_size
            n = int(d.state_num_blocks[s])
            want = [0 if c < num_null else int(d.state_block_table[s, c]) for c in range(n)]
            assert d.block_table[b, : n * r].tolist() == expand(want, r), (rec.index, b)
            nulled |= any(d.state_block_table[s, c] != 0 for c in range(min(num_null, n)))
        if nulled:
            nulled_steps += 1
            assert "v2-gather" in checks(d, "v0.32.0"), rec.index
    assert nulled_steps, "the scenario never nulls a sliding window's entries"


def test_previous_num_reqs_from_v0_33():
    for release, has in (("v0.32.0", False), ("v0.33.0", True)):
        engine, recs = run(release)
        prev = [dump_from_step(rec, engine.config, group=2).previous_num_reqs for rec in recs]
        want = [p if (p := recs[i - 1].num_reqs if i else 0) > recs[i].num_reqs_padded else None
                for i in range(len(recs))]
        assert prev == (want if has else [None] * len(recs)), release
        assert any(prev) == has


@pytest.mark.parametrize("fault", ("skip_gather", "skip_apply_staged_writes"))
@pytest.mark.parametrize("release", ("v0.32.0", "v0.33.0"))
def test_faults_still_give_their_findings(release, fault):
    engine, recs = run(release, [fault])
    for g in (0, 1):
        flagged = set()
        for rec in recs:
            flagged |= checks(dump_from_step(rec, engine.config, group=g))
        assert flagged & {"v2-gather", "v2-idx-mapping"}, (release, fault, g)


def test_cli_run_dump_then_check(tmp_path):
    def cli(*a):
        return subprocess.run([sys.executable, "-m", "kvviz", *a], cwd=ROOT, capture_output=True, text=True)
    out = tmp_path / "f.json"
    r = cli("run", str(HYBRID), "--vllm", "v0.33.0", "--runner", "v2", "--dump", "5", "--group", "1",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    r = cli("check", str(out), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["findings"] == [], r.stdout
    r = cli("check", str(out), "--vllm", "v0.32.0", "--json")
    assert "v2-gather" in {f["check"] for f in json.loads(r.stdout)["findings"]}, r.stdout
    d = json.loads(out.read_text())
    assert d["sliding_window"] == 8 and "seq_lens" in d and "query_start_loc" in d
    assert np.asarray(d["state_block_table"]).shape[1] * 2 == np.asarray(d["block_table"]).shape[1]


class _Staged:
    def __init__(self, a):
        self.gpu = a


class _BlockTablesV032:
    """v0.32.0-shaped MRV2 BlockTables (vllm/v1/worker/gpu/block_table.py:34: block_sizes only, no
    kernel_block_sizes): state and input rows of KV-manager ids."""
    def __init__(self, state, counts, gathered, block_size):
        self.block_tables = [_Staged(state)]
        self.num_blocks = _Staged(counts[None, :])
        self.input_block_tables = [gathered]
        self.block_sizes = [block_size]


def test_capture_v2_of_a_v0_32_block_tables_with_smaller_kernel_blocks():
    from dump_fixtures import v2_mapping

    from kvviz.dumps.capture import capture_v2
    m = v2_mapping()              # block size 4, manager ids; the attention's kernel blocks are 2 tokens
    bt = _BlockTablesV032(m["state_block_table"], m["state_num_blocks"], m["block_table"], 4)
    d = capture_v2(bt, idx_mapping=m["idx_mapping"], num_reqs_padded=3, num_blocks=16, seq_lens=m["seq_lens"],
                   query_start_loc=m["query_start_loc"], positions=m["positions"], slot_mapping=m["slot_mapping"],
                   vllm="v0.32.0", kernel_block_size=2)
    assert d.kernel_block_size == 2 and d.width == 8
    assert np.array_equal(d.state_block_table, m["state_block_table"])
    for r in range(4):
        assert d.block_table[r].tolist() == expand(m["block_table"][r], 2)
    assert run_checks(d) == [], [f.message for f in run_checks(d)]
    assert {"v2-gather", "v2-pad-row"} <= checks(d, "v0.31.0")
