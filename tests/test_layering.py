"""The layers' import rules.

* The core runs without a browser or a GPU: it imports neither streamlit nor torch/triton.
* ``kvviz/core/*`` imports nothing from kvviz but ``kvviz.core.*``, ``kvviz.constants`` and
  ``kvviz.errors`` (every import, a function's lazy one included).
* ``kernels/`` imports nothing from kvviz: the Triton kernels are checked against kvviz, so
  they must not share its code.
* Nothing in kvviz imports streamlit.
* ``kvviz/dist/`` (DCP on real ranks) imports from kvviz only the core, ``constants``, ``errors``,
  ``files``, ``gpu`` and itself (never the app's ``views``/``texts``); ``kvviz.dist``, its ``plan`` and
  the ``dcp`` command's module import no torch until a rank runs.
"""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ["kvviz.constants", "kvviz.errors", "kvviz.core.geometry", "kvviz.core.versions", "kvviz.reference",
        "kvviz.core.layout", "kvviz.core.kv_cache_layout", "kvviz.core.block_table", "kvviz.core.kernel_tables",
        "kvviz.core.step", "kvviz.core.pool", "kvviz.core.manager",
        "kvviz.core.batch", "kvviz.core.scenario", "kvviz.core.runner_v2", "kvviz.core.records", "kvviz.core.worker_v2",
        "kvviz.core.engine", "kvviz.core.capacity", "kvviz.core.knobs", "kvviz.core.scheduler", "kvviz.core.slots_v2",
        "kvviz.core.step_bytes",
        "kvviz.views.report", "kvviz.cli", "kvviz.dist", "kvviz.dist.plan", "kvviz.cli.dcp"]
CORE_MAY_IMPORT = ("kvviz.core", "kvviz.constants", "kvviz.errors")
DIST_MAY_IMPORT = CORE_MAY_IMPORT + ("kvviz.files", "kvviz.gpu", "kvviz.dist")


def imported_modules(source: str, package: str) -> set[str]:
    """Absolute names of every module ``source`` imports (relative imports resolved against
    ``package``, the package the source lives in)."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                out.add(".".join(base + ([node.module] if node.module else [])))
            else:
                out.add(node.module)
    return out


def kvviz_imports(source: str, package: str) -> set[str]:
    return {m for m in imported_modules(source, package) if m == "kvviz" or m.startswith("kvviz.")}


def core_violations(source: str, package: str = "kvviz.core") -> list[str]:
    """The kvviz modules a core module's source imports that the core may not."""
    return sorted(m for m in kvviz_imports(source, package)
                  if not any(m == allowed or m.startswith(allowed + ".") for allowed in CORE_MAY_IMPORT))


def _modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def _package(path: Path) -> str:
    """The package a module file lives in (``kvviz/core/step.py`` -> ``kvviz.core``)."""
    return ".".join(path.relative_to(ROOT).parent.parts)


def test_core_modules_import_no_streamlit_torch_or_triton():
    code = ("import sys; " + "; ".join(f"import {m}" for m in CORE)
            + "; bad = [m for m in ('streamlit', 'torch', 'triton') if m in sys.modules]; print(bad)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_the_core_list_names_every_core_module():
    found = {f"kvviz.core.{p.stem}" for p in _modules("kvviz/core") if p.stem != "__init__"}
    assert found <= set(CORE), sorted(found - set(CORE))


@pytest.mark.parametrize("path", _modules("kvviz/core"), ids=lambda p: p.name)
def test_core_imports_only_core_constants_and_errors(path):
    assert core_violations(path.read_text(), _package(path)) == [], path


@pytest.mark.parametrize("source,bad", [
    ("from kvviz.views.report import step_to_json", ["kvviz.views.report"]),
    ("import kvviz.dumps.format", ["kvviz.dumps.format"]),
    ("def f():\n    from kvviz.gpu import harness\n", ["kvviz.gpu"]),   # a lazy import counts too
    ("from ..views import figures", ["kvviz.views"]),                    # so does a relative one
    ("from kvviz import reference", ["kvviz"]),
    ("from kvviz.core.geometry import Geometry\nfrom kvviz.errors import BadInput\n"
     "from kvviz.constants import PAD_SLOT_ID\nfrom . import pool\nimport numpy", []),
])
def test_the_core_rule_catches_an_import_from_another_layer(source, bad):
    assert core_violations(source) == bad


@pytest.mark.parametrize("path", _modules("kernels"), ids=lambda p: p.name)
def test_kernels_import_nothing_from_kvviz(path):
    assert kvviz_imports(path.read_text(), _package(path)) == set(), path


def test_no_kvviz_module_imports_streamlit():
    for path in (ROOT / "kvviz").rglob("*.py"):
        names = imported_modules(path.read_text(), _package(path))
        assert not any(n == "streamlit" or n.startswith("streamlit.") for n in names), path


@pytest.mark.parametrize("path", _modules("kvviz/dist"), ids=lambda p: p.name)
def test_dist_imports_only_core_gpu_and_itself(path):
    bad = sorted(m for m in kvviz_imports(path.read_text(), _package(path))
                 if not any(m == allowed or m.startswith(allowed + ".") for allowed in DIST_MAY_IMPORT))
    assert bad == [], path
