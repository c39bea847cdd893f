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
