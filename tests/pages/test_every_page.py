"""AppTest for every page of issue 4: real widget interactions, no exception anywhere."""
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from page_support import batch_kernel_table, chart_specs, APP, open_page as _open, decoded, pcie_labels, plotly_array as _array, table_frames  # noqa: F401 - shared helpers


def _metrics(at):
    return {m.label: m.value for m in at.metric}


def _plots(at):
    return chart_specs(at)


def test_home_backend_card_and_links(at):
    assert "kvviz" in at.title[0].value
    card = [m.value for m in at.markdown if m.value.startswith("Device: ")]   # a sentence, never cut short
    assert card in (["Device: **CPU, Triton interpreter**"],) or "compiled" in card[0]
    assert len(at.get("page_link")) == 11   # every page but home (was 7 before Guided demos, Six notations, Debug dumps; 10 before Captured runs)


def test_language_follows_every_page(at):
    _open(at, "home")  # AppTest's first run uses another page hash, so the widget id changes once
    at.selectbox(key="lang.widget").set_value("zh").run()
    assert "分页" in at.title[0].value
    for page in ("batch", "step_through", "prefixes", "csr", "layout", "pcie", "kernel_lab"):
        _open(at, page)
    at.selectbox(key="lang.widget").set_value("es").run()
    assert "Laboratorio" in at.title[0].value
    assert not at.exception


def test_batch_default_chain_and_figures(at):
    _open(at, "batch")
    specs = _plots(at)
    # the gathered input table, slot mapping, slot buffer and (the default runner being V2) the
    # request-state table
    assert len(specs) == 4 and all('"type":"heatmap"' in s or '"type":"scatter"' in s for s in specs)
    at.number_input(key="batch.tok").set_value(12).run()
    m = _metrics(at)
    # token 12 is row 1 position 10: logical block 2 -> physical block 4, offset 2 -> slot 18
    assert (m["row"], m["position"], m["logical block"], m["physical block"], m["slot"]) == ("1", "10", "2", "4", "18")
    # slot 18 = block 4, offset 2; K, head 0, dim 0; 2 heads x 8 dims fp16, in the newest vLLM's packed
    # layout [N, B, H, 2D] / [N, H, B, 2D]: NHD (4*128 + 2*32)*2 = 1152; HND (4*128 + 0*64 + 2*16)*2 = 1088
    assert (m["NHD byte"], m["HND byte"]) == ("1152", "1088")
    assert not at.exception
    assert at.query_params["tok"] == ["12"] or at.query_params["tok"] == "12"


@pytest.mark.parametrize("preset", ["default", "decode", "prefix", "kernel", "dcp"])
def test_batch_presets_run_kernels_and_pass(at, preset):
    _open(at, "batch")
    at.selectbox(key="batch.preset").set_value(preset).run()
    assert not at.exception
    assert not any("MISMATCH" in e.value for e in at.error), [e.value for e in at.error]
    assert any("match their references" in s.value for s in at.success)
    if preset != "decode":
        return
    assert at.number_input(key="batch.bs").value == 8
    kernels = batch_kernel_table(at)
    assert kernels is not None and set(kernels["kernel"]) >= {"slot_mapping[flat]", "csr", "kv_write"}
    assert (kernels["passed"] == "✔").all()


def test_batch_bad_input_keeps_page(at):
    _open(at, "batch")
    at.number_input(key="batch.nb").set_value(5).run()
    assert "pool is too small" in at.error[0].value
    assert at.title[0].value and not at.exception
    at.number_input(key="batch.nb").set_value(48).run()
    at.number_input(key="batch.kbs").set_value(3).run()
    assert "does not divide" in at.error[0].value
    at.number_input(key="batch.kbs").set_value(2).run()
    assert not any("cannot be built" in e.value for e in at.error) and not at.exception


