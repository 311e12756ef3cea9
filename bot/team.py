"""Team answers: what the team settled, given before Google's docs are asked. Saved from a
message (the `save_team_answer` shortcut) or approved from a 👎 suggestion (a draft); found
by the normalised question (the cache's `question_key`) or one of its "also answers"
phrasings, where its visibility allows. Kept in the store, shared by replicas:
`team:<id>` (the answer), `team_q:<where>:<hash of the normalised question>` (its index
entries), `team_used:<id>` (how often it was given). Each is its installation's
(`tenant.current()`; "" with one token, whose keys and records are as they always were):
no other installation finds, lists, opens or counts it."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot import keys, tenant
from bot.errors import ErrorFacts, InvalidInput, Reason
from bot.models import TeamMark
from bot.store import TEXT, ModelCodec, Op, Store, on_primary

Visibility = Literal["channel", "workspace"]
Status = Literal["approved", "draft"]

#: bounds on what people type (the modal says so before saving)
MAX_QUESTION_CHARS = 500
MAX_ANSWER_CHARS = 8_000
MAX_PHRASINGS = 5
#: at most this many team answers (drafts included) per installation; saving past it is refused
MAX_TEAM_ANSWERS = 1_000
#: and every installation's together (what a scan reads; the keys are never evicted)
MAX_ALL_TEAM_ANSWERS = 10 * MAX_TEAM_ANSWERS
#: a draft nobody approved is dropped after this many days
DRAFT_DAYS = 30
#: an approved team answer is kept this long past its review date when nobody edits it
KEPT_PAST_REVIEW_DAYS = 365
#: the `where` of an index entry visible in every channel ("*T123": installation T123's)
EVERYWHERE = "*"
#: a save (or a management read) waits this long for the shared store before saying it
#: could not: a modal's answer is due within Slack's 3 s
WRITE_TIMEOUT_SECONDS = 2.0
_DAY = 86_400.0


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
    #: the installation it was saved under (`tenant.current()`); "" with one token, and then
    #: left out of the stored record and the export, which read as they always did
    workspace: str = Field("", exclude_if=lambda kept: not kept)

    def visible_in(self, channel: str | None, workspace: str) -> bool:
        """Whether it may be shown in `channel` of installation `workspace` (channel None:
        outside Slack, e.g. the CLI, where only workspace-wide answers show)."""
        if self.status != "approved" or self.workspace != workspace:
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
    """The team answers in the store. All but `find` and `count_use` (giving an answer) go
    to a ResilientStore's primary, never its stand-in, and raise `StoreUnavailable` when it
    does not answer: nothing is kept silently, and an empty stand-in is never shown as "none
    saved". `find` reads through `store` (a store that is down finds nothing: ask Google)."""

    store: Store
    review_days: int
    clock: Callable[[], datetime]

    async def save(self, answer: TeamAnswer) -> TeamAnswer:
        """Keep `answer` (new, or replacing the one with its id: its old index entries go);
        `InvalidInput` past MAX_TEAM_ANSWERS, or when another approved answer visible in
        the same place already answers one of its phrasings."""
        _check(answer)
        async with on_primary(self.store, WRITE_TIMEOUT_SECONDS) as shared:
            old = await shared.get(keys.TEAM.key(answer.id), _CODEC)
            if old is None:
                kept = await shared.scan(keys.TEAM.prefix, _CODEC, MAX_ALL_TEAM_ANSWERS)
                mine = sum(a.workspace == answer.workspace for _, a in kept)
                if (full := mine >= MAX_TEAM_ANSWERS) or len(kept) >= MAX_ALL_TEAM_ANSWERS:
                    limit = MAX_TEAM_ANSWERS if full else MAX_ALL_TEAM_ANSWERS
                    raise InvalidInput(facts=ErrorFacts(Reason.TEAM_FULL, limit=limit))
            entries = index_keys(answer)
            await self._refuse_clash(shared, answer, entries)
            ttl, used = self._ttl(answer), keys.TEAM_USED.key(answer.id)
            [uses] = await shared.get_many([used], TEXT)
            ops = [Op.delete(k) for k in index_keys(old) - entries] if old else []
            ops.append(Op.set(keys.TEAM.key(answer.id), answer, _CODEC, ttl))
            ops += [Op.set(k, answer.id, TEXT, ttl) for k in sorted(entries)]
            if count := _int(uses):  # the use counter lives as long as its answer
                ops += [Op.delete(used), Op.incr(used, count, ttl)]
            await shared.batch(ops)
        return answer

    async def find(self, question: str, channel: str | None) -> TeamAnswer | None:
        """The approved team answer for `question` visible in `channel` (one saved for that
        channel first, then a workspace one) of this installation; None: ask Google."""
        digest = _digest(question)
        if digest is None:
            return None
        workspace = tenant.current()
        places = [_where(c, workspace) for c in ([channel] if channel else []) + [None]]
        found = await self.store.get_many([keys.TEAM_INDEX.key(w, digest) for w in places], TEXT)
        for answer_id in filter(None, found):
            answer = await self.store.get(keys.TEAM.key(answer_id), _CODEC)
            # an entry outliving an edit that raced it finds nothing it does not answer
            if answer and answer.visible_in(channel, workspace) and digest in _digests(answer):
                return answer
        return None

    async def get(self, answer_id: str) -> TeamAnswer | None:
        """The answer or draft `answer_id`; None when gone or another installation's (a
        button's value is the clicker's to choose)."""
        async with on_primary(self.store, WRITE_TIMEOUT_SECONDS) as shared:
            found = await shared.get(keys.TEAM.key(answer_id), _CODEC)
        return found if found is not None and found.workspace == tenant.current() else None

    async def visible(self, channel: str | None) -> list[TeamAnswer]:
        """The approved answers visible in `channel` (of this installation), by question."""
        shown = [a for a in await self.all() if a.visible_in(channel, tenant.current())]
        return sorted(shown, key=lambda a: (a.question.casefold(), a.id))

    async def all(self, *, every_workspace: bool = False) -> list[TeamAnswer]:
        """Every team answer and draft of this installation (of all: the export, kept in
        the store each serves), oldest first."""
        async with on_primary(self.store, WRITE_TIMEOUT_SECONDS) as shared:
            found = await shared.scan(keys.TEAM.prefix, _CODEC, MAX_ALL_TEAM_ANSWERS)
        mine = (a for _, a in found if every_workspace or a.workspace == tenant.current())
        return sorted(mine, key=lambda a: (a.saved_at, a.id))

    async def remove(self, answer_id: str) -> bool:
        """Drop an answer or a draft and its index entries; False: it was not there."""
        if (old := await self.get(answer_id)) is None:
            return False
        gone = [keys.TEAM.key(answer_id), keys.TEAM_USED.key(answer_id), *index_keys(old)]
        async with on_primary(self.store, WRITE_TIMEOUT_SECONDS) as shared:
            await shared.batch([Op.delete(k) for k in gone])
        return True

    async def approve(self, answer_id: str, answer: TeamAnswer | None = None) -> TeamAnswer | None:
        """A draft becomes a team answer (as edited: `answer`), due for review
        `review_days` from now; None: the draft is gone."""
        if (draft := await self.get(answer_id)) is None:
            return None
        review_at = review_date(self.clock(), self.review_days)
        changes = {"id": answer_id, "status": "approved", "review_at": review_at}
        return await self.save((answer or draft).model_copy(update=changes))

    async def count_use(self, answer_id: str) -> None:
        if (answer := await self.store.get(keys.TEAM.key(answer_id), _CODEC)) is not None:
            await self.store.incr(keys.TEAM_USED.key(answer_id), 1, self._ttl(answer))

    async def uses(self, ids: list[str]) -> dict[str, int]:
        async with on_primary(self.store, WRITE_TIMEOUT_SECONDS) as shared:
            counts = await shared.get_many([keys.TEAM_USED.key(i) for i in ids], TEXT)
        return {i: _int(n) for i, n in zip(ids, counts, strict=True)}

    # --- helpers -------------------------------------------------------------------------
    def _ttl(self, answer: TeamAnswer) -> float:
        """Seconds `answer` (and its index entries and counter) are kept from now."""
        now = self.clock()
        if answer.status == "draft":
            return DRAFT_DAYS * _DAY
        until = answer.review_at + timedelta(days=KEPT_PAST_REVIEW_DAYS)
        return max((until - now).total_seconds(), _DAY)  # one imported long past: a day

    async def _refuse_clash(self, shared: Store, answer: TeamAnswer, entries: set[str]) -> None:
        holders = await shared.get_many(sorted(entries), TEXT)
        for other_id in {h for h in holders if h and h != answer.id}:
            other = await shared.get(keys.TEAM.key(other_id), _CODEC)
            if other is not None and other.status == "approved" and index_keys(other) & entries:
                facts = ErrorFacts(Reason.TEAM_CLASH, user_text=other.question[:120])
                raise InvalidInput(facts=facts)


