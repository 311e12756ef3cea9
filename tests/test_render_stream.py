"""What a streamed answer says (bot/render/_stream.py): task titles and outputs, the sources on
a step, the answer's Markdown made inert and cut to Slack's per-call limit, and which blocks
chat.stopStream ends with."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.models import Answer, Document, Fallback, Reference, SearchHit, SnippetCheck, Verification
from bot.render import (
    answer_parts,
    fallback_title,
    render_answer,
    step_title,
    streamed_answer,
    task_chunk,
    task_found,
    task_text,
    verify_summary,
    verify_title,
    wait_title,
)
from bot.verify import check_answer, count_commands
from tests.fakes.slack_streams import MAX_APPEND_CHARS, MAX_TASK_CHARS

BUCKETS = Reference(
    name="documents/docs.cloud.google.com/storage/docs/creating-buckets",
    uri="https://docs.cloud.google.com/storage/docs/creating-buckets",
    title="Create buckets",
)
UNTIL = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("kind", "title"),
    [
        ("answer", "Asking Google's docs"),
        ("search", "Searching Google's docs"),
        ("pay", "Searching the Google Pay & Wallet docs"),
        ("unknown", "Searching Google's docs"),
    ],
)
def test_each_route_names_its_step_in_peoples_words(kind: str, title: str) -> None:
    """The upstream step says what is asked, not an API's name; plain text (`task_chunk`
    escapes it)."""
    assert title == step_title(kind)


@pytest.mark.parametrize(
    ("seconds", "title"),
    [
        (8.0, "Waiting for a free answer slot (about 8 s)"),
        (7.2, "Waiting for a free answer slot (about 8 s)"),
        (0.1, "Waiting for a free answer slot (about 1 s)"),
    ],
)
def test_a_quota_wait_says_about_how_long(seconds: float, title: str) -> None:
    """The wait step rounds up: it never promises less than the ledger's wait."""
    assert title == wait_title(seconds)


@pytest.mark.parametrize(
    ("fallback", "title"),
    [
        (
            Fallback(reason="answer_quota", limit="day", until=UNTIL),
            "Generated answers are used up today — searching instead",
        ),
        (
            Fallback(reason="answer_quota", limit="minute"),
            "Generated answers are busy this minute — searching instead",
        ),
        (
            Fallback(reason="answer_quota", limit="user", until=UNTIL),
            "Your generated answers are used up today — searching instead",
        ),
        (Fallback(reason="pay_not_configured"), None),
        (Fallback(reason="no_answer_tool"), None),
    ],
)
def test_a_quota_fallback_renames_the_step(fallback: Fallback, title: str | None) -> None:
    """Only a quota fallback changes the step; other notes stay in the final blocks."""
    assert title == fallback_title(fallback)


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (lambda: verify_title(3), "Checking the commands against the cited pages"),
        (lambda: verify_title(1), "Checking the command against the cited pages"),
        (
            lambda: verify_summary(Verification(status="checked", snippets=CHECKS)),
            "2 of 3 found",
        ),
    ],
)
def test_the_verify_step_reads_as_the_issue_says(call: object, text: str) -> None:
    """The verify step's title, and its output counting the marks the answer shows."""
    assert callable(call)
    assert text == call()


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("<!channel> look", "&lt;!channel&gt; look"),
        ("ping <@U123>\nnow", "ping &lt;@U123&gt; now"),
        ("a & b", "a &amp; b"),
    ],
)
def test_task_text_is_one_escaped_line(raw: str, shown: str) -> None:
    """Titles and outputs can carry no markup and no line breaks."""
    assert shown == task_text(raw)


@given(st.text(min_size=0, max_size=2000))
def test_task_text_never_passes_slacks_guidance(raw: str) -> None:
    """Whatever comes in, a task text is ≤ 256 characters, one line, with no `<`."""
    shown = task_text(raw)
    assert len(shown) <= MAX_TASK_CHARS
    assert "<" not in shown
    assert "\n" not in shown


