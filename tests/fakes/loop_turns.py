"""The event loop's turns, counted: how many times the loop went round while the code under
test ran (a turn is one pass over the ready callbacks; on a loaded loop each holds a waiter a
few ms). Deterministic, unlike a timing.

    turns = LoopTurns()
    await code_under_test()
    turns.stop()
    assert 0 == turns.count   # it never gave the loop back
"""

from __future__ import annotations

import asyncio


class LoopTurns:
    """A callback that puts itself back each turn, from the turn after it is made."""

    def __init__(self) -> None:
        self.count = 0
        self._on = True
        asyncio.get_running_loop().call_soon(self._tick)

    def _tick(self) -> None:
        if not self._on:
            return
        self.count += 1
        asyncio.get_running_loop().call_soon(self._tick)

    def stop(self) -> None:
        """No more counting: `count` stays what it is now."""
        self._on = False
