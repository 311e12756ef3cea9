"""Whole documents: pages that each fit a message, a file for long ones, nothing lost."""

from __future__ import annotations

import itertools
import re

import pytest

from bot.errors import InvalidInput
from bot.models import Document
from bot.render import (
    ACTION_NEXT_PAGE,
    decode_page_value,
    document_file,
    document_page_spans,
    render_document_file_intro,
    render_document_page,
)
from tests.test_render_support import (
    assert_no_live_markup,
    assert_valid_message,
    document_pages,
    is_subsequence,
    mrkdwn_texts,
    non_space,
)

NAME = "documents/docs.cloud.google.com/storage/docs/creating-buckets"
URI = "https://docs.cloud.google.com/storage/docs/creating-buckets"


def _doc(content: str, title: str = "Create buckets", name: str = NAME) -> Document:
    return Document(name=name, uri=URI, title=title, content=content)


def _all_pages_render(doc: Document) -> list[str]:
    """Render every page, checking each is a valid, safe message; return the pages."""
    pages = document_pages(doc)
    for number in range(1, len(pages) + 1):
        message = render_document_page(doc, number, pages=pages)
        assert_valid_message(message)
        assert_no_live_markup(message, [doc.content, doc.uri], base_url=doc.uri)
        for text in mrkdwn_texts(message):
            assert 0 == text.count("```") % 2
    return pages


def _assert_nothing_lost(doc: Document) -> None:
    spans = document_page_spans(doc)
    source = doc.content
    assert "".join(source[s.start : s.end] for s in spans) == source
    assert [s.text(source) for s in spans] == document_pages(doc)
    assert is_subsequence(non_space(source), non_space("".join(document_pages(doc))))


def _sections(n: int, words: int) -> str:
    return "# Create buckets\n\n" + "\n\n".join(
        f"## Step {i}\n\n" + " ".join(f"w{i}x{j}" for j in range(words)) for i in range(n)
    )


def test_a_short_document_is_one_page_equal_to_its_content() -> None:
    """Nothing to split: one page, exactly the source."""
    content = "# Create buckets\n\nUse `gcloud storage buckets create gs://NAME`.\n"
    assert [content] == document_pages(_doc(content))


def test_an_empty_document_still_has_one_page_saying_so() -> None:
    """An empty document renders as a valid message that says it is empty."""
    doc = _doc("")
    assert [""] == document_pages(doc)
    message = render_document_page(doc, 1, pages=document_pages(doc))
    assert_valid_message(message)
    assert "_This document is empty._" in mrkdwn_texts(message)


def test_pages_start_at_headings() -> None:
    """A long document is cut between sections, so each page opens with a heading."""
    doc = _doc(_sections(30, 250))
    pages = _all_pages_render(doc)
    assert len(pages) > 3
    assert all(page.startswith("## Step") for page in pages[1:])
    _assert_nothing_lost(doc)


def test_an_oversize_section_is_split_further_and_nothing_is_lost() -> None:
    """One enormous section spreads over several pages, every word kept in order."""
    doc = _doc("# T\n\n## Huge\n\n" + "\n\n".join("word " * 300 for _ in range(100)))
    pages = _all_pages_render(doc)
    assert len(pages) > 5
    _assert_nothing_lost(doc)


def test_a_code_block_cut_between_pages_is_closed_and_reopened() -> None:
    """Each page holding part of a code block has its own fences around it."""
    code = "\n".join(f"echo {i} <&>" for i in range(3000))
    doc = _doc(f"# T\n\nIntro\n\n~~~~bash\n{code}\n~~~~\n\nAfter the code.\n")
    pages = _all_pages_render(doc)
    assert len(pages) > 2
    assert pages[0].endswith("\n~~~~\n")
    for page in pages[1:-1]:
        assert page.startswith("~~~~\n")
        assert page.endswith("\n~~~~\n")
    assert pages[-1].startswith("~~~~\n")
    assert pages[-1].endswith("After the code.\n")
    _assert_nothing_lost(doc)


