"""Google's daily quotas reset at midnight Pacific time (America/Los_Angeles), not UTC.

The zone comes from zoneinfo: the system's database, or the `tzdata` package on slim images
without /usr/share/zoneinfo. Midnight never falls in a daylight-saving gap or overlap there
(the clocks change at 02:00), so "the next midnight" is always one well-defined instant; it
is returned in UTC so that subtracting another aware datetime gives real elapsed time
(Python subtracts two datetimes of the same zone by wall clock, which is wrong across a
change).
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

PACIFIC = ZoneInfo("America/Los_Angeles")


def _aware(now: datetime) -> datetime:
    """`now` as an aware datetime; a naive one is taken to be UTC."""
    return now if now.tzinfo is not None else now.replace(tzinfo=UTC)


def next_pacific_midnight(now: datetime) -> datetime:
    """The first 00:00 America/Los_Angeles strictly after `now`, in UTC."""
    tomorrow = _aware(now).astimezone(PACIFIC).date() + timedelta(days=1)
    return datetime.combine(tomorrow, time(0), tzinfo=PACIFIC).astimezone(UTC)


def pacific_day(now: datetime) -> str:
    """The Pacific calendar day `now` falls in, e.g. "2026-12-01": the quota ledger's day key."""
    return _aware(now).astimezone(PACIFIC).date().isoformat()
