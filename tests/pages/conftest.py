"""The one AppTest fixture every page test starts from: the whole app, freshly run on its home page."""
import pytest
import streamlit as st

from page_support import app_test


@pytest.fixture
def at():
    st.cache_resource.clear()   # process-global: shared between AppTest instances
    return app_test()
