"""The capture's knobs, read once from the environment.

- ``KVVIZ_CAPTURE_DIR``: where the run goes. Unset or empty: the plugin does nothing at all.
- ``KVVIZ_CAPTURE_STEPS=N``: keep only the newest N captured steps (a ring); 0 or unset: no cap.
- ``KVVIZ_CAPTURE_MB=M``: keep the captured steps' files under M MiB in all (oldest dropped first).
- ``KVVIZ_CAPTURE_RANGE=A:B``: capture steps A .. B only (either end may be left out: ``100:``).
- ``KVVIZ_CAPTURE_EVERY=K``: capture every K-th step of that range (steps A, A+K, ...).
- ``KVVIZ_CAPTURE_POOL=0``: leave out the block pool (ref counts, free queue), whose copy costs
  O(num_blocks) a step; it is also left out, with one log line, above ``KVVIZ_CAPTURE_POOL_MAX``
  blocks (default 2^17).
- ``KVVIZ_CAPTURE_QUEUE=Q``: steps waiting for the writer (default 1024; a step of the tiny CPU
  model is a few KiB, of a 256-request batch with 32k-token rows ~3 MiB). A step that finds the
  queue full is dropped and counted (``dropped_steps`` in the manifest), never waited for.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from kvviz.errors import BadInput


def _int(env, name: str, default: int, low: int = 0) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadInput(f"{name}={raw!r} is not an integer") from None
    if value < low:
        raise BadInput(f"{name}={value} is below {low}")
    return value


def _range(raw: str) -> tuple[int, int | None]:
    raw = raw.strip()
    if not raw:
        return 0, None
    first, sep, last = raw.partition(":")
    try:
        a = int(first) if first.strip() else 0
        b = int(last) if sep and last.strip() else (None if sep else a)
    except ValueError:
        raise BadInput(f"KVVIZ_CAPTURE_RANGE={raw!r} is not A:B (step numbers)") from None
    if a < 0 or (b is not None and b < a):
        raise BadInput(f"KVVIZ_CAPTURE_RANGE={raw!r} is empty or negative")
    return a, b


@dataclass(frozen=True)
class CaptureConfig:
    directory: str
    max_steps: int = 0              # 0: no cap
    max_bytes: int = 0              # 0: no cap
    first: int = 0
    last: int | None = None
    every: int = 1
    pool: bool = True
    pool_max_blocks: int = 1 << 17
    queue: int = 1024

    @classmethod
    def from_env(cls, env=None) -> "CaptureConfig | None":
        """The knobs, or None when ``KVVIZ_CAPTURE_DIR`` is unset. BadInput names a bad value."""
        env = os.environ if env is None else env
        directory = env.get("KVVIZ_CAPTURE_DIR", "").strip()
        if not directory:
            return None
        first, last = _range(env.get("KVVIZ_CAPTURE_RANGE", ""))
        return cls(directory=os.path.abspath(directory),
                   max_steps=_int(env, "KVVIZ_CAPTURE_STEPS", 0),
                   max_bytes=_int(env, "KVVIZ_CAPTURE_MB", 0) << 20,
                   first=first, last=last, every=_int(env, "KVVIZ_CAPTURE_EVERY", 1, low=1),
                   pool=env.get("KVVIZ_CAPTURE_POOL", "1").strip() not in ("0", "false", "no"),
                   pool_max_blocks=_int(env, "KVVIZ_CAPTURE_POOL_MAX", 1 << 17),
                   queue=_int(env, "KVVIZ_CAPTURE_QUEUE", 1024, low=1))

    def wants(self, step: int) -> bool:
        """Whether step ``step`` is captured (the range and the stride; the ring is the writer's)."""
        if step < self.first or (self.last is not None and step > self.last):
            return False
        return (step - self.first) % self.every == 0

    def describe(self) -> dict:
        return {"max_steps": self.max_steps or None, "max_mb": (self.max_bytes >> 20) or None,
                "first": self.first, "last": self.last, "every": self.every, "pool": self.pool}
