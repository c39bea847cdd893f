"""Helpers that several test files share (``from tests.support import ...``: tests/conftest.py puts
the repository root on sys.path)."""
import os

import numpy as np


def fresh_seed() -> int:
    """A new seed per test (printed, and in every failure message); ``KVVIZ_SEED=N`` replays one."""
    seed = int(os.environ.get("KVVIZ_SEED") or np.random.SeedSequence().entropy % (1 << 31))
    print(f"seed={seed} (replay with KVVIZ_SEED={seed})")
    return seed
