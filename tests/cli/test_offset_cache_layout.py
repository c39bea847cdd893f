"""`kvviz offset`: the cache layout family comes from --vllm (alias --profile; default main) and
--attn-backend (default flash_attn) unless --cache-layout names one. Every output keeps the keys it
always had, with their meaning, and adds "cache_layout", "vllm" and "attn_backend".

Expected byte offsets are computed here from what vLLM itself allocates, read from each backend's
``get_kv_cache_shape`` and ``get_kv_cache_stride_order`` in vLLM's git history: the logical shape,
permuted by the stride order into the physical (contiguous) shape, indexed with numpy's
``ravel_multi_index`` - never from kvviz's own strides.
"""
import json
import subprocess
import sys

import numpy as np
import pytest

from kvviz.cli import main
from kvviz.core.layout import ALL_CACHE_LAYOUTS, CACHE_LAYOUTS, CacheGeometry

SMALL = "--layout {lay} --block-size 4 --num-kv-heads 2 --head-dim 8 --dtype float16 --num-blocks 48"
BIG = "--layout {lay} --block-size 16 --num-kv-heads 8 --head-dim 128 --dtype {dt} --num-blocks 100"
ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "fp8": 1}

# stdout of the command before --cache-layout, --vllm and --attn-backend existed: the flash_attn family
RECORDED = [
    (SMALL.format(lay="NHD") + " --slot 18 --head 0 --dim 0",
     '{"element_offset":288,"byte_offset":576,"block":4,"offset_in_block":2}\n'),
    (SMALL.format(lay="HND") + " --slot 18 --head 0 --dim 0",
     '{"element_offset":272,"byte_offset":544,"block":4,"offset_in_block":2}\n'),
    (BIG.format(lay="HND", dt="bfloat16") + " --slot 37 --head 3 --dim 5 --kv v",
     '{"element_offset":1677957,"byte_offset":3355914,"block":2,"offset_in_block":5}\n'),
    (BIG.format(lay="NHD", dt="fp8") + " --slot 1599 --head 7 --dim 127 --kv v",
     '{"element_offset":3276799,"byte_offset":3276799,"block":99,"offset_in_block":15}\n'),
    (BIG.format(lay="NHD", dt="float32") + " --byte-offset 123457",
     '{"kv":"k","block":1,"offset_in_block":14,"slot":30,"head":1,"dim":16,"byte_in_element":1}\n'),
    (BIG.format(lay="HND", dt="bfloat16") + " --byte-offset 1717987",
     '{"kv":"k","block":52,"offset_in_block":6,"slot":838,"head":3,"dim":113,"byte_in_element":1}\n'),
    (SMALL.format(lay="HND") + " --byte-offset 1089",
     '{"kv":"k","block":8,"offset_in_block":0,"slot":32,"head":1,"dim":0,"byte_in_element":1}\n'),
]


def run(capsys, argv):
    rc = main(["offset", *argv.split()])
    out, err = capsys.readouterr()
    return rc, out, err


def run_process(*argv):
    return subprocess.run([sys.executable, "-m", "kvviz", "offset", *argv], capture_output=True, text=True)


# --- what vLLM allocates, release by release (read from the vLLM mirror) --------------------------

KV_FIRST = "kv_first"        # (2, num_blocks, block_size, H, D)
BLOCKS_FIRST = "blocks_first"  # (num_blocks, 2, block_size, H, D)
PACKED = "packed"            # (num_blocks, H, block_size, 2 * D), K in [..., :D], V in [..., D:]
FIVE_D_HND = (0, 1, 3, 2, 4)


