"""The words about the quota: the fallback notes name the limit and when answers come back, in
the asker's time zone (Pacific when it is unknown); `/gdocs quota` is a short valid message."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.models import Fallback
from bot.quota import Pause, QuotaState, next_pacific_midnight
from bot.render import fallback_note, render_quota_status, render_quota_waiting
from tests.test_render_support import assert_valid_message, strings

NOW = datetime(2026, 12, 1, 23, 30, tzinfo=UTC)  # 15:30 PST, 00:30 in Rome on 2 December
RESET = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)  # 00:00 PST = 09:00 in Rome
INSTEAD = " Here are search results instead."


def _note(kind: str, until: datetime, tz: str | None = "Europe/Rome", now: datetime = NOW) -> str:
    size = 50 if kind == "day" else 10
    return _fallback(kind, until, size, tz, now)


def _fallback(kind: str, until: datetime, size: int, tz: str | None, now: datetime) -> str:
    fallback = Fallback(reason="answer_quota", limit=kind, until=until, limit_value=size)
    return fallback_note(fallback, tz=tz, now=now)


@pytest.mark.parametrize(
    ("kind", "until", "tz", "now", "said"),
    [
        (
            "minute",
            NOW + timedelta(seconds=37),
            "Europe/Rome",
            NOW,
            "10 answers a minute are in use — generated answers are back in about 40 s.",
        ),
        (
            "day",
            RESET,
            "Europe/Rome",
            NOW,
            "Today's 50 generated answers are used up; they come back at 09:00 (your time).",
        ),
        # earlier that evening in Rome the reset is on the next calendar day there
        (
            "day",
            RESET,
            "Europe/Rome",
            NOW - timedelta(hours=4),
            "Today's 50 generated answers are used up; they come back tomorrow at 09:00 "
            "(your time).",
        ),
        (
            "day",
            RESET,
            "Asia/Tokyo",
            NOW,
            "Today's 50 generated answers are used up; they come back at 17:00 (your time).",
        ),
        (
            "day",
            RESET,
            "America/Los_Angeles",
            NOW,
            "Today's 50 generated answers are used up; they come back at midnight (your time).",
        ),
        # no zone, or one that is not a zone: Pacific time, said as PT
        (
            "day",
            RESET,
            None,
            NOW,
            "Today's 50 generated answers are used up; they come back at midnight PT.",
        ),
        ("day", RESET, "Mars/Olympus_Mons", NOW, "… they come back at midnight PT."),
        ("day", RESET, "../../etc/passwd", NOW, "… they come back at midnight PT."),
        ("day", RESET, "", NOW, "… they come back at midnight PT."),
        # the week Europe is back on winter time and California is not: 08:00 in Rome
        (
            "day",
            datetime(2026, 11, 1, 7, 0, tzinfo=UTC),
            "Europe/Rome",
            datetime(2026, 10, 31, 23, 30, tzinfo=UTC),
            "… they come back at 08:00 (your time).",
        ),
        (
            "user",
            RESET,
            "Europe/Rome",
            NOW,
            "You've used your 10 generated answers for today; they come back at 09:00 (your time).",
        ),
        (
            "unknown",
            NOW + timedelta(seconds=60),
            "Europe/Rome",
            NOW,
            "Generated answers are paused for a moment — back in about 60 s.",
        ),
        (
            "unknown",
            NOW + timedelta(days=2),
            "Europe/Rome",
            NOW,
            "Generated answers are paused for a moment — back in about 48 h.",
        ),
    ],
)
def test_a_fallback_note_names_the_limit_and_when_answers_come_back(
    kind: str, until: datetime, tz: str | None, now: datetime, said: str
) -> None:
    """Each limit in its own words, the time in the asker's zone, then why it is search."""
    note = _note(kind, until, tz, now)
    assert note.endswith(INSTEAD)
    if said.startswith("… "):
        assert note.removesuffix(INSTEAD).endswith(said.removeprefix("… "))
    else:
        assert said + INSTEAD == note


def test_a_reset_two_days_away_says_the_date() -> None:
    """A time neither today nor tomorrow in the viewer's zone names the day."""
    until = datetime(2026, 12, 4, 8, 0, tzinfo=UTC)
    assert "come back on Friday 4 December at 09:00 (your time)" in _note("user", until)


@pytest.mark.parametrize(
    ("per_minute", "per_day", "kind", "starts"),
    [
        (1, 50, "minute", "1 answer a minute is in use"),
        (0, 50, "minute", "The per-minute limit for generated answers is reached"),
        (10, 1, "day", "Today's 1 generated answer is used up"),
        (10, 0, "day", "Today's generated answers are used up"),
    ],
)
def test_the_note_reads_right_for_any_limit(
    per_minute: int, per_day: int, kind: str, starts: str
) -> None:
    """Singular limits and limits the bot does not enforce still make a sentence."""
    note = _fallback(kind, RESET, per_minute if kind == "minute" else per_day, None, NOW)
    assert note.startswith(starts)


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0.2, "in a moment"),
        (3.2, "in about 4 s"),
        (37, "in about 40 s"),
        (40, "in about 40 s"),
        (61, "in about 65 s"),
        (90, "in about 2 min"),
        (600, "in about 10 min"),
        (7200, "in about 2 h"),
    ],
)
def test_durations_are_rounded_up_to_words(seconds: float, said: str) -> None:
    """Never sooner than the truth: short waits to 5 s, then minutes, then hours."""
    shown = render_quota_waiting(seconds, per_minute=10)["text"]
    assert f"a slot frees {said}, so" in shown


