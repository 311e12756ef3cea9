"""Inline citation markers (issue 41, item 2): each cited span of a REST answer ends its
sentence with its Sources number — in Slack a link, in the stream a Markdown link, in the CLI
plain `[1]` — placed by UTF-8 byte offsets, never inside code, a link or a word."""

from __future__ import annotations

import re

import pytest

from bot.models import (
    Answer,
    Citation,
    Reference,
    SnippetCheck,
    Verification,
)
from bot.render import (
    answer_markdown,
    answer_parts,
    marker_places,
    render_answer,
    streamed_answer,
    with_markers,
)
from tests.test_render_support import assert_valid_message, mrkdwn_texts

HOST = "https://docs.cloud.google.com"


def span(text: str, cited: str, *, after: int = 0) -> tuple[int, int]:
    """`cited`'s UTF-8 byte span in `text` (its first occurrence at or after char `after`)."""
    at = text.index(cited, after)
    start = len(text[:at].encode())
    return start, start + len(cited.encode())


def marked(text: str, *spans: tuple[tuple[int, int], tuple[int, ...]]) -> str:
    """`text` with `[n]` markers, reference i being Sources entry i + 1."""
    cited = [Citation(start=s, end=e, references=refs) for (s, e), refs in spans]
    places = marker_places(text, cited, {i: i + 1 for i in range(5)})
    return with_markers(text, places, lambda n: f"[{n}]")


@pytest.mark.parametrize(
    ("text", "cited", "expected"),
    [
        ("One. Two three. Four.", "Two", "One. Two three.[1] Four."),
        ("Café crème brûlée. Next one.", "crème", "Café crème brûlée.[1] Next one."),
        ("中文句子。第二句。", "中文", "中文句子。[1]第二句。"),
        ("Ship it 🚀👍🏽 now. Then rest.", "🚀", "Ship it 🚀👍🏽 now.[1] Then rest."),
        ("Ship it 👨‍👩‍👧\nNext", "👨‍👩‍👧", "Ship it 👨‍👩‍👧[1]\nNext"),
        ("Cafe\u0301 au lait. More.", "Cafe\u0301", "Cafe\u0301 au lait.[1] More."),
        ("No stop at all", "No", "No stop at all[1]"),
        ("A list:\n- first item\n- second.", "first", "A list:\n- first item[1]\n- second."),
        ("Use `a.b() c` now. Done.", "a.b", "Use `a.b() c` now.[1] Done."),
        ("Run `gcloud run deploy`", "deploy", "Run `gcloud run deploy`[1]"),
        ("Run `cd dir. ls` now. Ok.", "Run", "Run `cd dir. ls` now.[1] Ok."),
        (
            "[Read this. Then](https://x.dev/a) go. Ok.",
            "Read",
            "[Read this. Then](https://x.dev/a) go.[1] Ok.",
        ),
        (
            "See [the page.](https://x.dev/a.b) here. Ok.",
            "the",
            "See [the page.](https://x.dev/a.b) here.[1] Ok.",
        ),
        ("**Note.** Be careful.", "Note", "**Note.**[1] Be careful."),
        ("Use it, e.g. like this. Fine.", "Use", "Use it, e.g. like this.[1] Fine."),
        ("Go to https://x.dev/a.b?c=d now. Ok.", "Go", "Go to https://x.dev/a.b?c=d now.[1] Ok."),
        ("## Deploy a service ##\nText.", "Deploy", "## Deploy a service[1] ##\nText."),
        ("Line ending  \r\nnext.", "Line", "Line ending[1]  \r\nnext."),
    ],
)
def test_a_marker_ends_its_spans_sentence(text: str, cited: str, expected: str) -> None:
    """At the end of the sentence the span ends in (its stop, or its line's end), counted
    in UTF-8 bytes: accents, CJK, emoji with modifiers and ZWJ, combining marks."""
    assert expected == marked(text, (span(text, cited), (0,)))


def test_a_span_ending_in_a_code_block_marks_the_prose_before_it() -> None:
    """The code is never touched: the marker ends the sentence that introduces it."""
    text = "Create it:\n\n```sh\ngcloud storage buckets create gs://b. x\n```\nDone."
    expected = "Create it:[1]\n\n```sh\ngcloud storage buckets create gs://b. x\n```\nDone."
    assert expected == marked(text, (span(text, "gcloud storage"), (0,)))
    crossing = (span(text, "Create")[0], span(text, "buckets")[1])
    assert expected == marked(text, (crossing, (0,)))