def vllm_allocation(version, backend):
    """(logical kind, stride order for NHD, stride order for HND or None if the backend ignores HND,
    family kvviz must name) of vLLM ``version``'s ``backend``."""
    key = (1 << 30, 0) if version == "main" else tuple(int(x) for x in version[1:].split("."))[1:]  # (minor, patch)
    packed = key >= (26, 0)           # PR #44455, first in v0.26.0
    blocks_first = key >= (23, 0)     # PR #42095, first in v0.23.0
    if packed:      # PR #44455 (2026-07-11, v0.26.0): every backend; Flex's stride order is fixed
        return PACKED, (0, 2, 1, 3), (None if backend == "flex" else (0, 1, 2, 3)), "flashinfer_packed"
    if backend == "flex":
        if blocks_first:   # PR #42095 (2026-05-26, v0.23.0): stride order (0, 2, 1, 3, 4) whatever the layout
            return BLOCKS_FIRST, (0, 2, 1, 3, 4), None, "flex_interleaved"
        return KV_FIRST, (0, 1, 2, 3, 4), None, "flash_attn"      # no stride order: always NHD
    if backend == "flash_attn":
        kind = BLOCKS_FIRST if blocks_first else KV_FIRST          # PR #42095
        return kind, (0, 1, 2, 3, 4), FIVE_D_HND, "flashinfer" if blocks_first else "flash_attn"
    if backend == "triton":   # HND stride order from PR #37940 (2026-04-01, v0.20.0)
        return BLOCKS_FIRST, (0, 1, 2, 3, 4), (FIVE_D_HND if key >= (20, 0) else None), "flashinfer"
    return BLOCKS_FIRST, (0, 1, 2, 3, 4), FIVE_D_HND, "flashinfer"   # flashinfer


def vllm_byte(kind, order, geo, kv, block, off, head, dim, itemsize):
    nb, bs, h, d = geo
    p = 0 if kv == "k" else 1
    if kind == KV_FIRST:
        logical, idx = (2, nb, bs, h, d), (p, block, off, head, dim)
    elif kind == BLOCKS_FIRST:
        logical, idx = (nb, 2, bs, h, d), (block, p, off, head, dim)
    else:
        logical, idx = (nb, h, bs, 2 * d), (block, head, off, p * d + dim)
    physical = tuple(logical[i] for i in order)
    return int(np.ravel_multi_index(tuple(idx[i] for i in order), physical)) * itemsize


RELEASES = ["v0.11.0", "v0.19.1", "v0.20.0", "v0.22.1", "v0.23.0", "v0.25.1", "v0.26.0", "v0.27.1", "main"]
BACKENDS = ["flash_attn", "flashinfer", "triton", "flex"]
ELEMENTS = [(18, 0, 0, "k"), (18, 1, 3, "v"), (0, 1, 0, "k"), (191, 1, 7, "v"), (5, 0, 6, "v")]


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_family_and_offsets_follow_vllm(capsys, version, backend):
    kind, nhd, hnd, family = vllm_allocation(version, backend)
    for lay, order in (("NHD", nhd), ("HND", hnd)):
        base = SMALL.format(lay=lay) + f" --vllm {version} --attn-backend {backend}"
        for slot, head, dim, kv in ELEMENTS:
            rc, out, err = run(capsys, base + f" --slot {slot} --head {head} --dim {dim} --kv {kv}")
            if order is None:     # this backend never allocates HND: refused, one line
                assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
                assert "no HND cache" in err and "--layout NHD" in err
                continue
            want = vllm_byte(kind, order, (48, 4, 2, 8), kv, *divmod(slot, 4), head, dim, 2)
            assert (rc, err) == (0, "")
            assert json.loads(out) == {"element_offset": want // 2, "byte_offset": want, "block": slot // 4,
                                       "offset_in_block": slot % 4, "cache_layout": family, "vllm": version,
                                       "attn_backend": backend}, (version, backend, lay, slot, head, dim, kv)
            rc, out, _ = run(capsys, base + f" --byte-offset {want + 1}")
            assert rc == 0 and json.loads(out) == {
                "kv": kv, "block": slot // 4, "offset_in_block": slot % 4, "slot": slot, "head": head,
                "dim": dim, "byte_in_element": 1, "cache_layout": family, "vllm": version, "attn_backend": backend}


