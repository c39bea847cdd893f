"""Extract named functions (Triton kernels included) from a vLLM wheel, at run time, by AST.

A wheel is a zip; nothing is installed and nothing of vLLM is committed to kvviz. ``Extractor``
parses a module of the wheel with ``ast``, takes the named top-level ``def``s (decorators kept),
methods of a class (``"Class.method"``: lifted to a top-level function, ``@staticmethod`` dropped)
or a class with only some of its methods (``class_subset``), plus every module-level name they
need, followed through the wheel's own ``from vllm.x import y`` imports: constants, helper
functions and jit kernels (``_load_ptr`` lives in another module than the kernels using it). The
``tl``/``triton`` imports become plain ``import triton`` / ``import triton.language as tl``; other
non-vLLM imports (torch, numpy, math, typing) are kept as they are. The source is written to a
temporary ``.py`` file and imported with importlib, because ``triton.jit`` reads a kernel's source
through ``inspect``. Type annotations of non-jit functions are dropped (they name vLLM types that
are not extracted); a jit kernel's annotations stay (``tl.constexpr``).

A name the wheel does not define is reported, never guessed: ``Extracted.missing`` lists it and
``Extracted.get`` returns None for it.
"""
from __future__ import annotations

import ast
import builtins
import hashlib
import importlib.util
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

TRITON_MODULES = ("vllm.triton_utils", "vllm.triton_utils.importing")
_BUILTINS = set(dir(builtins))


class WheelSource:
    """The Python files of a wheel (a zip path) or of an unpacked tree (a directory)."""

    def __init__(self, path):
        self.path = Path(path)
        self._zip = zipfile.ZipFile(self.path) if self.path.is_file() else None
        self._names = set(self._zip.namelist()) if self._zip else None

    def read(self, relpath: str) -> str | None:
        if self._zip is not None:
            if relpath not in self._names:
                return None
            return self._zip.read(relpath).decode("utf-8")
        p = self.path / relpath
        return p.read_text("utf-8") if p.is_file() else None

    def module_path(self, dotted: str) -> str | None:
        base = dotted.replace(".", "/")
        for cand in (base + ".py", base + "/__init__.py"):
            if self.read(cand) is not None:
                return cand
        return None

    def version(self) -> str | None:
        """The wheel's own version (its ``*.dist-info/METADATA``), None for a directory."""
        if self._zip is None:
            return None
        for n in self._names:
            if n.endswith(".dist-info/METADATA"):
                for line in self._zip.read(n).decode("utf-8", "replace").splitlines():
                    if line.startswith("Version:"):
                        return line.split(":", 1)[1].strip()
        return None


def _is_jit(dec: ast.expr) -> bool:
    return "jit" in ast.unparse(dec)


def _strip_annotations(fn: ast.FunctionDef) -> None:
    a = fn.args
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
        if arg is not None:
            arg.annotation = None
    fn.returns = None


def _clean_function(fn: ast.FunctionDef, *, name: str | None = None) -> ast.FunctionDef:
    fn = ast.parse(ast.unparse(fn)).body[0]     # a copy
    jit = any(_is_jit(d) for d in fn.decorator_list)
    fn.decorator_list = [d for d in fn.decorator_list if _is_jit(d)]
    if not jit:
        _strip_annotations(fn)
        # local annotated assignments inside plain functions may name vLLM types too
        for node in ast.walk(fn):
            if isinstance(node, ast.AnnAssign):
                node.annotation = ast.Constant(None)
    if name:
        fn.name = name
    return fn


def _simple(value: ast.expr) -> bool:
    """A module-level value safe to evaluate: literals, names, arithmetic, tuples, tl./triton. calls."""
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            f = ast.unparse(n.func)
            if not (f.startswith("tl.") or f.startswith("triton.") or f in ("int", "float", "tuple", "frozenset")):
                return False
        elif isinstance(n, (ast.Lambda, ast.Await, ast.Yield, ast.NamedExpr)):
            return False
    return True


