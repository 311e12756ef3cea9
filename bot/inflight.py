"""Work in flight, so a graceful shutdown can stop taking new work and finish what it has."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class InFlight:
    """Counts answers being worked on; `drain()` waits for them, bounded."""

    def __init__(self) -> None:
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.accepting = True

    @property
    def count(self) -> int:
        return self._count

    @asynccontextmanager
    async def track(self) -> AsyncIterator[None]:
        self._count += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._count -= 1
            if self._count == 0:
                self._idle.set()

    async def drain(self, timeout: float) -> bool:
        """Stop accepting; wait until nothing is in flight. False when `timeout` ran out."""
        self.accepting = False
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True
