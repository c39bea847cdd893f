"""Issue 25: the PCIe, Batch and Memory layout pages tell the truth of the chosen release and runner.

PCIe: the release's step (V1's commit or MRV2's staged writes, per-step inputs, on-device gather) is the
numbers of kvviz.core.step_bytes for the page's batch; Batch: the byte-offset text, the offsets and the
kernel panel follow the release's KV-cache layout; Layout: the offsets are the release's."""
import pytest

from page_support import app_test, table_frames
from kvviz.core import step_bytes as sb
from kvviz.core.kv_cache_layout import KVCacheGeometry
from kvviz.core.layout import CacheGeometry
from kvviz.texts.i18n import t

LANGS = ("en", "zh", "es")
PAGE_ROWS = sb.steady_rows(64, 2048, 1, 16)     # the PCIe page's default batch
PAGE_SIZES = sb.Sizes(16, None, 32768, 256)


def _release_table(at, lang):
    labels = {"part": t("pcie", "col_part", lang), "link": t("pcie", "col_link", lang),
              "bytes": t("pcie", "col_bytes", lang)}
    return table_frames(at, labels)[0]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("release,runner", [("v0.18.0", "v1"), ("v0.32.0", "v1"), ("v0.28.0", "v2"),
                                            ("v0.34.0", "v2")])
def test_pcie_shows_the_releases_step(release, runner, lang):
    at = app_test("pcie", lang=lang, query={"vllm": release, "runner": runner})
    assert not at.exception
    assert at.selectbox(key="pcie.vllm").value == release and at.selectbox(key="pcie.runner").value == runner
    want = sb.step_bytes(release, runner, PAGE_ROWS, PAGE_SIZES)
    table = _release_table(at, lang)
    assert [int(b) for b in table["bytes"]] == [p.nbytes for p in want.parts] + [want.pcie]
    captions = [c.value for c in at.caption]
    assert t("pcie", "release_total", lang, b=want.pcie, us=f"{8 + want.pcie / 25e3:.1f}") in captions
    if runner == "v1":
        assert want.part("block table") == 64 * 2048 * 4
        assert table[table.columns[0]].tolist()[0] == t("pcie", "t_block_table", lang)
        slot_host = release < "v0.19.0"
        assert any("v0.19.0" in c for c in captions) == slot_host
    else:
        assert want.part("staged writes") == 4 * 12 and want.part("gather") == 64 * 128 * 4
        parts = table[table.columns[0]].tolist()
        assert parts[0] == t("pcie", "t_staged", lang) and t("pcie", "t_gather", lang) in parts
        assert (t("pcie", "link_device", lang)
                == table[table.columns[1]].tolist()[parts.index(t("pcie", "t_gather", lang))])
        # v0.28.0's and v0.34.0's idx_mapping are int64 (512 B for 64 requests: each release's prepare_inputs)
        assert want.part("idx_mapping") == 512
        assert any(str(want.part("gather")) in c and "PCIe" in c for c in captions)
    if lang != "en":
        assert "host → device total" not in table[table.columns[0]].tolist()
    if release == "v0.34.0":     # no V1 option, and the what-ifs say they follow v0.33.0's V1
        assert "v1" not in at.selectbox(key="pcie.runner").options
        assert any("v0.33.0" in i.value for i in at.info)


def test_pcie_runner_switch_changes_the_numbers():
    at = app_test("pcie", query={"vllm": "v0.32.0", "runner": "v1"})
    v1 = [int(b) for b in _release_table(at, "en")["bytes"]]
    at.selectbox(key="pcie.runner").set_value("v2").run()
    assert not at.exception and at.query_params.get("runner") in ("v2", ["v2"])
    v2 = [int(b) for b in _release_table(at, "en")["bytes"]]
    assert v1[-1] == sb.step_bytes("v0.32.0", "v1", PAGE_ROWS, PAGE_SIZES).pcie
    assert v2[-1] == sb.step_bytes("v0.32.0", "v2", PAGE_ROWS, PAGE_SIZES).pcie < v1[-1]
    at.number_input(key="pcie.maxreqs").set_value(32).run()        # fewer states than requests
    assert not at.exception and "max_num_seqs" in at.error[0].value


def _batch_metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


