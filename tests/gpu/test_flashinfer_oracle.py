"""kvviz's chain against real FlashInfer (GPU machine only; see scripts/flashinfer_oracle.py).

Marked gpu (skipped without CUDA by tests/conftest.py) and skipped unless
``import flashinfer`` works, so CI, which has neither, skips it. On the GPU
machine scripts/gpu_run.sh --part oracles installs FlashInfer from wheels first.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]


def _oracle():
    spec = importlib.util.spec_from_file_location("flashinfer_oracle", ROOT / "scripts" / "flashinfer_oracle.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def oracle():
    pytest.importorskip("flashinfer")
    return _oracle()


@pytest.mark.parametrize("seed", [0, 11])
def test_flashinfer_agrees_with_kvviz_and_dense_reference(oracle, seed):
    out = oracle.run_oracle(quick=True, seed=seed, progress=lambda m: None)
    assert out["status"] == "PASS", out
    (cfg,) = out["configs"]
    names = set(cfg["checks"])
    assert "flashinfer decode vs dense reference" in names
    assert "kvviz kv_write == FlashInfer append_paged_kv_cache (bytes)" in names
    assert "kvviz paged_decode[csr] vs flashinfer decode" in names
