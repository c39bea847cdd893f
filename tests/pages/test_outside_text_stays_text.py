"""Every value taken from a link, an upload or a pasted field is shown as text: no markdown image
(the reader's browser would fetch it) and no link (a phishing link inside the app) is ever rendered."""
import json

import pytest

from kvviz.views.safe_text import plain
from page_support import app_test

IMAGE, LINK = "![](//evil.example/x.png)", "[Log in again](https://evil.example)"
PAYLOADS = [IMAGE, LINK]
QUERY = {  # every query parameter each linkable page reads
    "batch": ["bs", "nb", "kbs", "len", "dcp", "rank", "cg", "heads", "hdim", "dtype", "reqs", "tok", "cache_layout"],
    "step_through": ["sc", "step"],
    "prefixes": ["sc", "step"],
    "demos": ["demo", "step", "lang", "presenter"],
}


def rendered(at) -> list[str]:
    """The markdown source of every element Streamlit renders as markdown."""
    out = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "title", "subheader", "header"):
        out += [str(e.value) for e in getattr(at, kind)]
    return out


def assert_inert(at, payload):
    for text in rendered(at):
        assert "![" not in text and "](http" not in text and "](//" not in text, text


def test_plain_escapes_markup():
    assert plain(IMAGE) == r"\!\[\]\(//evil.example/x.png\)"
    assert "](" not in plain(LINK) and "\n" not in plain("a\nb")


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("page,key", [(p, k) for p, keys in QUERY.items() for k in keys])
def test_query_parameters_render_as_text(page, key, payload):
    at = app_test(page, query={key: payload})
    assert_inert(at, payload)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_pasted_scenario_renders_as_text(payload):
    at = app_test("step_through")
    scenario = {"name": payload, "description": payload,
                "config": {"num_blocks": 16, "block_size": 4},
                "requests": [{"id": payload[:32], "prompt_len": 5, "max_tokens": 2}]}   # ids are <= 32 chars
    at.text_area(key="step.custom_text").set_value(json.dumps(scenario)).run()
    at.button(key="step.load").click().run()
    assert not at.exception
    assert any("evil" in t for t in rendered(at))       # the description and the events are shown...
    assert_inert(at, payload)                           # ...as text
    bad = dict(scenario, config={"num_blocks": 16, "block_size": 4, payload: 1})   # an unknown key
    at.text_area(key="step.custom_text").set_value(json.dumps(bad)).run()
    at.button(key="step.load").click().run()
    assert at.error and not at.exception
    assert_inert(at, payload)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_pasted_dump_renders_as_text(payload):
    at = app_test("dumps")
    at.radio(key="dumps.source").set_value("upload").run()
    at.text_area(key="dumps.paste_a").set_value(payload).run()            # not JSON: one error
    assert at.error and not at.exception
    assert_inert(at, payload)
    at.text_area(key="dumps.paste_a").set_value(json.dumps({"kvviz_dump_version": 1, payload: 2})).run()
    assert not at.exception
    assert_inert(at, payload)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_pasted_byte_address_renders_as_text(payload):
    at = app_test("layout")
    at.text_input(key="lay.byte").set_value(payload).run()
    assert at.error and not at.exception
    assert_inert(at, payload)