_CODEC: ModelCodec[TeamAnswer] = ModelCodec(TeamAnswer)
#: an id goes into keys and Slack button values: new_team_id's alphabet
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _digest(text: str) -> str | None:
    """The hash of `text`'s normalised form (the cache's); None when nothing is left."""
    from bot.upstream import question_key  # the docs client loads only when a question does

    key = question_key(text)
    return hashlib.sha256(key.encode()).hexdigest() if key else None


def _digests(answer: TeamAnswer) -> set[str]:
    return {d for p in (answer.question, *answer.also) if (d := _digest(p)) is not None}


def index_keys(answer: TeamAnswer) -> set[str]:
    """The index entries that find `answer`: one per phrasing, none for a draft."""
    if answer.status != "approved":
        return set()
    channel = answer.channel if answer.visibility == "channel" else None
    return {keys.TEAM_INDEX.key(_where(channel, answer.workspace), d) for d in _digests(answer)}


def _where(channel: str | None, workspace: str) -> str:
    """An index entry's place: `channel` (None: every channel) of installation `workspace`,
    named apart from another's even in a channel both share (Slack Connect): "C1@T1"."""
    if channel is None:
        return EVERYWHERE + workspace
    return f"{channel}@{workspace}" if workspace else channel


def _check(answer: TeamAnswer) -> None:
    """InvalidInput for what the model's bounds let through or a caller built around them."""
    if not _ID.fullmatch(answer.id):
        raise InvalidInput("id: 1 to 64 letters, digits, - or _")
    if answer.saved_at.tzinfo is None or answer.review_at.tzinfo is None:
        raise InvalidInput("saved_at and review_at need a time zone")
    if answer.visibility == "channel" and not answer.channel:
        raise InvalidInput("a team answer for one channel needs that channel")
    if _digest(answer.question) is None or not answer.answer.strip():
        raise InvalidInput(facts=ErrorFacts(Reason.TEAM_EMPTY))
    bounds: Sequence[tuple[str, int, int]] = [
        ("question", len(answer.question), MAX_QUESTION_CHARS),
        ("answer", len(answer.answer), MAX_ANSWER_CHARS),
        ("list of also answers", len(answer.also), MAX_PHRASINGS),
        *(("also answers phrasing", len(p), MAX_QUESTION_CHARS) for p in answer.also),
    ]
    for name, count, limit in bounds:
        if count > limit:
            facts = ErrorFacts(Reason.TEAM_TOO_LONG, name=name, count=count, limit=limit)
            raise InvalidInput(facts=facts)


def _int(raw: str | None) -> int:
    """A counter (memory:// keeps incr's int as it is); anything else counts none."""
    try:
        return int(raw) if raw is not None else 0
    except ValueError:
        return 0
