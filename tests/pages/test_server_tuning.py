"""ui/server_tuning.py: Streamlit's theme message is built once per process (issue 33, the hall's CPU),
and is the same message the original builds, section by section, from the repository's config."""
import os

from streamlit import config
from streamlit.proto.NewSession_pb2 import CustomThemeConfig
from streamlit.runtime import app_session

from page_support import app_test

SECTIONS = ("theme", "theme.sidebar", "theme.light", "theme.dark", "theme.light.sidebar", "theme.dark.sidebar")


def _original():
    f = app_session._populate_theme_msg
    return getattr(f, "original", f)


def test_memoized_theme_is_the_original_message_built_once(monkeypatch):
    from ui import server_tuning

    monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    config.get_config_options(force_reparse=True)          # the repository's .streamlit/config.toml
    calls = []
    orig = _original()

    def counting(msg, section="theme"):
        calls.append(section)
        orig(msg, section)
    monkeypatch.setattr(app_session, "_populate_theme_msg", counting)
    assert server_tuning.memoize_theme() is True
    assert server_tuning.memoize_theme() is False                 # once
    memo = app_session._populate_theme_msg
    for section in SECTIONS:
        want, got, again = CustomThemeConfig(), CustomThemeConfig(), CustomThemeConfig()
        orig(want, section)
        memo(got, section)
        memo(again, section)
        assert got == want and again == want, section
    assert calls == list(SECTIONS)                                # each section built once, then reused
    want = CustomThemeConfig()
    orig(want, "theme")
    assert len(want.font_faces) > 50                              # what made it worth it: the CJK font faces


def test_app_installs_it():
    at = app_test()
    assert not at.exception
    assert getattr(app_session._populate_theme_msg, "kvviz_memo", False)