@pytest.mark.parametrize(
    ("kind", "pages", "found"),
    [("answer", 1, "1 page found"), ("search", 3, "3 pages found"), ("pay", 0, "No pages found")],
)
def test_the_search_step_counts_the_pages_and_names_none(kind: str, pages: int, found: str) -> None:
    """The step says how many pages it found, not which: the answer's Sources list names each
    page once (issue 40: a page was named in the task card's chips and again below)."""
    refs = tuple(BUCKETS for _ in range(pages)) if kind == "answer" else ()
    hits = (
        ()
        if kind == "answer"
        else tuple(SearchHit(title="T", uri="https://e.com", snippet="s") for _ in range(pages))
    )
    answer = Answer(query="q", kind=kind, text="t", references=refs, hits=hits)  # type: ignore[arg-type]
    assert found == task_found(answer)
    assert "Create buckets" not in str(task_chunk("step-1", "Asking", "complete", output=found))


CHECKS = tuple(
    SnippetCheck(snippet=f"ls {n}", kind="command", result=r)
    for n, r in enumerate(("found", "found", "not_found"))
)


def _pieces(markdown: str) -> list[str]:
    """The markdown_text chunks an unverified answer of `markdown` is streamed in."""
    answer = Answer(query="q", kind="answer", text=markdown)
    chunks = streamed_answer(answer, answer_parts(answer)).chunks
    return [c["text"] for c in chunks if c["type"] == "markdown_text"]


def _streamed(markdown: str) -> str:
    return "".join(_pieces(markdown))


@pytest.mark.parametrize(
    ("markdown", "streamed"),
    [
        ("Hi <!channel>", "Hi &lt;!channel&gt;"),
        ("ask <@U12345> & <!subteam^S1>", "ask &lt;@U12345&gt; &amp; &lt;!subteam^S1&gt;"),
        ("<https://evil.example|google.com>", "&lt;https://evil.example|google.com&gt;"),
        ("[google.com](https://evil.example/x)", "[evil.example/x](https://evil.example/x)"),
        ("[the docs](https://cloud.google.com/run)", "[the docs](https://cloud.google.com/run)"),
        ("[cloud.google.com](https://cloud.google.com/run)", "[cloud.google.com](https://cloud.google.com/run)"),
        ("[click](javascript:alert(1))", "click"),
        ("[a](https://en.wikipedia.org/wiki/Go_(language))", "[a](https://en.wikipedia.org/wiki/Go_(language))"),
        ("**bold** and `code`", "**bold** and `code`"),
    ],
)  # fmt: skip
def test_streamed_markdown_is_inert(markdown: str, streamed: str) -> None:
    """No ping, mention, Slack link or host-spoofing label survives; Markdown stays."""
    assert streamed == _streamed(markdown)


