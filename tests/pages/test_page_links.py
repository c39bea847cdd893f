"""Whole-page links without a browser (AppTest): a session started on a page's link takes every value
the link carries into the page's widgets and writes the whole page back into the address; a bad value
is one warning and the default; a page reached inside the session reads nothing from the address."""
import pytest

from page_support import app_test, open_page


def _query(at) -> dict:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


@pytest.mark.parametrize("page,query,widgets", [
    ("csr", {"vllm": "v0.19.0", "runner": "v2", "empty": "3", "rule": "old", "req": "2"},
     {"csr.vllm": "v0.19.0", "csr.runner": "v2", "csr.empty": 3, "csr.rule": "old", "csr.req": 2}),
    ("layout", {"vllm": "v0.24.0", "block": "1", "off": "3", "head": "0", "kv": "v"},
     {"lay.vllm": "v0.24.0", "lay.block": 1, "lay.off": 3, "lay.head": 0, "lay.kv": "v"}),
    ("notations", {"page": "32", "req": "C", "pos": "33", "sglang": "1"},
     {"notations_page_size": 32, "notations_req": "C", "notations_pos": 33, "notations_sglang_ps": 1}),
    ("kernel_lab", {"source": "recorded", "kernel": "csr", "groups": "4", "runner": "v2"},
     {"lab.source": "recorded", "lab.kernel": "csr", "lab.tl_groups": 4, "lab.tl_runner": "v2"}),
    ("dumps", {"source": "examples", "ex_a": "commit_too_few_rows.json", "table": "block_table_device"},
     {"dumps.source": "examples", "dumps.ex_a": "commit_too_few_rows.json", "dumps.table": "block_table_device"}),
    ("pcie", {"vllm": "v0.19.0", "runner": "v1", "reqs": "128", "bs": "32", "host": "1"},
     {"pcie.vllm": "v0.19.0", "pcie.runner": "v1", "pcie.reqs": 128, "pcie.bs": 32, "pcie.host": True}),
    ("batch", {"tok": "3", "head": "1", "dim": "5", "kv": "v", "layout": "HND"},
     {"batch.tok": 3, "batch.head": 1, "batch.dim": 5, "batch.kv": "v", "batch.layout": "HND"}),
])
def test_a_link_opens_the_page_as_it_was(page, query, widgets):
    at = app_test(page, query=query, lang="zh")        # (app.py reads a link's lang=; a page file run alone does not)
    assert not at.exception and not [w for w in at.warning if "link" in w.value]
    assert {k: at.session_state[k] for k in widgets} == widgets
    written = _query(at)
    assert {k: written[k] for k in query} == query          # the address still says all of it ...
    assert written["lang"] == "zh" and len(written) > len(query) + 1    # ... the language and the rest of the page


def test_a_bad_value_is_one_warning_and_the_default():
    at = app_test("pcie", query={"reqs": "9999999", "bs": "33", "vllm": "<img src=x>", "q": "4"})
    warns = [w.value for w in at.warning if "link parameter" in w.value]
    assert len(warns) == 1 and warns[0].count("link parameter") == 3
    assert at.session_state["pcie.reqs"] == 64 and at.session_state["pcie.bs"] == 16
    assert at.session_state["pcie.q"] == 4 and at.session_state["pcie.vllm"] == "main"
    assert _query(at)["reqs"] == "64"                        # the address shows what is on screen


def test_a_page_reached_inside_the_session_reads_no_link():
    at = app_test()                                          # the session starts on Home
    at.query_params.update({"req": "2", "empty": "5"})       # an address left from elsewhere
    open_page(at, "csr")
    assert at.session_state["csr.req"] == 0 and at.session_state["csr.empty"] == 2
    assert _query(at)["req"] == "0"