def test_the_wait_note_says_why_the_answer_is_slow() -> None:
    """While the bot waits for the minute, the asker sees why."""
    assert render_quota_waiting(4.2, per_minute=10)["text"] == (
        "All 10 answers of this minute are in use; a slot frees in about 5 s, so your "
        "answer takes a little longer…"
    )


# --- /gdocs quota --------------------------------------------------------------------------
def _state(**changes: object) -> QuotaState:
    values: dict[str, object] = {
        "per_minute": 10,
        "per_day": 50,
        "per_user_per_day": 10,
        "used_today": 13,
        "left_today": 37,
        "used_this_minute": 2,
        "left_this_minute": 8,
        "next_slot": None,
        "user_used_today": 3,
        "user_left_today": 7,
        "pause": None,
        "next_reset": RESET,
    }
    values.update(changes)
    return QuotaState(**values)  # type: ignore[arg-type]


def _text(state: QuotaState, tz: str | None = "Europe/Rome") -> str:
    message = render_quota_status(state, tz=tz, now=NOW)
    assert_valid_message(message)
    return "\n".join(strings(message["blocks"]))


def test_the_status_shows_the_team_the_minute_the_viewer_and_the_reset() -> None:
    """Answers left today of 50, this minute of 10, the viewer's own, and the reset time."""
    shown = _text(_state())
    assert "Today: *37* of 50 left for the team" in shown
    assert "This minute: *8* of 10 free" in shown
    assert "Yours today: *7* of 10 left" in shown
    assert "resets at 09:00 (your time), midnight Pacific time" in shown
    message = render_quota_status(_state(), tz="Europe/Rome", now=NOW)
    assert "37 of 50 left today, 8 of 10 free this minute, 7 of 10 yours." in message["text"]


def test_a_pacific_viewer_is_told_the_reset_once() -> None:
    """In Pacific time the reset is midnight already: "at midnight (your time)" says it all,
    without ", midnight Pacific time" after it."""
    shown = _text(_state(), tz="America/Los_Angeles")
    assert "resets at midnight (your time). Past" in shown


def test_the_status_says_when_the_next_minute_slot_frees() -> None:
    """A full minute: 0 free and when the next one frees."""
    state = _state(left_this_minute=0, next_slot=NOW + timedelta(seconds=22))
    assert "This minute: *0* of 10 free, the next in about 25 s" in _text(state)


@pytest.mark.parametrize(
    ("pause", "said"),
    [
        (
            Pause("day", RESET),
            "Paused by Google: Today's generated answers are used up; they come back at 09:00 "
            "(your time).",
        ),
        (
            Pause("minute", NOW + timedelta(seconds=30)),
            "Paused by Google: The per-minute limit for generated answers is reached — "
            "generated answers are back in about 30 s.",
        ),
        (
            Pause("unknown", NOW + timedelta(seconds=50)),
            "Paused by Google: Generated answers are paused for a moment — back in about 50 s.",
        ),
    ],
)
def test_the_status_shows_an_active_pause(pause: Pause, said: str) -> None:
    """A pause from the server's 429 is named, with when it ends."""
    assert said in _text(_state(pause=pause))


def test_the_status_without_local_limits_or_a_viewer() -> None:
    """Limits set to 0 and no user: it says what it knows, in Pacific time."""
    state = _state(
        per_day=0,
        per_minute=0,
        per_user_per_day=0,
        left_today=None,
        left_this_minute=None,
        user_left_today=None,
        user_used_today=None,
    )
    shown = _text(state, tz=None)
    assert "Today: 13 used (no daily limit set in the bot)" in shown
    assert "This minute: not limited by the bot" in shown
    assert "Yours" not in shown
    assert "resets at midnight PT." in shown


_TIMES = st.datetimes(
    min_value=datetime(2026, 1, 1), max_value=datetime(2027, 12, 31), timezones=st.just(UTC)
)
_COUNT = st.integers(min_value=0, max_value=100_000)
_MAYBE = st.none() | _COUNT
_ZONES = st.sampled_from(["Europe/Rome", "Asia/Kolkata", "Pacific/Chatham", "UTC", "<!here>"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    now=_TIMES,
    counts=st.tuples(_COUNT, _COUNT, _COUNT, _COUNT, _MAYBE, _COUNT, _MAYBE, _MAYBE, _MAYBE),
    slot=st.none() | _TIMES,
    pause=st.none() | st.builds(Pause, st.sampled_from(["minute", "day", "unknown"]), _TIMES),
    tz=st.none() | _ZONES | st.text(max_size=40),
)
def test_the_status_is_always_a_valid_message_without_markup(
    now: datetime,
    counts: tuple[int, ...],
    slot: datetime | None,
    pause: Pause | None,
    tz: str | None,
) -> None:
    """Any state, any `tz` string: Slack accepts every block, and no `<` reaches it."""
    per_minute, per_day, per_user, used, left, used_minute, left_minute, mine, my_left = counts
    state = QuotaState(
        per_minute=per_minute,
        per_day=per_day,
        per_user_per_day=per_user,
        used_today=used,
        left_today=left,
        used_this_minute=used_minute,
        left_this_minute=left_minute,
        next_slot=slot,
        user_used_today=mine,
        user_left_today=my_left,
        pause=pause,
        next_reset=next_pacific_midnight(now),
    )
    message = render_quota_status(state, tz=tz, now=now)
    assert_valid_message(message)
    assert not any("<" in s or ">" in s for s in [message["text"], *strings(message["blocks"])])