def test_a_span_in_code_with_no_prose_before_marks_the_first_sentence_after() -> None:
    text = "```\ncode here\n```\nThen this. And that."
    assert "```\ncode here\n```\nThen this.[2] And that." == marked(
        text, (span(text, "code"), (1,))
    )
    assert "```\nonly code\n```" == marked("```\nonly code\n```", ((4, 8), (0,)))


def test_a_span_in_a_table_marks_the_prose_before_it() -> None:
    text = "Compare them:\n\n| a | b. c |\n|---|---|\n| 1 | 2. |\n"
    assert marked(text, (span(text, "2."), (0,))).startswith("Compare them:[1]\n\n| a | b. c |")


def test_several_markers_at_one_place_read_in_sources_order_each_once() -> None:
    text = "Alpha beta. Gamma."
    both = marked(text, (span(text, "beta"), (2, 0)), (span(text, "Alpha"), (0, 1)))
    assert "Alpha beta.[1][2][3] Gamma." == both


@pytest.mark.parametrize(
    ("spans", "expected"),
    [
        ([((0, 10_000), (0,))], "One. Two.[1]"),  # past the end: cut to the text
        ([((-4, 2), (0,))], "One.[1] Two."),
        ([((50, 60), (0,))], "One. Two."),  # wholly outside: dropped
        ([((6, 2), (0,))], "One. Two."),  # backwards: dropped
        ([((0, 7), (0,)), ((2, 9), (1,))], "One. Two.[1][2]"),  # overlapping
        ([((0, 3), (9,))], "One. Two."),  # a reference not listed: no marker
    ],
)
def test_spans_out_of_range_or_overlapping_are_handled(
    spans: list[tuple[tuple[int, int], tuple[int, ...]]], expected: str
) -> None:
    assert expected == marked("One. Two.", *spans)


def _ref(i: int, title: str | None = None) -> Reference:
    name = f"documents/docs.cloud.google.com/p{i}"
    return Reference(name=name, uri=f"{HOST}/p{i}?a=1&b={i}", title=title or f"Page {i}")


TEXT = "Créez un bucket 🪣 avec gcloud. 中文。Then deploy it."


def _answer(refs: tuple[Reference, ...], *cited: tuple[str, tuple[int, ...]]) -> Answer:
    citations = tuple(Citation(start=s, end=e, references=r) for (s, e), r in cited)
    return Answer(query="q", kind="answer", text=TEXT, references=refs, citations=citations)


def _section_texts(answer: Answer) -> str:
    return "\n".join(mrkdwn_texts(render_answer(answer)))


def test_slack_markers_link_to_their_sources_entry_escaped_once() -> None:
    """`<url|[n]>` through `link()`: the address escaped once; the number is the page's
    line in Sources (two references to one address are one entry)."""
    refs = (_ref(0), _ref(1), _ref(0))
    answer = _answer(refs, (span(TEXT, "bucket 🪣"), (0,)), (span(TEXT, "中文"), (2, 1)))
    message = render_answer(answer)
    assert_valid_message(message)
    body = message["blocks"][0]["text"]["text"]
    one, two = f"<{HOST}/p0?a=1&amp;b=0|[1]>", f"<{HOST}/p1?a=1&amp;b=1|[2]>"
    assert body == f"Créez un bucket 🪣 avec gcloud.{one} 中文。{one}{two}Then deploy it."
    sources = message["blocks"][1]["text"]["text"]
    assert sources.count("\n") == 2  # two entries: p0 once


def test_a_reference_never_cited_stays_in_sources() -> None:
    answer = _answer((_ref(0), _ref(1)), (span(TEXT, "Créez"), (1,)))
    shown = _section_texts(answer)
    assert "|[2]>" in shown
    assert "|[1]>" not in shown
    assert f"1. <{HOST}/p0?a=1&amp;b=0|Page 0>" in shown


