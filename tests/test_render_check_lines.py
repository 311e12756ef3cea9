"""`gdocs-bot check`'s words about the state store and answer_query's quota (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from bot.quota import Pause, QuotaState
from bot.render import quota_detail, store_detail

NOW = datetime(2026, 12, 1, 17, 0, tzinfo=UTC)
MIDNIGHT_PT = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("report", "said"),
    [
        (
            {"backend": "redis", "url": "redis://:[redacted]@cache:6379/0", "ok": True},
            "redis at redis://:[redacted]@cache:6379/0: reachable",
        ),
        (
            {"backend": "redis", "url": "redis://cache:6379/0", "ok": False, "detail": "refused"},
            "redis at redis://cache:6379/0: not answering (refused)",
        ),
        (
            {"backend": "sqlite", "url": "sqlite:///gdocs-state.db", "ok": True},
            "sqlite at sqlite:///gdocs-state.db: reachable",
        ),
        (
            {"backend": "memory", "ok": True},
            "memory:// (this process only: nothing is kept or shared)",
        ),
    ],
)
def test_the_store_line_names_the_store_and_whether_it_answers(
    report: dict[str, object], said: str
) -> None:
    """Which store, where (as given: the password already hidden), and reachable or not."""
    assert said == store_detail(report)


@dataclass
class _State:
    left_today: int | None = 48
    left_this_minute: int | None = 9
    next_slot: datetime | None = None
    pause: Pause | None = None
    used_today: int = 2


def _state(**changes: object) -> QuotaState:
    base = _State(**changes)  # type: ignore[arg-type]
    return QuotaState(
        per_minute=10,
        per_day=50,
        per_user_per_day=10,
        used_today=base.used_today,
        left_today=base.left_today,
        used_this_minute=1,
        left_this_minute=base.left_this_minute,
        next_slot=base.next_slot,
        user_used_today=None,
        user_left_today=None,
        pause=base.pause,
        next_reset=MIDNIGHT_PT,
    )


@pytest.mark.parametrize(
    ("state", "said"),
    [
        (
            _state(),
            "48 of 50 left today, 9 of 10 free this minute; resets at midnight PT (08:00 UTC)",
        ),
        (
            _state(left_this_minute=0, next_slot=NOW + timedelta(seconds=38)),
            "48 of 50 left today, 0 of 10 free this minute (the next in about 40 s); "
            "resets at midnight PT (08:00 UTC)",
        ),
        (
            _state(left_today=0, left_this_minute=0, pause=Pause("day", MIDNIGHT_PT)),
            "0 of 50 left today, 0 of 10 free this minute, paused (Google says today's "
            "answers are used up) until 08:00 UTC; resets at midnight PT (08:00 UTC)",
        ),
        (
            _state(left_this_minute=0, pause=Pause("minute", NOW + timedelta(seconds=40))),
            "48 of 50 left today, 0 of 10 free this minute, paused (Google's per-minute "
            "limit) back in about 40 s; resets at midnight PT (08:00 UTC)",
        ),
        (
            _state(pause=Pause("unknown", NOW + timedelta(seconds=60))),
            "48 of 50 left today, 9 of 10 free this minute, paused (an unclear 429) back in "
            "about 60 s; resets at midnight PT (08:00 UTC)",
        ),
        (
            _state(left_today=None, left_this_minute=None, used_today=7),
            "7 used today (no daily limit set), this minute not limited; resets at midnight "
            "PT (08:00 UTC)",
        ),
    ],
)
def test_the_quota_line_says_what_is_left_any_pause_and_the_reset(
    state: QuotaState, said: str
) -> None:
    """Left today and this minute (and when the next slot frees), a pause by Google, and the
    daily reset in Pacific time and UTC."""
    assert said == quota_detail(state, now=NOW)
