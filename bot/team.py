"""Team answers: what the team settled, given before Google's docs are asked. Saved from a
message (the `save_team_answer` shortcut) or approved from a 👎 suggestion (a draft); found
by the normalised question (the cache's `question_key`) or one of its "also answers"
phrasings, where its visibility allows. Kept in the store, shared by replicas:
`team:<id>` (the answer), `team_q:<where>:<hash of the normalised question>` (its index
entries), `team_used:<id>` (how often it was given)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.models import TeamMark

Visibility = Literal["channel", "workspace"]
Status = Literal["approved", "draft"]

#: bounds on what people type (the modal says so before saving)
MAX_QUESTION_CHARS = 500
MAX_ANSWER_CHARS = 8_000
MAX_PHRASINGS = 5
#: at most this many team answers (drafts included) are kept; saving past it is refused
MAX_TEAM_ANSWERS = 1_000
#: a draft nobody approved is dropped after this many days
DRAFT_DAYS = 30
#: an approved team answer is kept this long past its review date when nobody edits it
KEPT_PAST_REVIEW_DAYS = 365
#: the `where` of an index entry visible in every channel of the workspace
EVERYWHERE = "*"


class TeamAnswer(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="ignore")

    id: str
    question: str = Field(max_length=MAX_QUESTION_CHARS)
    #: other phrasings it answers ("also answers"), each found like the question
    also: tuple[str, ...] = Field((), max_length=MAX_PHRASINGS)
    #: Markdown as the team wrote it (escaped when shown, like any untrusted text)
    answer: str = Field(max_length=MAX_ANSWER_CHARS)
    author: str  # a Slack user id; for a draft, who suggested it
    saved_at: datetime  # aware UTC
    review_at: datetime  # aware UTC
    #: "channel": only in `channel`; "workspace": everywhere (never for a private channel/DM)
    visibility: Visibility
    channel: str | None = None
    channel_name: str | None = None
    #: the Slack permalink of the message it came from
    permalink: str | None = None
    status: Status = "approved"
    #: a draft's 👎'd answer (its answer record id), for the reviewer's context
    from_answer: str | None = None

    def visible_in(self, channel: str | None) -> bool:
        """Whether it may be shown in `channel` (None: outside Slack, e.g. the CLI, where
        only workspace-wide answers show)."""
        if self.status != "approved":
            return False
        return self.visibility == "workspace" or (channel is not None and channel == self.channel)

    def review_due(self, now: datetime) -> bool:
        return now >= self.review_at

    def mark(self, now: datetime) -> TeamMark:
        """What an `Answer` carries of it."""
        return TeamMark(
            id=self.id,
            author=self.author,
            saved_at=self.saved_at,
            channel=self.channel,
            channel_name=self.channel_name,
            review_due=self.review_due(now),
        )


def new_team_id() -> str:
    return secrets.token_urlsafe(9)


def review_date(now: datetime, review_days: int) -> datetime:
    return now + timedelta(days=review_days)


@dataclass(frozen=True)
class TeamAnswers:
    """The team answers in the store. `save`/`remove`/`approve` raise `StoreUnavailable`
    when the write did not reach the shared store (a ResilientStore serving per-process
    state): the caller tells the person it could not save; nothing is kept silently."""

    store: object  # bot.store.Store (typed loosely here until implemented)
    review_days: int
    clock: Callable[[], datetime]

    async def save(self, answer: TeamAnswer) -> TeamAnswer:
        """Keep `answer` (new, or replacing the one with its id: its old index entries go);
        `InvalidInput` past MAX_TEAM_ANSWERS, or when another approved answer visible in
        the same place already answers one of its phrasings."""
        raise NotImplementedError

    async def find(self, question: str, channel: str | None) -> TeamAnswer | None:
        """The approved team answer for `question` visible in `channel` (one saved for that
        channel first, then a workspace one); None: ask Google."""
        raise NotImplementedError

    async def get(self, answer_id: str) -> TeamAnswer | None:
        raise NotImplementedError

    async def visible(self, channel: str | None) -> list[TeamAnswer]:
        """The approved answers visible in `channel`, by question."""
        raise NotImplementedError

    async def drafts(self) -> list[TeamAnswer]:
        """The drafts waiting for an admin, oldest first."""
        raise NotImplementedError

    async def all(self) -> list[TeamAnswer]:
        """Every team answer and draft (export), oldest first."""
        raise NotImplementedError

    async def remove(self, answer_id: str) -> bool:
        """Drop an answer or a draft and its index entries; False: it was not there."""
        raise NotImplementedError

    async def approve(self, answer_id: str, answer: TeamAnswer | None = None) -> TeamAnswer | None:
        """A draft becomes a team answer (as edited: `answer`); None: the draft is gone."""
        raise NotImplementedError

    async def count_use(self, answer_id: str) -> None:
        raise NotImplementedError

    async def uses(self, ids: list[str]) -> dict[str, int]:
        raise NotImplementedError
