"""The fixtures the page tests start from: the whole app freshly run on its home page (AppTest); for the
real-browser tests, one streamlit server per xdist worker for the whole session (``server``: starting
one and its pages' first visits cost seconds, once instead of once per module), one chromium per test
module (``browser``) and one tab of it (``page``)."""
import pytest
import streamlit as st

from browser_support import ARGS, CHROMIUM, serve
from page_support import app_test


@pytest.fixture
def at():
    st.cache_resource.clear()   # process-global: shared between AppTest instances
    return app_test()


@pytest.fixture(scope="session")
def server():
    with serve() as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def page(browser):
    pg = browser.new_page(viewport={"width": 1400, "height": 1000})
    yield pg
    pg.close()
