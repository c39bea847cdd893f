"""Where a vLLM release's wheel is: ``KVVIZ_WHEEL_CACHE`` (or ``~/.cache/kvviz/wheels``), as
``vllm-X.Y.Z-*.whl`` (a full wheel or the oracle's slim zip) or ``X.Y.Z/vllm-*.whl``, then
``/tmp/wheels/X.Y.Z``; otherwise ``pip download --no-deps --only-binary=:all:`` into the cache."""
from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path


class BadInput(Exception):
    """No such wheel (or release): the caller's message, exit status 2."""


def cache_dir() -> Path:
    return Path(os.environ.get("KVVIZ_WHEEL_CACHE") or Path.home() / ".cache" / "kvviz" / "wheels")


def normalize_version(version: str) -> str:
    """"v0.29.0" / "0.29" -> "0.29.0"; a version kvviz does not know as a release is refused."""
    from kvviz.core.versions import RELEASES

    v = str(version).strip().lstrip("v")
    parts = v.split(".")
    if len(parts) == 2:
        v += ".0"
    if f"v{v}" not in RELEASES:
        raise BadInput(f"unknown vLLM release {version!r}: kvviz knows {RELEASES[0]} .. {RELEASES[-1]}")
    return v


def find_wheel(version: str, wheel: str | None = None, cache: Path | None = None,
               download: bool = True) -> Path:
    """The wheel of release ``version`` ("0.34.0"): ``wheel`` if given, else the first hit of the
    cache's patterns, else (``download``) a fresh ``pip download``. BadInput when there is none."""
    if wheel:
        p = Path(wheel)
        if not p.is_file():
            raise BadInput(f"--wheel {wheel}: no such file")
        return p
    cache = cache or cache_dir()
    pats = [cache / f"vllm-{version}-*.whl", cache / version / "vllm-*.whl", Path("/tmp/wheels") / version / "vllm-*.whl"]
    for pat in pats:
        hits = sorted(glob.glob(str(pat)))
        if hits:
            return Path(hits[0])
    if not download:
        raise BadInput(f"no wheel of vLLM {version} in {cache} (and no download)")
    cache.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           f"vllm=={version}", "-d", str(cache)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    hits = sorted(glob.glob(str(cache / f"vllm-{version}-*.whl")))
    if r.returncode or not hits:
        raise BadInput(f"could not download vLLM {version} into {cache}: {(r.stderr or r.stdout).strip()[-300:]}")
    return Path(hits[0])
