"""Google's daily quota resets at midnight Pacific time: the next reset and the ledger's day key,
right on both 2026 daylight-saving changes and the days around them, with or without the
system's zone database."""

from __future__ import annotations

import zoneinfo
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.quota import PACIFIC, next_pacific_midnight, pacific_day


def _utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("now", "reset"),
    [
        # spring forward, Sunday 8 March 2026: PST (UTC-8) until 02:00, then PDT (UTC-7)
        (_utc(2026, 3, 7, 20, 0), _utc(2026, 3, 8, 8, 0)),  # Sat 12:00 PST
        (_utc(2026, 3, 8, 9, 30), _utc(2026, 3, 9, 7, 0)),  # Sun 01:30 PST, before the change
        (_utc(2026, 3, 8, 10, 30), _utc(2026, 3, 9, 7, 0)),  # Sun 03:30 PDT, after it
        (_utc(2026, 3, 9, 6, 59, 59), _utc(2026, 3, 9, 7, 0)),  # Sun 23:59:59 PDT
        (_utc(2026, 3, 9, 7, 0), _utc(2026, 3, 10, 7, 0)),  # Mon 00:00 PDT: the next one
        (_utc(2026, 3, 9, 19, 0), _utc(2026, 3, 10, 7, 0)),  # Mon noon
        # fall back, Sunday 1 November 2026: PDT until 02:00, then PST again
        (_utc(2026, 10, 31, 19, 0), _utc(2026, 11, 1, 7, 0)),  # Sat 12:00 PDT
        (_utc(2026, 11, 1, 8, 30), _utc(2026, 11, 2, 8, 0)),  # Sun 01:30 PDT (first 01:30)
        (_utc(2026, 11, 1, 9, 30), _utc(2026, 11, 2, 8, 0)),  # Sun 01:30 PST (second 01:30)
        (_utc(2026, 11, 2, 7, 59), _utc(2026, 11, 2, 8, 0)),  # Sun 23:59 PST
        (_utc(2026, 11, 2, 20, 0), _utc(2026, 11, 3, 8, 0)),  # Mon 12:00 PST
        # an ordinary winter day, and UTC midnight is not the reset
        (_utc(2026, 12, 1, 0, 0), _utc(2026, 12, 1, 8, 0)),
    ],
)
def test_next_reset_is_the_next_midnight_in_los_angeles(now: datetime, reset: datetime) -> None:
    """The reset is 00:00 America/Los_Angeles after `now`, whatever the offset that day."""
    assert reset == next_pacific_midnight(now)
    assert (0, 0) == (reset.astimezone(PACIFIC).hour, reset.astimezone(PACIFIC).minute)


def test_the_daylight_saving_days_are_23_and_25_hours_long() -> None:
    """From one reset to the next: 23 h on 8 March 2026, 25 h on 1 November 2026."""
    spring = next_pacific_midnight(_utc(2026, 3, 8, 8, 0))
    assert timedelta(hours=23) == spring - _utc(2026, 3, 8, 8, 0)
    fall = next_pacific_midnight(_utc(2026, 11, 1, 7, 0))
    assert timedelta(hours=25) == fall - _utc(2026, 11, 1, 7, 0)


def test_the_reset_is_an_instant_that_subtracts_correctly() -> None:
    """`reset - now` is real elapsed time even when `now` is in Pacific time itself."""
    now = datetime(2026, 11, 1, 0, 30, tzinfo=PACIFIC)  # 00:30 PDT, the 25-hour day
    assert timedelta(hours=24, minutes=30) == next_pacific_midnight(now) - now


def test_a_naive_time_is_taken_as_utc() -> None:
    """A datetime without a zone is UTC (the bot's clocks are UTC)."""
    assert _utc(2026, 12, 1, 8, 0) == next_pacific_midnight(datetime(2026, 12, 1, 0, 0))
    assert "2026-11-30" == pacific_day(datetime(2026, 12, 1, 7, 59))


@pytest.mark.parametrize(
    ("now", "day"),
    [
        (_utc(2026, 12, 1, 7, 59, 59), "2026-11-30"),
        (_utc(2026, 12, 1, 8, 0), "2026-12-01"),
        (_utc(2026, 3, 8, 7, 59), "2026-03-07"),
        (_utc(2026, 3, 8, 8, 0), "2026-03-08"),
        (_utc(2026, 3, 9, 6, 59), "2026-03-08"),
        (_utc(2026, 3, 9, 7, 0), "2026-03-09"),
        (_utc(2026, 11, 2, 7, 59), "2026-11-01"),
        (_utc(2026, 11, 2, 8, 0), "2026-11-02"),
    ],
)
def test_the_day_key_is_the_pacific_calendar_day(now: datetime, day: str) -> None:
    """The ledger's day changes at the reset, not at UTC midnight."""
    assert day == pacific_day(now)


@given(
    st.datetimes(
        min_value=datetime(2000, 1, 1),
        max_value=datetime(2100, 1, 1),
        timezones=st.just(UTC),
    )
)
def test_the_reset_is_always_the_start_of_the_next_pacific_day(now: datetime) -> None:
    """After `now`, at most 25 h away, 00:00 in Los Angeles, and the day key moves by one."""
    reset = next_pacific_midnight(now)
    assert now < reset <= now + timedelta(hours=25)
    local = reset.astimezone(PACIFIC)
    assert (0, 0, 0) == (local.hour, local.minute, local.second)
    today = datetime.fromisoformat(pacific_day(now)).date()
    assert (today + timedelta(days=1)).isoformat() == pacific_day(reset)
    assert pacific_day(now) == pacific_day(reset - timedelta(microseconds=1))


@pytest.fixture
def no_system_zones() -> Iterator[None]:
    """No /usr/share/zoneinfo: zoneinfo has only the `tzdata` package (a slim image)."""
    zoneinfo.reset_tzpath(to=[])
    try:
        yield
    finally:
        zoneinfo.reset_tzpath()


@pytest.mark.usefixtures("no_system_zones")
def test_los_angeles_loads_without_the_system_zone_database() -> None:
    """The `tzdata` dependency supplies America/Los_Angeles (and the askers' zones)."""
    zone = zoneinfo.ZoneInfo.no_cache("America/Los_Angeles")
    assert timedelta(hours=-7) == datetime(2026, 7, 1, 12, tzinfo=zone).utcoffset()
    assert zoneinfo.ZoneInfo.no_cache("Europe/Rome") is not None


@given(
    st.datetimes(
        min_value=datetime(2000, 1, 1),
        max_value=datetime(2100, 1, 1),
        timezones=st.sampled_from([UTC, PACIFIC]),
    )
)
def test_the_reset_and_day_are_those_of_the_zone_conversion(now: datetime) -> None:
    """Worked out once per minute, they are what converting `now` itself gives."""
    local = now.astimezone(PACIFIC)
    tomorrow = local.date() + timedelta(days=1)
    expected = datetime(tomorrow.year, tomorrow.month, tomorrow.day, tzinfo=PACIFIC)
    assert expected.astimezone(UTC) == next_pacific_midnight(now)
    assert local.date().isoformat() == pacific_day(now)
