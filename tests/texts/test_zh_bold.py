"""Markdown bold in Chinese strings renders: CommonMark only closes ``**`` that is right-flanking, so
``**整页：**当`` (a full-width mark before the closing ``**`` and a letter after it) shows its
asterisks on the page. Put the mark outside: ``**整页**：当``. Same rule for an opening ``**``
followed by a mark and preceded by a letter."""
import re
import unicodedata

import pytest

from kvviz.texts.i18n import TEXT_MODULES, _table


def _punct(c: str) -> bool:
    return unicodedata.category(c)[0] in "PS"


def _free(c: str) -> bool:
    """A character that lets a delimiter run flank: none (the string's edge), a space or a mark."""
    return not c or c.isspace() or _punct(c)


def stuck_bold(s: str) -> list[str]:
    """The ``**`` pairs of ``s`` (code spans aside) that CommonMark would not read as bold."""
    s = re.sub(r"`[^`]*`", lambda m: "x" * len(m.group()), s)
    bad, pos = [], [m.start() for m in re.finditer(r"\*\*", s)]
    for a, b in zip(pos[::2], pos[1::2]):
        inner, before, after = s[a + 2:b], s[a - 1:a], s[b + 2:b + 3]
        if inner and ((_punct(inner[0]) and not _free(before)) or (_punct(inner[-1]) and not _free(after))):
            bad.append(s[max(0, a - 1):b + 3])
    return bad


@pytest.mark.parametrize("module", TEXT_MODULES)
def test_every_zh_bold_closes(module):
    bad = {key: stuck_bold(entry["zh"]) for key, entry in _table(module).items() if entry.get("zh")}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"kvviz/texts/{module}.py: ** that markdown leaves as asterisks: {bad}"


def test_the_rule():
    assert stuck_bold("**整页：**当 seq_len") == ["**整页：**当"]
    assert stuck_bold("**整页**：当") == []
    assert stuck_bold("在**（括号）**里") == ["在**（括号）**里"]
    assert stuck_bold("**Full page:** when") == []
    assert stuck_bold("见 `a**b` 和 **粗体**。") == []