@settings(max_examples=30, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab <>&\n"), min_size=1, max_size=3000))
def test_split_pieces_fit_the_limit_and_join_back(text: str) -> None:
    """Each piece fits the per-call limit, none cuts an entity, and together they are the
    whole text."""
    escaped = _streamed(text * 10)
    pieces = _pieces(text * 10)
    assert escaped == "".join(pieces)
    for piece in pieces:
        assert len(piece) <= MAX_APPEND_CHARS
        tail = piece[piece.rfind("&") :] if "&" in piece else ";"
        assert ";" in tail


def test_a_long_answer_is_appended_in_pieces_under_12000_characters() -> None:
    """A 30,000-character answer goes in three appends, cut between paragraphs."""
    paragraph = "x" * 999
    pieces = _pieces("\n\n".join([paragraph] * 30))
    assert 3 == len(pieces)
    assert all(len(p) <= MAX_APPEND_CHARS for p in pieces)
    assert all(p.endswith("\n\n") for p in pieces[:-1])


def test_a_streamed_answer_ends_with_todays_blocks_but_its_text() -> None:
    """A generated answer: its text is streamed; the end has the same sources, buttons and
    feedback blocks as today's message, not the answer's body."""
    answer = Answer(query="q", kind="answer", text="Use **gcloud**.", references=(BUCKETS,))
    parts = answer_parts(answer, feedback_id="a1")
    streamed = streamed_answer(answer, parts)
    today = render_answer(answer, feedback_id="a1")

    assert ({"type": "markdown_text", "text": "Use **gcloud**."},) == streamed.chunks
    assert today["blocks"][-len(parts.tail) :] == streamed.end["blocks"]
    assert ["section", "actions", "context_actions"] == [b["type"] for b in streamed.end["blocks"]]
    assert today["text"] == streamed.end["text"]


def test_search_results_and_no_answer_keep_their_body_as_final_blocks() -> None:
    """Hits (no text to stream) and "no answer found" end as today's whole message."""
    hit = SearchHit(title="P", uri="https://e.com", snippet="")
    for answer in (
        Answer(query="q", kind="search", hits=(hit,)),
        Answer(query="q", kind="answer", text="  "),
    ):
        streamed = streamed_answer(answer, answer_parts(answer, feedback_id="a1"))
        assert () == streamed.chunks
        assert render_answer(answer, feedback_id="a1")["blocks"] == streamed.end["blocks"]


def _docs_example() -> list[dict[str, Any]]:
    """docs/streaming.md's conversation, from the same functions the bot streams with: the
    answer checked against its cited page (bot.verify), as the flow does."""
    text = (
        "Use `gcloud storage buckets create`:\n\n```\n"
        "gcloud storage buckets create gs://BUCKET_NAME --location=US\n```\n\n"
        "Bucket names are **globally unique**; see "
        "[naming rules](https://docs.cloud.google.com/storage/docs/buckets#naming)."
    )
    page = Document(
        name=BUCKETS.name,
        uri=BUCKETS.uri,
        title=BUCKETS.title,
        content="# Create buckets\n\n```\ngcloud storage buckets create gs://BUCKET_NAME "
        "--location=BUCKET_LOCATION\n```\n",
    )
    answer = Answer(
        query="How do I create a Cloud Storage bucket?",
        kind="answer",
        text=text,
        references=(BUCKETS,),
        verification=check_answer(text, [page]),
    )
    streamed = streamed_answer(answer, answer_parts(answer, feedback_id="a1b2c3d4"))
    ask, check = step_title("answer"), verify_title(count_commands(text))
    channel, ts = "C0DEV", "1764626401.000200"

    def append(*chunks: dict[str, Any]) -> dict[str, Any]:
        return {
            "method": "chat.appendStream",
            "args": {"channel": channel, "ts": ts, "chunks": list(chunks)},
        }

    return [
        {"method": "chat.startStream", "args": {
            "channel": channel, "thread_ts": "1764626400.000100",
            "recipient_user_id": "U012AB3CD", "recipient_team_id": "T0TEAM",
            "task_display_mode": "timeline",
            "chunks": [task_chunk("step-1", ask, "in_progress")]}},
        append(task_chunk("step-1", ask, "complete", output=task_found(answer))),
        append(task_chunk("step-2", check, "in_progress")),
        append(task_chunk("step-2", check, "complete", output=verify_summary(answer.verification))),
        *(append(chunk) for chunk in streamed.chunks),
        {"method": "chat.stopStream", "args": {"channel": channel, "ts": ts,
            "blocks": streamed.end["blocks"], "session_status": "active"}},
    ]  # fmt: skip


def test_the_streaming_page_shows_what_the_bot_streams() -> None:
    """docs/streaming.md's "A conversation" is the code's real output for that answer."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "streaming.md").read_text()
    match = re.search(
        r"<!-- stream-example:start -->\n```json\n(.*?)```\n<!-- stream-example:end -->", page, re.S
    )
    assert match, "docs/streaming.md has no example block"
    expected = json.dumps(_docs_example(), indent=2, ensure_ascii=False)
    assert json.loads(match.group(1)) == _docs_example(), f"update the example to:\n{expected}"
