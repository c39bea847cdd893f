"""The core runs without a browser or a GPU: it imports neither streamlit nor torch/triton."""
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ["kvviz.constants", "kvviz.core.versions", "kvviz.reference", "kvviz.core.layout", "kvviz.core.block_table",
        "kvviz.core.step", "kvviz.core.pool", "kvviz.core.manager", "kvviz.core.batch", "kvviz.core.scenario", "kvviz.core.engine",
        "kvviz.views.report", "kvviz.cli"]


def test_core_modules_import_no_streamlit_torch_or_triton():
    code = ("import sys; " + "; ".join(f"import {m}" for m in CORE)
            + "; bad = [m for m in ('streamlit', 'torch', 'triton') if m in sys.modules]; print(bad)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_no_kvviz_module_imports_streamlit():
    for path in (ROOT / "kvviz").rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n == "streamlit" or n.startswith("streamlit.") for n in names), path
