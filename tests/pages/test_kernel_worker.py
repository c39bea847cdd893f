"""Issue 11: the interpreter's kernel checks run outside the server's script thread (one shared, niced
worker process) and a batch already checked for one session is answered from the shared results for
another session instead of being run again."""
import os

import pytest

from tests.pages.page_support import app_test, batch_kernel_table

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="interpreter mode only")


def _kernel_table(at):
    table = batch_kernel_table(at)
    assert table is not None, "the batch page shows its kernel table"
    return table


def test_two_sessions_share_one_kernel_check_run_in_the_worker():
    import ui

    ui.kernel_results.clear()
    first = app_test("batch")
    shared = ui.kernel_results()
    assert (shared["pool"], shared["shared"], len(shared["results"])) == (1, 0, 1)
    second = app_test("batch")
    assert (shared["pool"], shared["shared"]) == (1, 1), "the second session reused the first one's check"
    t1, t2 = _kernel_table(first), _kernel_table(second)
    assert t1.equals(t2) and bool((t1["passed"] == "✔").all())
    names = set(t1["kernel"])
    assert "kv_write" in names and any(n.startswith("slot_mapping") for n in names)


def test_the_worker_is_another_niced_process():
    import ui

    pid, nice = ui._kernel_pool().submit(_pid_and_nice).result(timeout=120)
    assert pid != os.getpid()
    assert nice >= os.nice(0) + ui.WORKER_NICE


def test_a_failing_check_in_the_worker_raises_here_as_the_page_expects():
    import ui
    from kvviz.gpu import harness

    from kvviz.core.step import build_step_from_batch

    step = build_step_from_batch({"block_size": 4, "requests": [{"block_ids": [1, 2], "seq_len": 6}]})
    with pytest.raises(ValueError):                   # the harness refuses the dtype in the worker
        ui.run_backend(harness.run_batch, step, dtype="int3")
    good = ui.run_backend(harness.run_batch, step, dtype="float16", timing=False)
    assert good.passed and good.label["mode"] == "interpreter"


def _pid_and_nice():
    return os.getpid(), os.nice(0)


def test_a_worker_started_by_a_page_does_not_run_that_page():
    """Started during a script run (whose ``__main__`` is the page's module), the worker must not
    import the page as its own main module: it would draw the page with no session and, for a page
    that starts the worker, fail to start it (BrokenProcessPool)."""
    import ui

    ui._kernel_pool.clear()
    ui.kernel_results.clear()
    at = app_test("batch")
    assert bool(_kernel_table(at)["passed"].all())
    assert ui.kernel_results()["pool"] == 1
    main_file = ui._kernel_pool().submit(_main_file).result(timeout=120)
    assert main_file is None or "pages" not in main_file, main_file


def _main_file():
    import sys

    return getattr(sys.modules.get("__main__"), "__file__", None)
