"""Every CLI output on examples/ is byte-identical to the pinned one (a public contract)."""
import json

import pytest

from cli_golden_cases import GOLDEN, cases, run_cli

PINNED = {tuple(c["argv"]): c for c in json.loads(GOLDEN.read_text())}


def test_every_case_is_pinned():
    assert sorted(map(tuple, cases())) == sorted(PINNED)


@pytest.mark.parametrize("argv", cases(), ids=lambda a: " ".join(a))
def test_cli_output_is_unchanged(argv):
    got = run_cli(argv)
    want = PINNED[tuple(argv)]
    assert got["rc"] == want["rc"]
    assert got["stdout"] == want["stdout"]
    assert got["stderr"] == want["stderr"]
