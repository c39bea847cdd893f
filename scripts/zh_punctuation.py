"""List (or, with --fix, rewrite) the ASCII punctuation next to Chinese text in the zh strings of
kvviz/texts/*.py (the rule: ``kvviz.texts.punctuation``).

    .venv/bin/python scripts/zh_punctuation.py               # every offending zh string, by module and key
    .venv/bin/python scripts/zh_punctuation.py --fix demos   # rewrite the zh literals of kvviz/texts/demos.py

--fix edits the source's string literals in place (those after a "zh": key), one literal at a
time, so a parenthesis opened in one line's literal and closed in the next is left for a person:
run it again without --fix to see what is left.
"""
from __future__ import annotations

import io
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kvviz.texts.i18n import TEXT_MODULES, _table  # noqa: E402
from kvviz.texts.punctuation import ascii_punctuation, full_width  # noqa: E402


def report() -> int:
    n = 0
    for mod in TEXT_MODULES:
        for key, entry in _table(mod).items():
            hits = ascii_punctuation(entry.get("zh") or "")
            if hits:
                n += 1
                print(f"{mod}.{key}: {hits}")
    return n


def _zh_literals(src: str):
    """(start, end) offsets of each string literal that is (part of) a "zh" value."""
    lines = src.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    out, k = [], 0
    while k < len(toks):
        if (toks[k].type == tokenize.STRING and toks[k].string in ('"zh"', "'zh'")
                and k + 1 < len(toks) and toks[k + 1].string == ":"):
            j = k + 2
            while j < len(toks) and toks[j].type in (tokenize.STRING, tokenize.NL, tokenize.COMMENT):
                if toks[j].type == tokenize.STRING:
                    (r0, c0), (r1, c1) = toks[j].start, toks[j].end
                    out.append((starts[r0 - 1] + c0, starts[r1 - 1] + c1))
                j += 1
            k = j
        else:
            k += 1
    return out


def fix(mod: str) -> None:
    path = ROOT / "kvviz" / "texts" / f"{mod}.py"
    src = path.read_text()
    for a, b in reversed(_zh_literals(src)):
        lit = src[a:b]
        q = lit.index(lit[-1])        # the opening quote (after any prefix letters)
        body = lit[q + 1:-1]
        src = src[:a] + lit[:q + 1] + full_width(body) + lit[-1] + src[b:]
    path.write_text(src)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--fix"]:
        for m in sys.argv[2:]:
            fix(m)
    else:
        sys.exit(1 if report() else 0)
