"""Property tests over random operation sequences (>= 1000 sequences per run)."""
import re

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from kvviz import reference
from kvviz.core.batch import PersistentBatch
from kvviz.core.block_table import BlockTable, MultiGroupBlockTable
from kvviz.core.engine import Engine
from kvviz.errors import BadInput
from kvviz.core.scenario import parse_scenario

request_st = st.fixed_dictionaries({
    "arrival": st.integers(0, 6),
    "prompt_len": st.integers(1, 30),
    "prefix_len": st.integers(0, 16),
    "prefix_group": st.sampled_from(["g1", "g2"]),
    "max_tokens": st.integers(1, 8),
})
action_st = st.fixed_dictionaries({
    "step": st.integers(0, 12),
    "kind": st.sampled_from(["finish", "preempt", "fork"]),
    "req": st.sampled_from([f"R{i}" for i in range(6)]),
    "n": st.integers(1, 2),
})
config_st = st.fixed_dictionaries({
    "num_blocks": st.integers(6, 40),
    "block_size": st.sampled_from([1, 2, 4, 8]),
    "max_num_reqs": st.integers(1, 6),
    "max_num_batched_tokens": st.integers(4, 48),
    "enable_prefix_caching": st.booleans(),
    "profile": st.sampled_from(["current", "2025-11", "2025-early", "v0.12.0", "v0.19.1", "v0.20.0", "v0.25.1",
                                "v0.27.0"]),
    "runner": st.sampled_from([None, "v1", "v2"]),
    "cudagraph_capture_sizes": st.sampled_from([[], [1, 2, 4, 8, 16]]),
    "groups": st.sampled_from([[{"kind": "full"}],
                               [{"kind": "full"}, {"kind": "sliding_window", "sliding_window": 5}],
                               [{"kind": "full"}, {"kind": "state"}]]),
})


def scenario_st():
    return st.tuples(config_st, st.lists(request_st, min_size=1, max_size=6),
                     st.lists(action_st, max_size=4), st.sampled_from([1, 2])).map(_build)


def _build(t):
    cfg, reqs, acts, kbs_div = t
    cfg = dict(cfg, max_model_len=64)
    if cfg["runner"] is None or (cfg["runner"] == "v2" and cfg["profile"] in ("2025-11", "2025-early")):
        cfg.pop("runner")
    if cfg["block_size"] % kbs_div == 0:
        cfg["kernel_block_size"] = cfg["block_size"] // kbs_div
    out = []
    for i, r in enumerate(reqs):
        r = dict(r, id=f"R{i}")
        r["prefix_len"] = min(r["prefix_len"], r["prompt_len"])
        out.append(r)
    ids = {r["id"] for r in out}
    acts = [a for a in acts if a["req"] in ids]   # an action on an unknown request is refused at load
    if not all(a["kind"] == "fork" for a in acts):
        acts = [{k: v for k, v in a.items() if k != "n"} if a["kind"] != "fork" else a for a in acts]
    return {"config": cfg, "requests": out, "actions": acts}


def check_step(engine: Engine, rec) -> None:
    m = engine.manager
    tpb = m.geometry.virtual_block_size
    # pool accounting
    m.pool.check_invariants(m.live_references())
    # shared blocks are full in every holder
    holders: dict[int, list[tuple[str, int, int]]] = {}
    for rid, groups in m.req_blocks.items():
        for gid, blocks in enumerate(groups):
            for i, b in enumerate(blocks):
                if not b.is_null:
                    holders.setdefault(b.block_id, []).append((rid, gid, i))
    for bid, hs in holders.items():
        if len(hs) > 1:
            for rid, gid, i in hs:
                assert engine.config.groups[gid].kind != "state", "state blocks are never shared"
                assert (i + 1) * tpb <= engine.requests[rid].num_computed_tokens, (
                    f"block {bid} shared but partial in {rid}")
    # rows are compact and each row holds exactly its request's blocks
    n = rec.num_reqs
    assert all(r is not None for r in rec.rows[:n]) and all(r is None for r in rec.rows[n:])
    if engine.runner == "v2":
        tables = [(t.geometry.kernel_block_size, t.geometry.blocks_per_kv_block) for t in engine.states.groups]
        check_v2_tables(engine, rec)
    else:
        tables = [(t.block_size, t.blocks_per_kv_block) for t in engine.batch.tables.tables]
        check_v1_tables(engine, rec)
    fill = 0 if engine.runner == "v2" else engine.profile.padded_row_fill
    for gid, (kbs, _) in enumerate(tables):
        inp = rec.inputs[gid]
        if inp.slot_mapping is None:
            continue
        # slot mapping equals the plain recomputation; CSR equals the reference
        ref = reference.slot_mapping(inp.query_start_loc, inp.positions, inp.block_table,
                                     block_size=engine.config.block_size, kernel_block_size=kbs,
                                     num_reqs=n, num_tokens_padded=inp.num_tokens_padded)
        np.testing.assert_array_equal(inp.slot_mapping, ref)
        want = reference.flashinfer_csr(inp.block_table, inp.seq_lens, kbs,
                                        empty_last_page_len_is_zero=engine.profile.empty_last_page_len_is_zero)
        if engine.runner == "v1" and engine.profile.padded_last_page_len_one:   # v0.11.x FlashInfer padding
            want[2][n:] = 1
        for got, w in zip((inp.paged_kv_indptr, inp.paged_kv_indices, inp.paged_kv_last_page_len), want):
            np.testing.assert_array_equal(got, w)
        # padding: -1 slots, NULL rows, zero seq_lens, qsl padded with its last value
        assert (inp.slot_mapping[inp.num_tokens:] == -1).all()
        if fill is not None:   # v0.11.x never wrote padded rows: they are whatever the mirror held
            assert (inp.block_table[n:] == fill).all()
        assert (inp.seq_lens[n:] == 0).all()
        assert (inp.query_start_loc[n:] == inp.query_start_loc[n]).all()
        # full-attention tokens never land in the null block nor in the same slot twice
        if engine.config.groups[gid].kind == "full":
            real = inp.slot_mapping[: inp.num_tokens]
            assert (real >= kbs).all()
            assert len(set(real.tolist())) == len(real)


