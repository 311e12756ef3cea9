"""The governor's values, where the ledger keeps them in the store, and Pacific days. Midnight
never falls in a daylight-saving change there, so "the next midnight" is one instant (in UTC)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from bot import keys

Limit = Literal["minute", "day", "user", "unknown"]
PauseKind = Literal["minute", "day", "unknown"]
_PAUSE_KINDS: dict[str, PauseKind] = {"minute": "minute", "day": "day", "unknown": "unknown"}
PACIFIC = ZoneInfo("America/Los_Angeles")

WINDOW_SECONDS = 60.0
#: a minute slot frees this long after Google's 60 s: Google counts a call from its arrival
SLOT_MARGIN_SECONDS = 1.0
LEDGER_WINDOW_SECONDS = WINDOW_SECONDS + SLOT_MARGIN_SECONDS
PAUSE_KEY = keys.QUOTA.key("pause")
MINUTE_KEY = keys.QUOTA.key("minute")


@dataclass(frozen=True)
class QuotaConfig:
    """The limits the bot keeps to; 0 turns per_minute, per_day or per_user_per_day off."""

    per_minute: int = 10
    per_day: int = 50
    per_user_per_day: int = 10
    #: wait for the minute window when it opens within this many seconds (0: never wait)
    wait_seconds: float = 10.0
    #: how long a 429 that does not say which limit pauses answer_query
    unknown_pause_seconds: float = 60.0
    #: how long "no pause" read from the store is trusted (0: read before every call)
    pause_check_seconds: float = 0.0
    #: after a 429, search instead of answer_query until the limit resets
    skip_until_reset: bool = True


@dataclass(frozen=True)
class Permit:
    """answer_query may go out now, counted (`counted` False: the ledger was unreachable)."""

    counted: bool = True
    #: the permit's time in the minute window (seconds since the epoch; None: not recorded)
    stamp: float | None = None


@dataclass(frozen=True)
class Refusal:
    """Not now: which limit, until when, and (a minute opening soon) how long to wait."""

    limit: Limit
    until: datetime
    wait: float | None = None
    limit_value: int | None = None


@dataclass(frozen=True)
class Pause:
    """The server said no: answer_query waits until `until` (`limit_value` as the 429 gave it)."""

    kind: PauseKind
    until: datetime
    limit_value: int | None = None


@dataclass(frozen=True)
class QuotaState:
    """Where the team stands; `*_left_*` are None for a limit not enforced (or no user given)."""

    per_minute: int
    per_day: int
    per_user_per_day: int
    used_today: int
    left_today: int | None
    used_this_minute: int
    left_this_minute: int | None
    #: when the next call may go out (a pause ends, a minute slot frees); None: now
    next_slot: datetime | None
    user_used_today: int | None
    user_left_today: int | None
    pause: Pause | None
    next_reset: datetime


def day_key(day: str) -> str:
    return keys.QUOTA.key("day", day)


def day_ttl(now: datetime) -> float:
    """A day's counters outlive its reset by a day (for `gdocs-bot check` after midnight)."""
    return (next_pacific_midnight(now) - now).total_seconds() + 86_400.0


def read_pause(value: Any) -> Pause | None:
    """A stored pause, or None for anything unreadable (another version wrote it)."""
    try:
        kind, until = _PAUSE_KINDS[value["kind"]], datetime.fromtimestamp(value["until"], UTC)
    except (TypeError, KeyError, ValueError, OverflowError, OSError):
        return None
    size = value.get("limit_value")
    return Pause(kind, until, size if isinstance(size, int) and size > 0 else None)


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


def _pacific_date(now: datetime) -> date:  # a naive `now` is UTC
    return (now if now.tzinfo is not None else now.replace(tzinfo=UTC)).astimezone(PACIFIC).date()


def next_pacific_midnight(now: datetime) -> datetime:
    """The first 00:00 America/Los_Angeles strictly after `now`, in UTC."""
    day = _pacific_date(now) + timedelta(days=1)
    return datetime.combine(day, time(0), tzinfo=PACIFIC).astimezone(UTC)


def pacific_day(now: datetime) -> str:
    """The Pacific calendar day `now` falls in, e.g. "2026-12-01": the ledger's day key."""
    return _pacific_date(now).isoformat()
