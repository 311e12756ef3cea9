"""Single flight: identical requests in flight in this process share one computation."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

_T = TypeVar("_T")


class SingleFlight(Generic[_T]):
    """Runs one task per key; callers arriving while it runs await the same result.

    The task is shielded from any one caller's cancellation (a Slack request giving up must
    not fail the others waiting on it); it is bounded by the service's own timeout.
    """

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[_T]] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    async def run(self, key: str, factory: Callable[[], Awaitable[_T]]) -> _T:
        task = self._tasks.get(key)
        if task is None:
            task = asyncio.ensure_future(factory())
            self._tasks[key] = task
            task.add_done_callback(lambda t: self._done(key, t))
        return await asyncio.shield(task)

    async def cancel(self) -> None:
        """Cancels every task still running and waits for them: at close, a flight whose
        callers all left would otherwise go on calling a closed transport."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _done(self, key: str, task: asyncio.Task[_T]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
        if not task.cancelled():
            task.exception()  # retrieved: no "never retrieved" warning when every caller left