def _free_names(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.add(n.id)
    return out


@dataclass
class _Module:
    dotted: str
    tree: ast.Module
    defs: dict = field(default_factory=dict)      # name -> node (def, class, assign)
    imports: dict = field(default_factory=dict)   # name -> (module, original name or None)


@dataclass
class Extracted:
    module: object
    source: str
    found: list[str]
    missing: list[str]
    path: Path
    stubbed: list = field(default_factory=list)

    def get(self, name: str):
        return getattr(self.module, name, None) if name in self.found else None


class Extractor:
    def __init__(self, source: WheelSource):
        self.src = source
        self._mods: dict[str, _Module | None] = {}

    def _module(self, dotted: str) -> _Module | None:
        if dotted in self._mods:
            return self._mods[dotted]
        rel = self.src.module_path(dotted)
        mod = None
        if rel is not None:
            tree = ast.parse(self.src.read(rel))
            mod = _Module(dotted, tree)
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    mod.defs[node.name] = node
                elif isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            mod.defs[t.id] = node
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
                    mod.defs[node.target.id] = node
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:
                        parts = dotted.split(".")
                        pkg = parts if rel.endswith("__init__.py") else parts[:-1]
                        pkg = pkg[: len(pkg) - node.level + 1]
                        base = ".".join(pkg + ([node.module] if node.module else []))
                    for a in node.names:
                        mod.imports[a.asname or a.name] = (base, a.name)
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        mod.imports[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], None)
        self._mods[dotted] = mod
        return mod

    def extract(self, module: str, names, *, class_subsets: dict | None = None, tag: str = "") -> Extracted:
        """``module``: dotted name in the wheel (``vllm.v1.worker.block_table``). ``names``:
        top-level names or ``Class.method`` (lifted as ``Class__method``). ``class_subsets``:
        {class name: [methods]} emitted as a base-less class holding only those methods."""
        self._out: list[str] = []
        self._emitted: set[tuple[str, str]] = set()
        self._header: set[str] = set()
        self._bound: dict[str, tuple[str, str]] = {}
        self._stubbed: list[str] = []
        found, missing = [], []
        mod = self._module(module)
        if mod is None:
            return self._finish([], [f"{module} (module absent)"] + list(names), tag)
        for name in names:
            if "." in name:
                cls_name, meth = name.split(".", 1)
                cls = mod.defs.get(cls_name)
                fn = None
                if isinstance(cls, ast.ClassDef):
                    fn = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == meth), None)
                if fn is None:
                    missing.append(name)
                    continue
                new = _clean_function(fn, name=f"{cls_name}__{meth}")
                self._need(mod, new)
                self._out.append(ast.unparse(new))
                found.append(f"{cls_name}__{meth}")
            elif self._emit(mod, name):
                found.append(name)
            else:
                missing.append(name)
        for cls_name, methods in (class_subsets or {}).items():
            cls = mod.defs.get(cls_name)
            if not isinstance(cls, ast.ClassDef):
                missing.append(cls_name)
                continue
            body = []
            for n in cls.body:
                if isinstance(n, ast.FunctionDef) and n.name in methods:
                    body.append(_clean_function(n))
                elif isinstance(n, ast.Assign):
                    body.append(n)
            have = {n.name for n in body if isinstance(n, ast.FunctionDef)}
            missing += [f"{cls_name}.{m}" for m in methods if m not in have]
            new = ast.ClassDef(name=cls_name, bases=[], keywords=[], body=body or [ast.Pass()],
                               decorator_list=[], type_params=[])
            new = ast.fix_missing_locations(new)
            self._need(mod, new)
            self._out.append(ast.unparse(new))
            found.append(cls_name)
        return self._finish(found, missing, tag)

    def _emit(self, mod: _Module, name: str) -> bool:
        """Emit ``name`` as ``mod`` binds it (a def, a constant, or followed through an import)."""
        key = (mod.dotted, name)
        if key in self._emitted:
            return True
        if name in self._bound and self._bound[name] != key:
            return True          # same name from another module already emitted: keep the first
        if name in mod.defs:
            node = mod.defs[name]
            self._emitted.add(key)
            self._bound[name] = key
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and not _simple(node.value):
                # a value computed by calling into vLLM (e.g. PIN_MEMORY = is_pin_memory_available()):
                # not run; the name is bound to None and reported
                self._out.append(f"{name} = None")
                self._stubbed.append(name)
                return True
            if isinstance(node, ast.FunctionDef):
                node = _clean_function(node)
            elif isinstance(node, ast.ClassDef):
                node = ast.parse(ast.unparse(node)).body[0]
            self._need(mod, node)
            self._out.append(ast.unparse(node))
            return True
        if name in mod.imports:
            base, orig = mod.imports[name]
            if orig is None:                       # import X / import X as Y
                if base.split(".")[0] == "vllm":
                    return False
                self._header.add(f"import {base} as {name}" if base != name else f"import {base}")
                self._emitted.add(key)
                return True
            if base in TRITON_MODULES and orig in ("tl", "triton"):
                self._header.add("import triton")
                self._header.add("import triton.language as tl")
                self._emitted.add(key)
                return True
            if base.split(".")[0] == "vllm":
                other = self._module(base)
                if other is None:
                    return False
                ok = self._emit(other, orig)
                if ok and orig != name:
                    self._out.append(f"{name} = {orig}")
                if ok:
                    self._emitted.add(key)
                return ok
            self._header.add(f"from {base} import {orig}" + (f" as {name}" if orig != name else ""))
            self._emitted.add(key)
            return True
        return False

    def _need(self, mod: _Module, node: ast.AST) -> None:
        for n in sorted(_free_names(node)):
            if n in _BUILTINS and n not in mod.defs and n not in mod.imports:
                continue
            if n in mod.defs or n in mod.imports:
                self._emit(mod, n)

    def _finish(self, found, missing, tag) -> Extracted:
        source = "\n".join(["# extracted at run time from a vLLM wheel by kvviz (kvviz/vllm_wheel/extract.py)",
                            "# (temporary: never committed)", *sorted(self._header), "", *self._out, ""])
        digest = hashlib.sha1((tag + source).encode()).hexdigest()[:12]
        d = Path(tempfile.mkdtemp(prefix="kvviz_wheel_"))
        path = d / f"vllm_extract_{digest}.py"
        path.write_text(source)
        name = f"_kvviz_vllm_extract_{digest}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return Extracted(module, source, found, missing, path, list(getattr(self, "_stubbed", [])))


def function_source(source: WheelSource, module: str, qualname: str) -> str | None:
    """The source text of a top-level function or ``Class.method`` (to read a rule from it)."""
    rel = source.module_path(module)
    if rel is None:
        return None
    tree = ast.parse(source.read(rel))
    parts = qualname.split(".")
    body = tree.body
    node = None
    for p in parts:
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == p), None)
        if node is None:
            return None
        body = node.body
    return ast.unparse(node)


def has_name(source: WheelSource, module: str, qualname: str) -> bool:
    return function_source(source, module, qualname) is not None