@pytest.mark.parametrize("dt", ["bfloat16", "float32", "fp8"])
def test_offsets_in_a_big_cache_each_side_of_each_change(capsys, dt):
    for version, backend in [("v0.22.1", "flash_attn"), ("v0.23.0", "flash_attn"), ("v0.25.1", "flex"),
                             ("v0.26.0", "flex"), ("v0.19.1", "triton"), ("v0.26.0", "triton")]:
        kind, nhd, _, family = vllm_allocation(version, backend)
        rc, out, _ = run(capsys, BIG.format(lay="NHD", dt=dt) + f" --vllm {version} --attn-backend {backend} "
                         "--slot 1234 --head 5 --dim 77 --kv v")
        want = vllm_byte(kind, nhd, (100, 16, 8, 128), "v", *divmod(1234, 16), 5, 77, ITEMSIZE[dt])
        got = json.loads(out)
        assert rc == 0 and got["byte_offset"] == want and got["cache_layout"] == family, (version, backend)


def test_hand_worked_example_in_every_era(capsys):
    """Slot 18 (block 4, offset 2), K, head 1, dim 0 of 48 x 4 x 2 x 8 fp16, NHD."""
    want = {("v0.22.1", "flash_attn"): (4 * 64 + 2 * 16 + 8) * 2,              # [2, B, N, H, D]
            ("v0.23.0", "flash_attn"): (4 * 128 + 2 * 16 + 8) * 2,             # [B, 2, N, H, D]
            ("v0.23.0", "flex"): (4 * 128 + 2 * 32 + 8) * 2,                   # [B, N, 2, H, D]
            ("v0.26.0", "flash_attn"): (4 * 128 + 2 * 32 + 16) * 2}            # [B, N, H, 2D]
    for (version, backend), byte in want.items():
        rc, out, _ = run(capsys, SMALL.format(lay="NHD") + f" --vllm {version} --attn-backend {backend} "
                         "--slot 18 --head 1 --dim 0")
        assert rc == 0 and json.loads(out)["byte_offset"] == byte, (version, backend)


# --- defaults, the override and the old outputs --------------------------------------------------

@pytest.mark.parametrize("argv,want", RECORDED)
def test_old_output_is_the_flash_attn_family_plus_three_keys(capsys, argv, want):
    """The pre-change output is what v0.22.1's FlashAttention allocates, and what --cache-layout
    flash_attn names: the same keys with the same values, then the three new ones."""
    rc, out, err = run(capsys, argv + " --vllm v0.22.1")
    assert (rc, err) == (0, "") and out == want[:-2] + ',"cache_layout":"flash_attn","vllm":"v0.22.1",' \
        '"attn_backend":"flash_attn"}\n'
    rc, out, _ = run(capsys, argv + " --cache-layout flash_attn")
    assert rc == 0 and out == want[:-2] + ',"cache_layout":"flash_attn","vllm":"main","attn_backend":"flash_attn"}\n'


@pytest.mark.parametrize("argv,_", RECORDED)
def test_default_is_main_flash_attn_packed(capsys, argv, _):
    rc, out, _err = run(capsys, argv)
    got = json.loads(out)
    assert rc == 0 and (got["cache_layout"], got["vllm"], got["attn_backend"]) == (
        "flashinfer_packed", "main", "flash_attn")
    rc, explicit, _err = run(capsys, argv + " --vllm main --attn-backend flash_attn --cache-layout flashinfer_packed")
    assert rc == 0 and explicit == out


def test_default_in_a_real_process():
    r = run_process(*(SMALL.format(lay="NHD") + " --slot 18 --head 0 --dim 0").split())
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout == ('{"element_offset":576,"byte_offset":1152,"block":4,"offset_in_block":2,'
                        '"cache_layout":"flashinfer_packed","vllm":"main","attn_backend":"flash_attn"}\n')


