"""Links: encode/decode of page state; untrusted values fall back with a warning."""
from kvviz.views import links as share
from kvviz.views.batch import BatchConfig, RequestRow, default_rows


def test_round_trip():
    rows = [RequestRow(10, 0, 10, "sys"), RequestRow(7, 7, 1)]
    cfg = BatchConfig(block_size=8, kernel_block_size=4, num_blocks=40, cudagraph=True, dtype="fp8")
    params = share.encode_batch(rows, cfg, token=3)
    assert params["reqs"] == "10.0.10.sys,7.7.1" and params["tok"] == "3" and params["cg"] == "1"
    got_rows, got_cfg, tok, warns = share.decode_batch(params)
    assert (got_rows, got_cfg, tok, warns) == (rows, cfg, 3, [])


def test_no_params_means_nothing_to_load():
    assert share.decode_batch({}) == (None, None, None, [])


def test_bad_values_fall_back_with_warnings():
    rows, cfg, tok, warns = share.decode_batch({"bs": "banana", "nb": "99999999999999", "cg": "yes",
                                                "dtype": "int4", "tok": "-3", "reqs": "5.0.5,x.y.z,3.0.3.bad-name"})
    assert cfg.block_size == 4 and cfg.num_blocks == 48 and cfg.cudagraph is False and cfg.dtype == "float16"
    assert tok is None and rows == [RequestRow(5, 0, 5)]
    assert len(warns) == 6


def test_inconsistent_values_are_repaired():
    _, cfg, _, warns = share.decode_batch({"bs": "8", "kbs": "3", "dcp": "2", "rank": "5"})
    assert cfg.kernel_block_size == 8 and cfg.dcp_rank == 0 and len(warns) == 2


def test_oversized_and_empty_request_lists():
    rows, _, _, warns = share.decode_batch({"reqs": "1.0.1," * 5000})
    assert rows == default_rows() and "longer than" in warns[0]
    rows, _, _, warns = share.decode_batch({"reqs": ",,,"})
    assert rows == default_rows() and any("no usable request" in w for w in warns)
    rows, _, _, warns = share.decode_batch({"reqs": ",".join(["2.0.2"] * 300)})
    assert len(rows) == share.MAX_SHARED_REQS and any("dropped" in w for w in warns)


def test_scenario_links():
    names = ["lifecycle", "prefixes"]
    assert share.decode_scenario({}, names, lambda n: 5) == (None, None, [])
    assert share.decode_scenario({"sc": "prefixes", "step": "3"}, names, lambda n: 5) == ("prefixes", 3, [])
    name, step, warns = share.decode_scenario({"sc": "../../etc", "step": "77"}, names, lambda n: 5)
    assert (name, step) == ("lifecycle", 4) and len(warns) == 2
    _, step, warns = share.decode_scenario({"sc": "lifecycle", "step": "1e9"}, names, lambda n: 5)
    assert step == 0 and warns
    assert share.encode_scenario("prefixes", 2) == {"sc": "prefixes", "step": "2"}


def test_demo_link_round_trip_and_refusals():
    params = share.encode_demo("dcp", 1, "zh", True)
    assert share.query_string(params) == "?demo=dcp&step=1&lang=zh&presenter=1"
    assert share.decode_demo(params) == ("dcp", 1, True, "")
    assert share.decode_demo({}) == ("prefix", 0, False, "")
    assert share.decode_demo({"demo": "nope", "step": "x", "lang": "fr", "presenter": "yes"}) == (
        "prefix", 0, True, "demo=nope, step=x, lang=fr")
    assert share.decode_demo({"demo": "dcp", "step": "99"}) == ("dcp", 1, False, "step=99")   # clamped


def test_scenario_links_carry_version_and_runner():
    from kvviz.views.links import decode_version_runner, encode_scenario
    assert encode_scenario("lifecycle", 3) == {"sc": "lifecycle", "step": "3"}
    assert encode_scenario("lifecycle", 3, "main", "auto") == {"sc": "lifecycle", "step": "3"}   # defaults: not in the link
    assert encode_scenario("lifecycle", 3, "v0.20.0", "v1") == {"sc": "lifecycle", "step": "3", "vllm": "v0.20.0",
                                                               "runner": "v1"}
    assert decode_version_runner({"vllm": "v0.20.0", "runner": "v2"}) == ("v0.20.0", "v2", [])
    v, r, w = decode_version_runner({"vllm": "![](//x)", "runner": "v9"})
    assert (v, r) == (None, None) and len(w) == 2 and all("link parameter" in x for x in w)


