"""scripts/gpu_run.sh's parts, without a GPU: the scripts parse, --dry-run says what would run, a bad
part is refused, and the kernels part's memcheck covers every test file that launches a kernel."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _run(*args):
    return subprocess.run(["bash", "scripts/gpu_run.sh", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("script", ["gpu_run.sh", "gpu_kv_write_fused.sh", "gpu_parts.sh"])
def test_the_scripts_parse(script):
    assert subprocess.run(["bash", "-n", f"scripts/{script}"], cwd=ROOT).returncode == 0


@pytest.mark.parametrize("part,runs", [("kernels", {"kernels"}), ("bench", {"bench"}), ("oracles", {"oracles"}),
                                       ("all", {"kernels", "bench", "oracles"})])
def test_dry_run_names_the_parts_run_and_skipped(part, runs):
    r = _run("--part", part, "--dry-run")
    assert r.returncode == 0, r.stderr
    said = dict(re.findall(r"^part (\w+): (\w+)", r.stdout, re.M))
    assert said == {p: ("runs" if p in runs else "skipped") for p in ("kernels", "bench", "oracles")}


@pytest.mark.parametrize("args", [[], ["--part"], ["--part", "memcheck"], ["--bogus"]])
def test_a_missing_or_unknown_part_is_refused(args):
    r = _run(*args, "--dry-run") if args != ["--part"] else _run("--part")
    assert r.returncode == 2 and "usage: bash scripts/gpu_run.sh --part" in r.stderr


def test_memcheck_covers_every_kernel_test_file():
    """Every tests/gpu file is memchecked but the few the script names, and none of those launches a
    kernel (imports a kernel module, runs the harness or the bench)."""
    listed = set(re.search(r"^memcheck files: (.*)$", _run("--part", "kernels", "--dry-run").stdout, re.M)[1].split())
    every = {str(f.relative_to(ROOT)) for f in (ROOT / "tests" / "gpu").glob("test_*.py")}
    assert listed <= every and len(listed) >= 8
    launches = re.compile(r"^(import kernels|from kernels)|\brun_(batch|slot_mapping|csr)\(|\[\"bench\"", re.M)
    for f in every - listed:
        assert not launches.search((ROOT / f).read_text()) or f.endswith("test_flashinfer_oracle.py"), f
