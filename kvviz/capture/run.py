"""Reading a captured run back (a directory, or a ``.zip`` of one), bounded like every input.

The run is untrusted: only regular files are read, each bounded by its kind's limit before it is
read (a zip's declared sizes and member count are checked from its directory before any member is
opened); names outside the format are refused; JSON is parsed by ``kvviz.errors.parse_json``; a
step's dumps are loaded by ``kvviz.dumps.format`` (npz headers checked before data) only when asked.
"""
from __future__ import annotations

import io
import os
import re
import stat
import zipfile
from dataclasses import dataclass, field

from kvviz.capture import MANIFEST, REQUESTS, RUN_VERSION, STEPS
from kvviz.errors import BadInput, parse_json
from kvviz.files import read_bounded

MAX_MANIFEST_BYTES = 1 << 20
MAX_REQUESTS_BYTES = 64 << 20
MAX_STEP_JSON_BYTES = 16 << 20
MAX_NPZ_BYTES = 256 << 20
MAX_STEPS = 1 << 17
MAX_GROUPS = 64
MAX_ZIP_MEMBERS = MAX_STEPS * 4
MAX_ZIP_TOTAL = 2 << 30
_STEP_JSON = re.compile(r"^(\d{8})\.json$")
_STEP_NPZ = re.compile(r"^(\d{8})\.g(\d{1,2})\.npz$")


def _limit_for(name: str) -> int | None:
    base = name.rsplit("/", 1)[-1]
    if name == MANIFEST:
        return MAX_MANIFEST_BYTES
    if name == REQUESTS:
        return MAX_REQUESTS_BYTES
    if name == f"{STEPS}/{base}":
        if _STEP_JSON.match(base):
            return MAX_STEP_JSON_BYTES
        if _STEP_NPZ.match(base):
            return MAX_NPZ_BYTES
    return None


class _DirSource:
    def __init__(self, path: str):
        self.path, self.label = path, path

    def names(self) -> list[str]:
        out = [n for n in (MANIFEST, REQUESTS) if os.path.isfile(os.path.join(self.path, n))]
        steps = os.path.join(self.path, STEPS)
        if os.path.isdir(steps):
            with os.scandir(steps) as it:
                for i, e in enumerate(it):
                    if i > MAX_ZIP_MEMBERS:
                        raise BadInput(f"{steps} holds more than {MAX_ZIP_MEMBERS} files")
                    if _limit_for(f"{STEPS}/{e.name}") is not None:
                        out.append(f"{STEPS}/{e.name}")
        return out

    def read(self, name: str) -> bytes:
        limit = _limit_for(name)
        return read_bounded(os.path.join(self.path, name), limit, name=name)


class _ZipSource:
    """A zip of a run: either the run's files at its top, or under one folder. Every member is
    checked from the zip's directory (count, declared sizes, names, regular files) before any is read."""

    def __init__(self, data: bytes, label: str):
        self.label = label
        try:
            self.zf = zipfile.ZipFile(io.BytesIO(data))
            infos = self.zf.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
            raise BadInput(f"{label} is not a readable zip ({e})") from None
        if len(infos) > MAX_ZIP_MEMBERS:
            raise BadInput(f"{label} has {len(infos)} members; the limit is {MAX_ZIP_MEMBERS}")
        files = [i for i in infos if not i.is_dir()]
        for i in files:
            parts = i.filename.replace("\\", "/").split("/")
            if i.filename.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
                raise BadInput(f"{label}: the member name {i.filename[:80]!r} leaves the run's folder")
        prefix = ""
        tops = {i.filename.split("/", 1)[0] for i in files if "/" in i.filename}
        if not any(i.filename == MANIFEST for i in files) and len(tops) == 1:
            prefix = tops.pop() + "/"
        self.members: dict[str, zipfile.ZipInfo] = {}
        total = 0
        for i in files:
            if not i.filename.startswith(prefix):
                continue
            name = i.filename[len(prefix):]
            limit = _limit_for(name)
            if limit is None:
                continue                          # not part of the format: never read
            kind = stat.S_IFMT((i.external_attr >> 16) & 0xFFFF)
            if kind and kind != stat.S_IFREG:        # a symlink, a device, ...: never followed
                raise BadInput(f"{label}: {i.filename} is not a regular file")
            if i.file_size > limit:
                raise BadInput(f"{label}: {i.filename} declares {i.file_size} bytes; the limit is {limit}")
            total += i.file_size
            self.members[name] = i
        if total > MAX_ZIP_TOTAL:
            raise BadInput(f"{label} declares {total} bytes unpacked; the limit is {MAX_ZIP_TOTAL}")

    def names(self) -> list[str]:
        return list(self.members)

    def read(self, name: str) -> bytes:
        info = self.members.get(name)
        if info is None:
            raise BadInput(f"{self.label} has no {name}")
        limit = _limit_for(name)
        try:
            with self.zf.open(info) as f:
                data = f.read(limit + 1)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as e:
            raise BadInput(f"{self.label}: {name} cannot be read ({e})") from None
        if len(data) > limit or len(data) != info.file_size:
            raise BadInput(f"{self.label}: {name} is not the size its zip entry declares")
        return data


