"""What the Debug dumps page shows for a refused upload or paste (no streamlit here)."""
from __future__ import annotations

import re

from kvviz.texts.i18n import DEFAULT_LANG, t

SCENARIO_REFUSAL = "this is a kvviz scenario, not a table dump"   # kvviz.dumps.format's words


def refusal_text(side: str, name: str, msg: str, lang: str = DEFAULT_LANG) -> str:
    """What a refused upload or paste shows (markdown, the outside text made plain): a kvviz scenario
    named as one, with where to open it; anything else the reader's sentence, which names the file."""
    from kvviz.views.safe_text import plain

    if SCENARIO_REFUSAL in str(msg):
        return t("dumps", "is_scenario", lang, side=side, name=plain(name))
    return t("dumps", "bad_input", lang, side=side, msg=reason_text(str(msg), lang))


# the reader's commonest refusals (kvviz.dumps.format, kvviz.errors), read back into the page's language;
# any other reason is shown as the reader wrote it (English)
REASONS = (
    (r"(?P<name>.+) is (?P<size>[\d.]+ (?:bytes|KiB|MiB|GiB)); the limit is (?P<limit>[\d.]+ (?:bytes|KiB|MiB|GiB))",
     "why.too_big"),
    (r"(?P<name>.+) is (?P<size>[\d.]+ (?:bytes|KiB|MiB|GiB)) of JSON; the limit is (?P<limit>[\d.]+ (?:bytes|KiB|MiB|GiB)) "
     r"\(use \.npz for big tables\)", "why.json_too_big"),
    (r"(?P<name>.+): the dump lacks the required key(?P<s>s?) (?P<keys>'.*')", "why.lacks"),
    (r"(?P<name>.+) is not valid JSON: (?P<what>.+) \(line (?P<line>\d+), column (?P<col>\d+)\)", "why.bad_json"),
    (r"(?P<name>.+) is neither an \.npz archive nor UTF-8 JSON", "why.not_dump"),
    (r"(?P<name>.+) is empty", "why.empty"),
    (r"(?P<name>.+): a dump must be a JSON object \(or an \.npz archive\) of named arrays", "why.not_object"),
)


def reason_text(msg: str, lang: str = DEFAULT_LANG) -> str:
    """A refusal's reason in ``lang`` (markdown, the file's name and the parser's words as text)."""
    from kvviz.views.safe_text import plain

    for pattern, key in REASONS:
        m = re.fullmatch(pattern, msg, flags=re.S)
        if m:
            return t("dumps", key, lang, **{k: (v if k in ("size", "limit", "line", "col", "s") else plain(v))
                                           for k, v in m.groupdict().items()})
    return plain(msg)
