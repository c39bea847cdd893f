"""UI prose in English, Chinese and Spanish (the languages of the source documents).

Each page keeps its prose in ``kvviz/texts/<page>.py`` as ``STRINGS = {key: {"en": ..., "zh": ...,
"es": ...}}``. ``t(page, key, lang)`` falls back to English when a translation is missing, and
``missing_translations()`` lets a test insist there are none.
"""
from __future__ import annotations

import importlib

LANGS = {"en": "English", "zh": "中文", "es": "Español"}
DEFAULT_LANG = "en"
# every module of kvviz/texts (``missing_translations(TEXT_MODULES)`` must be empty)
TEXT_MODULES = ("app", "batch", "csr", "dcp_ranks", "demos", "downloads", "dumps", "events", "figures", "findings", "home",
                "kernel_lab", "layout", "notations", "pcie", "prefixes", "runs", "scenarios", "step_through")


def _table(page: str) -> dict:
    return importlib.import_module(f"kvviz.texts.{page}").STRINGS


def t(page: str, key: str, lang: str = DEFAULT_LANG, **fmt) -> str:
    entry = _table(page)[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**fmt) if fmt else text


def missing_translations(pages: list[str]) -> list[tuple[str, str, str]]:
    out = []
    for page in pages:
        for key, entry in _table(page).items():
            for lang in LANGS:
                if not entry.get(lang):
                    out.append((page, key, lang))
    return out
