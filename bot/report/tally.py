"""Per-day counters for `gdocs-bot report`, written by the bot as it works, and how one answered
question is classified (shared by the bot and the report, so both say the same)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Final

from bot import keys
from bot.feedback import DAY_SECONDS, VOTING_WINDOW_DAYS
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
SEARCH_WHY: Final = tuple(WHY_WORDS)
REUSE_KINDS: Final = ("exact", "normalised", "shared")
_QUOTA = {"minute": "quota_minute", "day": "quota_day", "user": "quota_user"}


def classify(kind: str, fallback: str | None, route: str | None) -> str:
    """ "generated", or "search:<why>" for a search reply. `kind`: what came back (answer,
    search, pay); `fallback`: the record's label ("answer_quota:day", …); `route`: the route."""
    if kind == "answer":
        return GENERATED
    if fallback is not None and fallback.startswith("answer_quota:"):
        why = _QUOTA.get(fallback.partition(":")[2], "quota_other")
    elif fallback is not None:
        why = "other"
    else:
        why = "pay" if kind == "pay" or route == "pay" else "keyword"
    return "search:" + why


def wanted_an_answer(route: str | None, fallback: str | None) -> bool:
    """Routed to a generated answer but got search only (a gap), unlike a keyword lookup."""
    return route == "answer" or (fallback is not None and fallback.startswith("answer_quota"))


def answered_counts(
    kind: str, fallback: str | None, route: str | None, reuse: str | None
) -> list[str]:
    """The per-day counter names one answered question adds to (besides `questions`)."""
    names = [classify(kind, fallback, route)]
    if reuse in REUSE_KINDS:
        names.append(f"reuse:{reuse}")
    return names


def tally_days(retention_days: int) -> int:
    """How many days the counters (and the answer records they go with) are kept."""
    return min(retention_days, VOTING_WINDOW_DAYS)


def parse_key(key: str) -> tuple[str, str] | None:
    """(day, name) of a counter key, None for anything else under the prefix."""
    day, _, name = key.removeprefix(PREFIX).partition(":")
    return (day, name) if len(day) == 10 and name else None


class DailyTally:
    """`await tally.count("questions")`: one more on today's (Pacific) counter."""

    def __init__(self, store: Store, *, retention_days: int, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock
        self.ttl = tally_days(retention_days) * DAY_SECONDS

    async def count(self, *names: str) -> None:
        """One more on each of `names`, in one store batch."""
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
