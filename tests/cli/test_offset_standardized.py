"""`kvviz offset` on vLLM v0.29.0+ (#51718): one allocation for every layer, logical
``[L, B, H, N, C]`` bytes in a ``KVCacheLayout`` order (vllm/v1/kv_cache_layout.py;
kv_cache_interface.py ``compute_layout_strides``). Expected bytes come from a numpy array of byte
numbers laid out in the layout's physical order and transposed to the logical one, not from kvviz;
v0.34.0's padding (worker/extensible_kv_cache.py ``pad_kv_cache_segments``) from the hand formula
``round_up(capacity * page, granule)``.
"""
import json

import numpy as np
import pytest

from kvviz.cli import main

BASE = "--layout {lay} --block-size 4 --num-kv-heads 2 --head-dim 8 --dtype float16 --num-blocks 6"
L, B, H, N, D, ES = 3, 6, 2, 4, 8, 2
C = 2 * D * ES
ORDERS = ("LBHNC", "LBNHC", "LHBNC", "BLHNC", "BLNHC", "BHLNC")


def run(capsys, argv):
    rc = main(["offset", *argv.split()])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if rc == 0 else None), err


def expected(layout, l, b, n, h, kv, d):
    sizes = dict(zip("LBHNC", (L, B, H, N, C)))
    phys = np.arange(L * B * H * N * C).reshape([sizes[a] for a in layout])
    logical = phys.transpose([layout.index(a) for a in "LBHNC"])
    return int(logical[l, b, h, n, (kv * D + d) * ES])


@pytest.mark.parametrize("order", ORDERS)
def test_every_order_by_name_encodes_and_decodes(capsys, order):
    argv = BASE.format(lay="NHD") + f" --vllm v0.31.0 --cache-layout {order} --num-layers 3"
    rc, out, _ = run(capsys, argv + " --layer 2 --slot 13 --head 1 --dim 6 --kv v")
    assert rc == 0 and out["cache_layout"] == order and out["layer"] == 2
    assert out["byte_offset"] == expected(order, 2, 3, 1, 1, 1, 6)
    rc, dec, _ = run(capsys, argv + f" --byte-offset {out['byte_offset'] + 1}")
    assert {k: dec[k] for k in ("layer", "kv", "block", "offset_in_block", "slot", "head", "dim", "byte_in_element")} \
        == {"layer": 2, "kv": "v", "block": 3, "offset_in_block": 1, "slot": 13, "head": 1, "dim": 6, "byte_in_element": 1}


def test_default_follows_layout_and_backend(capsys):
    rc, out, _ = run(capsys, BASE.format(lay="NHD") + " --vllm v0.29.0 --slot 5 --head 1 --dim 0")
    assert out["cache_layout"] == "LBNHC" and out["layer_stride"] == B * H * N * C and out["block_stride"] == H * N * C
    rc, out, _ = run(capsys, BASE.format(lay="HND") + " --vllm v0.29.0 --attn-backend flashinfer --sm10x --slot 5 --head 1 --dim 0")
    assert out["cache_layout"] == "LBHNC" and out["byte_offset"] == H * N * C + 1 * N * C + 1 * C
    rc, out, err = run(capsys, BASE.format(lay="HND") + " --vllm v0.29.0 --attn-backend flex --slot 5 --head 1 --dim 0")
    assert rc == 2 and "accepts only LBNHC" in err
    rc, out, err = run(capsys, BASE.format(lay="NHD") + " --vllm v0.34.0 --attn-backend flashinfer --cache-layout LHBNC --slot 0 --head 0 --dim 0")
    assert rc == 2 and err.count("\n") == 1


def test_v034_pads_layer_regions_to_the_granule(capsys):
    page = H * N * C
    argv = BASE.format(lay="NHD") + " --vllm v0.34.0 --num-layers 3 --layer 1 --slot 0 --head 0 --dim 0"
    rc, out, _ = run(capsys, argv)
    assert out["extensible_kv_cache"] is True and out["layer_stride"] == 2 << 20 and out["byte_offset"] == 2 << 20
    rc, out, _ = run(capsys, argv + " --capacity-blocks 100 --granule-bytes 4096")
    assert out["layer_stride"] == -(-100 * page // 4096) * 4096 == 28672
    rc, out, _ = run(capsys, argv + " --no-extensible-kv-cache")
    assert "extensible_kv_cache" not in out and out["layer_stride"] == B * page
    rc, out, _ = run(capsys, argv + " --cache-layout BLNHC")
    assert out["byte_offset"] == page and out["layer_region_padded"] is False
    rc, _, err = run(capsys, BASE.format(lay="NHD") + " --vllm v0.33.0 --extensible-kv-cache --slot 0 --head 0 --dim 0")
    assert rc == 2 and "v0.34.0" in err


def test_old_releases_and_old_families_stay_as_they_were(capsys):
    rc, out, _ = run(capsys, BASE.format(lay="NHD") + " --vllm v0.29.0 --cache-layout flashinfer_packed --slot 5 --head 1 --dim 0")
    assert out == {"element_offset": 128 + 32 + 16, "byte_offset": 352, "block": 1, "offset_in_block": 1,
                   "cache_layout": "flashinfer_packed", "vllm": "v0.29.0", "attn_backend": "flash_attn"}
    for extra in ("--cache-layout LBNHC", "--num-layers 2", "--layer 0"):
        rc, _, err = run(capsys, BASE.format(lay="NHD") + f" --vllm v0.28.0 {extra} --slot 0 --head 0 --dim 0")
        assert rc == 2 and err.count("\n") == 1 and "v0.29.0" in err
