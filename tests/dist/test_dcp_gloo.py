"""``kvviz dcp``: decode context parallelism on real ranks (gloo on CPU processes, NCCL on GPUs).

The in-process tests (the LSE output of the decode kernel, the merge, refused inputs) are fast; each
multi-process test starts real ranks (torch + the Triton interpreter in every one), so the batches
are tiny. ``KVVIZ_SEED=N`` replays a random test.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import kvviz_kernels as kernels  # noqa: F401  (TRITON_INTERPRET before any kernel module)
from kvviz_kernels.paged_decode import paged_decode_block_table, paged_decode_csr
from kvviz import reference
from kvviz.cli import main
from kvviz.constants import NULL_BLOCK_ID
from kvviz.dist.merge import dense_decode, merge_factors, merge_reference
from kvviz.gpu.attention_ref import decode_attention_ref, kv_write_ref
from tests.support import fresh_seed

ROOT = Path(__file__).resolve().parents[2]
DEV = "cuda" if torch.cuda.is_available() else "cpu"
RUN_TIMEOUT = 240


def garbage(shape, dtype, gen):
    """Random bit patterns (NaNs and infs included): an entry the kernel forgot cannot pass."""
    n = int(np.prod(shape))
    raw = torch.randint(0, 256, (n * torch.empty(0, dtype=dtype).element_size(),), dtype=torch.uint8, generator=gen)
    return raw.view(dtype).reshape(shape)


def lse_reference(q, keys, sm_scale):
    """float64 numpy log-sum-exp of each (request, query head)'s scaled scores; -inf when empty."""
    q = np.asarray(q, dtype=np.float64)
    out = np.full(q.shape[:2], -np.inf)
    for r, k in enumerate(keys):
        k = np.asarray(k, dtype=np.float64)
        if len(k) == 0:
            continue
        group = q.shape[1] // k.shape[1]
        for h in range(q.shape[1]):
            s = k[:, h // group, :] @ q[r, h] * sm_scale
            out[r, h] = s.max() + np.log(np.exp(s - s.max()).sum())
    return out


# --- the kernel's LSE output ------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["NHD", "HND"])
def test_paged_decode_lse_matches_numpy(layout):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    page, kv_heads, group, dim = 4, 2, 2, 8
    seq = np.array([0, 1, 7, 13], dtype=np.int32)          # an empty request, a one-token one
    nblk = [(int(s) + page - 1) // page for s in seq]
    ids = rng.choice(np.arange(1, 40), size=sum(nblk), replace=False)
    bt = np.full((len(seq), max(nblk)), NULL_BLOCK_ID, dtype=np.int32)
    shape = (2, 40, page, kv_heads, dim) if layout == "NHD" else (2, 40, kv_heads, page, dim)
    cache = garbage(shape, torch.float16, gen)
    keys, values, slots, at = [], [], [], 0
    for r, n in enumerate(nblk):
        bt[r, :n] = ids[at:at + n]
        at += n
        keys.append(torch.randn((int(seq[r]), kv_heads, dim), generator=gen).half())
        values.append(torch.randn((int(seq[r]), kv_heads, dim), generator=gen).half())
        slots.append(torch.tensor([int(bt[r, t // page]) * page + t % page for t in range(int(seq[r]))],
                                  dtype=torch.int64))
    cache = kv_write_ref(cache, torch.cat(keys), torch.cat(values), torch.cat(slots), layout=layout).to(DEV)
    q = torch.randn((len(seq), kv_heads * group, dim), generator=gen)
    scale = 0.37
    want_out = decode_attention_ref(q.numpy(), [k.float().numpy() for k in keys],
                                    [v.float().numpy() for v in values], sm_scale=scale)
    want_lse = lse_reference(q.numpy(), [k.float().numpy() for k in keys], scale)
    ip, ix, lp = (torch.from_numpy(a).to(DEV) for a in reference.flashinfer_csr(bt, seq, page))
    q_dev, bt_dev, seq_dev = q.to(DEV), torch.from_numpy(bt).to(DEV), torch.from_numpy(seq).to(DEV)
    for name, launch in (
            ("block_table", lambda **kw: paged_decode_block_table(q_dev, cache, bt_dev, seq_dev, **kw)),
            ("csr", lambda **kw: paged_decode_csr(q_dev, cache, ip, ix, lp, **kw))):
        out = garbage(q.shape, torch.float32, gen).to(DEV)
        lse = garbage((len(seq), q.shape[1]), torch.float32, gen).to(DEV)
        launch(layout=layout, sm_scale=scale, out=out, lse_out=lse)
        out, lse = out.cpu(), lse.cpu()
        assert not torch.isnan(lse).any() and not torch.isnan(out).any(), f"{name} seed {seed}"
        np.testing.assert_allclose(out.numpy(), want_out, atol=2e-5, rtol=1e-5, err_msg=f"{name} seed {seed}")
        assert (lse[0] == float("-inf")).all() and (out[0] == 0).all()        # the empty request
        np.testing.assert_allclose(lse.numpy()[1:], want_lse[1:], atol=2e-5, rtol=1e-5, err_msg=f"{name} seed {seed}")
        again = garbage(q.shape, torch.float32, gen).to(DEV)
        launch(layout=layout, sm_scale=scale, out=again)                         # no lse_out: unchanged callers
        assert torch.equal(again.cpu(), out)


def test_lse_out_of_the_wrong_shape_is_refused():
    q = torch.zeros((2, 4, 8), device=DEV)
    cache = torch.zeros((2, 4, 4, 2, 8), dtype=torch.float16, device=DEV)
    bt, seq = torch.zeros((2, 1), dtype=torch.int32, device=DEV), torch.zeros(2, dtype=torch.int32, device=DEV)
    with pytest.raises(ValueError, match="lse_out"):
        paged_decode_block_table(q, cache, bt, seq, lse_out=torch.zeros((2, 3), device=DEV))
    with pytest.raises(ValueError, match="lse_out"):
        paged_decode_block_table(q, cache, bt, seq, lse_out=torch.zeros((2, 4), dtype=torch.float16, device=DEV))


# --- the merge, with emulated ranks -------------------------------------------------------------

@pytest.mark.parametrize("world", [2, 3, 4])
def test_lse_merge_of_shards_is_full_attention(world):
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    seq = [0, 1, world - 1, 9, 40]                   # empty, shorter than the world, longer
    starts = np.concatenate([[0], np.cumsum(seq)])
    q = torch.randn((len(seq), 4, 16), generator=gen)
    k = torch.randn((int(starts[-1]), 2, 16), generator=gen) * 3
    v = torch.randn((int(starts[-1]), 2, 16), generator=gen)
    owner = rng.integers(0, world, int(starts[-1]))
    full = [torch.arange(starts[r], starts[r + 1]) for r in range(len(seq))]
    shards = [[idx[torch.from_numpy(owner[idx.numpy()] == w)] for idx in full] for w in range(world)]
    parts = [dense_decode(q, k, v, s) for s in shards]
    outs = torch.stack([p[0] for p in parts])
    lses = torch.stack([p[1] for p in parts])
    lse, factors = merge_factors(lses)
    merged = (outs * factors.unsqueeze(-1)).sum(0)
    want, want_lse = dense_decode(q, k, v, full)
    ref_out, ref_lse = merge_reference(outs.numpy(), lses.numpy())
    assert not torch.isnan(merged).any() and not torch.isnan(lse).any()
    np.testing.assert_allclose(merged.numpy(), want.numpy(), atol=1e-5, err_msg=f"seed {seed}")
    np.testing.assert_allclose(ref_out, want.numpy(), atol=1e-5, err_msg=f"seed {seed}")
    np.testing.assert_allclose(lse.numpy(), want_lse.numpy(), atol=1e-5, err_msg=f"seed {seed}")
    np.testing.assert_allclose(ref_lse, want_lse.numpy(), atol=1e-5, err_msg=f"seed {seed}")
    assert (merged[0] == 0).all() and (lse[0] == float("-inf")).all()


def test_a_nan_partial_is_not_hidden_by_the_merge():
    lses = torch.tensor([[[float("nan")]], [[0.5]]])
    lse, factors = merge_factors(lses)
    assert torch.isnan(lse).all() and torch.isnan(factors).any()


# --- bad input: one line, exit 2, before any rank starts ------------------------------------------

def _batch(tmp_path, spec=None, **kw) -> str:
    if spec is None:
        spec = {"block_size": 4, "requests": [{"block_ids": [3, 5], "seq_len": 12, "query_len": 2}]}
        spec.update(kw)
    p = tmp_path / "b.json"
    p.write_text(json.dumps(spec))
    return str(p)


@pytest.mark.parametrize("extra,words", [
    (["--world", "17"], "between 1 and 16"),
    (["--world", "0"], "between 1 and 16"),
    (["--world", "2", "--interleave", "3"], "does not divide block_size"),
    (["--world", "2", "--interleave", "0"], "--interleave"),
    (["--world", "2", "--num-q-heads", "3"], "not a multiple"),
    (["--world", "2", "--seed", "-1"], "--seed"),
    (["--world", "2", "--head-dim", "100000"], "--head-dim"),
])
def test_bad_arguments(tmp_path, capsys, extra, words):
    rc = main(["dcp", _batch(tmp_path), *extra])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and words in err, err


@pytest.mark.parametrize("spec,world,words", [
    ({"dcp_world_size": 2}, 4, "declares dcp_world_size 2"),
    ({"cp_kv_cache_interleave_size": 2}, None, "declares cp_kv_cache_interleave_size 2"),
    ({"requests": [{"block_ids": [3], "seq_len": 12}]}, 2, "cannot hold seq_len 12"),
    ({"requests": [{"block_ids": [3], "seq_len": 2, "query_length": 1}]}, 2, "query_length"),
    ({"requests": [{"block_ids": [2**30], "seq_len": 2}]}, 2, "KV cache"),
    ({"dcp_world_size": "2"}, 2, "must be an integer"),
    ([1, 2], 2, "JSON object"),
])
def test_bad_batches(tmp_path, capsys, spec, world, words):
    args = ["dcp", _batch(tmp_path, **spec) if isinstance(spec, dict) else _batch(tmp_path, spec),
            "--world", str(world or 2)]
    if world is None:
        args += ["--interleave", "1"]
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and words in err, err


def test_more_cpu_ranks_than_the_machine_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    rc = main(["dcp", _batch(tmp_path), "--world", "5", "--backend", "gloo"])
    err = capsys.readouterr().err
    assert rc == 2 and "more CPU ranks" in err and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(torch.cuda.device_count() >= 2, reason="checks the refusal without GPUs")
def test_nccl_without_enough_gpus(tmp_path, capsys):
    rc = main(["dcp", _batch(tmp_path), "--world", "2", "--backend", "nccl"])
    err = capsys.readouterr().err
    assert rc == 2 and "nccl" in err.lower() and len(err.strip().splitlines()) == 1


# --- real ranks --------------------------------------------------------------------------------

def run_dcp(batch: dict, tmp_path, *args, env=None):
    path = tmp_path / "batch.json"
    path.write_text(json.dumps(batch))
    return subprocess.run([sys.executable, "-m", "kvviz", "dcp", str(path), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=RUN_TIMEOUT, env=env)


def check_report(rep: dict, world: int, head_dim: int, kv_heads: int) -> None:
    assert rep["passed"], rep["checks"]
    assert rep["world_size"] == world and len(rep["ranks"]) == world
    assert sum(r["tokens_held"] for r in rep["ranks"]) == rep["positions"]
    assert rep["positions_not_stored"] == 0 and rep["positions_stored_twice"] == 0
    assert rep["merged_max_error"] <= rep["tolerance"]
    for r in rep["ranks"]:
        assert r["bytes_written"] == r["tokens_held"] * 2 * kv_heads * head_dim * 2     # K and V, float16
        assert r["slot_mapping_exact"] and r["slots_distinct"] and r["tokens_held_match"]
        assert r["all_gather_lse_us"] > 0 and r["all_reduce_out_us"] > 0 and r["partial_attention_us"] > 0


def test_four_gloo_ranks_with_empty_shards(tmp_path):
    """W = 4, interleave 1, kernel blocks of 2: the 2-token request lives on ranks 0 and 1 only, and
    the padded row is empty everywhere; the merge still gives full attention, without a NaN."""
    batch = {"block_size": 4, "kernel_block_size": 2, "num_reqs_padded": 3, "num_tokens_padded": 8,
             "requests": [{"block_ids": [3], "seq_len": 2}, {"block_ids": [5, 9], "seq_len": 21, "query_len": 4}]}
    r = run_dcp(batch, tmp_path, "--world", "4", "--head-dim", "8", "--num-kv-heads", "1", "--seed", "7")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    check_report(rep, 4, 8, 1)
    assert rep["backend"] == "gloo" and "interpreter" in rep["device"]
    assert [x["tokens_held"] for x in rep["ranks"]] == [7, 6, 5, 5]
    assert [x["empty_shards"] for x in rep["ranks"]] == [0, 0, 1, 1]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_ranks_joined_like_torchrun_with_interleave(tmp_path):
    """RANK/WORLD_SIZE in the environment: each process is one rank (as under torchrun); interleave 2
    with W = 2 deals positions in runs of 2; a 3-token request has 1 token on rank 1, a 1-token one none."""
    batch = {"block_size": 4, "cp_kv_cache_interleave_size": 2,
             "requests": [{"block_ids": [3, 5], "seq_len": 13, "query_len": 3}, {"block_ids": [7], "seq_len": 3},
                          {"block_ids": [2], "seq_len": 1}]}
    path = tmp_path / "batch.json"
    path.write_text(json.dumps(batch))
    port = str(_free_port())
    procs = [subprocess.Popen([sys.executable, "-m", "kvviz", "dcp", str(path), "--world", "2", "--head-dim", "16",
                               "--backend", "gloo"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "RANK": str(r), "WORLD_SIZE": "2", "LOCAL_RANK": str(r),
                                   "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port})
             for r in range(2)]
    outs = [p.communicate(timeout=RUN_TIMEOUT) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    assert outs[1][0] == ""                                  # only rank 0 prints
    rep = json.loads(outs[0][0])
    check_report(rep, 2, 16, 2)
    assert rep["interleave"] == 2
    assert [x["tokens_held"] for x in rep["ranks"]] == [7 + 2 + 1, 6 + 1 + 0]
    assert [x["empty_shards"] for x in rep["ranks"]] == [0, 1]


def _children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d))
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _ranks_of(pid: int) -> list[int]:
    ranks = []
    for c in _children(pid):
        try:
            cmd = Path(f"/proc/{c}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmd and b"resource_tracker" not in cmd:
            ranks.append(c)
    return sorted(ranks)


@pytest.mark.parametrize("how", ["kill -9 from outside", "dies inside the all-gather"])
def test_a_killed_rank_takes_the_group_down(tmp_path, how):
    batch = {"block_size": 4, "requests": [{"block_ids": [3, 5], "seq_len": 6}]}
    path = tmp_path / "batch.json"
    path.write_text(json.dumps(batch))
    env = dict(os.environ)
    if how != "kill -9 from outside":
        env["KVVIZ_DCP_FAULT"] = "kill:1:all_gather"
    launcher = subprocess.Popen([sys.executable, "-m", "kvviz", "dcp", str(path), "--world", "2", "--head-dim", "8",
                                 "--num-kv-heads", "1"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env)
    seen: set[int] = set()
    end = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < end and launcher.poll() is None and len(seen) < 2:
        seen |= set(_ranks_of(launcher.pid))
        time.sleep(0.05)
    if how == "kill -9 from outside":
        assert len(seen) == 2, "the two ranks never started"
        os.kill(max(seen), signal.SIGKILL)
    out, err = launcher.communicate(timeout=RUN_TIMEOUT)
    assert launcher.returncode == 2, (out, err)
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "rank" in err and "stopped" in err, err
    if how != "kill -9 from outside":
        assert "rank 1 was killed by SIGKILL" in err, err
    time.sleep(0.5)
    assert not [p for p in seen if _alive(p)], "a rank outlived the command"


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA GPUs")
@pytest.mark.parametrize("interleave", [1, 16])
def test_nccl_two_gpus(tmp_path, interleave):
    batch = {"block_size": 16, "cp_kv_cache_interleave_size": interleave,
             "requests": [{"block_ids": list(range(1, 33)), "seq_len": 1000, "query_len": 1},
                          {"block_ids": [40], "seq_len": 5}, {"block_ids": [41, 42], "seq_len": 40, "query_len": 8}]}
    r = run_dcp(batch, tmp_path, "--world", "2", "--backend", "nccl", "--head-dim", "128", "--num-kv-heads", "8",
                "--num-q-heads", "32")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    check_report(rep, 2, 128, 8)
    assert rep["backend"] == "nccl" and "compiled" in rep["device"]


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA GPUs")
def test_nccl_auto_picks_nccl_and_a_killed_rank_still_ends_everything(tmp_path):
    batch = {"block_size": 16, "requests": [{"block_ids": [1, 2], "seq_len": 50}]}
    r = run_dcp(batch, tmp_path, "--world", "2", env={**os.environ, "KVVIZ_DCP_FAULT": "kill:1:all_reduce"})
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = run_dcp(batch, tmp_path, "--world", "2")
    assert r.returncode == 0 and json.loads(r.stdout)["backend"] == "nccl", r.stderr
