"""Link previews: which links name a documentation page, and the preview Slack shows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.names import normalize_doc_ref
from bot.render import CORPUS_HOSTS, doc_name_for_url, render_unfurl
from bot.slack.listeners.actions import SHOW_DOC_RE, requested_page
from tests.test_render_surface_support import HOSTILE_TEXT, assert_inert, assert_valid_blocks

URL = "https://docs.cloud.google.com/storage/docs/creating-buckets"
NAME = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
FAST = settings(max_examples=150, deadline=None)


@pytest.mark.parametrize(
    ("url", "name"),
    [
        (URL, NAME),
        (URL + "#prerequisites", NAME),
        (URL + "?hl=en&authuser=1", NAME),
        (URL + "/", NAME),
        (f"<{URL}>", NAME),
        (f"<{URL}|creating buckets>", NAME),
        (f"  {URL}  ", NAME),
        ("http://docs.cloud.google.com/storage/docs/creating-buckets", NAME),
        ("https://DOCS.Cloud.Google.com/storage/docs/creating-buckets", NAME),
        ("https://docs.cloud.google.com:443/storage/docs/creating-buckets", NAME),
        (
            "https://cloud.google.com/run/docs/configuring/environment-variables",
            "documents/cloud.google.com/run/docs/configuring/environment-variables",
        ),
        (
            "https://firebase.google.com/docs/auth/android/google-signin",
            "documents/firebase.google.com/docs/auth/android/google-signin",
        ),
        (
            "https://developer.android.com/guide/topics/permissions/overview",
            "documents/developer.android.com/guide/topics/permissions/overview",
        ),
        (
            "https://developers.google.com/maps/documentation/javascript/overview",
            "documents/developers.google.com/maps/documentation/javascript/overview",
        ),
        (
            "https://developers.google.com/pay/api/web/guides/tutorial",
            "documents/developers.google.com/pay/api/web/guides/tutorial",
        ),
    ],
)
def test_a_documentation_link_names_its_document(url: str, name: str) -> None:
    """Host and path make the name; query, fragment, trailing slash and Slack's <…|…> go."""
    assert name == doc_name_for_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://console.cloud.google.com/storage/browser",
        "https://cloud.google.com",
        "https://cloud.google.com/",
        "https://docs.cloud.google.com/?hl=en",
        "https://evil.example/storage/docs/creating-buckets",
        "https://docs.cloud.google.com.evil.example/storage/docs/x",
        "https://evil.example/docs.cloud.google.com/storage/docs/x",
        "https://user:pw@docs.cloud.google.com/storage/docs/x",
        "https://docs.cloud.google.com@evil.example/storage/docs/x",
        "https://docs.cloud.google.com:8443/storage/docs/x",
        "https://docs.cloud.google.com:bad/storage/docs/x",
        "ftp://docs.cloud.google.com/storage/docs/x",
        "javascript:alert(1)",
        "docs.cloud.google.com/storage/docs/x",
        NAME,
        "https://docs.cloud.google.com/storage/docs/a b",
        "https://docs.cloud.google.com/storage/docs/x\ny",
        "https://docs.cloud.google.com/storage/../../etc/passwd",
        "https://docs.cloud.google.com//storage",
        "https://docs.cloud.google.com/storage/docs/<b>",
        "https://docs.cloud.google.com/" + "p" * 600,
        "",
        "<>",
    ],
)
def test_anything_else_names_no_document(url: str) -> None:
    """Other hosts (the console too), front pages, credentials, odd ports, other schemes,
    names, whitespace, dot-segments and over-long paths get no preview."""
    assert doc_name_for_url(url) is None


@FAST
@given(
    host=st.sampled_from(sorted(CORPUS_HOSTS)), path=st.from_regex(r"\A(/[a-z0-9_-]{1,20}){1,6}\Z")
)
def test_a_link_names_the_document_doc_would_show(host: str, path: str) -> None:
    """The preview and `/gdocs doc <URL>` agree on the document a link names."""
    url = f"https://{host}{path}"
    assert normalize_doc_ref(url) == doc_name_for_url(url)


@FAST
@given(url=HOSTILE_TEXT)
def test_any_text_gives_none_or_a_valid_name_on_a_corpus_host(url: str) -> None:
    """Whatever Slack sends, the answer is None or a valid name of a corpus host."""
    name = doc_name_for_url(url)
    if name is not None:
        assert normalize_doc_ref(name) == name
        assert name.removeprefix("documents/").split("/", 1)[0] in CORPUS_HOSTS


# --- the preview --------------------------------------------------------------------------------
def test_the_preview_links_the_title_describes_the_page_and_shows_it_in_full() -> None:
    """Title as a link to the page, the description, and the answer's own Show full doc
    button, which the existing click handler takes."""
    unfurl = render_unfurl("Create buckets", "How to create a bucket & name it.", URL, NAME)
    assert_valid_blocks(unfurl["blocks"])
    assert set(unfurl) == {"blocks"}
    section, actions = unfurl["blocks"]
    assert (
        f"*<{URL}|Create buckets>*\nHow to create a bucket &amp; name it."
        == section["text"]["text"]
    )
    (button,) = actions["elements"]
    assert "Show full doc" == button["text"]["text"]
    assert SHOW_DOC_RE.match(button["action_id"])
    assert (NAME, 1) == requested_page(button)


def test_a_long_description_is_cut_at_a_word() -> None:
    """At most 300 characters of description, ending in "…"."""
    unfurl = render_unfurl("Title", "word " * 200, URL, NAME)
    description = unfurl["blocks"][0]["text"]["text"].split("\n", 1)[1]
    assert len(description) <= 300
    assert description.endswith("word…")


def test_no_title_shows_the_address_and_no_description_shows_nothing_more() -> None:
    """An empty title links the readable address; an empty description adds no line."""
    unfurl = render_unfurl("", "", URL, NAME)
    assert (
        f"*<{URL}|docs.cloud.google.com/storage/docs/creating-buckets>*"
        == unfurl["blocks"][0]["text"]["text"]
    )


def test_an_invalid_name_gets_no_button() -> None:
    """Without a name the click handler would take, the preview has no button."""
    unfurl = render_unfurl("Create buckets", "", URL, "documents/../x")
    assert ["section"] == [b["type"] for b in unfurl["blocks"]]


@FAST
@given(title=HOSTILE_TEXT, description=HOSTILE_TEXT)
def test_any_title_and_description_give_a_valid_inert_preview(title: str, description: str) -> None:
    """Hostile text from the documents: valid blocks, nothing pings, the only link is the
    page's, the description within its limit."""
    unfurl = render_unfurl(title, description, URL, NAME)
    assert_valid_blocks(unfurl["blocks"])
    assert_inert(unfurl["blocks"], [URL])
    text = unfurl["blocks"][0]["text"]["text"]
    assert text.startswith(f"*<{URL}|")
    body = text.split(">*", 1)[1]
    assert len(body) <= 300 + 1
