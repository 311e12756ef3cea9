"""Work in flight, so a graceful shutdown can stop taking new work and finish what it has.
Listeners hand their work to `spawn`/`start`: the ack goes back without Bolt's 10 ms polling."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class InFlight:
    def __init__(self) -> None:
        self.accepting = True
        #: strong references: the event loop keeps only weak ones to running tasks
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def count(self) -> int:
        return len(self._tasks)

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run `work` in the background, counted from now (not from when it first runs)."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def start(
        self, work: Coroutine[Any, Any, None], *, until: asyncio.Event, within: float
    ) -> None:
        """`spawn(work)` and wait until `until` is set, `work` ends, or `within` seconds pass:
        the work's first reply can ride on the acknowledgement, and the rest goes on after."""
        task = self.spawn(work)
        if until.is_set() or task.done():
            return
        # waiting on `until` itself resumes this caller in the loop's next turn; a waiter task
        # under `asyncio.wait` took two, and under load each turn holds the ack for ms

        def ended(_: object) -> None:  # the work replied to nobody: the ack goes out bare
            until.set()

        task.add_done_callback(ended)
        try:
            async with asyncio.timeout(within):
                await until.wait()
        except TimeoutError:
            pass
        finally:
            task.remove_done_callback(ended)

    async def drain(self, timeout: float) -> bool:
        """Stop accepting; wait until nothing is in flight (work spawned meanwhile included).
        False when `timeout` ran out."""
        self.accepting = False
        try:
            async with asyncio.timeout(timeout):
                while self._tasks:
                    await asyncio.wait(set(self._tasks))
        except TimeoutError:
            return False
        return True
