"""Google's daily quotas reset at midnight Pacific time (America/Los_Angeles), not UTC.

The zone comes from zoneinfo: the system's database, or the `tzdata` package on slim images
without /usr/share/zoneinfo. Midnight never falls in a daylight-saving gap or overlap there
(the clocks change at 02:00), so "the next midnight" is always one well-defined instant; it
is returned in UTC so that subtracting another aware datetime gives real elapsed time
(Python subtracts two datetimes of the same zone by wall clock, which is wrong across a
change).

Both answers are the same for every instant of one UTC minute (the zone's offsets are whole
hours, so midnight there starts a minute here): they are worked out once per minute, not
once per call (the ledger asks on every answer_query call; a zone conversion is not free).
"""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

PACIFIC = ZoneInfo("America/Los_Angeles")


def _aware(now: datetime) -> datetime:
    """`now` as an aware datetime; a naive one is taken to be UTC."""
    return now if now.tzinfo is not None else now.replace(tzinfo=UTC)


def _minute(now: datetime) -> int:
    """The UTC minute `now` falls in (minutes since the epoch)."""
    return int(_aware(now).timestamp() // 60)


def next_pacific_midnight(now: datetime) -> datetime:
    """The first 00:00 America/Los_Angeles strictly after `now`, in UTC."""
    return _midnight_after(_date_of(_minute(now)))


def pacific_day(now: datetime) -> str:
    """The Pacific calendar day `now` falls in, e.g. "2026-12-01": the quota ledger's day key."""
    return _date_of(_minute(now)).isoformat()


@functools.lru_cache(maxsize=4)
def _date_of(minute: int) -> date:
    """The Pacific calendar day of a UTC minute."""
    return datetime.fromtimestamp(minute * 60, UTC).astimezone(PACIFIC).date()


@functools.lru_cache(maxsize=4)
def _midnight_after(day: date) -> datetime:
    """The 00:00 that ends Pacific day `day`, in UTC."""
    return datetime.combine(day + timedelta(days=1), time(0), tzinfo=PACIFIC).astimezone(UTC)
