"""scripts/vllm_wheel_oracle.py: AST extraction from a synthetic wheel (no network, no real wheel),
and one run on a real cached wheel when one is present."""
import glob
import importlib.util
import os
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"


def _load(name):
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


BLOCK_TABLE = '''
import math

from vllm.logger import init_logger
from vllm.triton_utils import tl, triton
from vllm.v1.attention.backends.utils import PAD_SLOT_ID

logger = init_logger(__name__)
SCALE = 3
UNUSED = 99


def get_block_table_width(max_num_blocks: int, block_size: int, kernel_block_size: int | None = None) -> int:
    return math.lcm(max_num_blocks, 2) * SCALE


@triton.jit(do_not_specialize=["n"])
def _compute_slot_mapping_kernel(out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offs, offs * SCALE + PAD_SLOT_ID, mask=offs < n)


class ComputeSlotMappingKernel:
    triton_block_size = 16

    @staticmethod
    @triton.jit
    def kernel(out_ptr, BLOCK_SIZE: tl.constexpr):
        tl.store(out_ptr + tl.arange(0, BLOCK_SIZE), tl.full([BLOCK_SIZE], SCALE, tl.int64))
'''


@pytest.fixture
def fake_wheel(tmp_path):
    path = tmp_path / "vllm-0.27.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("vllm/v1/worker/block_table.py", BLOCK_TABLE)
        z.writestr("vllm/v1/attention/backends/utils.py", "PAD_SLOT_ID = -1\n")
        z.writestr("vllm-0.27.1.dist-info/METADATA", "Name: vllm\nVersion: 0.27.1\n")
    return path


def test_extracts_kernel_function_and_constants_from_a_synthetic_wheel(fake_wheel):
    import torch

    import kvviz.vllm_wheel.extract as we
    src = we.WheelSource(fake_wheel)
    assert src.version() == "0.27.1"
    ex = we.Extractor(src).extract("vllm.v1.worker.block_table",
                                   ["get_block_table_width", "_compute_slot_mapping_kernel",
                                    "ComputeSlotMappingKernel.kernel", "not_there"])
    assert ex.missing == ["not_there"]
    assert "SCALE = 3" in ex.source and "PAD_SLOT_ID = -1" in ex.source
    assert "UNUSED" not in ex.source and "init_logger" not in ex.source   # only what is needed
    assert "import triton.language as tl" in ex.source
    assert ex.get("get_block_table_width")(5, 16) == 30
    out = torch.full((16,), 100, dtype=torch.int64)
    ex.get("_compute_slot_mapping_kernel")[(1,)](out, 5, BLOCK_SIZE=16)
    assert out.tolist() == [-1, 2, 5, 8, 11] + [100] * 11
    out2 = torch.zeros(16, dtype=torch.int64)
    ex.get("ComputeSlotMappingKernel__kernel")[(1,)](out2, BLOCK_SIZE=16)
    assert out2.tolist() == [3] * 16
    assert ex.path.is_file() and not str(ex.path).startswith(str(ROOT))   # a temporary file


def test_a_partial_wheel_reports_absences_instead_of_crashing(fake_wheel):
    orc = _load("vllm_wheel_oracle")
    code = orc.WheelCode(fake_wheel)
    p = code.presence()
    assert p["v1_slot_kernel"] and p["get_block_table_width"] == "vllm/v1/worker/block_table.py"
    assert not p["mrv2_block_tables"] and not p["free_blocks"] and not p["copy_page_indices_kernel"]
    res = orc.run_oracle("0.27.1", code, cases=3, tables=("free_queue", "mrv2_slots", "layout"))
    assert all(e.get("skipped") for e in res["tables"].values())


def test_bad_version_exits_2(capsys):
    orc = _load("vllm_wheel_oracle")
    assert orc.main(["0.99.9", "--no-download"]) == 2
    assert orc.main(["not-a-version"]) == 2
    assert "unknown vLLM release" in capsys.readouterr().err


def test_slim_wheel_keeps_what_the_oracle_reads(fake_wheel, tmp_path):
    orc = _load("vllm_wheel_oracle")
    slim = orc.write_slim(fake_wheel, "0.27.1", tmp_path / "slim")
    with zipfile.ZipFile(slim) as z:
        assert "vllm/v1/worker/block_table.py" in z.namelist()


def _real_wheel(version):
    cache = Path(os.environ.get("KVVIZ_WHEEL_CACHE") or Path.home() / ".cache" / "kvviz" / "wheels")
    for pat in (cache / f"vllm-{version}-*.whl", cache / version / "vllm-*.whl", Path("/tmp/wheels") / version / "vllm-*.whl"):
        hits = glob.glob(str(pat))
        if hits:
            return hits[0]
    return None


@pytest.mark.skipif(_real_wheel("0.27.1") is None, reason="no cached vLLM 0.27.1 wheel")
def test_real_wheel_v1_slots_and_csr_agree():
    orc = _load("vllm_wheel_oracle")
    code = orc.WheelCode(Path(_real_wheel("0.27.1")))
    res = orc.run_oracle("0.27.1", code, cases=15, seed=1, tables=("width", "v1_slots", "csr", "free_queue"))
    for name in ("width", "v1_slots", "v1_slots_kvviz_kernel", "csr", "csr_kvviz_kernel", "free_queue"):
        e = res["tables"][name]
        assert e["cases"] == 15 and not e.get("errors"), (name, e["first_disagreement"])
        assert e["agreed"] == 15, (name, e["first_disagreement"])