def expected_row(engine: Engine, rec, rid: str, gid: int, bpk: int):
    """The kernel block ids a running request's row must hold (None: not checked)."""
    entry = rec.requests[rid]
    if entry["state"] != "running" or engine.config.groups[gid].kind != "full":
        return None
    return [b * bpk + k for b in entry["blocks"][gid] for k in range(bpk)]


def check_v1_tables(engine: Engine, rec) -> None:
    n = rec.num_reqs
    for gid, t in enumerate(engine.batch.tables.tables):
        np.testing.assert_array_equal(t.device[:n], t.cpu[:n])     # mirror equals CPU after commit
        for row, rid in enumerate(rec.rows[:n]):
            expect = expected_row(engine, rec, rid, gid, t.blocks_per_kv_block)
            if expect is not None:
                assert t.cpu[row, : t.num_blocks_per_row[row]].tolist() == expect


def check_v2_tables(engine: Engine, rec) -> None:
    """V2: the state row of every scheduled request holds its blocks; the gathered row b equals the
    first num_blocks entries of state row idx_mapping[b]; idx_mapping is duplicate-free and live."""
    n = rec.num_reqs
    idx = rec.idx_mapping
    assert len(idx) == n and len(set(idx)) == n
    assert all(rec.state_rows[s] == rid for s, rid in zip(idx, rec.rows[:n]))
    for gid, g in enumerate(engine.states.groups):
        for b, (s, rid) in enumerate(zip(idx, rec.rows[:n])):
            cnt = int(rec.num_blocks_per_row[gid][s])
            np.testing.assert_array_equal(rec.device_tables[gid][b, :cnt], rec.cpu_tables[gid][s, :cnt])
            expect = expected_row(engine, rec, rid, gid, g.geometry.blocks_per_kv_block)
            if expect is not None:
                assert rec.cpu_tables[gid][s, :cnt].tolist() == expect
        assert (rec.device_tables[gid][n:rec.num_reqs_padded] == 0).all()


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario_st())
def test_random_scenarios_keep_every_invariant(spec):
    sc = parse_scenario(spec)
    engine = Engine(sc)
    for _ in range(60):
        if engine.done():
            break
        try:
            rec = engine.step()
        except BadInput as e:
            # refused only when one request alone cannot fit the whole pool: check the claim
            # against the block arithmetic (every group of this kind needs at least this much)
            m = re.search(r"can never finish: at step \d+ request (\S+) needs room for (\d+) tokens", str(e))
            assert m, str(e)
            c, tokens = sc.config, int(m.group(2))
            need = sum(-(-tokens // (c.block_size * c.dcp_world_size)) if g.kind == "full" else 1
                       for g in c.groups)
            assert need > c.num_blocks - 1 or any(g.kind == "sliding_window" for g in c.groups), (str(e), need)
            assert set(engine.running) <= {m.group(1)}     # nothing else holds blocks
            return
        check_step(engine, rec)


ops = st.lists(st.tuples(st.sampled_from(["add", "remove", "append", "condense", "swap", "commit"]),
                         st.integers(0, 7), st.integers(0, 7)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_batch_rows_match_a_plain_model(seq):
    """Rows of the persistent batch vs a dict model: lowest hole first, condense fills holes top-down."""
    bt = BlockTable(8, 64, 4, alignment="none")
    b = PersistentBatch(MultiGroupBlockTable([bt]))
    model: dict[str, list[int]] = {}
    counter = 0
    for op, x, y in seq:
        if op == "add" and b.num_reqs + len(b.holes) < 8:
            rid = f"r{counter}"
            counter += 1
            ids = list(range(counter, counter + x % 3 + 1))
            holes = b.holes
            expect_row = holes[0] if holes else b.num_reqs
            assert b.add_request(rid, [ids]) == expect_row
            model[rid] = ids
        elif op == "remove" and model:
            rid = sorted(model)[x % len(model)]
            b.remove_request(rid)
            del model[rid]
        elif op == "append" and model:
            rid = sorted(model)[x % len(model)]
            if len(model[rid]) < 60:
                b.append_blocks(rid, [[100 + y]])
                model[rid].append(100 + y)
        elif op == "condense":
            b.condense()
            assert sorted(b.req_id_to_index.values()) == list(range(b.num_reqs))
        elif op == "swap" and not b.holes and b.num_reqs >= 2:
            b.swap_rows(x % b.num_reqs, y % b.num_reqs)
        elif op == "commit":
            bt.commit(b.num_reqs + len(b.holes))
            np.testing.assert_array_equal(bt.device[: b.num_reqs], bt.cpu[: b.num_reqs])
        for rid, ids in model.items():
            assert bt.row_prefix(b.req_id_to_index[rid]).tolist() == ids
        for hole in b.holes:  # a removed row's counted prefix is cleared
            assert bt.num_blocks_per_row[hole] == 0