def test_cache_layout_overrides_version_and_backend(capsys):
    for fam in CACHE_LAYOUTS:
        for version, backend in [("v0.11.0", "flex"), ("v0.24.0", "triton"), ("main", "flashinfer")]:
            for lay in ("NHD", "HND"):   # by hand, a family is shown in all its layouts, whatever the backend
                rc, out, _ = run(capsys, SMALL.format(lay=lay) + f" --vllm {version} --attn-backend {backend} "
                                 f"--cache-layout {fam} --slot 18 --head 1 --dim 3 --kv v")
                got = json.loads(out)
                want = CacheGeometry(lay, 48, 4, 2, 8, "float16", fam).address(18, 1, 3, "v")
                assert rc == 0 and got == {**want, "cache_layout": fam, "vllm": version, "attn_backend": backend}


def test_audit_example_in_each_family(capsys):
    """Default batch token 12: slot 18, K, head 0, dim 0 -> NHD 576 / 1088 / 1152 / 1152 bytes."""
    want = {"flash_attn": (576, 544), "flashinfer": (1088, 1056), "flashinfer_packed": (1152, 1088),
            "flex_interleaved": (1152, None)}   # [48, 4, 2, 2, 8]: 4 * 128 + 2 * 32 = 576 el
    for fam, (nhd, hnd) in want.items():
        for lay, byte in (("NHD", nhd), ("HND", hnd)):
            rc, out, err = run(capsys, SMALL.format(lay=lay) + f" --slot 18 --head 0 --dim 0 --cache-layout {fam}")
            if byte is None:
                assert rc == 2 and out == "" and "no HND form" in err and len(err.strip().splitlines()) == 1
                continue
            extra = {"cache_layout": fam, "vllm": "main", "attn_backend": "flash_attn"}
            assert rc == 0 and json.loads(out) == {"element_offset": byte // 2, "byte_offset": byte, "block": 4,
                                                   "offset_in_block": 2, **extra}
            rc, out, _ = run(capsys, SMALL.format(lay=lay) + f" --byte-offset {byte + 1} --cache-layout {fam}")
            assert rc == 0 and json.loads(out) == {"kv": "k", "block": 4, "offset_in_block": 2, "slot": 18,
                                                   "head": 0, "dim": 0, "byte_in_element": 1, **extra}


@pytest.mark.parametrize("fam", ALL_CACHE_LAYOUTS)
@pytest.mark.parametrize("lay", ["NHD", "HND"])
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "fp8"])
def test_cli_round_trip_and_agrees_with_module(capsys, fam, lay, dt):
    if fam == "flex_interleaved" and lay == "HND":
        return
    base = BIG.format(lay=lay, dt=dt) + f" --cache-layout {fam}"
    rc, out, _ = run(capsys, base + " --slot 37 --head 3 --dim 5 --kv v")
    a = json.loads(out)
    assert rc == 0 and a["cache_layout"] == fam
    g = CacheGeometry(lay, 100, 16, 8, 128, dt, fam)
    assert a["byte_offset"] == g.address(37, 3, 5, "v")["byte_offset"]
    rc, out, _ = run(capsys, base + f" --byte-offset {a['byte_offset']}")
    d = json.loads(out)
    assert rc == 0 and d == {"kv": "v", "block": 2, "offset_in_block": 5, "slot": 37, "head": 3, "dim": 5,
                             "byte_in_element": 0, "cache_layout": fam, "vllm": "main", "attn_backend": "flash_attn"}


# --- versions -------------------------------------------------------------------------------------

@pytest.mark.parametrize("given,resolved", [("v0.25.0", "v0.25.0"), ("v0.21.1", "v0.21.0"), ("0.24.5", "v0.24.0"),
                                            ("v0.22.9", "v0.22.1"), ("v0.26.3", "v0.26.0"), ("v0.99.0", "v0.34.0"),
                                            ("v0.11.0", "v0.11.0"), ("main", "main"), ("current", "main"),
                                            ("2025-11", "v0.11.1"), ("2025-early", "v0.11.0")])
