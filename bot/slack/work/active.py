"""Streamed answers at work in this process, by thread: the Stop button (the
`agent_session_stopped` event, bot/slack/listeners/stops.py) cancels the one in its thread,
and the stream ends with "Stopped." (bot/slack/delivery/streams.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field

from bot.slack.boundary import Outcome
from bot.slack.delivery.streams import StreamReply


@dataclass
class _Active:
    task: asyncio.Task[Outcome]
    stream: StreamReply


@dataclass
class ActiveStreams:
    """The streamed answers this process is working on, by (channel, thread): Stop (the
    `agent_session_stopped` event) cancels the one in its thread."""

    _active: dict[tuple[str, str], _Active] = field(default_factory=dict)

    async def run(self, stream: StreamReply, work: Awaitable[Outcome], route: str) -> Outcome:
        """`work` (answering through `stream`), until it is done or the person stops it."""
        key = (stream.channel, stream.stream_thread)
        task = asyncio.ensure_future(work)
        active = _Active(task, stream)
        self._active[key] = active
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not stream.stopped or (current is not None and current.cancelling()):
                task.cancel()  # a shutdown, not the Stop button: the work stops with it
                raise
            await stream.stop_by_person()
            return Outcome(route=route, outcome="stopped")
        finally:
            if self._active.get(key) is active:
                del self._active[key]

    def stop(self, channel: str, thread_ts: str) -> StreamReply | None:
        """The Stop button in this thread: cancel its work; the stream it was on (None when
        nothing here works on that thread)."""
        active = self._active.get((channel, thread_ts))
        if active is None:
            return None
        active.stream.stopped = True
        active.task.cancel()
        return active.stream
