"""Each cited page named once, its title the same on every surface, escaped once (issue 40,
items 1, 4, 6, 9 and 10): properties over `render_answer`, `answer_parts`,
`streamed_answer` and document pages, whatever titles and text come in."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.models import Answer, Document, Reference, SearchHit
from bot.render import (
    Message,
    answer_parts,
    render_answer,
    render_document_file_intro,
    render_document_page,
    render_unfurl,
    streamed_answer,
)
from tests.render_strategies import citations, page_sizes, updated_times
from tests.test_render_support import assert_valid_message, document_pages

HOST = "docs.cloud.google.com"
FAST = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: untrusted text that spells no entity itself (so `&amp;amp;` can only be ours), with the
#: characters that matter here: `|` ends a link's URL, `<!` would ping, `&` is escaped once
UNTRUSTED = (
    st.lists(st.sampled_from([*"ab |&<>!@*_`#-[]()\n;", "<!channel>", "<!here>"]), max_size=40)
    .map("".join)
    .filter(lambda t: "amp;" not in t)
)
#: title words without Markdown of their own: a heading and a title read the same
WORDS = st.lists(st.sampled_from([*"ab &<>!", "<!here>", "Ωm", "中文"]), max_size=20).map("".join)
ASKERS = st.sampled_from([None, "U123ABC"])


def _token(i: int) -> str:
    """A word that appears in page i's title and nowhere else."""
    return f"Zq{i}kx"


@st.composite
def pages(draw: st.DrawFn) -> list[tuple[int, str, str | None, str]]:
    """(page id, uri, name, title); ids repeat: a page may be cited twice."""
    ids = draw(st.lists(st.integers(0, 7), min_size=0, max_size=9))
    out = []
    for i in ids:
        uri = f"https://{HOST}/storage/docs/page-{i}"
        name = f"documents/{HOST}/storage/docs/page-{i}" if i % 3 else None
        out.append((i, uri, name, f"{draw(UNTRUSTED)} {_token(i)} | {draw(UNTRUSTED)}"))
    return out


def _answer(
    kind: str,
    cited: list[tuple[int, str, str | None, str]],
    text: str,
    data: st.DataObject | None = None,
) -> Answer:
    """The answer or results; with `data`, as REST gives them (issue 41): each page's date
    and size, and cited spans over the text."""
    rest = [
        (data.draw(updated_times), data.draw(page_sizes)) if data else (None, None) for _ in cited
    ]
    if kind == "answer":
        refs = tuple(
            Reference(name=n or "x", uri=u, title=t, updated=when, size=size)
            for (_, u, n, t), (when, size) in zip(cited, rest, strict=True)
        )
        spans = data.draw(citations(text, len(refs))) if data else ()
        return Answer(query="q", kind="answer", text=text, references=refs, citations=spans)
    hits = tuple(
        SearchHit(title=t, uri=u, snippet=text, name=n, updated=when, size=size)
        for (_, u, n, t), (when, size) in zip(cited, rest, strict=True)
    )
    return Answer(query="q", kind=kind, hits=hits)  # type: ignore[arg-type]


def visible(blocks: Any, kinds: tuple[str, ...] = ("mrkdwn", "plain_text")) -> list[str]:
    """What a reader sees of blocks: text objects (mrkdwn, plain_text: sections, context,
    headers, button and option labels), not values, URLs or screen-reader labels."""
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if value.get("type") in kinds and isinstance(value["text"], str):
                found.append(value["text"])
            for key, item in value.items():
                if key != "accessibility_label":
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(blocks)
    return found


def _final_texts(
    answer: Answer, asker: str | None, kinds: tuple[str, ...] = ("mrkdwn", "plain_text")
) -> list[list[str]]:
    """The visible text of each final form: the posted message, and the streamed one (its
    markdown and block chunks, then the blocks under it)."""
    parts = answer_parts(answer, asker=asker, feedback_id="a1")
    posted = render_answer(answer, asker=asker, feedback_id="a1")
    streamed = streamed_answer(answer, parts)
    markdown = [c["text"] for c in streamed.chunks if c["type"] == "markdown_text"]
    in_stream = [c["blocks"] for c in streamed.chunks if c["type"] == "blocks"]
    stream = markdown + visible(in_stream, kinds) + visible(streamed.end, kinds)
    return [visible(posted["blocks"], kinds), stream]


@FAST
@given(st.sampled_from(["answer", "search", "pay"]), pages(), UNTRUSTED, ASKERS, st.data())
def test_no_cited_page_is_named_twice_in_a_final_message(
    kind: str,
    cited: list[tuple[int, str, str | None, str]],
    text: str,
    asker: str | None,
    data: st.DataObject,
) -> None:
    """Posted or streamed, answer or results: each page's title shows once (in Sources or
    the result list), never again in a button, menu or line; a page cited twice, once —
    with REST's dates, sizes and citation markers too (its date once, after its title)."""
    answer = _answer(kind, cited, text, data if data.draw(st.booleans()) else None)
    assert_valid_message(render_answer(answer, asker=asker, feedback_id="a1"))
    for texts in _final_texts(answer, asker):
        seen = "\n".join(texts)
        assert seen.count(" — updated ") <= len({i for i, *_ in cited})
        for i in {i for i, *_ in cited}:
            assert seen.count(_token(i)) <= 1, (_token(i), seen)
        if kind == "answer" and len(cited) <= 5:  # a short Sources list is never cut
            assert all(seen.count(_token(i)) == 1 for i, *_ in cited)


