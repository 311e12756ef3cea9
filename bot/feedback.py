"""Votes on the bot's answers, kept as an eval set. `answer_record:<id>`: written when an
answer is posted, kept for the voting window (min(FEEDBACK_RETENTION_DAYS, 30) days);
`feedback:<id>:<voter>`: one vote per person per answer, with a copy of what the eval set
needs of the answer, kept for FEEDBACK_RETENTION_DAYS."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from bot import keys
from bot.models import Answer, SnippetResult, Verification
from bot.store import ModelCodec, Op, Store
from bot.text import truncate

VoteKind = Literal["up", "down"]
DAY_SECONDS = 86_400.0
#: answers take votes for at most this long (or the retention, when it is shorter)
VOTING_WINDOW_DAYS = 30
#: the stored answer text is cut to this many characters (a Slack answer is shorter anyway)
MAX_ANSWER_CHARS = 12_000
MAX_QUESTION_CHARS = 2_000
#: references kept per answer
MAX_REFERENCES = 30
#: commands named in an answer record's `checks` (not found or partly), each cut to
MAX_FLAGGED = 5
MAX_FLAGGED_CHARS = 200
#: most votes one export reads
EXPORT_LIMIT = 100_000
ANSWER_PREFIX = keys.ANSWER_RECORD.prefix
VOTE_PREFIX = keys.FEEDBACK.prefix


class _Record(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="ignore")


class AboutAnswer(_Record):  # what the eval set and the report need (nothing of who asked)
    answer_id: str
    question: str
    kind: str  # "answer", "search" or "pay"
    tool: str | None = None
    answer: str = ""
    references: tuple[str, ...] = ()
    channel: str | None = None
    ts: str | None = None  # the answer message's (None: it went ephemerally)
    route: str | None = None  # "answer", "search", "pay"
    #: why the result is not what was asked for: "answer_quota:<limit>", "no_answer_tool",
    #: "pay_not_configured" (None: it is)
    fallback: str | None = None
    #: how a kept result was reused: "exact", "normalised", "shared"; None: computed for it
    reuse: str | None = None
    hits: int = 0  # in a search reply
    #: its commands checked against the cited pages (`checks_summary`); None: no code
    checks: dict[str, Any] | None = None


class AnswerRecord(AboutAnswer):
    thread_ts: str | None = None  # None: top level of the channel or DM
    asker: str | None = None
    posted_at: datetime


class VoteRecord(AboutAnswer):
    time: datetime  # aware UTC
    vote: VoteKind
    voter: str
    comment: str = ""  # the "what was wrong?" line


_ABOUT_FIELDS: set[str] = set(AboutAnswer.model_fields)
_ANSWER = ModelCodec(AnswerRecord)
_VOTE = ModelCodec(VoteRecord)


def new_answer_id() -> str:
    return secrets.token_urlsafe(12)


def checks_summary(verification: Verification | None) -> dict[str, Any] | None:
    """What the eval set keeps of an answer's check (None when it had no code)."""
    if verification is None or not verification.snippets:
        return None
    flagged = [
        truncate(s.snippet, MAX_FLAGGED_CHARS)
        for s in verification.snippets
        if s.result in ("not_found", "partly")
    ]
    counts = {result: verification.count(result) for result in get_args(SnippetResult)}
    return {**counts, "flagged": flagged[:MAX_FLAGGED]}


