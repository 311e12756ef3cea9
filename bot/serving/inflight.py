"""Work in flight, so a graceful shutdown can stop taking new work and finish what it has.

Listeners acknowledge Slack and hand their work to `spawn`/`start`: the HTTP response (or
Socket Mode ack) goes back at once, without Bolt's 10 ms polling for `ack()`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any

from bot.loadgate import LoadGate


class InFlight:
    """Counts answers being worked on; `drain()` waits for them, bounded."""

    def __init__(self, gate: LoadGate | None = None) -> None:
        self.gate = gate if gate is not None else LoadGate()
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.accepting = True
        #: strong references: the event loop keeps only weak ones to running tasks
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def count(self) -> int:
        return self._count

    @asynccontextmanager
    async def track(self) -> AsyncIterator[None]:
        self._enter()
        try:
            yield
        finally:
            self._leave()

    def _enter(self) -> None:
        self._count += 1
        self._idle.clear()
        self.gate.busy()

    def _leave(self) -> None:
        self._count -= 1
        self.gate.idle()
        if self._count == 0:
            self._idle.set()

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run `work` in the background, counted from now (not from when it first runs),
        once the gate lets it start."""
        self._enter()

        async def run() -> None:
            try:
                try:
                    await self.gate.wait()
                except BaseException:  # cancelled while waiting: it never began
                    work.close()
                    raise
                await work
            finally:
                self._leave()

        task = asyncio.ensure_future(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def start(
        self, work: Coroutine[Any, Any, None], *, until: asyncio.Event, within: float
    ) -> None:
        """`spawn(work)` and wait until `until` is set, `work` ends, or `within` seconds pass:
        the work's first reply can ride on the acknowledgement, and the rest goes on after.
        Work that ends without setting `until` has it set here."""
        congested = self.gate.congested  # its first reply would wait too: no use waiting
        task = self.spawn(work)
        if congested or until.is_set() or task.done():
            return
        # the wait is on `until` itself, so the reply resumes this caller in the loop's next
        # turn; a waiter task under `asyncio.wait` took two (the waiter's end, then wait's
        # callback), and under load each turn holds the ack for ms

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
        """Stop accepting; wait until nothing is in flight. False when `timeout` ran out."""
        self.accepting = False
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True