def test_batch_link_reopens_and_bad_link_warns():
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"bs": "8", "kbs": "8", "nb": "20", "len": "64", "reqs": "9.0.9,4.4.1,zz", "tok": "3"})
    at.switch_page("pages/batch.py").run()
    assert not at.exception
    assert at.number_input(key="batch.bs").value == 8 and at.number_input(key="batch.tok").value == 3
    assert any("skipped" in w.value for w in at.warning)
    at2 = AppTest.from_file(APP, default_timeout=60)
    at2.query_params.update({"bs": "banana", "nb": "999999999999"})
    at2.switch_page("pages/batch.py").run()
    assert not at2.exception and len(at2.warning) >= 2
    assert at2.number_input(key="batch.bs").value == 4


def test_sessions_do_not_share_state():
    st.cache_resource.clear()
    a = AppTest.from_file(APP, default_timeout=60)
    a.switch_page("pages/batch.py").run()
    b = AppTest.from_file(APP, default_timeout=60)
    b.switch_page("pages/batch.py").run()
    a.number_input(key="batch.bs").set_value(8).run()
    a.number_input(key="batch.kbs").set_value(8).run()
    b.run()
    assert b.number_input(key="batch.bs").value == 4
    assert a.number_input(key="batch.bs").value == 8


def test_batch_value_survives_page_switch(at):
    _open(at, "batch")
    at.number_input(key="batch.tok").set_value(5).run()
    _open(at, "layout")
    _open(at, "batch")
    assert at.number_input(key="batch.tok").value == 5


def test_step_through_forward_back_and_custom(at):
    _open(at, "step_through")
    at.selectbox(key="step.runner").set_value("v1").run()     # V1's persistent batch (condense, move_row)
    assert "Step 1 of 8" in at.info[0].value
    at.button(key="step.next").click().run()
    at.button(key="step.next").click().run()
    assert "Step 3 of" in at.info[0].value
    at.button(key="step.back").click().run()
    assert "Step 2 of" in at.info[0].value
    at.select_slider(key="step.idx").set_value(3).run()
    assert any("condense" in m.value for m in at.markdown)       # A's row is filled by a move_row
    assert len(_plots(at)) == 4 and not at.exception
    at.text_area(key="step.custom_text").set_value('{"config": {"num_blocks": 1}}').run()
    at.button(key="step.load").click().run()
    assert "cannot be loaded" in at.error[0].value
    assert "Step 4 of 8" in at.info[0].value and len(_plots(at)) == 4   # the scenario on screen stays
    at.text_area(key="step.custom_text").set_value(
        '{"config": {"num_blocks": 8, "block_size": 4}, "requests": [{"id": "Z", "prompt_len": 6, "max_tokens": 2}]}').run()
    at.button(key="step.load").click().run()
    assert not at.error and not at.exception and "Step 1 of 2" in at.info[0].value


def test_step_link():
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"sc": "lifecycle", "step": "99"})
    at.switch_page("pages/step_through.py").run()
    assert not at.exception and "past the last step" in at.warning[0].value
    assert "Step 8 of 8" in at.info[0].value


def test_prefixes_sharing_and_chain(at):
    _open(at, "prefixes")
    at.select_slider(key="pre.idx").set_value(1).run()
    assert any("more than one request" in m.value for m in at.markdown)
    chain = at.dataframe[0].value
    assert len(chain) > 0 and chain["in prefix cache"].any()
    at.select_slider(key="pre.idx").set_value(2).run()
    assert any("copy-on-write" in m.value for m in at.markdown)
    assert not at.exception


def test_csr_rules_and_kernel_check(at):
    _open(at, "csr")
    assert any("equal the reference" in s.value for s in at.success)
    at.number_input(key="csr.empty").set_value(3).run()
    per_req = [d.value for d in at.dataframe if "last_page_len" in d.value.columns][0]
    assert list(per_req["last_page_len"].tail(3)) == [0, 0, 0]
    at.session_state["csr.rule"] = "old"
    at.run()
    per_req = [d.value for d in at.dataframe if "last_page_len" in d.value.columns][0]
    assert list(per_req["last_page_len"].tail(3)) == [4, 4, 4]
    assert any("equal the reference" in s.value for s in at.success) and not at.exception


