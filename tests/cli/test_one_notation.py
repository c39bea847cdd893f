"""One notation (issue 25): every shape kvviz writes uses the same letters, B = blocks, N = tokens per
block (block size), H = KV heads, D = head dim (vLLM's, as in [L, B, H, N, C]): the Layout and Batch
pages (every language), the README and ``python -m kvviz offset --help`` agree, and the swapped form
(N = blocks, B = block size) is nowhere."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kvviz.core.layout import NOTATION, SHAPE_TEXT
from kvviz.texts.batch import STRINGS as BATCH
from kvviz.texts.layout import STRINGS as LAYOUT

ROOT = Path(__file__).resolve().parents[2]


def _swapped(shape: str) -> str:
    return shape.translate(str.maketrans({"B": "N", "N": "B"}))


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def offset_help() -> str:
    out = subprocess.run([sys.executable, "-m", "kvviz", "offset", "--help"], capture_output=True, text=True,
                         cwd=ROOT, check=True, env={**os.environ, "COLUMNS": "400"}).stdout
    return _flat(out)


@pytest.fixture(scope="module")
def readme() -> str:
    return _flat(" ".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]))


def _page_text(strings: dict, lang: str) -> str:
    return _flat(" ".join(v[lang] for v in strings.values() if isinstance(v, dict) and lang in v))


def test_the_letters_are_defined_once_and_said_everywhere(offset_help, readme):
    assert NOTATION.startswith("B = blocks") and "N = tokens per block" in NOTATION
    assert NOTATION in offset_help
    assert "B = `--num-blocks`, N = `--block-size`" in readme
    assert "B = blocks, N = block size, H = KV heads, D = head dim" in _page_text(LAYOUT, "en")
    for lang, legend in (("zh", "B = 块数，N = 块大小"), ("es", "B = bloques, N = tamaño de bloque")):
        assert legend in _page_text(LAYOUT, lang), lang
    for lang, legend in (("en", "B blocks, N tokens per block"), ("zh", "B = 块数，N = 块大小"),
                         ("es", "B bloques, N tamaño de bloque")):
        assert legend in _page_text(BATCH, lang), lang
    # the metavars in the usage line follow the letters
    assert "--block-size N" in offset_help and "--num-blocks B" in offset_help


@pytest.mark.parametrize("family,layout", sorted(SHAPE_TEXT))
def test_every_shape_is_written_the_same_way(family, layout, offset_help, readme):
    shape = SHAPE_TEXT[(family, layout)]
    assert f"`{shape}`" in readme, shape
    assert shape in offset_help, shape
    for lang in ("en", "zh", "es"):
        assert shape in _page_text(LAYOUT, lang), (shape, lang)
        if family != "flex_interleaved":        # the Batch page offers the three families with both forms
            assert shape in _page_text(BATCH, lang), (shape, lang)


@pytest.mark.parametrize("family,layout", sorted(SHAPE_TEXT))
def test_the_swapped_letters_are_nowhere(family, layout, offset_help, readme):
    wrong = _swapped(SHAPE_TEXT[(family, layout)])
    texts = {"README": readme, "offset --help": offset_help,
             **{f"{name} {lang}": _page_text(s, lang) for name, s in (("layout", LAYOUT), ("batch", BATCH))
                for lang in ("en", "zh", "es")}}
    for where, text in texts.items():
        assert wrong not in text and wrong.replace(" ", "") not in text.replace(" ", ""), (wrong, where)
    assert not re.search(r"N = `?--num-blocks|B = `?--block-size", readme + offset_help)
    assert "blocks, block_size" not in _page_text(BATCH, "en")     # words, not letters
