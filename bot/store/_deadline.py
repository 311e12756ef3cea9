"""One timeout for every store call in flight, at the cost of one timer.

`asyncio.timeout` schedules a timer per call and cancels it after: for the store's many
short calls (most finish in the same loop iteration, many without suspending at all) that
was a tenth of a millisecond per question, measured, about as much as the SQLite store's
own work. Every call here has the same timeout, so calls in flight expire in the order they
started: one timer (first at the oldest call's deadline, then every `timeout / 4` while calls
are in flight) cancels those past their deadline. A call is then cut off between `timeout`
and `1.25 × timeout` after it began, and raises TimeoutError as `asyncio.timeout` would (a
cancellation from elsewhere stays a cancellation).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

R = TypeVar("R")


class _Call:
    __slots__ = ("cancelling", "deadline", "expired", "task")

    def __init__(self, task: asyncio.Task[object], deadline: float) -> None:
        self.task = task
        self.deadline = deadline
        self.cancelling = task.cancelling()
        self.expired = False


class Deadlines:
    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._tick = timeout / 4
        #: in the order they started, so the oldest first (their deadlines are in order too)
        self._calls: dict[int, _Call] = {}
        self._started = 0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None

    async def run(self, awaitable: Awaitable[R]) -> R:
        """`await awaitable`, cut off by TimeoutError once the timeout has passed."""
        task = asyncio.current_task()
        if task is None:  # not in a task: nothing to cancel (nor anything to time out)
            return await awaitable
        loop = asyncio.get_running_loop()
        self._started += 1
        number = self._started
        call = self._calls[number] = _Call(task, loop.time() + self.timeout)
        if self._timer is None or self._timer_loop is not loop:  # (a test's loop is new)
            self._timer, self._timer_loop = loop.call_at(call.deadline, self._expire), loop
        try:
            return await awaitable
        except asyncio.CancelledError:
            if call.expired and task.uncancel() <= call.cancelling:
                raise TimeoutError from None
            raise
        finally:
            del self._calls[number]

    def _expire(self) -> None:
        """The timer: cancel the calls past their deadline; tick again while any are left."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        for call in self._calls.values():
            if call.deadline > now:
                break
            if not call.expired:
                call.expired = True
                call.task.cancel()
        self._timer = loop.call_at(now + self._tick, self._expire) if self._calls else None
