"""One injected time for the bot, its store's windows and the fake servers: tests move it
instead of sleeping.

    clock = TestClock(datetime(2026, 12, 1, 17, 0, tzinfo=UTC))
    async with running_bot(dk, clock=clock, sleep=clock.sleep) as bot: ...
    clock.advance(60)   # a minute later, at once
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta


class TestClock:
    """Aware UTC datetimes, moved only by the test (or by `sleep`, which moves it instead of
    waiting)."""

    __test__ = False  # not a test class, whatever pytest thinks of the name

    def __init__(self, start: datetime) -> None:
        self.now = start
        #: every `sleep` asked for, in seconds
        self.slept: list[float] = []

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def set(self, when: datetime) -> None:
        self.now = when

    async def sleep(self, seconds: float) -> None:
        """What the bot's quota waits with: the time passes at once (other tasks still run)."""
        self.slept.append(seconds)
        self.advance(seconds)
        await asyncio.sleep(0)