def answer_record(
    answer: Answer,
    *,
    answer_id: str,
    channel: str | None,
    ts: str | None,
    thread_ts: str | None,
    asker: str | None,
    now: datetime,
    route: str | None = None,
) -> AnswerRecord:
    """What is kept of `answer` for its votes: its Markdown or its hits, and their URLs."""
    if answer.kind == "answer":
        text = answer.text
        urls = [ref.uri for ref in answer.references]
    else:
        text = "\n\n".join(f"{hit.title}\n{hit.uri}\n{hit.snippet}".strip() for hit in answer.hits)
        urls = [hit.uri for hit in answer.hits]
    return AnswerRecord(
        answer_id=answer_id,
        question=truncate(answer.query, MAX_QUESTION_CHARS),
        kind=answer.kind,
        tool=answer.tool,
        answer=truncate(text, MAX_ANSWER_CHARS),
        references=tuple(dict.fromkeys(urls))[:MAX_REFERENCES],
        checks=checks_summary(answer.verification) if answer.kind == "answer" else None,
        channel=channel,
        ts=ts,
        thread_ts=thread_ts,
        asker=asker,
        posted_at=now,
        route=route,
        fallback=fallback_label(answer),
        reuse=answer.reuse,
        hits=len(answer.hits),
    )


def fallback_label(answer: Answer) -> str | None:
    """The answer's fallback as one label: "answer_quota:day", "no_answer_tool", …"""
    fallback = answer.fallback
    if fallback is None:
        return None
    if fallback.reason == "answer_quota":
        return f"answer_quota:{fallback.limit or 'unknown'}"
    return fallback.reason


class FeedbackLog:
    def __init__(self, store: Store, *, retention_days: int, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock
        self.vote_ttl = retention_days * DAY_SECONDS
        self.answer_ttl = min(retention_days, VOTING_WINDOW_DAYS) * DAY_SECONDS

    async def keep_answer(self, record: AnswerRecord) -> None:
        await self._store.batch([self.answer_op(record)])

    def answer_op(self, record: AnswerRecord) -> Op:
        """The write keeping `record`, for a batch (the question's writes after its answer)."""
        return Op.set(ANSWER_PREFIX + record.answer_id, record, _ANSWER, self.answer_ttl)

    async def answer(self, answer_id: str) -> AnswerRecord | None:
        return await self._store.get(ANSWER_PREFIX + answer_id, _ANSWER)

    async def vote(self, answer_id: str, voter: str) -> VoteRecord | None:
        return await self._store.get(_vote_key(answer_id, voter), _VOTE)

    async def record_vote(
        self, answer: AnswerRecord, vote: VoteKind, voter: str, *, comment: str | None = None
    ) -> VoteRecord:
        """Set `voter`'s vote on `answer`, replacing an earlier one; an earlier comment stays
        while the vote keeps its direction."""
        earlier = await self.vote(answer.answer_id, voter)
        same_way = earlier is not None and earlier.vote == vote
        kept_comment = earlier.comment if earlier is not None and same_way else ""
        record = VoteRecord(
            **answer.model_dump(include=_ABOUT_FIELDS),
            time=self._now(),
            vote=vote,
            voter=voter,
            comment=kept_comment if comment is None else comment,
        )
        await self._store.set(_vote_key(answer.answer_id, voter), record, _VOTE, self.vote_ttl)
        return record

    async def votes(self, *, limit: int = EXPORT_LIMIT) -> list[VoteRecord]:
        """Every vote the store holds (up to `limit`), oldest first."""
        found = await self._store.scan(VOTE_PREFIX, _VOTE, limit)
        return sorted((vote for _, vote in found), key=lambda v: (v.time, v.answer_id, v.voter))

    def _now(self) -> datetime:
        now = self._clock()
        return now.astimezone(UTC) if now.tzinfo is not None else now.replace(tzinfo=UTC)


def _vote_key(answer_id: str, voter: str) -> str:
    return f"{VOTE_PREFIX}{answer_id}:{voter}"


def export_object(vote: VoteRecord) -> dict[str, Any]:
    """One line of `gdocs-bot feedback export` (without the voter: it is about answers)."""
    return {
        "time": vote.time.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "vote": vote.vote,
        "question": vote.question,
        "kind": vote.kind,
        "tool": vote.tool,
        "answer": vote.answer,
        "references": list(vote.references),
        "comment": vote.comment,
        "checks": vote.checks,
        "channel": vote.channel,
        "ts": vote.ts,
        "answer_id": vote.answer_id,
    }