def _object(raw: bytes, name: str) -> dict:
    obj = parse_json(raw, name)
    if not isinstance(obj, dict):
        raise BadInput(f"{name} is not a JSON object")
    return obj


def _check_manifest(m: dict, label: str) -> None:
    if m.get("kvviz_run_version") != RUN_VERSION:
        raise BadInput(f"{label}: manifest.json's kvviz_run_version is {m.get('kvviz_run_version')!r}; "
                       f"this kvviz reads version {RUN_VERSION}")
    if m.get("runner") not in ("v1", "v2"):
        raise BadInput(f"{label}: manifest.json's runner must be \"v1\" or \"v2\"")
    for key in ("vllm", "num_blocks", "block_size"):
        if key not in m:
            raise BadInput(f"{label}: manifest.json has no {key!r}")
    if not isinstance(m["vllm"], str) or not isinstance(m["num_blocks"], int) or isinstance(m["num_blocks"], bool):
        raise BadInput(f"{label}: manifest.json's vllm must be a string and num_blocks an integer")


@dataclass
class CapturedRun:
    """A captured run: its manifest, its requests and its steps (loaded one at a time)."""
    source: object
    manifest: dict
    requests: list[dict]
    steps: list[int]
    _meta: dict[int, dict] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.source.label

    @property
    def vllm(self) -> str:
        return self.manifest["vllm"]

    @property
    def runner(self) -> str:
        return self.manifest["runner"]

    def meta(self, step: int) -> dict:
        """The step's ``.json`` (request ids by row, token counts, the scheduler's side)."""
        if step not in self._meta:
            name = f"{STEPS}/{step:08d}.json"
            m = _object(self.source.read(name), name)
            if m.get("step") != step or not isinstance(m.get("groups"), list) or len(m["groups"]) > MAX_GROUPS:
                raise BadInput(f"{self.label}: {name} does not describe step {step} (its step or groups)")
            if not isinstance(m.get("req_ids", []), list):
                raise BadInput(f"{self.label}: {name}'s req_ids is not a list")
            self._meta[step] = m
        return self._meta[step]

    def dumps(self, step: int) -> list:
        """The step's dumps, one per KV-cache group (None where the capture recorded an error)."""
        from kvviz.dumps.format import load_dump_bytes

        out = []
        for g, name in enumerate(self.meta(step)["groups"]):
            if name is None:
                out.append(None)
                continue
            if not isinstance(name, str) or not _STEP_NPZ.match(name) or int(_STEP_NPZ.match(name)[1]) != step:
                raise BadInput(f"{self.label}: step {step} names a dump {name!r} outside the format")
            out.append(load_dump_bytes(self.source.read(f"{STEPS}/{name}"), name, max_bytes=MAX_NPZ_BYTES))
        return out

    def request(self, req_id: str) -> dict | None:
        return next((r for r in self.requests if r.get("req_id") == req_id), None)


def _from_source(source) -> CapturedRun:
    names = set(source.names())
    if MANIFEST not in names:
        raise BadInput(f"{source.label} is not a captured run: it has no manifest.json")
    manifest = _object(source.read(MANIFEST), MANIFEST)
    _check_manifest(manifest, source.label)
    requests = []
    if REQUESTS in names:
        body = _object(source.read(REQUESTS), REQUESTS)
        requests = body.get("requests", [])
        if not isinstance(requests, list) or not all(isinstance(r, dict) for r in requests):
            raise BadInput(f"{source.label}: requests.json's requests is not a list of objects")
    steps = sorted(int(m[1]) for n in names if n.startswith(STEPS + "/")
                   for m in [_STEP_JSON.match(n.rsplit("/", 1)[-1])] if m)
    if len(steps) > MAX_STEPS:
        raise BadInput(f"{source.label} has {len(steps)} steps; the limit is {MAX_STEPS}")
    return CapturedRun(source, manifest, requests, steps)


def is_run_path(path: str) -> bool:
    """Whether ``path`` names a captured run: a directory holding manifest.json, or a .zip."""
    return (os.path.isdir(path) and os.path.isfile(os.path.join(path, MANIFEST))) or path.lower().endswith(".zip")


def load_run(path: str, *, max_zip_bytes: int = MAX_ZIP_TOTAL) -> CapturedRun:
    """A captured run from a directory or a ``.zip`` file; BadInput (one sentence) when it is not one."""
    if os.path.isdir(path):
        return _from_source(_DirSource(path))
    return load_run_bytes(read_bounded(path, max_zip_bytes), path)


def load_run_bytes(data: bytes, label: str = "the upload") -> CapturedRun:
    """A captured run from the bytes of its zip (an upload)."""
    return _from_source(_ZipSource(data, label))