def test_csr_empty_row_rule_follows_the_release(at):
    """The CSR page's empty-request rule is the picked release's by default (#25438: last_page_len 0
    for an empty request from v0.11.1, a full page in v0.11.0); the two overrides stay labelled."""
    _open(at, "csr")
    at.number_input(key="csr.empty").set_value(2).run()
    assert at.session_state["csr.rule"] == "release"
    for version, want in (("v0.11.0", [4, 4]), ("v0.11.1", [0, 0]), ("v0.34.0", [0, 0])):
        at.selectbox(key="csr.vllm").set_value(version).run()
        assert not at.exception
        per_req = [d.value for d in at.dataframe if "last_page_len" in d.value.columns][0]
        assert list(per_req["last_page_len"].tail(2)) == want, version
    at.session_state["csr.rule"] = "old"                   # an override on a release that says 0
    at.run()
    per_req = [d.value for d in at.dataframe if "last_page_len" in d.value.columns][0]
    assert list(per_req["last_page_len"].tail(2)) == [4, 4]


def _open_layout_flash_attn(at):
    """The layout page with the flash_attn family picked by hand (the numbers below are its strides;
    the page's default follows the newest vLLM, flashinfer_packed)."""
    _open(at, "layout")
    at.selectbox(key="lay.family").set_value("flash_attn").run()


def test_layout_encode_decode(at):
    _open_layout_flash_attn(at)
    # 2 blocks x 4 slots x 2 heads x 4 dims fp16; K of block 1, offset 2, head 1, dim 0 (slot 6):
    # NHD strides (64, 32, 8, 4, 1): 32 + 16 + 4 = 52 elements = 104 bytes
    # HND strides (64, 32, 16, 4, 1): 32 + 16 + 8 = 56 elements = 112 bytes
    text = " ".join(m.value for m in at.markdown)
    assert "NHD: byte **104**" in text and "HND: byte **112**" in text
    at.text_input(key="lay.byte").set_value("104").run()
    dec = decoded(at)
    assert (dec["block"], dec["offset_in_block"], dec["head"], dec["dim"]) == (1, 2, 1, 0)
    at.text_input(key="lay.byte").set_value(str(10 ** 6)).run()
    assert "past the end of this cache" in at.error[0].value
    assert len(_plots(at)) == 2 and not at.exception


def test_pcie_model_and_bad_sizes(at):
    _open(at, "pcie")
    comp = table_frames(at, pcie_labels("en"))[1]      # [0]: the release's step
    total = comp[comp["table"] == "total"]
    assert int(total["full width (vLLM)"].iloc[0]) == 525832
    at.number_input(key="pcie.reqs").set_value(128).run()
    comp = table_frames(at, pcie_labels("en"))[1]
    assert int(comp[comp["table"] == "block table"]["full width (vLLM)"].iloc[0]) == 128 * 2048 * 4
    at.number_input(key="pcie.ctx").set_value(40000).run()
    assert "exceeds the max model length" in at.error[0].value and not at.exception


def test_kernel_lab_runs_bench(at):
    _open(at, "kernel_lab")
    # on a CPU the lab opens on the recorded H200 run, not on an empty page; no "None" in its tables
    assert at.segmented_control(key="lab.source").value == "recorded"
    assert "NVIDIA H200" in at.success[0].value
    for df in at.dataframe:
        assert not df.value.isna().any().any() and "None" not in df.value.astype(str).to_numpy()
    at.segmented_control(key="lab.source").set_value("run").run()
    assert "Press the button" in at.info[0].value
    at.button(key="lab.run").click().run(timeout=120)
    assert not at.exception
    assert any("measurements" in s.value for s in at.success)
    assert len(_plots(at)) == 2       # the kernel's plot and the step timeline of this run's fused_step rows
    assert not any("recorded run" in c.value for c in at.caption)
    # the interpreter's µs are emulation: the goals are listed as not measured here, nothing red or orange
    assert any(i.value.startswith("Speed goals are judged only on a GPU") for i in at.info)
    lines = [m.value for m in at.markdown if m.value.startswith(":gray[not measured here]")]
    assert len(lines) > 20 and not any(":red[" in m.value or ":orange[" in m.value for m in at.markdown)