def test_a_table_cut_between_pages_repeats_its_header() -> None:
    """Rows on a later page still render as the same table, under the same header."""
    rows = "\n".join(f"| r{i} | {'value ' * 8}|" for i in range(1500))
    doc = _doc(f"| Key | Value |\n|---|---|\n{rows}\n")
    pages = _all_pages_render(doc)
    assert len(pages) > 2
    assert all(page.startswith("| Key | Value |\n|---|---|\n") for page in pages)
    _assert_nothing_lost(doc)


def test_ten_thousand_line_code_block_pages_keep_every_line() -> None:
    """A pathological document pages cleanly: every line shown once, in order, in code."""
    lines = [f"line {i} <!channel> & <@U1>" for i in range(10_000)]
    doc = _doc("```\n" + "\n".join(lines) + "\n```\n")
    pages = _all_pages_render(doc)
    shown: list[str] = []
    for number in range(1, len(pages) + 1):
        for text in mrkdwn_texts(render_document_page(doc, number, pages=pages)):
            shown += [line for line in text.split("\n") if line.startswith("line ")]
    expected = [
        line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for line in lines
    ]
    assert expected == shown
    _assert_nothing_lost(doc)


def test_a_single_line_longer_than_a_page_is_cut_inside() -> None:
    """Even one 100,000-character line is spread over pages, nothing lost."""
    doc = _doc("x" * 50_000 + " " + "&" * 50_000)
    pages = _all_pages_render(doc)
    assert len(pages) > 10
    _assert_nothing_lost(doc)


def test_many_rules_do_not_exceed_fifty_blocks() -> None:
    """Dividers are blocks too; a page never holds more than Slack allows."""
    doc = _doc("\n\n".join(f"para {i}\n\n---" for i in range(500)))
    pages = _all_pages_render(doc)
    assert len(pages) > 5
    _assert_nothing_lost(doc)


def test_page_one_has_the_title_header_and_source_link() -> None:
    """The first page names the document and links to it; its own `# Title` is not repeated."""
    doc = _doc(_sections(10, 300))
    message = render_document_page(doc, 1, pages=document_pages(doc))
    assert_valid_message(message)
    assert {
        "type": "header",
        "text": {"type": "plain_text", "text": "Create buckets", "emoji": True},
    } == message["blocks"][0]
    assert (
        f"Source: <{URI}|docs.cloud.google.com/storage/docs/creating-buckets>"
        == message["blocks"][1]["elements"][0]["text"]
    )
    assert message["blocks"][2]["text"]["text"].startswith("*Step 0*")


def test_pages_show_their_number_and_a_next_page_button_until_the_last() -> None:
    """ "Page i of n" on each page; the button carries the next page; none on the last."""
    doc = _doc(_sections(30, 250))
    pages = document_pages(doc)
    total = len(pages)
    for number in range(1, total + 1):
        message = render_document_page(doc, number, pages=pages)
        counters = [b["elements"][0]["text"] for b in message["blocks"] if b["type"] == "context"]
        assert any(c.endswith(f"Page {number} of {total}") for c in counters)
        buttons = [e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]
        if number < total:
            assert [ACTION_NEXT_PAGE] == [e["action_id"] for e in buttons]
            assert (NAME, number + 1) == decode_page_value(buttons[0]["value"])
        else:
            assert [] == buttons
        assert f"Create buckets — page {number} of {total}" == message["text"]


def test_a_one_page_document_does_not_count_its_pages() -> None:
    """ "Page 1 of 1" says nothing: a document of one page has no counter and no button."""
    doc = _doc("# Create buckets\n\nUse `gcloud storage buckets create`.")
    message = render_document_page(doc, 1, pages=document_pages(doc))
    assert_valid_message(message)
    assert not any("Page 1" in text for text in mrkdwn_texts(message))
    assert ["header", "context", "section"] == [b["type"] for b in message["blocks"]]
    assert "Create buckets" == message["text"]


