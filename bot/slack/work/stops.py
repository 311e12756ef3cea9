"""Stop across replicas: Slack delivers `agent_session_stopped` to any replica, not
necessarily the one streaming that thread's answer. The replica that receives it and has no
such work writes a short-lived marker in the shared store (`stop:<channel>:<thread ts>` =
when Stop was pressed); the replica streaming the answer reads it at the stream's natural
points and every `poll_seconds` while it works (bot/slack/work/active.py), and stops
exactly as a local Stop does.

A marker counts only for work that began before Stop was pressed (Slack's clock on both
sides: the event's `event_ts`, the question's message `ts`), so a follow-up asked in the
same thread after a Stop is not stopped by it. Only a store the replicas share (Redis) is
read or written: on memory:// and SQLite a process is the only one, and Stop is local.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bot import keys
from bot.store import TEXT, Store, StoreError

logger = logging.getLogger(__name__)

#: how long a marker is kept: a stream lives only a few minutes
MARK_TTL_SECONDS = 600.0
#: how often a streamed answer at work looks for a marker (one read each time)
POLL_SECONDS = 1.0


def slack_time(value: object) -> float | None:
    """A Slack ts ("1710000000.000100") as seconds, or None."""
    if not isinstance(value, str):
        return None
    try:
        return float(value)
    except ValueError:
        return None


@dataclass
class StopMarks:
    """Stop markers in the shared store (see the module's docstring)."""

    store: Store
    #: False: the store is this process's own (memory://, SQLite): nothing to read or write
    shared: bool
    poll_seconds: float = POLL_SECONDS
    ttl: float = MARK_TTL_SECONDS
    clock: Callable[[], float] = field(default=time.time)

    async def mark(self, channel: str, thread_ts: str, pressed_at: float | None) -> bool:
        """Stop pressed here for work another replica runs: one write; False when there is
        no shared store or it failed (the Stop then only acknowledges)."""
        if not self.shared:
            return False
        at = pressed_at if pressed_at is not None else self.clock()
        try:
            await self.store.set(keys.STOP.key(channel, thread_ts), repr(at), TEXT, self.ttl)
        except StoreError as exc:
            logger.info("could not pass a Stop on to the other replicas: %s", exc.message)
            return False
        return True

    async def pressed(self, channel: str, thread_ts: str, since: float | None) -> bool:
        """Was Stop pressed on another replica for work in this thread that began at
        `since`? One read; a store that fails reads as no (the work goes on)."""
        try:
            found = await self.store.get(keys.STOP.key(channel, thread_ts), TEXT)
        except StoreError:
            return False
        at = slack_time(found)
        return at is not None and (since is None or at >= since)

    async def clear(self, channel: str, thread_ts: str) -> None:
        """The stop is done: the marker goes (best effort: it expires anyway)."""
        with contextlib.suppress(StoreError):
            await self.store.delete(keys.STOP.key(channel, thread_ts))
