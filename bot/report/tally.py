"""Per-day counters for `gdocs-bot report`, written by the bot as it works.

Key: `report:<pacific day>:<name>` (the quota's day: Google's 50 reset at midnight
Pacific), an integer, kept as long as the answer records: `min(FEEDBACK_RETENTION_DAYS, 30)`
days from the day's first count. Names (nothing that identifies a person or a channel):

- `questions` — questions the bot took (routed to an answer, a search or Pay; help, quota
  and whole documents are not questions);
- `generated`, `search:<why>` — how they were answered (see `bot.report.outcome`);
- `failed` (an error was posted instead), `rate_limited` (the person's rate limit);
- `reuse:exact|normalised|shared` — answered from what was kept or computed for another;
- `answer_query:made`, `answer_query:refused` — generated-answer calls sent, and those the
  server refused (429).

A count that cannot be written is lost, never the question's answer (a debug line says so).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from bot import keys
from bot.feedback import DAY_SECONDS, VOTING_WINDOW_DAYS
from bot.quota import pacific_day
from bot.store import Op, Store, StoreError, WriteBehind

logger = logging.getLogger(__name__)

PREFIX = keys.REPORT.prefix
QUESTIONS = "questions"
FAILED = "failed"
RATE_LIMITED = "rate_limited"
ANSWER_QUERY_MADE = "answer_query:made"
ANSWER_QUERY_REFUSED = "answer_query:refused"


def tally_days(retention_days: int) -> int:
    """How many days the counters (and the answer records they go with) are kept."""
    return min(retention_days, VOTING_WINDOW_DAYS)


def counter_key(day: str, name: str) -> str:
    return f"{PREFIX}{day}:{name}"


def parse_key(key: str) -> tuple[str, str] | None:
    """(day, name) of a counter key, None for anything else under the prefix."""
    rest = key.removeprefix(PREFIX)
    day, _, name = rest.partition(":")
    if len(day) != 10 or not name:
        return None
    return day, name


class DailyTally:
    """`await tally.count("questions")`: one more on today's (Pacific) counter."""

    def __init__(
        self,
        store: Store,
        *,
        retention_days: int,
        clock: Callable[[], datetime],
        behind: WriteBehind | None = None,
    ) -> None:
        self._store = store
        #: where counts wait to ride another batch (None: each count is a batch of its own)
        self._behind = behind
        self._clock = clock
        self.ttl = tally_days(retention_days) * DAY_SECONDS

    async def count(self, *names: str) -> None:
        """One more on each of `names`: queued for the next batch when the bot defers
        writes (`WriteBehind`), else in one store batch of their own."""
        if not names:
            return
        if self._behind is not None:
            self._behind.add(self.ops(*names))
            return
        try:
            await self._store.batch(self.ops(*names))
        except StoreError as exc:
            logger.debug("report count not kept: %s", exc.message)

    def ops(self, *names: str) -> list[Op]:
        """The counts as batch operations, for a question's own batch (its "done" marker)."""
        day = pacific_day(self._clock())
        return [Op.incr(counter_key(day, name), 1, self.ttl) for name in names]
