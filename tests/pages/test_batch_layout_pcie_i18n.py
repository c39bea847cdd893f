"""The batch, layout and PCIe pages say their notes, errors and table labels in the page's language
(issue 12): the prefix-cache note and the pool error are built from the core's fields, the PCIe
strategies and tables are translated, the layout decoder's columns keep their data names."""
import pytest

from page_support import app_test, decoded, pcie_labels, table_frames
from kvviz.texts.i18n import t
from kvviz.views import batch as ex
from kvviz.gpu import traffic


def test_core_notes_and_errors_carry_their_fields():
    eb = ex.explore(ex.default_rows(), ex.BatchConfig())
    # the default batch: row 1 finds row 0's two full blocks (8 tokens) in the prefix cache
    # and rows 0 and 1 then both hold blocks 1 and 2: the page names them as shared
    assert eb.notes == [("note_prefix_hit", {"row": 1, "hit": 8, "eff": 8, "asked": 0}),
                        ("note_shared", {"blocks": "1 (0, 1); 2 (0, 1)"})]
    # the English text of the key is the core's own sentence (CLI and JSON keep it)
    assert [t("batch", k, "en", **f) for k, f in eb.notes] == eb.warnings
    for lang in ("zh", "es"):
        text = t("batch", "note_prefix_hit", lang, **eb.notes[0][1])
        assert text != eb.warnings[0] and "prefix cache" not in text and "8" in text
    with pytest.raises(ex.KeyedBadInput) as err:
        ex.explore(ex.default_rows(), ex.BatchConfig(num_blocks=5))
    assert err.value.key == "err_pool_small" and err.value.fields["row"] == 1
    assert str(err.value) == t("batch", "err_pool_small", "en", **err.value.fields)


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_batch_page_notes_and_pool_error_in_the_language(lang):
    at = app_test("batch", lang=lang)
    captions = " ".join(c.value for c in at.caption)
    note = t("batch", "note_prefix_hit", lang, row=1, hit=8, eff=8, asked=0)
    assert note in captions and "found in the prefix cache" not in captions
    at.number_input(key="batch.nb").set_value(5).run()
    assert not at.exception
    err = at.error[0].value
    assert t("batch", "err_pool_small", lang, row=1, need=2, bs=4, free=1, total=5) in err
    assert "the pool is too small" not in err


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_batch_page_core_message_is_a_code_span(lang):
    """A core sentence without a key (kernel block size 3 does not divide 4) stays English, inside
    a code span, after the page's own words."""
    at = app_test("batch", lang=lang)
    at.number_input(key="batch.kbs").set_value(3).run()
    err = at.error[0].value
    assert err.startswith(t("batch", "bad_batch_code", lang)) and "`" in err and "does not divide" in err


@pytest.mark.parametrize("lang", ["en", "zh", "es"])
def test_pcie_tables_in_the_language(lang):
    at = app_test("pcie", lang=lang)
    _, comp, measured = table_frames(at, pcie_labels(lang))      # the release's step, then V1's what-ifs
    # the tables' names are translated in the cells; the numbers are the model's
    assert comp["table"].tolist()[0] == t("pcie", "t_block_table", lang)
    assert comp["table"].tolist()[-1] == t("pcie", "t_total", lang)
    shape = traffic.StepShape()
    assert int(comp.iloc[-1][traffic.STRATEGIES[0]]) == traffic.total_bytes(shape)
    assert measured["strategy"].tolist() == [t("pcie", k, lang) for k in ("s_full", "s_prefix", "s_dirty",
                                                                         "s_dirty_prefix")]
    assert measured["bytes"].tolist() == traffic.strategy_totals(shape)


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_layout_picker_labels_and_history_in_the_language(lang):
    at = app_test("layout", lang=lang)
    assert at.number_input(key="lay.block").label == t("layout", "p_block", lang)
    assert at.number_input(key="lay.off").label == t("layout", "p_offset", lang)
    assert not any("Pull requests" in c.value for c in at.caption)
    at.text_input(key="lay.byte").set_value("0").run()
    dec = decoded(at, lang)          # the data keeps the decoder's field names
    assert (dec["kv"], dec["block"], dec["offset_in_block"]) == ("k", 0, 0)


def test_chain_line_in_another_language():
    eb = ex.explore(ex.default_rows(), ex.BatchConfig())
    ch = eb.chain(12)
    assert ex.chain_line(ch).startswith("row 1 · position 10 · logical block 2")
    es = ex.chain_line(ch, {"row": "fila", "position": "posición", "logical block": "bloque lógico"})
    assert es.startswith("fila 1 · posición 10 · bloque lógico 2") and "slot 18" in es
