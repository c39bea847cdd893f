"""Every value taken from a link, an upload or a pasted field is shown as text: no markdown image
(the reader's browser would fetch it), no link (a phishing link inside the app), no bold and no HTML
is ever rendered. Each payload must be ON the page, as literal text: every markup character of it
backslash-escaped in the element's markdown source (what CommonMark shows as the character itself),
and never present unescaped."""
import json
import re

import pytest

from kvviz.views.safe_text import plain
from page_support import app_test

IMAGE, LINK = "![](//evil.example/x.png)", "[Log in again](https://evil.example)"
BOLD, HTML = "**evil bold**", "<b>evil</b>"
PAYLOADS = [IMAGE, LINK, BOLD, HTML]
# a warning quotes a link's value cut short (kvviz/views/links.py: 20 or 40 characters)
CUTS = (None, 40, 20)
# a parameter read only next to another one (a link always carries both)
COMPANION = {("step_through", "step"): {"sc": "lifecycle"}, ("prefixes", "step"): {"sc": "prefixes"}}
QUERY = {  # every query parameter each linkable page reads
    "batch": ["bs", "nb", "kbs", "len", "dcp", "rank", "cg", "heads", "hdim", "dtype", "reqs", "tok", "cache_layout"],
    "step_through": ["sc", "step"],
    "prefixes": ["sc", "step"],
    "demos": ["demo", "step", "lang", "presenter", "vllm", "fig"],
}


def rendered(at) -> list[str]:
    """The markdown source of every element Streamlit renders as markdown."""
    out = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "title", "subheader", "header"):
        out += [str(e.value) for e in getattr(at, kind)]
    return out


def shown(source: str) -> str:
    """What a reader sees of a markdown source whose markup is escaped: CommonMark shows a
    backslash-escaped ASCII punctuation character as the character itself."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", source)


def assert_inert(at, payload):
    for text in rendered(at):
        assert "![" not in text and "](http" not in text and "](//" not in text, text
        assert payload not in text, f"{payload!r} reaches the markdown unescaped: {text!r}"


def assert_shown_as_text(at, payload, cuts=(None,)):
    """``payload`` is on the page as literal text: some element's source holds it (or, for a value a
    warning quotes cut short, its first ``cut`` characters) with every markup character escaped, so
    the reader sees ``**`` and ``<b>``, not bold; and it is nowhere unescaped."""
    assert_inert(at, payload)
    for cut in cuts:
        part = payload[:cut]
        hits = [t for t in rendered(at) if plain(part) in t]
        if hits:
            assert all(part in shown(t) for t in hits)
            return
    raise AssertionError(f"{payload!r} is not on the page: {rendered(at)}")


def test_plain_escapes_markup():
    assert plain(IMAGE) == r"\!\[\]\(//evil.example/x.png\)"
    assert "](" not in plain(LINK) and "\n" not in plain("a\nb")


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("page,key", [(p, k) for p, keys in QUERY.items() for k in keys])
def test_query_parameters_render_as_text(page, key, payload):
    at = app_test(page, query={**COMPANION.get((page, key), {}), key: payload})
    if key == "reqs":       # the page counts the refused requests, it does not quote them
        assert_inert(at, payload)
        assert any("1 request(s) in the link were not" in shown(t) and "skipped" in t for t in rendered(at))
        assert any("no usable request" in t for t in rendered(at))
    elif key == "presenter":    # a flag: anything but 1/true/yes/on is "off", nothing to quote
        assert_inert(at, payload)
        assert at.session_state["demos_presenter"] is False
    else:
        assert_shown_as_text(at, payload, CUTS)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_pasted_scenario_renders_as_text(payload):
    at = app_test("step_through")
    scenario = {"name": payload, "description": payload,
                "config": {"num_blocks": 16, "block_size": 4},
                "requests": [{"id": payload[:32], "prompt_len": 5, "max_tokens": 2}]}   # ids are <= 32 chars
    at.text_area(key="step.custom_text").set_value(json.dumps(scenario)).run()
    at.button(key="step.load").click().run()
    assert not at.exception
    assert_shown_as_text(at, payload)                   # the description is shown, as text
    assert_shown_as_text(at, payload[:32])              # the request id too (in the events)
    bad = dict(scenario, config={"num_blocks": 16, "block_size": 4, payload: 1})   # an unknown key
    at.text_area(key="step.custom_text").set_value(json.dumps(bad)).run()
    at.button(key="step.load").click().run()
    assert at.error and not at.exception
    assert_shown_as_text(at, payload, CUTS)              # the error names the unknown key, as text


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_pasted_dump_renders_as_text(payload):
    at = app_test("dumps")
    at.radio(key="dumps.source").set_value("upload").run()
    at.text_area(key="dumps.paste_a").set_value(payload).run()            # not JSON: one error
    assert at.error and not at.exception
    assert_inert(at, payload)
    at.text_area(key="dumps.paste_a").set_value(json.dumps({"kvviz_dump_version": 1, payload: 2})).run()
    assert not at.exception
    # the dump is refused for its missing keys first (the extra key is never quoted): the refusal
    # is shown, and the payload nowhere as markup
    assert any("lacks the required keys" in shown(t) for t in rendered(at))
    assert_inert(at, payload)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_pasted_byte_address_renders_as_text(payload):
    at = app_test("layout")
    at.text_input(key="lay.byte").set_value(payload).run()
    assert at.error and not at.exception
    assert_shown_as_text(at, payload, CUTS)              # the refused address is quoted, as text