def test_kernel_lab_recorded_gpu_run_every_timing(at):
    """A recorded H200 run shows on a CPU machine; each timing method re-plots the slot mapping from
    its own column, against the empty launch timed the same way and the 1.5x goal line."""
    import json

    _open(at, "kernel_lab")
    at.segmented_control(key="lab.source").set_value("recorded").run()
    assert not at.exception
    rec = json.loads((Path(APP).parent / "examples/bench" / f"{at.selectbox(key='lab.recorded').value}.json")
                     .read_text())
    assert "NVIDIA H200" in at.success[0].value
    timing = at.segmented_control(key="lab.timing")
    assert list(timing.options) == ["event-timed", "in a CUDA graph", "host hidden, cold L2", "host hidden, warm L2"]
    for column, floor_key in (("us", "empty_us"), ("dev_us", "empty_dev_us"), ("dev_warm_us", "empty_dev_warm_us"),
                              ("graph_us", "empty_graph_us")):
        at.segmented_control(key="lab.timing").set_value(column).run()
        assert not at.exception
        spec = json.loads(_plots(at)[0])
        auto = [t for t in spec["data"] if t["name"].startswith("auto")][0]
        want = {r["shape"]: r[column] for r in rec["rows"] if r["kernel"] == "slot_mapping" and r["variant"] == "auto"}
        assert dict(zip(_array(auto["x"]), _array(auto["y"]))) == want, column
        lines = sorted(sh["y0"] for sh in spec["layout"]["shapes"])
        floor = rec["floors"][floor_key]
        assert lines == pytest.approx([floor, 1.5 * floor]), column
    goals = [m.value for m in at.markdown if m.value.startswith((":green[**met**]", ":orange[**not met**]"))]
    assert len(goals) == len(rec["goals"]) and any("green" in g for g in goals) and any("orange" in g for g in goals)
    met = sum(g["met"] for g in rec["goals"])      # a summary first, the list folded (targets, not errors)
    assert any(i.value.startswith(f"{met} of {len(rec['goals'])} speed goals met on NVIDIA H200") for i in at.info)
    assert not any(":red[" in m.value for m in at.markdown)
    at.segmented_control(key="lab.kernel").set_value("kv_write").run()
    assert not at.exception and "shapes" not in json.loads(_plots(at)[0])["layout"]


def test_kernel_lab_step_timeline_from_the_recorded_fused_run(at):
    """On a CPU the lab opens on the full recorded bench, which has no fused_step rows: the step
    timeline comes from the newest recorded run that has them, and its bars are that run's figures
    for the batch picked (shape x groups x runner), each timing against its own empty launch."""
    import json

    from kvviz.gpu.bench import results
    from kvviz.views.fused_timeline import latest_run_with_fused

    _open(at, "kernel_lab")
    name, _ = latest_run_with_fused(results.example_runs(), results.load_example_run)
    rec = json.loads((Path(APP).parent / "examples/bench" / f"{name}.json").read_text())
    assert any(name in c.value for c in at.caption)
    at.selectbox(key="lab.tl_shape").set_value("4096x1").run()
    at.segmented_control(key="lab.tl_groups").set_value(4).run()
    at.segmented_control(key="lab.tl_runner").set_value("v2").run()
    assert not at.exception
    spec = json.loads(_plots(at)[1])
    assert "4096x1, 4 group(s), V2" in spec["layout"]["title"]["text"]
    bars = {t["name"]: dict(zip(_array(t["y"]), _array(t["x"]))) for t in spec["data"]}
    row = {r["variant"]: r for r in rec["rows"] if r["kernel"] == "fused_step" and r["shape"] == "4096x1 G4"}
    fl = rec["floors"]
    # the run's other path: kvviz's separate launches, or (from 2026-12-04) vLLM's own step kernels
    other, name_v2, name_v1 = (("v2 vllm", "vLLM's own kernels: 3 launches", "vLLM's own kernels: 5 launches")
                               if "v2 vllm" in row else ("v2 separate", "separate: 3 launches + an indptr copy",
                                                         "separate: 5 launches + an indptr copy"))
    for label, col, floor in (("event-timed", "us", "empty_us"), ("in a CUDA graph", "graph_us", "empty_graph_us"),
                              ("host hidden, cold L2", "dev_us", "empty_dev_us")):
        assert bars["fused: 1 launch"][label] == row["v2 fused"][col]
        assert bars[name_v2][label] == row[other][col]
        assert bars["empty launch"][label] == fl[floor]
    fused = next(t for t in spec["data"] if t["name"] == "fused: 1 launch")
    if other == "v2 vllm":   # the fused bar names its ratio to vLLM's kernels
        assert any(f"{round(row['v2 fused']['graph_us'] / row['v2 vllm']['graph_us'], 2)}× vLLM's" in t
                   for t in _array(fused["text"]))
    at.segmented_control(key="lab.tl_runner").set_value("v1").run()
    spec = json.loads(_plots(at)[1])
    assert name_v1 in [t["name"] for t in spec["data"]]   # 4 slot mappings + the page copy / CSR