@FAST
@given(st.sampled_from(["answer", "search"]), pages(), UNTRUSTED, ASKERS, st.data())
def test_untrusted_text_is_escaped_once_and_pings_nobody(
    kind: str,
    cited: list[tuple[int, str, str | None, str]],
    text: str,
    asker: str | None,
    data: st.DataObject,
) -> None:
    """No `&amp;amp;` (escaped twice) and no raw `<!` in any mrkdwn or markdown text,
    whatever the titles, snippets and answer say (plain_text shows `<!` as typed), citation
    markers among them."""
    answer = _answer(kind, cited, text, data if data.draw(st.booleans()) else None)
    for texts in _final_texts(answer, asker, kinds=("mrkdwn",)):
        for shown in texts:
            assert "&amp;amp;" not in shown, shown
            assert "<!" not in shown, shown
    assert "<!" not in render_answer(answer)["text"]


@FAST
@given(WORDS, UNTRUSTED, ASKERS)
def test_a_document_page_names_its_title_once(before: str, after: str, asker: str) -> None:
    """A document's page shows its title in the header once: not again as its own first
    heading (`# Create buckets` under `Create buckets · Cloud Storage`), escaped once."""
    title = f"{before} {_token(1)} | {after}"
    heading = " ".join(f"{before} {_token(1)}".split())
    doc = Document(
        name=f"documents/{HOST}/storage/docs/x",
        uri=f"https://{HOST}/storage/docs/x",
        title=title,
        content=f"# {heading}\n\nSome words & <!here> more.",
    )
    for message in (
        render_document_page(doc, 1, pages=document_pages(doc), asker=asker),
        render_document_file_intro(doc, asker=asker),
    ):
        seen = visible(message["blocks"])
        assert 1 == "\n".join(seen).count(_token(1)), seen
        assert not any("&amp;amp;" in s for s in seen)
        assert not any("<!" in s for s in visible(message["blocks"], ("mrkdwn",)))


def _shown_title(message: Message | dict[str, Any], pattern: str) -> str:
    for text in visible(message["blocks"]):
        if match := re.search(pattern, text):
            return match.group(1)
    raise AssertionError(f"no {pattern!r} in {visible(message['blocks'])}")


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Create buckets | Cloud Storage", "Create buckets · Cloud Storage"),
        ("Create  |  Storage | Cloud", "Create · Storage · Cloud"),
        ("a|b", "a · b"),
    ],
)
def test_a_title_with_a_bar_reads_the_same_on_every_surface(title: str, expected: str) -> None:
    """`|` cannot sit in a mrkdwn link's label, and plain text shows it as typed: one rule —
    a title's bars read `·` in the Sources link, a result, a link preview and a page header."""
    uri, name = f"https://{HOST}/b", f"documents/{HOST}/b"
    ref = Reference(name=name, uri=uri, title=title)
    hit = SearchHit(title=title, uri=uri, snippet="s", name=name)
    doc = Document(name=name, uri=uri, title=title, content="Text.")
    link = rf"<{re.escape(uri)}\|([^>]*)>"
    shown = {
        _shown_title(
            render_answer(Answer(query="q", kind="answer", text="t", references=(ref,))), link
        ),
        _shown_title(render_answer(Answer(query="q", kind="search", hits=(hit,))), link),
        _shown_title(render_unfurl(title, "d", uri, name), link),
        render_document_page(doc, 1, pages=["Text."])["blocks"][0]["text"]["text"],
    }
    assert {expected} == shown


@pytest.mark.parametrize(
    ("snippet", "shown"),
    [
        ("# Create buckets\n\nSection 1\n## IAM\nGrant roles", "Section 1 Grant roles"),
        ("Deploy:\n\n```sh\ngcloud run deploy\n```", "Deploy: gcloud run deploy"),
        ("Deploy: ```sh gcloud run deploy ```", "Deploy: gcloud run deploy"),
        ("- one\n* two\n1. three\n> quoted\n> > deeper", "one two three quoted deeper"),
        ("| a | b |\n|---|:--:|\n| 1 | 2 |", "a b 1 2"),
        ("Pipe it: `ls | wc -l`", "Pipe it: ls | wc -l"),
    ],
)
def test_search_snippets_read_as_plain_words(snippet: str, shown: str) -> None:
    """A result's snippet shows no headings (they repeat the title), fence or language tag
    (`run: sh gcloud…`), list, quote or table marks — and keeps a pipe in the text."""
    hit = SearchHit(title="T", uri=f"https://{HOST}/t", snippet=snippet)
    [block] = render_answer(Answer(query="q", kind="search", hits=(hit,)))["blocks"]
    assert shown == " ".join(block["text"]["text"].split("\n", 1)[1].split())


def test_the_notification_is_the_answers_first_words() -> None:
    """Slack's notification shows the answer, not `question: answer`."""
    answer = Answer(
        query="How do I create a Cloud Storage bucket?",
        kind="answer",
        text="## Steps\n\nUse **gcloud storage buckets create**:\n\n"
        "```sh\ngcloud storage buckets create gs://b\n```",
    )
    text = render_answer(answer, asker="U123ABC", question=answer.query)["text"]
    assert text.startswith("Use gcloud storage buckets create: gcloud storage")
    assert "How do I" not in text
