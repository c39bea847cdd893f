"""Report what breaks the code-shape rules: files over 500 lines, functions over 80 lines (kvviz/),
derived block arithmetic outside kvviz/core/geometry.py and the oracles, layer imports, and import
cycles inside kvviz/ (an import inside a function counts: it is a cycle that only waits).

``python scripts/code_shape.py`` prints the offenders and exits 1 if there are any.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80
# the derived quantities the Geometry object owns, and the only files allowed to compute them
DERIVED = [re.compile(p) for p in (
    r"block_size\s*//\s*\w",                                   # blocks per KV block
    r"//\s*(\w+\.)?(kbs|kernel_block_size)\b",                  # kernel-block split
    r"(?<![\]\s])\s*\*\s*(\w+\.)?(dcp_world_size|world|W)\b",     # virtual block size ([x] * world: a list)
    r"\b(dcp_world_size|world|W)\s*\*",
    r"//\s*\(\s*\w+\s*\*\s*\w+\s*\)\s*\)\s*\*\s*\w+\s*\+\s*\w+\s*%")]  # DCP local offset
# kvviz/core/slots_v2.py is vLLM's Model Runner V2 slot arithmetic as each release's own kernel
# writes it (era by era: manager ids, kernel blocks, DCP local offsets): a second formulation, kept
# apart from Geometry on purpose so that the MRV2 tables are checked against the release, not
# against kvviz's own formula
ORACLES = {"kvviz/core/geometry.py", "kvviz/reference.py", "kvviz/core/slots_v2.py"}


def python_files(*dirs: str):
    for d in dirs:
        yield from sorted((ROOT / d).rglob("*.py"))


def long_functions(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > MAX_FUNCTION_LINES:
                yield f"{path.relative_to(ROOT)}:{node.lineno} {node.name} is {n} lines"


def docstring_lines(path: Path) -> set[int]:
    """Line numbers inside string literals that stand alone (docstrings, prose)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            out |= set(range(node.lineno, node.end_lineno + 1))
    return out


def imports_of(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def module_of(path: Path) -> str:
    """The dotted module name of a file of the tree (a package's __init__.py: the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def kvviz_imports(path: Path, known: set[str]) -> set[str]:
    """The kvviz modules ``path`` imports, at any depth of its code (functions included), relative
    imports resolved; ``from a import b`` names the module a.b when there is one, else a. Importing
    a.b.c is an edge to a.b.c alone (its packages' __init__ files only hand names on)."""
    me = module_of(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, *([base] if base else [])])
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        out |= {n for n in names if n in known and n != me}
    return out


def import_cycles() -> list[list[str]]:
    """Every set of kvviz (or kernels/) modules that import each other in a loop (Tarjan's strongly connected
    components of more than one module), each sorted."""
    files = {module_of(f): f for folder in ("kvviz", "kernels") for f in python_files(folder)}
    graph = {m: sorted(kvviz_imports(f, set(files))) for m, f in files.items()}
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def offenders() -> list[str]:
    bad = [f"import cycle: {' <-> '.join(c)}" for c in import_cycles()]
    for f in python_files("kvviz"):
        rel = str(f.relative_to(ROOT))
        n = len(f.read_text().splitlines())
        if n > MAX_FILE_LINES:
            bad.append(f"{rel} is {n} lines")
        bad += list(long_functions(f))
        if rel not in ORACLES:
            prose = docstring_lines(f)
            for i, line in enumerate(f.read_text().splitlines(), 1):
                code = line.split("#")[0]
                if i in prose:
                    continue
                if any(p.search(code) for p in DERIVED):
                    bad.append(f"{rel}:{i} derives block arithmetic outside Geometry: {line.strip()}")
        mods = imports_of(f)
        if rel.startswith("kvviz/core/"):
            for m in mods:
                if m.startswith("kvviz") and not m.startswith(("kvviz.core", "kvviz.constants", "kvviz.errors")):
                    bad.append(f"{rel} (core) imports {m}")
        if any(m == "streamlit" or m.startswith("streamlit.") for m in mods):
            bad.append(f"{rel} imports streamlit")
    for f in python_files("kernels"):
        for m in imports_of(f):
            if m == "kvviz" or m.startswith("kvviz."):
                bad.append(f"{f.relative_to(ROOT)} imports {m}")
    return bad


if __name__ == "__main__":
    found = offenders()
    print("\n".join(found) or "code shape: all rules hold")
    sys.exit(1 if found else 0)
