"""Test setup. TRITON_INTERPRET must be set before triton is imported anywhere."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import kvviz  # noqa: E402,F401  (kvviz_kernels names the checkout's kernels/ when not installed)


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # torch missing or broken: the CPU path is all we have
        return False


if not _has_cuda():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402


# `make test` hands whole files to its two xdist workers (``--dist loadfile --no-loadscope-reorder``: a
# module's browser, tab or wheel is made once) in collection order, which puts these files first, the
# longest first (seconds of one worker, BENCHMARKS.md "make test time after issue 34's cuts"): the last
# files handed out are short ones, so the two workers end together instead of one running a 3-minute
# file alone at the end. A file not listed keeps its place after them; a file holding any of the tests
# that tests/engines/conftest.py sends last (llama.cpp's: its library may still be building) goes last,
# whole, since a file is handed out at its first test's place.
LONGEST_FIRST = [
    "tests/pages/test_browser_demos.py",
    "tests/engines/test_fidelity.py",
    "tests/pages/test_browser_links.py",
    "tests/pages/test_browser_sweep.py",
    "tests/pages/test_browser_restart.py",
    "tests/pages/test_server_rss.py",
    "tests/engines/test_packaging.py",
    # the next ones (seconds of one worker on the clean-clone runs after issue 34's engines): so the
    # files handed out last are short whichever worker takes them
    "tests/pages/test_every_page.py",
    "tests/pages/test_browser_dcp.py",
    "tests/pages/test_browser.py",
    "tests/gpu/test_fused_step.py",
    "tests/pages/test_outside_text_stays_text.py",
    "tests/engines/test_live_capture.py",
    "tests/engines/test_sglang_notation.py",
    "tests/pages/test_browser_presenter.py",
    "tests/pages/test_dumps_page.py",
    "tests/dist/test_dcp_gloo.py",
    "tests/pages/test_browser_serve.py",
    "tests/pages/test_every_page_shows.py",
]


def _file(item) -> str:
    return item.nodeid.split("::")[0]


def _longest_first(items) -> None:
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    last = {_file(item) for item in items if "llamacpp" in item.nodeid}
    items.sort(key=lambda item: (_file(item) in last, rank.get(_file(item), len(rank))))   # stable


def pytest_collection_modifyitems(config, items):
    _longest_first(items)
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)