@pytest.mark.parametrize("text,msg", [("[" * 100000, "nested too deeply"), ("{bad", "not valid JSON"),
                                      ('{"config": {"num_blocks": 1048576, "block_size": 1, "max_num_reqs": 4096,'
                                       ' "max_model_len": 2097152}}', "exceeds")])
def test_step_through_bad_custom_scenario_is_one_error(at, text, msg):
    _open(at, "step_through")
    at.text_area(key="step.custom_text").set_value(text).run()
    at.button(key="step.load").click().run()
    assert not at.exception
    assert any(msg in e.value for e in at.error), [e.value for e in at.error]


def test_layout_cache_family_selector_moves_bytes_and_picture(at):
    """The Memory layout page names the cache layout family (default: what the newest vLLM allocates,
    flashinfer_packed); picking another changes the byte addresses, the decoding and the picture of
    memory order."""
    import json

    _open(at, "layout")
    assert at.selectbox(key="lay.family").value == "auto"
    assert "NHD: byte **208**" in " ".join(m.value for m in at.markdown)     # packed, as below
    # K of block 1, offset 2, head 1, dim 0 in a 2 x 4 x 2 x 4 fp16 cache:
    # flashinfer NHD [B,2,N,H,D] strides (64,32,8,4,1): 64 + 16 + 4 = 84 el = 168 B;
    #            HND [B,2,H,N,D] strides (64,32,16,4,1): 64 + 16 + 8 = 88 el = 176 B
    # flashinfer_packed NHD [B,N,H,2D] strides (64,16,8,1): 64 + 32 + 8 = 104 el = 208 B;
    #                   HND [B,H,N,2D] strides (64,32,8,1): 64 + 32 + 16 = 112 el = 224 B
    want = {"flash_attn": (104, 112, "FlashAttention backend"), "flashinfer": (168, 176, "before 2026-07"),
            "flashinfer_packed": (208, 224, "since 2026-07-11")}
    first_labels = {}
    for fam, (nhd, hnd, whose) in want.items():
        at.selectbox(key="lay.family").set_value(fam).run()
        assert not at.exception
        text = " ".join(m.value for m in at.markdown)
        assert f"NHD: byte **{nhd}**" in text and f"HND: byte **{hnd}**" in text, fam
        assert f"**{fam}**" in text and whose in text
        specs = [json.loads(s) for s in _plots(at)]
        assert len(specs) == 2
        first_labels[fam] = [row[0] for row in specs[0]["data"][0]["text"]]  # first cell of each memory line
        # the picked element is boxed where the family puts it: line, column of its element
        per_line = 16 if fam == "flashinfer_packed" else 8
        box = specs[0]["layout"]["shapes"][0]
        assert (box["y0"] + box["y1"]) / 2 == (nhd // 2) // per_line
        assert (box["x0"] + box["x1"]) / 2 == (nhd // 2) % per_line
    # memory order: flash_attn puts every V after every K; flashinfer each block's V after its K;
    # packed has K and V in every line
    assert first_labels["flash_attn"] == ["K0"] * 8 + ["V0"] * 8
    assert first_labels["flashinfer"] == (["K0"] * 4 + ["V0"] * 4) * 2
    packed = json.loads(_plots(at)[0])["data"][0]["text"][0]
    assert packed == ["K0"] * 4 + ["V0"] * 4 + ["K1"] * 4 + ["V1"] * 4
    # decoding follows the family: byte 64 = element 32
    at.text_input(key="lay.byte").set_value("64").run()
    dec = decoded(at)
    assert (dec["kv"], dec["block"], dec["offset_in_block"], dec["head"], dec["dim"]) == ("k", 0, 2, 0, 0)
    at.selectbox(key="lay.family").set_value("flashinfer").run()
    dec = decoded(at)
    assert (dec["kv"], dec["block"], dec["offset_in_block"], dec["head"], dec["dim"]) == ("v", 0, 0, 0, 0)
    at.selectbox(key="lay.family").set_value("flash_attn").run()
    dec = decoded(at)
    assert (dec["kv"], dec["block"], dec["offset_in_block"], dec["head"], dec["dim"]) == ("k", 1, 0, 0, 0)
    assert not at.exception


def test_layout_family_texts_in_every_language(at):
    _open(at, "layout")
    for lang, word in (("zh", "后端"), ("es", "backend")):
        at.session_state["lang"] = lang
        at.selectbox(key="lay.family").set_value("flashinfer_packed").run()
        assert not at.exception
        assert any("flashinfer_packed" in m.value and word in m.value for m in at.markdown), lang


@pytest.mark.parametrize("text,want", [("0x68", (1, 2, 1, 0)), ("0X68", (1, 2, 1, 0)), (" 104 ", (1, 2, 1, 0)),
                                       ("0x69", (1, 2, 1, 0)), ("0104", (1, 2, 1, 0)), ("0", (0, 0, 0, 0))])
def test_layout_byte_input_takes_decimal_and_hex(at, text, want):
    _open_layout_flash_attn(at)
    at.text_input(key="lay.byte").set_value(text).run()
    assert not at.exception and not at.error
    dec = decoded(at)
    assert (dec["block"], dec["offset_in_block"], dec["head"], dec["dim"]) == want
    assert dec["kv"] == "k" and dec["byte_in_element"] == (1 if text == "0x69" else 0)


def test_layout_byte_input_pasted_hex_in_a_bigger_cache(at):
    _open_layout_flash_attn(at)
    at.number_input(key="lay.blocks").set_value(4).run()
    # 0x1a0 = 416 B = element 208 of [2, 4, 4, 2, 4] (strides 128, 32, 8, 4, 1): V, block 2, offset 2
    at.text_input(key="lay.byte").set_value("0x1a0").run()
    assert not at.exception and not at.error
    dec = decoded(at)
    assert (dec["kv"], dec["block"], dec["offset_in_block"], dec["slot"], dec["head"], dec["dim"]) == \
        ("v", 2, 2, 10, 0, 0)
    assert any("0x1a0" in c.value and "416" in c.value for c in at.caption)


@pytest.mark.parametrize("text,msg", [("zz", "Not a byte address"), ("0x", "Not a byte address"),
                                      ("1.5", "Not a byte address"), ("12 34", "Not a byte address"),
                                      ("-4", "cannot be negative"), ("-0x10", "cannot be negative"),
                                      ("0x1a0", "past the end of this cache"), ("256", "past the end of this cache"),
                                      ("9" * 60, "past the end of this cache")])
def test_layout_byte_input_garbage_is_one_error(at, text, msg):
    _open(at, "layout")
    at.text_input(key="lay.byte").set_value(text).run()
    assert not at.exception
    assert len(at.error) == 1 and msg in at.error[0].value, [e.value for e in at.error]
    assert len(_plots(at)) == 2  # the rest of the page still works


def test_batch_cache_family_selector(at):
    _open(at, "batch")
    at.number_input(key="batch.tok").set_value(12).run()
    assert at.selectbox(key="batch.family").value == "auto"      # the chosen release's (main: flashinfer_packed)
    # slot 18 (block 4, offset 2), K, head 0, dim 0 in 48 blocks x 4 slots x 2 heads x 8 dims fp16
    want = {"flash_attn": ("576", "544"), "flashinfer": ("1088", "1056"), "flashinfer_packed": ("1152", "1088"),
            "auto": ("1152", "1088")}
    for fam, (nhd, hnd) in want.items():
        at.selectbox(key="batch.family").set_value(fam).run()
        assert not at.exception
        m = _metrics(at)
        assert m["slot"] == "18" and (m["NHD byte"], m["HND byte"]) == (nhd, hnd), fam
        assert any(f"**{'flashinfer_packed' if fam == 'auto' else fam}**" in c.value for c in at.caption)
        link = at.query_params.get("cache_layout")
        assert (link in (None, [])) if fam == "auto" else (link in (fam, [fam]))
    # the kernels' layout is stated, whatever family the offsets are shown in
    assert any("kernels write and check the **flash_attn**" in c.value for c in at.caption)


def test_batch_cache_family_link():
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"cache_layout": "flashinfer", "tok": "12"})
    at.switch_page("pages/batch.py").run()
    assert not at.exception and at.selectbox(key="batch.family").value == "flashinfer"
    assert _metrics(at)["NHD byte"] == "1088"
    bad = AppTest.from_file(APP, default_timeout=60)
    bad.query_params.update({"cache_layout": "x" * 100})
    bad.switch_page("pages/batch.py").run()
    assert not bad.exception and bad.selectbox(key="batch.family").value == "auto"
    assert any("cache_layout" in w.value for w in bad.warning)


