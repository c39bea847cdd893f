"""A scenario's token budget covers what its forks copy, so a small file cannot buy gigabytes."""
import time

import pytest

from kvviz.core.scenario import LIMITS, parse_scenario
from kvviz.errors import BadInput


def _scenario(prompt_len, forks):
    return {"config": {"num_blocks": 64, "block_size": 16, "max_model_len": 1 << 21},
            "requests": [{"id": "A", "prompt_len": prompt_len, "max_tokens": 1}],
            "actions": [{"step": 1 + i, "kind": "fork", "req": req, "n": n} for i, (req, n) in enumerate(forks)]}


def test_forks_of_a_long_prompt_are_refused_at_once():
    t0 = time.perf_counter()
    with pytest.raises(BadInput, match="forks ask for more than"):
        parse_scenario(_scenario(1_000_000, [("A", 64)] + [(f"A.{k}", 64) for k in range(1, 65)]))
    assert time.perf_counter() - t0 < 2


def test_nested_forks_count_their_parent_copies():
    half = LIMITS["total_tokens"] // 4
    parse_scenario(_scenario(half, [("A", 1)]))                       # A and one child: within
    with pytest.raises(BadInput, match="forks ask for more than"):
        parse_scenario(_scenario(half, [("A", 1), ("A.1", 2)]))       # + two grandchildren: 4 copies, over
