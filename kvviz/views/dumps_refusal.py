"""What the Debug dumps page shows for a refused upload or paste (no streamlit here)."""
from __future__ import annotations

from kvviz.texts.i18n import DEFAULT_LANG, t

SCENARIO_REFUSAL = "this is a kvviz scenario, not a table dump"   # kvviz.dumps.format's words


def refusal_text(side: str, name: str, msg: str, lang: str = DEFAULT_LANG) -> str:
    """What a refused upload or paste shows (markdown, the outside text made plain): a kvviz scenario
    named as one, with where to open it; anything else the reader's sentence, which names the file."""
    from kvviz.views.safe_text import plain

    if SCENARIO_REFUSAL in str(msg):
        return t("dumps", "is_scenario", lang, side=side, name=plain(name))
    return t("dumps", "bad_input", lang, side=side, msg=plain(msg))