def test_csr_check_detail_in_the_pages_language():
    """The repack check's detail (the harness writes English) reads in Spanish on a Spanish page."""
    from page_support import app_test
    from kvviz.texts.i18n import t

    at = _open(app_test(lang="es"), "csr")
    assert not at.exception
    shown = " ".join(s.value for s in at.success)
    assert t("kernel_lab", "detail.identical", "es", what="paged_kv_indptr", n=8).split(":")[-1].strip() in shown
    assert "entries identical" not in shown and "left alone" not in shown


@pytest.mark.parametrize("lang", ["en", "zh", "es"])
def test_a_scenario_naming_a_vllm_newer_than_known_is_never_silent(lang):
    """A pasted scenario with "vllm": "v0.40.0" replays v0.34.0's rules; the page says so in a warning,
    the version selector shows v0.34.0 and the runner note says V1 is not offered (v0.34.0 has none)."""
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["lang"] = lang
    at.switch_page("pages/step_through.py").run()
    at.text_area(key="step.custom_text").set_value(
        '{"config": {"vllm": "v0.40.0", "num_blocks": 8, "block_size": 4}, '
        '"requests": [{"id": "Z", "prompt_len": 6, "max_tokens": 2}]}').run()
    at.button(key="step.load").click().run()
    assert not at.exception and not at.error
    assert any("v0.40.0" in w.value and "v0.34.0" in w.value for w in at.warning)
    assert at.selectbox(key="step.vllm").value == "v0.34.0"
    assert len(at.selectbox(key="step.runner").options) == 2          # auto and V2: no V1
    assert any("v0.33.0" in c.value for c in at.caption)


@pytest.mark.parametrize("lang", ["en", "zh", "es"])
def test_batch_page_names_the_blocks_two_rows_share(lang):
    """The default batch: rows 0 and 1 start with the same 8-token system prompt (blocks of 4), so row 0
    takes blocks 1 and 2 first and row 1 finds both in the prefix cache: the page names them as shared,
    with the rows holding each (a block shared by two rows is allowed; twice in one row is refused)."""
    from kvviz.texts.i18n import t
    at = AppTest.from_file(str(Path(APP).parent / "pages" / "batch.py"), default_timeout=90)
    at.session_state["lang"] = lang
    at.run()
    assert not at.exception
    want = t("batch", "note_shared", lang, blocks="1 (0, 1); 2 (0, 1)")
    assert any(want in c.value for c in at.caption), [c.value for c in at.caption]
