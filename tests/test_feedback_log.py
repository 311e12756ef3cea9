"""What the bot keeps for feedback and the Home tab, in a real SQLite store with a moving
clock: answer records for the voting window, votes for the retention, recent questions
bounded to ten."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.feedback import AnswerRecord, FeedbackLog, answer_record
from bot.models import Answer, Reference, SearchHit
from bot.slack.memory import MAX_RECENT_CHARS, RecentQuestions
from bot.store import SqliteStore

START = datetime(2026, 11, 3, 15, 30, tzinfo=UTC)
DAY = timedelta(days=1)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def seconds(self) -> float:
        return self.now.timestamp()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def store(tmp_path: Path, clock: Clock) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "state.db", clock=clock.seconds)
    yield opened
    await opened.aclose()


def _answer() -> Answer:
    ref = Reference(name="documents/a.dev/x", uri="https://a.dev/x", title="X")
    return Answer(query="how?", kind="answer", text="Do **this**.", references=(ref, ref))


def _record(answer: Answer | None = None) -> AnswerRecord:
    return answer_record(
        answer or _answer(),
        answer_id="A1",
        channel="C1",
        ts="1.2",
        thread_ts=None,
        asker="U1",
        now=START,
    )


def test_a_search_reply_is_kept_as_its_hits_and_their_urls() -> None:
    """Search replies have no answer text: the hits (title, URL, snippet) stand for it."""
    hits = tuple(SearchHit(title=f"T{i}", uri=f"https://a.dev/{i}", snippet="s") for i in (1, 2))
    record = answer_record(
        Answer(query="q", kind="search", hits=hits, tool="search_documents"),
        answer_id="A2",
        channel="D1",
        ts="1.3",
        thread_ts=None,
        asker=None,
        now=START,
    )
    assert ("https://a.dev/1", "https://a.dev/2") == record.references
    assert "T1\nhttps://a.dev/1\ns\n\nT2\nhttps://a.dev/2\ns" == record.answer
    assert ("search", "search_documents") == (record.kind, record.tool)


def test_answer_references_are_kept_once_each() -> None:
    """A reference cited twice is one URL in the record."""
    assert ("https://a.dev/x",) == answer_record(
        _answer(), answer_id="A", channel=None, ts=None, thread_ts=None, asker=None, now=START
    ).references


async def test_answers_take_votes_for_30_days_and_votes_last_the_retention(
    store: SqliteStore, clock: Clock
) -> None:
    """With the default 180 days: the answer record is gone after 30 days, its vote stays
    until day 180."""
    log = FeedbackLog(store, retention_days=180, clock=clock)
    record = _record()
    await log.keep_answer(record)
    await log.record_vote(record, "up", "U2")

    clock.now = START + 29 * DAY
    assert await log.answer("A1") is not None
    clock.now = START + 31 * DAY
    assert await log.answer("A1") is None
    assert ["up"] == [v.vote for v in await log.votes()]
    clock.now = START + 181 * DAY
    assert [] == await log.votes()


async def test_a_short_retention_bounds_the_answer_records_too(
    store: SqliteStore, clock: Clock
) -> None:
    """FEEDBACK_RETENTION_DAYS=7: neither record outlives a week."""
    log = FeedbackLog(store, retention_days=7, clock=clock)
    record = _record()
    await log.keep_answer(record)
    await log.record_vote(record, "down", "U2")
    clock.now = START + 8 * DAY
    assert (None, []) == (await log.answer("A1"), await log.votes())


async def test_a_comment_stays_with_its_vote_until_the_vote_changes_direction(
    store: SqliteStore, clock: Clock
) -> None:
    """👎 with a note, 👎 again: the note stays; then 👍: the note goes with the 👎."""
    log = FeedbackLog(store, retention_days=180, clock=clock)
    record = _record()
    await log.record_vote(record, "down", "U2", comment="outdated")
    clock.now = START + timedelta(minutes=1)
    again = await log.record_vote(record, "down", "U2")
    assert ("outdated", START + timedelta(minutes=1)) == (again.comment, again.time)
    flipped = await log.record_vote(record, "up", "U2")
    assert ("up", "") == (flipped.vote, flipped.comment)
    assert 1 == len(await log.votes())


async def test_recent_questions_are_the_last_ten_newest_first_without_repeats(
    store: SqliteStore, clock: Clock
) -> None:
    """Twelve questions keep the last ten; asking one again moves it up instead of
    listing it twice; a long one is cut; another person's list is their own."""
    recent = RecentQuestions(store, clock)
    for i in range(12):
        clock.now = START + timedelta(minutes=i)
        await recent.remember("U1", f"question {i}")
    await recent.remember("U1", "question 5")
    await recent.remember("U1", "x" * 2000)
    await recent.remember("U2", "mine")

    texts = [asked.text for asked in await recent.of("U1")]
    assert 10 == len(texts)
    assert len(texts[0]) == MAX_RECENT_CHARS
    assert ["question 5", "question 11", "question 10"] == texts[1:4]
    assert "question 1" not in texts
    assert ["mine"] == [asked.text for asked in await recent.of("U2")]


async def test_recent_questions_expire_30_days_after_the_last_one(
    store: SqliteStore, clock: Clock
) -> None:
    """The list lives 30 days from the person's latest question."""
    recent = RecentQuestions(store, clock)
    await recent.remember("U1", "old")
    clock.now = START + 20 * DAY
    await recent.remember("U1", "newer")
    clock.now = START + 45 * DAY
    assert ["newer", "old"] == [a.text for a in await recent.of("U1")]
    clock.now = START + 51 * DAY
    assert [] == await recent.of("U1")