def test_version_between_releases_follows_the_older(capsys, given, resolved):
    rc, out, _ = run(capsys, SMALL.format(lay="NHD") + f" --vllm {given} --slot 18 --head 0 --dim 0")
    assert rc == 0 and json.loads(out)["vllm"] == resolved
    rc, out2, _ = run(capsys, SMALL.format(lay="NHD") + f" --profile {given} --slot 18 --head 0 --dim 0")
    assert rc == 0 and out2 == out


def test_the_version_picks_the_family_by_its_era(capsys):
    got = {}
    for given in ("v0.22.9", "v0.23.0", "v0.25.9", "v0.26.0"):
        rc, out, _ = run(capsys, SMALL.format(lay="NHD") + f" --vllm {given} --slot 18 --head 0 --dim 0")
        got[given] = json.loads(out)["cache_layout"]
    assert got == {"v0.22.9": "flash_attn", "v0.23.0": "flashinfer", "v0.25.9": "flashinfer",
                   "v0.26.0": "flashinfer_packed"}


@pytest.mark.parametrize("bad,words", [("v0.10.2", "older than v0.11.0"), ("0.9", "older than v0.11.0"),
                                       ("v0.1.0", "older than v0.11.0"), ("banana", "unknown vLLM version"),
                                       ("", "unknown vLLM version"), ("v1..2", "unknown vLLM version"),
                                       ("x" * 500, "unknown vLLM version"), ("v0.25.0\nv0.1", "unknown vLLM")])
@pytest.mark.parametrize("flag", ["--vllm", "--profile"])
def test_bad_or_too_old_version_exit_2_one_line(bad, words, flag):
    r = run_process(*SMALL.format(lay="NHD").split(), "--slot", "1", "--head", "0", "--dim", "0", flag, bad)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert words in r.stderr and "v0.11.0 to v0.34.0 and main" in r.stderr   # names the range


@pytest.mark.parametrize("version,backend", [("v0.19.1", "triton"), ("v0.11.0", "flex"), ("v0.24.0", "flex"),
                                             ("main", "flex")])
def test_hnd_of_a_backend_that_allocates_only_nhd_exit_2(version, backend):
    r = run_process(*SMALL.format(lay="HND").split(), "--slot", "1", "--head", "0", "--dim", "0",
                    "--vllm", version, "--attn-backend", backend)
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1
    assert f"{backend} backend has no HND cache" in r.stderr


@pytest.mark.parametrize("bad", [["--cache-layout", "bogus"], ["--cache-layout", "FlashInfer"],
                                 ["--cache-layout", "flash-attn"], ["--cache-layout", ""], ["--cache-layout"],
                                 ["--attn-backend", "xformers"], ["--attn-backend", ""], ["--vllm"]])
def test_bad_choice_exit_2_one_line(bad):
    r = run_process(*SMALL.format(lay="NHD").split(), "--slot", "1", "--head", "0", "--dim", "0", *bad)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and bad[0] in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("fam", ALL_CACHE_LAYOUTS)
def test_out_of_range_in_each_family_exit_2(capsys, fam):
    rc, out, err = run(capsys, SMALL.format(lay="NHD") + f" --byte-offset {48 * 4 * 2 * 8 * 2 * 2} "
                       f"--cache-layout {fam}")
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "outside the cache" in err


def test_help_names_the_families_backends_and_versions():
    r = run_process("--help")
    assert r.returncode == 0
    for name in (*ALL_CACHE_LAYOUTS, *BACKENDS, "--vllm", "--profile", "--attn-backend", "v0.11.0", "v0.34.0", "LBNHC", "BHLNC", "--num-layers", "--layer", "--sm10x", "--extensible-kv-cache", "--capacity-blocks", "--granule-bytes"):
        assert name in r.stdout, name
