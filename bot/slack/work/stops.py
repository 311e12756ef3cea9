"""The Stop button of a streamed answer cancels the work in its thread ("Stopped."). A
replica without that work leaves a marker in a shared store (`stop:<channel>:<thread>` =
when pressed), read by the streaming replica before its Slack calls and every second."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field

from bot import keys
from bot.slack.boundary import Outcome
from bot.slack.delivery.streams import StreamReply
from bot.store import TEXT, Store, StoreError

logger = logging.getLogger(__name__)

MARK_TTL_SECONDS = 600.0
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
class _Active:
    task: asyncio.Task[Outcome]
    stream: StreamReply
    stopped: bool = False
    #: stopped by another replica's marker
    marked: bool = False


@dataclass
class ActiveStreams:
    """The streamed answers in flight here, and the Stop markers shared with other replicas."""

    store: Store | None = None
    #: False: the store is this process's own (memory://, SQLite): a Stop is always local
    shared: bool = False
    poll_seconds: float = POLL_SECONDS
    _active: dict[tuple[str, str], _Active] = field(default_factory=dict)

    async def run(
        self, stream: StreamReply | None, work: Awaitable[Outcome], route: str
    ) -> Outcome:
        """`work`, stopped by the Stop button of `stream` (None: not streamed)."""
        if stream is None:
            return await work
        key = (stream.channel, stream.stream_thread)
        task = asyncio.ensure_future(work)
        active = _Active(task, stream)
        self._active[key] = active
        watcher = self._watch(key, active)
        try:
            try:
                outcome = await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if not stream.stopped or (current is not None and current.cancelling()):
                    task.cancel()  # a shutdown, not the Stop button: the work stops with it
                    raise
            else:
                if not active.stopped:
                    return outcome
                # Stop pressed, but a callee absorbed the cancellation: end it all the same
            await stream.stop_by_person()
            if active.marked and self.store is not None:
                with contextlib.suppress(StoreError):
                    await self.store.delete(keys.STOP.key(*key))
            return Outcome(route=route, outcome="stopped")
        finally:
            if watcher is not None:
                watcher.cancel()
            if self._active.get(key) is active:
                del self._active[key]

    def stop(self, channel: str, thread_ts: str) -> StreamReply | None:
        """Cancel this thread's work here; its stream (None: none here)."""
        active = self._active.get((channel, thread_ts))
        if active is None:
            return None
        active.stopped = active.stream.stopped = True
        active.task.cancel()
        return active.stream

    async def relay(self, channel: str, thread_ts: str, pressed_at: float | None) -> bool:
        """Leave a marker for the other replicas; False when not shared or it failed."""
        if self.store is None or not self.shared:
            return False
        at = pressed_at if pressed_at is not None else time.time()
        try:
            key = keys.STOP.key(channel, thread_ts)
            await self.store.set(key, repr(at), TEXT, MARK_TTL_SECONDS)
        except StoreError as exc:
            logger.info("could not pass a Stop on to the other replicas: %s", exc.message)
            return False
        return True

    async def pressed(self, channel: str, thread_ts: str, since: float | None) -> bool:
        """Was Stop pressed elsewhere after `since`? A failing store reads as no."""
        if self.store is None:
            return False
        try:
            found = await self.store.get(keys.STOP.key(channel, thread_ts), TEXT)
        except StoreError:
            return False
        at = slack_time(found)
        return at is not None and (since is None or at >= since)

    def _watch(self, key: tuple[str, str], active: _Active) -> asyncio.Task[None] | None:
        if self.store is None or not self.shared:
            return None
        since = slack_time(active.stream.inner.message_ts)

        async def stopped_elsewhere() -> bool:
            if active.stream.stopped:
                return True
            if not await self.pressed(*key, since):
                return False
            active.marked = True
            self.stop(*key)
            if asyncio.current_task() is active.task:
                # asked by the work itself: end it here rather than at its next suspension,
                # which a callee may absorb (e.g. a wait whose result is already in)
                raise asyncio.CancelledError("stopped on another replica")
            return True

        async def poll() -> None:
            while not active.task.done():
                # the work's end is the event waited for; the poll period its timeout
                await asyncio.wait({active.task}, timeout=self.poll_seconds)
                # a reply that shows no stream (declined, refused, ended) has no Stop button
                if not active.task.done() and active.stream.streaming:
                    await stopped_elsewhere()

        active.stream.stop_check = stopped_elsewhere
        return asyncio.ensure_future(poll())
