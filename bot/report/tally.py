"""The report's figures: the per-day counters the bot writes as it works, how an answered
question is classified (the bot and the report say the same), and the rows a report shows."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from bot import keys
from bot.feedback import DAY_SECONDS, VOTING_WINDOW_DAYS
from bot.models import Scope
from bot.products import names
from bot.quota import pacific_day
from bot.store import Op, Store, StoreError

logger = logging.getLogger(__name__)

PREFIX = keys.REPORT.prefix
QUESTIONS = "questions"
FAILED = "failed"
RATE_LIMITED = "rate_limited"
ANSWER_QUERY_MADE = "answer_query:made"
ANSWER_QUERY_REFUSED = "answer_query:refused"
GENERATED: Final = "generated"
#: a team answer given (bot/team.py); and given where answer_query would have been asked
#: (no generated answer for the question in the cache): one generated answer saved
TEAM_USED: Final = "team:used"
TEAM_SAVED: Final = "team:saved"
#: a question from another organisation's guest, refused (bot/slack/guests.py): not one of
#: the questions, and counted without who asked or what
GUEST_REFUSED: Final = "guest:refused"
#: the `tool` of an answer the team saved (an `Answer` with `team` set): not generated
TEAM_TOOL: Final = "team_answer"
#: the reasons a question got search results only, in the order reports list them
WHY_WORDS: Final = {
    "quota_minute": "quota: minute",
    "quota_day": "quota: day",
    "quota_user": "per-person cap",
    "quota_other": "quota: other",
    "keyword": "keyword lookup",
    "pay": "Pay docs search",
    "other": "no answer tool",
}
REUSE_KINDS: Final = ("exact", "normalised", "shared")
#: a question limited to products: `scope:android+firebase` (none counted for all products)
SCOPE_PREFIX: Final = "scope:"
#: the report's row of the questions limited to no product
UNSCOPED: Final = "all products"
_QUOTA = {"minute": "quota_minute", "day": "quota_day", "user": "quota_user"}


GAP_WORDS = {
    "search_only": "search only",
    "no_hit": "no hit",
    "thumbs_down": "voted down",
    "not_found": "a command not in the cited pages",
}


@dataclass(frozen=True)
class DayRow:
    """One Pacific day (or the window's total, day "total"), as the JSON report has it."""

    day: str
    questions: int
    generated: int
    search_only: int
    #: by why (WHY_WORDS)
    search_only_why: dict[str, int]
    failed: int
    rate_limited: int
    #: calls "made" and "refused"
    answer_query: dict[str, int]
    reuse: dict[str, int]
    #: team answers "used" (given), and "saved" (given where answer_query would have been)
    team: dict[str, int] = field(default_factory=dict)
    #: questions from other organisations' guests, refused (EXTERNAL_USERS=deny)
    guest_refused: int = 0

    @property
    def unanswered(self) -> int:
        """Questions that got neither an answer nor search results (an error, a rate limit)."""
        return self.failed + self.rate_limited


@dataclass(frozen=True)
class TopicRow:
    topic: str
    asked: int
    generated: int
    search_only: int
    #: the latest wording asked (no mentions, cut short)
    example: str
    #: given the team's answer
    team: int = 0


@dataclass(frozen=True)
class GapRow:
    topic: str
    count: int
    #: gap events by reason (GAP_WORDS)
    reasons: dict[str, int]
    example: str
    #: the 👎 comments given (distinct, cut short)
    comments: tuple[str, ...] = ()
    #: commands the verified-answers check did not find in the cited pages
    flagged_commands: tuple[str, ...] = ()


@dataclass(frozen=True)
class PageRow:
    url: str
    cited: int
    listed: int


@dataclass(frozen=True)
class VoteRow:
    kind: str
    up: int
    down: int


@dataclass(frozen=True)
class Report:
    since: str
    until: str
    #: ANSWER_QUOTA_PER_DAY (0: the bot sets no daily limit)
    quota_per_day: int
    days: tuple[DayRow, ...]
    total: DayRow
    topics: tuple[TopicRow, ...]
    gaps: tuple[GapRow, ...]
    pages: tuple[PageRow, ...]
    votes: tuple[VoteRow, ...]
    #: how many channels (and DMs) answers went to
    channels: int
    #: answers per channel id (DMs together as "direct messages"); None unless asked for
    by_channel: dict[str, int] | None = None
    #: questions by the products they were limited to (UNSCOPED: none); {}: none was
    by_product: dict[str, int] = field(default_factory=dict)


def classify(kind: str, fallback: str | None, route: str | None, tool: str | None = None) -> str:
    """ "generated", TEAM_USED for the team's answer, or "search:<why>" for a search reply.
    `kind`: what came back (answer, search, pay); `fallback`: the record's label
    ("answer_quota:day", …); `route`: the route; `tool`: the answer's tool."""
    if tool == TEAM_TOOL:
        return TEAM_USED
    if kind == "answer":
        return GENERATED
    if fallback is not None and fallback.startswith("answer_quota:"):
        why = _QUOTA.get(fallback.partition(":")[2], "quota_other")
    elif fallback is not None:
        why = "other"
    else:
        why = "pay" if kind == "pay" or route == "pay" else "keyword"
    return "search:" + why


def answered_counts(
    kind: str, fallback: str | None, route: str | None, reuse: str | None, tool: str | None = None
) -> list[str]:
    """The per-day counter names one answered question adds to (besides `questions`). The
    team's answer (`tool` TEAM_TOOL) adds none: the flow that gives it counts TEAM_USED, and
    TEAM_SAVED when no generated answer was kept for the question."""
    if tool == TEAM_TOOL:
        return []
    names = [classify(kind, fallback, route)]
    if reuse in REUSE_KINDS:
        names.append(f"reuse:{reuse}")
    return names


def scope_counts(scope: Scope) -> list[str]:
    """The counter a question limited to `scope` adds to (none for all products)."""
    return [SCOPE_PREFIX + "+".join(names(scope))] if scope else []


class DailyTally:
    """`await tally.count("questions")`: one more on today's (Pacific) counter."""

    def __init__(self, store: Store, *, retention_days: int, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock
        # kept as long as the answer records they go with
        self.ttl = min(retention_days, VOTING_WINDOW_DAYS) * DAY_SECONDS

    async def count(self, *names: str) -> None:
        if not names:
            return
        try:
            await self._store.batch(self.ops(*names))
        except StoreError as exc:
            logger.debug("report count not kept: %s", exc.message)

    def ops(self, *names: str) -> list[Op]:
        """The counts as batch operations, for a question's own batch (its "done" marker)."""
        day = pacific_day(self._clock())
        return [Op.incr(f"{PREFIX}{day}:{name}", 1, self.ttl) for name in names]
