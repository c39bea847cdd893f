"""Regenerate the table of rules (docs/releases.md) by release from kvviz.core.versions.RULES (the README test checks
the two agree): `python scripts/readme_rules_table.py` rewrites the table in place. Rows whose field,
value and PR already stand in the table keep their text (some carry a hand-written note)."""
from __future__ import annotations

import re
from pathlib import Path

from kvviz.core.versions import RULES

README = Path(__file__).resolve().parents[1] / "docs" / "releases.md"
HEADER = "| rule (`kvviz/core/versions.py`) | what changed | PR | merged | first release |"


def row(r) -> str:
    where = f" (`{r.where}`)" if r.where and r.pr != 51482 else ""
    return (f"| `{r.field}` = `{r.value}` | {r.summary}{where} | {'#' + str(r.pr) if r.pr else '—'} | "
            f"{r.date or '—'} | {r.first_release} |")


def main() -> None:
    text = README.read_text()
    start = text.index(HEADER)
    body = text.index("\n", text.index("\n", start) + 1) + 1
    end = text.index("\n\n", body)
    kept = {}
    for line in text[body:end].split("\n"):
        m = re.match(r"^\| `(\w+)` = `([^`]*)` \|.*\| (?:#(\d+)|—) \| [^|]* \| (\S+) \|$", line)
        if m:       # one rule: a field may take the same value again in a later release (int32 -> int64 -> ...)
            kept[(m.group(1), m.group(2), m.group(3) or "", m.group(4))] = line
    rows = [kept.get((r.field, str(r.value), str(r.pr) if r.pr else "", r.first_release), row(r)) for r in RULES]
    README.write_text(text[:body] + "\n".join(rows) + text[end:])


if __name__ == "__main__":
    main()
