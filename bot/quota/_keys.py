"""Where the ledger keeps things in the store, and how stored values are read back."""

from __future__ import annotations

from datetime import UTC, datetime

from bot import keys
from bot.quota._types import PAUSE_KINDS, Pause

WINDOW_SECONDS = 60.0
#: a minute slot is freed this long after Google's 60 s: Google counts a call from its
#: arrival, a few ms after the ledger's permit (bench/FINDINGS.md, the day scenario, item 2)
SLOT_MARGIN_SECONDS = 1.0
#: the window the ledger keeps its permits in
LEDGER_WINDOW_SECONDS = WINDOW_SECONDS + SLOT_MARGIN_SECONDS
PAUSE_KEY = keys.QUOTA.key("pause")
MINUTE_KEY = keys.QUOTA.key("minute")


def day_key(day: str) -> str:
    return keys.QUOTA.key("day", day)


def day_ttl(now: datetime, reset: datetime) -> float:
    """A day's counters outlive its reset by a day (for `gdocs-bot check` after midnight)."""
    return (reset - now).total_seconds() + 86_400.0


def read_pause(value: object) -> Pause | None:
    """A stored pause, or None for anything unreadable (another version wrote it)."""
    if not isinstance(value, dict):
        return None
    kind, until = PAUSE_KINDS.get(str(value.get("kind"))), value.get("until")
    if kind is None or not isinstance(until, int | float) or isinstance(until, bool):
        return None
    size = value.get("limit_value")
    known = isinstance(size, int) and not isinstance(size, bool) and size > 0
    return Pause(kind, datetime.fromtimestamp(until, UTC), size if known else None)


def minute_room(
    limit: int, events: list[float], pause: Pause | None
) -> tuple[int | None, datetime | None]:
    """(calls left this minute, when the next slot frees) from the window's call times;
    (None, None) when the bot does not limit the minute."""
    if pause is not None:  # nothing goes out while paused, whatever the window says
        return (0 if limit else None), pause.until
    if not limit:
        return None, None
    left = max(0, limit - len(events))
    if left:
        return left, None
    # the window admits a call once all but limit-1 of its events have left it
    frees = events[len(events) - limit] + LEDGER_WINDOW_SECONDS
    return 0, datetime.fromtimestamp(frees, UTC)