@pytest.mark.parametrize(
    "title", ["Create buckets | Cloud Storage", "Create buckets  |  Cloud Storage  |  Google Cloud"]
)
def test_the_documents_own_heading_does_not_repeat_a_titles_first_part(title: str) -> None:
    """The header says `Create buckets · Cloud Storage`; the page's `# Create buckets` under
    it would say the same again, so it goes."""
    doc = _doc("# Create buckets\n\nUse `gcloud`.", title=title)
    message = render_document_page(doc, 1, pages=document_pages(doc))
    assert message["blocks"][0]["text"]["text"].startswith("Create buckets · Cloud Storage")
    assert "Use `gcloud`." == message["blocks"][2]["text"]["text"]


def test_a_page_posted_in_a_channel_says_who_asked_for_it() -> None:
    """With `asker`, one short line says who asked for this page: under the header on page
    1, beside the counter later; a malformed id is never echoed."""
    doc = _doc(_sections(30, 250))
    pages = document_pages(doc)
    first = render_document_page(doc, 1, pages=pages, asker="U123ABC")
    assert first["blocks"][1]["elements"][0]["text"].endswith(" · <@U123ABC> asked for this page")
    later = render_document_page(doc, 2, pages=pages, asker="U123ABC")
    assert mrkdwn_texts(later)[-1].endswith(" · <@U123ABC> asked for this page")
    intro = render_document_file_intro(doc, asker="U123ABC")
    assert intro["blocks"][1]["elements"][0]["text"].endswith(" · <@U123ABC> asked for this page")
    for asker in (None, "<!channel>"):
        quiet = render_document_page(doc, 1, pages=pages, asker=asker)
        assert not any("asked" in text for text in mrkdwn_texts(quiet))


def test_later_pages_name_the_document_they_continue() -> None:
    """Without the header, a later page still says which document it belongs to."""
    doc = _doc(_sections(30, 250))
    message = render_document_page(doc, 2, pages=document_pages(doc))
    assert "Create buckets · Page 2 of" in mrkdwn_texts(message)[-1]
    assert "header" not in [b["type"] for b in message["blocks"]]


def test_a_long_title_is_cut_to_the_header_limit() -> None:
    """Header text stops at 150 characters, ending in "…"."""
    doc = _doc("text", title="Very long title " * 20)
    message = render_document_page(doc, 1, pages=document_pages(doc))
    assert_valid_message(message)
    header = message["blocks"][0]["text"]["text"]
    assert len(header) <= 150
    assert header.endswith("…")


def test_a_hostile_title_is_harmless_everywhere() -> None:
    """A title is plain text in the header and escaped in mrkdwn."""
    doc = _doc(_sections(30, 250), title="<!channel> & <@U1>")
    for number in (1, 2):
        message = render_document_page(doc, number, pages=document_pages(doc))
        assert_valid_message(message)
        assert_no_live_markup(message, [doc.content, doc.uri], base_url=doc.uri)
    assert (
        "<!channel> & <@U1>"
        == render_document_page(doc, 1, pages=document_pages(doc))["blocks"][0]["text"]["text"]
    )


def test_a_document_without_a_title_is_named_after_its_page() -> None:
    """The last part of the name stands in for a missing title."""
    message = render_document_page(_doc("text", title=""), 1, pages=["text"])
    assert "creating-buckets" == message["blocks"][0]["text"]["text"]


def test_a_document_whose_name_cannot_be_encoded_has_no_next_button() -> None:
    """A button the bot would refuse on the way back is not offered."""
    doc = _doc(_sections(30, 250), name="not a valid name")
    message = render_document_page(doc, 1, pages=document_pages(doc))
    assert_valid_message(message)
    assert "actions" not in [b["type"] for b in message["blocks"]]


