"""`kvviz offset --cache-layout`: the family is a named option; without it the output is
byte-for-byte what the command printed before families existed (recorded below from the
pre-change command)."""
import json
import subprocess
import sys

import pytest

from kvviz.cli import main
from kvviz.core.layout import CACHE_LAYOUTS, CacheGeometry

SMALL = "--layout {lay} --block-size 4 --num-kv-heads 2 --head-dim 8 --dtype float16 --num-blocks 48"
BIG = "--layout {lay} --block-size 16 --num-kv-heads 8 --head-dim 128 --dtype {dt} --num-blocks 100"

# stdout of the command before --cache-layout existed (kvviz.core.layout without families)
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


@pytest.mark.parametrize("argv,want", RECORDED)
def test_default_output_unchanged_byte_for_byte(capsys, argv, want):
    rc, out, err = run(capsys, argv)
    assert (rc, out, err) == (0, want, "")


@pytest.mark.parametrize("argv,want", RECORDED[:2])
def test_default_output_unchanged_in_a_real_process(argv, want):
    r = subprocess.run([sys.executable, "-m", "kvviz", "offset", *argv.split()], capture_output=True)
    assert r.returncode == 0 and r.stdout == want.encode() and r.stderr == b""


@pytest.mark.parametrize("argv,want", RECORDED)
def test_explicit_flash_attn_adds_only_the_family_key(capsys, argv, want):
    rc, out, _ = run(capsys, argv + " --cache-layout flash_attn")
    assert rc == 0
    assert out == want[:-2] + ',"cache_layout":"flash_attn"}\n'


def test_audit_example_in_each_family(capsys):
    """Default batch token 12: slot 18, K, head 0, dim 0 -> NHD 576 / 1088 / 1152 bytes."""
    want = {"flash_attn": (576, 544), "flashinfer": (1088, 1056), "flashinfer_packed": (1152, 1088)}
    for fam, (nhd, hnd) in want.items():
        for lay, byte in (("NHD", nhd), ("HND", hnd)):
            rc, out, _ = run(capsys, SMALL.format(lay=lay) + f" --slot 18 --head 0 --dim 0 --cache-layout {fam}")
            assert rc == 0 and json.loads(out) == {"element_offset": byte // 2, "byte_offset": byte, "block": 4,
                                                   "offset_in_block": 2, "cache_layout": fam}
            rc, out, _ = run(capsys, SMALL.format(lay=lay) + f" --byte-offset {byte + 1} --cache-layout {fam}")
            assert rc == 0 and json.loads(out) == {"kv": "k", "block": 4, "offset_in_block": 2, "slot": 18,
                                                   "head": 0, "dim": 0, "byte_in_element": 1, "cache_layout": fam}


@pytest.mark.parametrize("fam", CACHE_LAYOUTS)
@pytest.mark.parametrize("lay", ["NHD", "HND"])
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "fp8"])
def test_cli_round_trip_and_agrees_with_module(capsys, fam, lay, dt):
    base = BIG.format(lay=lay, dt=dt) + f" --cache-layout {fam}"
    rc, out, _ = run(capsys, base + " --slot 37 --head 3 --dim 5 --kv v")
    a = json.loads(out)
    assert rc == 0 and a["cache_layout"] == fam
    g = CacheGeometry(lay, 100, 16, 8, 128, dt, fam)
    assert a["byte_offset"] == g.address(37, 3, 5, "v")["byte_offset"]
    rc, out, _ = run(capsys, base + f" --byte-offset {a['byte_offset']}")
    d = json.loads(out)
    assert rc == 0 and d == {"kv": "v", "block": 2, "offset_in_block": 5, "slot": 37, "head": 3, "dim": 5,
                             "byte_in_element": 0, "cache_layout": fam}


@pytest.mark.parametrize("bad", [["--cache-layout", "bogus"], ["--cache-layout", "FlashInfer"],
                                 ["--cache-layout", "flash-attn"], ["--cache-layout", ""], ["--cache-layout"]])
def test_bad_cache_layout_exit_2_one_line(bad):
    r = subprocess.run([sys.executable, "-m", "kvviz", "offset", *SMALL.format(lay="NHD").split(),
                        "--slot", "1", "--head", "0", "--dim", "0", *bad], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "--cache-layout" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("fam", CACHE_LAYOUTS)
def test_out_of_range_in_each_family_exit_2(capsys, fam):
    rc, out, err = run(capsys, SMALL.format(lay="HND") + f" --byte-offset {48 * 4 * 2 * 8 * 2 * 2} "
                       f"--cache-layout {fam}")
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "outside the cache" in err


def test_help_names_the_families():
    r = subprocess.run([sys.executable, "-m", "kvviz", "offset", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    for name in CACHE_LAYOUTS:
        assert name in r.stdout
