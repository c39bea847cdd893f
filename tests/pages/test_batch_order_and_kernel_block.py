"""Batch page (issue 25): a block size the kernel block size no longer divides resets the kernel block
size, and says so; "Follow one token" comes right after the batch, before the kernel checks and the
DCP panel."""
import pytest

from page_support import open_page
from kvviz.texts.i18n import t
from kvviz.views.batch_inputs import kernel_block_size_after


def elements_in_order(node):
    """Every element of an AppTest tree, in the order the page draws them (depth first)."""
    yield node
    children = getattr(node, "children", None) or {}
    for k in sorted(children):
        yield from elements_in_order(children[k])


def _subheaders(at) -> list[str]:
    return [e.value for e in elements_in_order(at.main) if getattr(e, "type", None) == "subheader"]


def _metrics(at):
    return {m.label: m.value for m in at.metric}


@pytest.mark.parametrize("bs,kbs,want", [(8, 4, 4), (6, 4, 6), (9, 4, 9), (12, 3, 3), (3, 3, 3), (5, 2, 5)])
def test_kernel_block_size_after(bs, kbs, want):
    assert kernel_block_size_after(bs, kbs) == want
    assert bs % kernel_block_size_after(bs, kbs) == 0


def test_block_size_change_resets_a_kernel_block_size_that_no_longer_divides(at):
    open_page(at, "batch")
    at.number_input(key="batch.bs").set_value(8).run()       # 4 divides 8: kept, no note
    assert at.number_input(key="batch.kbs").value == 4
    assert not any("reset" in i.value for i in at.info)
    at.number_input(key="batch.bs").set_value(6).run()       # 4 does not divide 6: reset to 6
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.number_input(key="batch.kbs").value == 6
    want = t("batch", "kbs_reset", "en", old=4, new=6, bs=6)
    assert any(i.value == want for i in at.info), [i.value for i in at.info]
    # the token's chain now speaks of one block size only: slot = physical block x 6 + offset
    at.number_input(key="batch.tok").set_value(7).run()
    chain = " ".join(m.value for m in at.markdown if "slot =" in m.value)
    m = _metrics(at)
    assert f"× 6 + " in chain and "× 4 + " not in chain, chain
    assert int(m["slot"]) == int(m["physical block"]) * 6 + int(m["position"]) % 6
    at.number_input(key="batch.tok").set_value(8).run()      # the note was said once
    assert not any(i.value == want for i in at.info)


def test_kernel_block_size_reset_note_in_every_language(at):
    open_page(at, "batch")
    for lang in ("zh", "es"):
        at.session_state["lang"] = lang
        at.number_input(key="batch.bs").set_value(8).run()
        at.number_input(key="batch.kbs").set_value(8).run()
        at.number_input(key="batch.bs").set_value(12).run()
        assert at.number_input(key="batch.kbs").value == 12
        assert any(i.value == t("batch", "kbs_reset", lang, old=8, new=12, bs=12) for i in at.info), lang
        at.number_input(key="batch.bs").set_value(4).run()
        assert at.number_input(key="batch.kbs").value == 4


def test_follow_one_token_comes_before_the_kernels_and_the_dcp_panel(at):
    open_page(at, "batch")
    heads = _subheaders(at)
    pick, kernels = t("batch", "pick", "en"), t("batch", "kernels", "en")
    dcp = t("dcp_ranks", "ui.title", "en")
    assert pick in heads and kernels in heads and dcp in heads, heads
    assert heads.index(pick) < heads.index(kernels) < heads.index(dcp), heads
    assert heads.index(pick) == heads.index(t("batch", "allocated", "en")) + 1, heads
    # the token's metrics and figures still work from there
    at.number_input(key="batch.tok").set_value(12).run()
    assert _metrics(at)["slot"] == "18" and not at.exception
    assert any("match their references" in s.value for s in at.success)


@pytest.mark.parametrize("page,family", [("batch", "flashinfer_packed"), ("layout", "flashinfer_packed")])
def test_pages_write_shapes_in_the_one_notation(at, page, family):
    """The shown text (not only the texts module) carries the shapes of kvviz.core.layout.SHAPE_TEXT."""
    from kvviz.core.layout import SHAPE_TEXT

    open_page(at, page)
    shown = " ".join(e.value for e in elements_in_order(at.main) if isinstance(getattr(e, "value", None), str))
    for layout in ("NHD", "HND"):
        shape = SHAPE_TEXT[(family, layout)]
        assert shape in shown, (page, shape)
        assert shape.translate(str.maketrans({"B": "N", "N": "B"})) not in shown
