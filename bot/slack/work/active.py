"""Streamed answers at work in this process, by thread: the Stop button (the
`agent_session_stopped` event, bot/slack/listeners/stops.py) cancels the one in its thread,
and the stream ends with "Stopped." (bot/slack/delivery/streams.py). A Stop that reached
another replica arrives as a marker in the shared store (bot/slack/work/stops.py): it is
read at the stream's natural points and every `poll_seconds` while the work runs."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field

from bot.slack.boundary import Outcome
from bot.slack.delivery.streams import StreamReply
from bot.slack.work.stops import StopMarks, slack_time


@dataclass
class _Active:
    task: asyncio.Task[Outcome]
    stream: StreamReply
    #: the Stop button (here or, by a marker, on another replica) cancelled it
    stopped: bool = False
    #: stopped by a marker another replica wrote (cleared once the stream is stopped)
    marked: bool = False


@dataclass
class ActiveStreams:
    """The streamed answers this process is working on, by (channel, thread): Stop (the
    `agent_session_stopped` event) cancels the one in its thread."""

    #: Stop markers of the other replicas (None, or not shared: Stop is local only)
    marks: StopMarks | None = None
    _active: dict[tuple[str, str], _Active] = field(default_factory=dict)

    async def run(self, stream: StreamReply, work: Awaitable[Outcome], route: str) -> Outcome:
        """`work` (answering through `stream`), until it is done or the person stops it."""
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
            if active.marked and self.marks is not None:
                await self.marks.clear(*key)
            return Outcome(route=route, outcome="stopped")
        finally:
            if watcher is not None:
                watcher.cancel()
            if self._active.get(key) is active:
                del self._active[key]

    def stop(self, channel: str, thread_ts: str) -> StreamReply | None:
        """The Stop button in this thread: cancel its work; the stream it was on (None when
        nothing here works on that thread)."""
        active = self._active.get((channel, thread_ts))
        if active is None:
            return None
        active.stopped = active.stream.stopped = True
        active.task.cancel()
        return active.stream

    async def relay(self, channel: str, thread_ts: str, pressed_at: float | None) -> bool:
        """Stop pressed for a thread this process does not work on: leave a marker for the
        replica that does (False when there is no shared store to leave it in)."""
        return self.marks is not None and await self.marks.mark(channel, thread_ts, pressed_at)

    def _watch(self, key: tuple[str, str], active: _Active) -> asyncio.Task[None] | None:
        """With a shared store: the stream checks for a marker before its Slack calls, and a
        watcher every `poll_seconds` (an upstream call may take many seconds)."""
        marks = self.marks
        if marks is None or not marks.shared:
            return None
        since = slack_time(active.stream.inner.message_ts)

        async def stopped_elsewhere() -> bool:
            if active.stream.stopped:
                return True
            if not await marks.pressed(*key, since):
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
                await asyncio.wait({active.task}, timeout=marks.poll_seconds)
                # a reply that shows no stream (declined, refused, ended) has no Stop button
                if not active.task.done() and active.stream.streaming:
                    await stopped_elsewhere()

        active.stream.stop_check = stopped_elsewhere
        return asyncio.ensure_future(poll())
