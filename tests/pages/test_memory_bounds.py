"""Per-session memory is bounded and released (issue 11): several sessions paste multi-MB dumps on
the Debug dumps page; once a session stops showing them (another source, another page) its parsed
dumps are gone, and what all sessions retain returns to the baseline, although every session
(AppTest) stays alive. A page that kept uploads in session state for the session's life fails."""
import json

import numpy as np
import pytest
import streamlit as st

from kvviz.dumps.format import Dump
from page_support import app_test, open_page

ROWS, WIDTH = 128, 2048        # two 1 MiB tables a dump; its JSON text is ~3.5 MB


def big_dump_json(seed: int) -> str:
    bt = np.arange(1, ROWS * WIDTH + 1, dtype=np.int32).reshape(ROWS, WIDTH)
    cnt = np.full(ROWS, WIDTH, dtype=np.int32)
    cnt[seed % ROWS] -= 1
    bt[seed % ROWS, WIDTH - 1] = 0
    d = Dump(block_size=16, num_blocks=ROWS * WIDTH + 1, num_reqs=ROWS, block_table=bt, num_blocks_per_row=cnt,
             block_table_device=bt.copy(), num_reqs_padded=ROWS)
    return json.dumps(d.to_json())


def state_dump_bytes(sessions) -> int:
    """Bytes of the numpy arrays of every Dump that the sessions' state holds (at any depth of
    lists, tuples and dicts). Measured on session state, not on the process: outside a server,
    AppTest keeps a page's download-button callables (and the dumps they close over) until the
    session ends, where the server drops them at the end of the next run."""
    seen, total = set(), 0

    def walk(v):
        nonlocal total
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, Dump):
            total += sum(a.nbytes for a in v.arrays().values())
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple, set)):
            for x in v:
                walk(x)

    for at in sessions:
        for k in [f"dumps.up_dump_{s}" for s in "ab"] + list(at.session_state._state._state.filtered_state):
            if k in at.session_state:
                walk(at.session_state[k])
    return total


def _has(at, key):
    try:
        return key in at.session_state
    except Exception:  # noqa: BLE001
        return False


def paste_two(at, seed: int):
    at.radio(key="dumps.source").set_value("upload").run()
    at.text_area(key="dumps.paste_a").input(big_dump_json(seed)).run()
    at.text_area(key="dumps.paste_b").input(big_dump_json(seed + 1)).run()
    assert not at.exception, at.exception
    assert _has(at, "dumps.up_dump_a") and _has(at, "dumps.up_dump_b")
    assert not at.error, [e.value for e in at.error]


def test_uploads_are_released_when_no_longer_shown():
    st.cache_resource.clear()
    warm = open_page(app_test(), "dumps")          # imports and the page's shared caches, once
    warm.radio(key="dumps.source").set_value("upload").run()
    baseline = state_dump_bytes([warm])
    from kvviz.views.dumps import read_upload
    one_dump = sum(a.nbytes for a in read_upload(big_dump_json(0).encode(), "a.json")[0].arrays().values())

    # three sessions (was six): both ways out (another source, another page), and a third whose bound
    # below counts the first one's dumps if they were kept (6 dumps > 5); the end counts them all
    sessions = []
    for i in range(3):
        at = open_page(app_test(), "dumps")
        paste_two(at, 10 * i)
        sessions.append(at)
        held = state_dump_bytes(sessions) - baseline
        assert held >= 2 * one_dump                                   # this session's two dumps
        assert held <= (2 * one_dump) * 2 + one_dump                  # not everyone's so far
        if i % 2 == 0:       # the page stops showing uploads: another source
            at.radio(key="dumps.source").set_value("bug").run()
        else:                # ... or another page
            open_page(at, "home")
        assert not at.exception, at.exception
        assert not _has(at, "dumps.up_dump_a") and not _has(at, "dumps.up_dump_b")

    # three sessions alive, 6 multi-MB dumps pasted: what stays is the baseline (a generous bound:
    # less than one dump more), where keeping uploads per session would hold all six
    assert state_dump_bytes(sessions) - baseline < one_dump


def test_a_big_paste_is_parsed_in_the_worker_process_and_a_broken_one_is_one_error():
    """Past ui.OFF_THREAD_BYTES a paste is parsed by the shared worker process (the server's threads
    keep running); what comes back is the validated dump, or one sentence."""
    import ui

    text = big_dump_json(0)
    assert len(text) > ui.OFF_THREAD_BYTES                              # goes to the worker
    at = open_page(app_test(), "dumps")
    at.radio(key="dumps.source").set_value("upload").run()
    at.text_area(key="dumps.paste_a").input(text).run()
    assert not at.exception and not at.error
    assert ui._parse_pool()._processes, "the big paste was parsed in this thread, not in the worker"
    at.text_area(key="dumps.paste_b").input("{" + " " * (ui.OFF_THREAD_BYTES + 10)).run()
    assert not at.exception and len(at.error) == 1 and "not valid JSON" in at.error[0].value


def test_the_worker_runs_at_a_lower_cpu_priority():
    import os

    import ui

    assert ui._parse_pool().submit(os.nice, 0).result(timeout=60) >= min(19, os.nice(0) + ui.WORKER_NICE)


def test_big_input_wait_is_proportional_to_the_last_big_input():
    from kvviz.views.dumps import BIG_INPUT_BYTES_PER_S, big_input_wait

    assert big_input_wait(None, 100.0) == 0.0
    gap = 8_000_000 / BIG_INPUT_BYTES_PER_S
    assert big_input_wait((100.0, 8_000_000), 100.0) == pytest.approx(gap)
    assert big_input_wait((100.0, 8_000_000), 100.0 + gap / 2) == pytest.approx(gap / 2)
    assert big_input_wait((100.0, 8_000_000), 100.0 + gap + 0.01) == 0.0


def test_a_tab_pasting_big_dumps_back_to_back_is_paced(monkeypatch):
    """One tab's second big paste waits for its turn (its bytes / the rate after the first was read);
    a small paste does not wait, and a big one after the pause is read at once."""
    import time

    from kvviz.views import dumps as view

    monkeypatch.setattr(view, "BIG_INPUT_BYTES_PER_S", 1e6)        # ~3.5 s after a 3.5 MB paste
    a_text, b_text = big_dump_json(1), big_dump_json(2)
    gap = len(a_text) / 1e6
    at = open_page(app_test(), "dumps")
    at.radio(key="dumps.source").set_value("upload").run()
    t0 = time.monotonic()
    at.text_area(key="dumps.paste_a").input(a_text).run()
    first = time.monotonic() - t0
    assert not at.exception and not at.error
    t0 = time.monotonic()
    at.text_area(key="dumps.paste_b").input(b_text).run()
    second = time.monotonic() - t0
    assert not at.exception and not at.error and _has(at, "dumps.up_dump_b")
    assert second >= 0.9 * gap, (first, second, gap)
    time.sleep(gap)                                                  # the turn has come: no wait
    t0 = time.monotonic()
    at.text_area(key="dumps.paste_a").input(big_dump_json(3)).run()
    assert time.monotonic() - t0 < second and not at.error