@pytest.mark.parametrize("lang", LANGS)
def test_batch_offsets_follow_the_release(lang):
    """Token 12 of the default batch is slot 18 (kernel block 4, offset 2), K, head 0, dim 0, in 48
    blocks x 4 slots x 2 heads x 8 dims fp16. v0.24.0's FlashAttention allocates flashinfer: NHD
    [B, 2, N, H, D] is 4 * 128 + 2 * 16 = 544 elements = 1088 B, HND [B, 2, H, N, D] 4 * 128 + 2 * 8 =
    528 elements = 1056 B; v0.34.0 the standardized cache of 32-byte (K|V) contents and 256-byte pages:
    LBNHC 4 * 256 + 2 * 64 = 1152 B, LBHNC 4 * 256 + 2 * 32 = 1088 B."""
    old = app_test("batch", lang=lang, query={"vllm": "v0.24.0", "runner": "v1", "tok": "12"})
    new = app_test("batch", lang=lang, query={"vllm": "v0.34.0", "tok": "12"})
    nhd, hnd = t("batch", "m_nhd", lang), t("batch", "m_hnd", lang)
    flashinfer = {lay: CacheGeometry(lay, 48, 4, 2, 8, "float16", "flashinfer").address(18, 0, 0)["byte_offset"]
                  for lay in ("NHD", "HND")}
    assert (_batch_metrics(old)[nhd], _batch_metrics(old)[hnd]) == (str(flashinfer["NHD"]), str(flashinfer["HND"]))
    assert flashinfer == {"NHD": 1088, "HND": 1056}
    std = {lay: KVCacheGeometry(1, 48, 4, 2, 8, "float16", order, granule_bytes=2 << 20).address(0, 4, 2, 0, "k", 0)
           for lay, order in (("NHD", "LBNHC"), ("HND", "LBHNC"))}
    assert std == {"NHD": 1152, "HND": 1088}
    assert (_batch_metrics(new)[nhd], _batch_metrics(new)[hnd]) == (str(std["NHD"]), str(std["HND"]))
    old_caps, new_caps = [c.value for c in old.caption], [c.value for c in new.caption]
    assert t("batch", "whose_release", lang, version="v0.24.0", family="flashinfer") in old_caps
    assert t("batch", "whose_flashinfer", lang) in old_caps
    assert not any("flashinfer_packed" in c for c in old_caps)         # not the newest vLLM's family
    assert t("batch", "whose_standardized", lang, version="v0.34.0", nhd="LBNHC", hnd="LBHNC",
             default="LBNHC") in new_caps
    # the kernel panel: flash_attn is neither release's layout, and it says which one the release has
    assert t("batch", "kernel_family_other", lang, version="v0.24.0", release="flashinfer") in old_caps
    assert t("batch", "kernel_family_other", lang, version="v0.34.0", release="LBNHC") in new_caps


def test_batch_kernel_panel_and_a_family_by_hand():
    at = app_test("batch", query={"vllm": "v0.20.0", "tok": "12"})
    caps = [c.value for c in at.caption]
    assert t("batch", "kernel_family_same", "en", version="v0.20.0") in caps
    assert _batch_metrics(at)["NHD byte"] == "576"                     # flash_attn: 18 * 2 * 8 * 2 B
    at.selectbox(key="batch.family").set_value("flashinfer_packed").run()
    caps = [c.value for c in at.caption]
    assert not at.exception and _batch_metrics(at)["NHD byte"] == "1152"
    assert t("batch", "whose_hand", "en", version="v0.20.0", family="flashinfer_packed", release="flash_attn") in caps
    assert at.query_params.get("cache_layout") in ("flashinfer_packed", ["flashinfer_packed"])
    assert at.query_params.get("vllm") in ("v0.20.0", ["v0.20.0"])


@pytest.mark.parametrize("release,family", [("v0.24.0", "flashinfer"), ("v0.20.0", "flash_attn")])
def test_layout_offsets_are_the_releases(release, family):
    """The page's default pick (block 1, offset 2, head 1, dim 0, K of 2 blocks x 4 x 2 heads x 4 dims fp16)."""
    at = app_test("layout", query={"vllm": release})
    assert at.selectbox(key="lay.vllm").value == release
    shown = " ".join(m.value for m in at.markdown)
    for lay in ("NHD", "HND"):
        byte = CacheGeometry(lay, 2, 4, 2, 4, "float16", family).address(1 * 4 + 2, 1, 0)["byte_offset"]
        assert f"{lay}: byte **{byte}**" in shown
    assert at.query_params.get("vllm") in (release, [release])


def test_layout_offsets_standardized_release():
    at = app_test("layout", query={"vllm": "v0.34.0"})
    byte = KVCacheGeometry(2, 2, 4, 2, 4, "float16", "LBNHC", granule_bytes=2 << 20).address(0, 1, 2, 1, "k", 0)
    assert byte == 208 and any(f"byte **{byte}**" in m.value for m in at.markdown)