@pytest.mark.parametrize("page", [0, -1, 2, 10_001])
def test_a_page_that_does_not_exist_is_invalid_input(page: int) -> None:
    """A forged or stale page number gets a clear message."""
    with pytest.raises(InvalidInput, match="1 page"):
        render_document_page(_doc("short"), page, pages=["short"])


def test_relative_links_in_a_document_point_at_its_site() -> None:
    """`[x](/storage/docs/naming)` links to the page on the document's own host."""
    text = "See [naming](/storage/docs/naming)."
    message = render_document_page(_doc(text), 1, pages=[text])
    assert "See <https://docs.cloud.google.com/storage/docs/naming|naming>." in mrkdwn_texts(
        message
    )


def test_file_intro_shows_title_link_first_section_and_says_a_file_follows() -> None:
    """The message with the file: what it is, where it lives, how it starts."""
    doc = _doc("# Create buckets\n\nBuckets hold objects.\n\n## Console\n\nClick Create.\n")
    message = render_document_file_intro(doc)
    assert_valid_message(message)
    texts = mrkdwn_texts(message)
    assert "header" == message["blocks"][0]["type"]
    assert "Buckets hold objects." in texts
    assert "Click Create." not in "\n".join(texts)
    assert "_The full document is attached as a Markdown file._" in texts


def test_file_intro_of_a_document_opening_with_a_heading_shows_that_section() -> None:
    """A title followed straight by a heading: the first real section is shown."""
    doc = _doc("# Create buckets\n\n## Before you begin\n\nEnable the API.\n\n## Next\n\nMore.")
    texts = mrkdwn_texts(render_document_file_intro(doc))
    assert "*Before you begin*\nEnable the API." in texts
    assert "More." not in "\n".join(texts)


def test_file_intro_of_a_huge_first_section_stays_short() -> None:
    """The intro is a preview: capped, while the file has everything."""
    doc = _doc("word " * 50_000)
    message = render_document_file_intro(doc)
    assert_valid_message(message)
    assert sum(len(t) for t in mrkdwn_texts(message)) < 4000


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (NAME, "creating-buckets.md"),
        ("documents/docs.cloud.google.com/storage/docs/", "docs.md"),
        ("documents/developer.android.com/guide/index.html", "index.md"),
        ("documents/firebase.google.com", "firebase.google.com.md"),
        ("documents/x.example/a/we ird<name>|.md", "we-ird-name.md"),
        ("documents/x.example/a/..", "document.md"),
        ("documents/x.example/a/" + "b" * 300, "b" * 100 + ".md"),
    ],
)
def test_document_filenames_are_safe_and_readable(name: str, expected: str) -> None:
    """The upload's filename comes from the page name, with only safe characters."""
    assert expected == document_file(Document(name=name, uri="https://x.example/", content="x"))[0]


def test_document_file_has_title_source_and_the_whole_markdown() -> None:
    """The file is the server's Markdown, every byte, under a title and the source URL."""
    content = "Intro <!channel> & `code`\n\n```\nx\n```\n" + "more\n" * 10_000
    filename, text = document_file(_doc(content))
    assert "creating-buckets.md" == filename
    assert f"# Create buckets\n\nSource: {URI}\n\n{content}" == text


def test_document_file_does_not_repeat_a_title_heading() -> None:
    """A document that starts with `# Title` keeps its own heading, then the source."""
    _, text = document_file(_doc("# Create buckets\n\nBody\n"))
    assert f"# Create buckets\n\nSource: {URI}\n\nBody\n" == text


def test_page_spans_tile_the_source_exactly() -> None:
    """The pages' slices are consecutive and cover the source from start to end."""
    doc = _doc(_sections(30, 250) + "\n```\n" + "code\n" * 3000)
    spans = document_page_spans(doc)
    assert 0 == spans[0].start
    assert len(doc.content) == spans[-1].end
    assert all(a.end == b.start for a, b in itertools.pairwise(spans))
    for span in spans:
        assert re.fullmatch(r"(```\n)?", span.prefix)
        assert re.fullmatch(r"(\n?```\n)?", span.suffix)