@pytest.mark.skipif(_real_wheel("0.29.0") is None, reason="no cached vLLM 0.29.0 wheel")
def test_real_wheel_mrv2_tables_run_in_the_interpreter():
    """The MRV2 kernels take raw data pointers; Triton's interpreter follows host pointers, so the
    wheel's own BlockTables methods run on a stub here (the same path --device cuda takes)."""
    orc = _load("vllm_wheel_oracle")
    code = orc.WheelCode(Path(_real_wheel("0.29.0")))
    res = orc.run_oracle("0.29.0", code, cases=4, seed=3, tables=("mrv2_gather", "mrv2_slots"), mrv2_interpret=True)
    for name in ("mrv2_gather", "mrv2_gather_runner_v2", "mrv2_slots", "mrv2_slots_geometry"):
        e = res["tables"][name]
        assert e["cases"] >= 1 and not e.get("errors"), (name, e["first_disagreement"])
    assert res["tables"]["mrv2_gather"]["agreed"] == res["tables"]["mrv2_gather"]["cases"]


@pytest.mark.parametrize("version", ["0.29.0", "0.33.0"])
def test_repointed_adapters_agree_with_the_wheel(version):
    """The kvviz adapters, re-pointed to the release's rules (V1 manager-id rows and the per-group
    kernel table from v0.32.0; MRV2 DCP era, enabled/sharded masks, idx -1 PAD, v0.33.0's gather),
    agree with the wheel on a handful of cases of every table, MRV2 in Triton's interpreter."""
    if _real_wheel(version) is None:
        pytest.skip(f"no cached vLLM {version} wheel")
    orc = _load("vllm_wheel_oracle")
    code = orc.WheelCode(Path(_real_wheel(version)))
    res = orc.run_oracle(version, code, cases=12, seed=5, mrv2_interpret=True, mrv2_cases=10)
    ran = {n: e for n, e in res["tables"].items() if not e.get("skipped")}
    for name in ("width", "v1_slots", "kernel_table", "csr", "free_queue", "layout", "mrv2_width", "mrv2_gather",
                 "mrv2_gather_runner_v2", "mrv2_slots", "mrv2_slots_geometry"):
        assert name in ran, (name, res["tables"].get(name))
    for name, e in ran.items():
        assert not e.get("errors"), (name, e["first_disagreement"])
        assert e["agreed"] == e["cases"], (name, e["first_disagreement"])
    assert ran["layout"]["cases"] == 12 and ran["mrv2_gather"]["cases"] == 10


@pytest.mark.parametrize("version", ["0.29.0", "0.34.0"])
def test_slim_wheel_extracts_what_the_full_wheel_does(version, tmp_path, monkeypatch):
    """--slim keeps every file the oracle's extraction reads: the same extracted sources (so the same
    temporary modules), absences and stubs as from the full wheel."""
    if _real_wheel(version) is None:
        pytest.skip(f"no cached vLLM {version} wheel")
    orc = _load("vllm_wheel_oracle")
    import kvviz.vllm_wheel.extract as we
    seen = []
    orig = we.Extractor._finish

    def record(self, found, missing, tag):
        r = orig(self, found, missing, tag)
        seen.append((tag, r.source, tuple(r.missing), tuple(r.stubbed)))
        return r

    monkeypatch.setattr(we.Extractor, "_finish", record)
    full = orc.WheelCode(Path(_real_wheel(version)))
    got_full = list(seen)
    seen.clear()
    slim = orc.write_slim(Path(_real_wheel(version)), version, tmp_path)
    # what the GPU machine does: KVVIZ_WHEEL_CACHE holds the slim zip, nothing downloaded
    monkeypatch.setenv("KVVIZ_WHEEL_CACHE", str(tmp_path))
    assert orc.find_wheel(version, download=False) == slim
    code = orc.WheelCode(slim)
    assert seen == got_full
    assert code.presence() == full.presence() and code.notes == full.notes and code.version == version


def test_all_releases_script_prints_one_line_per_release(tmp_path):
    if _real_wheel("0.34.0") is None:
        pytest.skip("no cached vLLM 0.34.0 wheel")
    import subprocess

    env = {**os.environ, "PYTHON": sys.executable, "KVVIZ_ORACLE_VERSIONS": "0.34.0",
           "KVVIZ_ORACLE_OUT": str(tmp_path)}
    r = subprocess.run(["bash", str(SCRIPTS / "wheel_oracle_all.sh"), "--cases", "3", "--tables", "width,layout"],
                       capture_output=True, text=True, env=env, cwd=ROOT)
    lines = [x for x in r.stdout.splitlines() if x.startswith("v0.34.0")]
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(lines) == 1 and "width 3/3" in lines[0] and "layout 3/3" in lines[0], r.stdout