def test_a_marker_never_points_at_a_page_the_sources_list_leaves_out() -> None:
    """A long Sources list ends "…and N more": markers for those pages are not shown."""
    refs = tuple(_ref(i, title="T" * 280) for i in range(12))
    answer = _answer(refs, (span(TEXT, "Créez"), (11,)), (span(TEXT, "Then"), (0,)))
    shown = _section_texts(answer)
    listed = len(re.findall(r"^\d+\. <", shown, flags=re.MULTILINE))
    assert "more" in shown
    assert listed < 12
    assert re.findall(r"\|\[(\d+)\]>", shown) == ["1"]


def test_the_stream_shows_markers_as_markdown_links_in_brackets() -> None:
    """`[[1](url)]`: the label keeps no bracket (`_safe_link`), so Slack reads `[1]`."""
    answer = _answer((_ref(0), _ref(1)), (span(TEXT, "中文"), (0, 1)))
    markdown = streamed_answer(answer, answer_parts(answer)).markdown
    one, two = f"[[1]({HOST}/p0?a=1&amp;b=0)]", f"[[2]({HOST}/p1?a=1&amp;b=1)]"
    assert f"中文。\u2060{one}\u2060{two}Then" in markdown


@pytest.mark.parametrize("stop", ["!", "?", ".", "！"])
def test_no_stream_marker_follows_a_bang_as_an_image(stop: str) -> None:
    """`It works![[1](url)]`: `![` opens an image in Markdown, and Slack's own parser is not
    one we can run; an invisible word joiner (U+2060) keeps `!` and `[` apart on every
    marker (and never lets a marker wrap alone onto the next line)."""
    text = f"It works{stop} Next step{stop}"
    cited = (span(text, "It"), (0,)), (span(text, "Next"), (0,))
    answer = _answer((_ref(0),), *cited).model_copy(update={"text": text})
    markdown = streamed_answer(answer, answer_parts(answer)).markdown
    assert "![" not in markdown
    assert f"works{stop}\u2060[[1](" in markdown
    assert f"step{stop}\u2060[[1](" in markdown


def test_the_cli_prints_plain_markers_with_the_numbered_sources_below() -> None:
    answer = _answer((_ref(0), _ref(1)), (span(TEXT, "Then"), (1,)))
    printed = answer_markdown(answer)
    assert "中文。Then deploy it.[2]\n\nSources:\n1. [Page 0]" in printed
    assert f"2. [Page 1]({HOST}/p1?a=1&b=1)" in printed


def test_ask_json_carries_the_cited_spans() -> None:
    """`gdocs-bot ask --json` prints the Answer model: its dump has the byte spans."""
    answer = _answer((_ref(0),), ((3, 9), (0,)))
    dumped = answer.model_dump(mode="json")
    assert dumped["citations"] == [{"start": 3, "end": 9, "references": [0]}]


def test_verify_marks_stay_under_their_block_with_markers_in_the_text() -> None:
    """Markers add no line: a ✓ still follows its code block, and the marker ends the
    sentence before it."""
    text = "Créez-le :\n\n```sh\ngcloud storage buckets create gs://b\n```\n\nVoilà."
    check = SnippetCheck(
        snippet="gcloud storage buckets create gs://b",
        kind="command",
        anchor=4,
        result="found",
        uri=f"{HOST}/p0?a=1&b=0",
    )
    answer = Answer(
        query="q",
        kind="answer",
        text=text,
        references=(_ref(0),),
        citations=(Citation(start=0, end=len(text.encode()), references=(0,)),),
        verification=Verification(status="checked", snippets=(check,)),
    )
    blocks = render_answer(answer)["blocks"]
    kinds = [b["type"] for b in blocks[:3]]
    assert kinds == ["section", "context", "section"], blocks
    assert blocks[1]["elements"][0]["text"].startswith("✓ `gcloud storage buckets create`")
    assert blocks[2]["text"]["text"] == f"Voilà.<{HOST}/p0?a=1&amp;b=0|[1]>"
    printed = answer_markdown(answer)
    assert "```\n> ✓ `gcloud storage buckets create` — in source 1\n\nVoilà.[1]" in printed


def test_an_answer_without_citations_renders_as_before() -> None:
    """MCP answers: no marker, date or file size anywhere."""
    answer = Answer(query="q", kind="answer", text=TEXT, references=(_ref(0),))
    message = render_answer(answer)
    shown = "\n".join(mrkdwn_texts(message)) + str(message["blocks"])
    assert "[1]" not in shown
    assert "updated" not in shown
    assert "(file" not in shown
    assert TEXT in answer_markdown(answer)