def test_page_fields_round_trip_every_page():
    """Each page's fields: its values out to the query and back, unchanged (the restart relies on it)."""
    from kvviz.views import links as share
    from kvviz.views.batch_inputs import PRESETS

    sets = {
        "layout": (share.layout_fields(), {"lay.vllm": "v0.24.0", "lay.block": 1, "lay.off": 3, "lay.head": 0,
                                           "lay.kv": "v", "lay.byte": "0x68", "lay.sm10x": True}),
        "pcie": (share.pcie_fields(), {"pcie.vllm": "v0.19.0", "pcie.runner": "v2", "pcie.bs": 32, "pcie.host": True}),
        "csr": (share.csr_fields(PRESETS[:-1]), {"csr.vllm": "v0.19.0", "csr.runner": "v2", "csr.src": "dcp",
                                                 "csr.empty": 3, "csr.rule": "old", "csr.req": 2}),
        "notations": (share.notations_fields(["A", "B", "C"], "B"), {"notations_page_size": 32, "notations_req": "C",
                                                                    "notations_pos": 33, "notations_kv_unified": True,
                                                                    "notations_sglang_ps": 1}),
        "kernel_lab": (share.kernel_lab_fields(["r1", "r2"], "recorded"),
                       {"lab.recorded": "r2", "lab.kernel": "paged_decode", "lab.tl_shape": "1024x128",
                        "lab.tl_groups": 4, "lab.tl_runner": "v2"}),
        "dumps": (share.dumps_fields(), {"dumps.source": "sim", "dumps.step_a": 2, "dumps.step_b": 5,
                                         "dumps.a_healthy": False, "dumps.table": "block_table_device"}),
        "batch": (share.batch_token_fields(), {"batch.head": 1, "batch.dim": 5, "batch.kv": "v", "batch.layout": "HND"}),
        "step": (share.scenario_view_fields("step"), {"step.pool": "launch", "step.after": True, "step.after_v2": False}),
    }
    for page, (fields, values) in sets.items():
        params = share.encode_fields(fields, values)
        assert all(isinstance(v, str) for v in params.values()), page
        got, warns = share.decode_fields(fields, params)
        assert warns == [], (page, warns)
        assert {k: got[k] for k in values} == values, page
        # every field is in the link, the untouched ones at their defaults: the link is the whole page
        assert set(params) == {f.param for f in fields if (values.get(f.key, f.default)) is not None}, page


def test_page_fields_refuse_bad_values_with_one_warning_each():
    from kvviz.views import links as share

    fields = share.csr_fields(["default", "dcp"])
    got, warns = share.decode_fields(fields, {"vllm": "[x](//evil)", "runner": "v9", "src": "batch", "empty": "99",
                                              "rule": "<b>", "req": "-1"})
    assert got == {} and len(warns) == 6
    assert all(w.startswith("link parameter ") for w in warns)
    assert "using 2" in warns[3]                           # the default is named
    got, warns = share.decode_fields(share.layout_fields(), {"byte": "0x68; drop", "order": "x" * 300,
                                                             "sm10x": "maybe", "vllm": "v0.99.0"})
    assert got == {"lay.vllm": "v0.34.0"} and len(warns) == 4    # a newer release follows the newest known
    assert share.decode_fields(fields, {}) == ({}, [])     # no link: nothing changes


def test_old_links_still_decode():
    """Links written before the whole-page links: the scenario pages' sc/step/vllm/runner and the Batch
    page's batch still open the same view; their new fields simply keep their defaults."""
    from kvviz.views import links as share

    old = {"sc": "lifecycle", "step": "3", "vllm": "v0.20.0", "runner": "v1", "lang": "zh"}
    assert share.decode_scenario(old, ["lifecycle"], lambda n: 8) == ("lifecycle", 3, [])
    assert share.decode_version_runner(old) == ("v0.20.0", "v1", [])
    assert share.decode_fields(share.scenario_view_fields("step"), old) == ({}, [])
    assert share.decode_fields(share.pcie_fields(), {"vllm": "v0.20.0", "runner": "v1"}) == (
        {"pcie.vllm": "v0.20.0", "pcie.runner": "v1"}, [])
