"""Each thing said once and escaped once (issue 40, items 3–5): the quota step, its note and
the quota status say the same situation; a step's title and an error reach Slack escaped
exactly once, whatever text comes in."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from bot.errors import ErrorFacts, GdocsError, ProtocolError, Reason, Unavailable, UpstreamTimeout
from bot.models import Fallback
from bot.quota import Pause, QuotaState
from bot.render import (
    Message,
    fallback_note,
    fallback_title,
    quota_words,
    render_error,
    render_progress,
    render_quota_status,
    step_title,
    task_chunk,
    verify_summary,
    verify_title,
    wait_title,
)
from bot.text import one_line
from tests.test_render_support import mrkdwn_texts

NOW = datetime(2026, 12, 1, 23, 30, tzinfo=UTC)
LIMITS = st.one_of(st.sampled_from(["minute", "day", "user", "unknown", ""]), st.none(), st.text())
UNTIL = st.one_of(st.none(), st.integers(-60, 3 * 86_400).map(lambda s: NOW + timedelta(seconds=s)))
ZONES = st.sampled_from([None, "Europe/Rome", "Asia/Tokyo", "Mars/Olympus_Mons"])
#: untrusted text that does not spell an entity itself (so `&amp;amp;` can only be ours)
UNTRUSTED = st.text(max_size=300).filter(lambda t: "&amp;" not in t)


def situation(text: str) -> str | None:
    """Which quota situation `text` speaks of, by its words."""
    low = text.lower()
    if "for a moment" in low:
        return "unclear"
    if "minute" in low:
        return "minute"
    if "today" in low:
        return "yours" if re.search(r"\byour generated|\byou've used", low) else "team's day"
    return None


@given(LIMITS, UNTIL, st.integers(0, 10_000), ZONES)
def test_the_step_and_the_note_agree_for_every_quota_situation(
    limit: str | None, until: datetime | None, size: int, tz: str | None
) -> None:
    """What the stream's step says and what the note under it says is one situation."""
    fallback = Fallback(reason="answer_quota", limit=limit, until=until, limit_value=size or None)
    title = fallback_title(fallback)
    note = fallback_note(fallback, tz=tz, now=NOW)
    assert title is not None
    assert situation(title) is not None
    assert situation(title) == situation(note), (title, note)


@given(st.sampled_from(["minute", "day", "unknown"]), st.integers(1, 86_400), ZONES)
def test_the_quota_status_says_a_pause_as_the_step_does(
    kind: str, seconds: int, tz: str | None
) -> None:
    """`/gdocs quota` (and Home, through `quota_words`) names the same situation."""
    pause = Pause(kind, NOW + timedelta(seconds=seconds))  # type: ignore[arg-type]
    state = QuotaState(10, 50, 0, 3, 47, 0, 10, None, None, None, pause, NOW + timedelta(days=1))
    shown = "\n".join(mrkdwn_texts(render_quota_status(state, tz=tz, now=NOW)))
    [paused] = [line for line in shown.splitlines() if "Paused" in line]
    headline = quota_words(kind).headline
    assert situation(paused) == situation(headline)


def unescaped(text: str) -> str:
    """As Slack shows it: its three entities decoded, once."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


@given(UNTRUSTED, UNTRUSTED)
def test_a_task_chunk_escapes_its_title_and_output_exactly_once(title: str, output: str) -> None:
    """Any title or output: no live `<!…>`, no `&amp;amp;`, and Slack shows the words."""
    chunk = task_chunk("step-1", title, "complete", output=output or None)
    for sent in (chunk["title"], chunk.get("output", "")):
        assert "<" not in sent
        assert "&amp;amp;" not in sent
    assert one_line(title).startswith(unescaped(chunk["title"]).rstrip("…").rstrip())


@given(st.sampled_from(["answer", "search", "pay", "doc", "help"]), st.floats(0, 600))
def test_every_step_title_reaches_slack_escaped_once(kind: str, seconds: float) -> None:
    """Each title a step can have is plain text; the chunk escapes it once ("&" → "&amp;")."""
    quota = Fallback(reason="answer_quota", limit="day")
    titles = [
        step_title(kind),
        wait_title(seconds),
        fallback_title(quota),
        verify_title(2),
        verify_summary(None),
    ]
    for title in filter(None, titles):
        sent = task_chunk("s", title, "in_progress")["title"]
        assert "&amp;amp;" not in sent
        assert title == unescaped(sent)


def _passing_errors() -> list[GdocsError]:
    facts = ErrorFacts(Reason.UNAVAILABLE, server="pay", detail="HTTP 500")
    return [
        Unavailable(facts=facts),
        UpstreamTimeout(facts=ErrorFacts(Reason.TIMED_OUT, seconds=30)),
        ProtocolError(facts=ErrorFacts(Reason.UNREADABLE, detail="HTTP 200 <html>")),
    ]


def _no_double_escape_nor_live_markup(message: Message) -> None:
    for text in mrkdwn_texts(message):
        assert "&amp;amp;" not in text
        assert "<!" not in text
        assert "<@" not in text


@given(UNTRUSTED, st.sampled_from(range(3)))
def test_an_error_says_one_sentence_escaped_once_whatever_was_asked(asked: str, which: int) -> None:
    """The error quotes the question and says its sentence once, with no HTTP detail."""
    error = _passing_errors()[which]
    message = render_error(error, question=asked, retry=f"private {asked}")
    _no_double_escape_nor_live_markup(message)
    sentence = message["text"]
    assert "HTTP" not in sentence
    assert 1 == sentence.count("try again")
    assert "HTTP" not in message["blocks"][0]["text"]["text"]


@given(UNTRUSTED)
def test_the_progress_note_quotes_the_question_escaped_once(asked: str) -> None:
    _no_double_escape_nor_live_markup(render_progress(asked))
