"""A threaded answer streamed with a task timeline (`chat.startStream`/`appendStream`/
`stopStream`), never worse than the thread reply it wraps: a refused start leaves the answer
to it, a stream that ended early is finished by `chat.update`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from slack_sdk.web.async_client import AsyncWebClient

from bot import render
from bot.models import SearchHit
from bot.slack import SLACK_CALL_FAILURES
from bot.slack.delivery.posting import why as _why
from bot.slack.delivery.replies import Progress, SlackReply, Step

logger = logging.getLogger(__name__)

#: a search's first pages shown on an open step (its chips, while the answer is written)
EARLY_SOURCES = 4
#: a refused call that leaves the stream open: only that chunk was not taken
_CHUNK_REFUSALS = ("invalid_chunks", "invalid_arguments")

State = Literal["idle", "open", "gone", "classic"]
Parts = list[dict[str, Any]]  # a stream's chunks, a message's blocks


@dataclass
class StreamReply(Progress):
    inner: SlackReply
    #: Slack requires the team (and the asker) for a stream in a channel
    team_id: str | None = None
    #: the message of an earlier stream of this work (a restart finishes that one)
    existing_ts: str | None = None
    resumed: bool = False
    on_started: Callable[[str], Awaitable[None]] | None = None
    stopped: bool = False
    #: asked before each Slack call on an open stream: Stop pressed on another replica?
    stop_check: Callable[[], Awaitable[bool]] | None = None
    _state: State = "idle"
    _ts: str | None = None
    _tasks: int = 0
    _staged: render.StreamedAnswer | None = None
    _progress_msg: render.Message | None = None
    _progress_kind: render.WorkKind | None = None
    #: steps showing a search's first pages, which their closing update takes away
    _early: set[str] = field(default_factory=set)
    client: AsyncWebClient = field(init=False)
    channel: str = field(init=False)
    user: str | None = field(init=False)
    response_url: str | None = field(init=False)
    stream_thread: str = field(init=False)

    def __post_init__(self) -> None:
        inner = self.inner
        self.client, self.user, self.response_url = inner.client, inner.user, inner.response_url
        self.channel = inner.channel or ""
        self.stream_thread = inner.thread_ts or inner.message_ts or ""
        if self.existing_ts:  # open still, or gone: the first call says which
            self._state, self._ts = "open", self.existing_ts

    @property
    def progress(self) -> Progress:
        return self

    @property
    def thread_ts(self) -> str | None:
        return self.stream_thread if self._ts else self.inner.thread_ts

    @property
    def streaming(self) -> bool:
        return self._state == "open"

    def decline(self) -> None:
        if self._state == "idle":
            self._state = "classic"

    def stage(self, answer: render.StreamedAnswer) -> None:
        self._staged = answer

    async def start_progress(
        self, msg: render.Message, kind: render.WorkKind | None = None
    ) -> None:
        self._progress_msg, self._progress_kind = msg, kind
        if self._state == "classic":
            await self.inner.start_progress(msg, kind)

    async def update_progress(self, msg: render.Message) -> None:
        if self._state in ("idle", "classic"):
            await self.inner.update_progress(msg)

    async def notify_asker(self, msg: render.Message) -> None:
        if self._state == "open":
            await self._stop()
        await self.inner.notify_asker(msg)

    async def notify_thread(self, msg: render.Message) -> None:
        if not await self._end_with(msg):
            await self.inner.notify_thread(msg)

    async def deliver(self, msg: render.Message) -> str | None:
        if self.stopped:
            return self._ts  # the person stopped it: nothing more is posted
        staged, self._staged = self._staged, None
        if not await self._wanted():
            return self._ts
        if self._state == "open" and staged is not None:
            for chunk in staged.chunks:  # one call each: within the per-call limit
                await self._append([chunk])
            end = render.with_restart_note(staged.end) if self.resumed else staged.end
            if self._state == "open" and await self._stop(blocks=end.get("blocks")):
                return self._ts
        if await self._end_with(msg):
            return self._ts
        return await self.inner.deliver(msg)

    async def post_visibly(self, msg: render.Message) -> str | None:
        return await self.inner.post_visibly(msg)

    async def finish(self) -> None:
        if self._state == "open" and not self.stopped:
            await self._stop()  # an ending nothing else took (a bug): leave no stream open
        await self.inner.finish()

    async def open_step(self, title: str) -> Step:
        self._tasks += 1
        step = Step(title, task_id=f"step-{self._tasks}")
        if not await self._wanted():
            return step
        await self._send([render.task_chunk(step.task_id, title, "in_progress")])
        return step

    async def close_step(self, step: Step, status: str) -> None:
        if step.closed or not await self._wanted():  # after Stop, nothing more is sent
            return
        step.closed = True
        # plain text: task_chunk escapes it
        chunk = render.task_chunk(step.task_id, step.title, status, output=step.output)
        # the answer replaces the early pages: its Sources list names the pages it cites,
        # once (docs/presentation.md). A Slack that takes no empty list keeps them.
        early = step.task_id in self._early and self._state == "open"
        if not (early and await self._append([chunk | {"sources": []}], keep_open_if_refused=True)):
            await self._send([chunk])

    async def show_sources(self, step: Step, hits: Sequence[SearchHit]) -> None:
        """A search's first pages as the open step's chips, until the answer replaces them;
        never in the way of the answer (no stream, a closed step, a refusal: nothing). The
        docs service calls it before `ask` returns, so before the step can close."""
        pages = [(h.uri, render.page_title(h.title)) for h in hits[:EARLY_SOURCES]]
        try:
            if step.closed or self._state != "open" or not await self._wanted():
                return
            chunk = render.task_chunk(step.task_id, step.title, "in_progress", sources=pages)
            if "sources" in chunk and await self._append([chunk], keep_open_if_refused=True):
                self._early.add(step.task_id)
        except Exception as exc:  # noqa: BLE001 -- early pages must never cost the answer
            logger.info("early sources not shown: %s", type(exc).__name__)

    async def stop_by_person(self) -> None:
        self.stopped = True
        chunks = [{"type": "markdown_text", "text": render.STOPPED_TEXT}]
        if self._state == "open" and await self._stop(chunks=chunks):
            return
        try:
            await self.client.agents_sessions_setStatus(
                channel_id=self.channel, status="active", thread_ts=self.stream_thread
            )
        except SLACK_CALL_FAILURES as exc:
            logger.info("agents.sessions.setStatus failed: %s", type(exc).__name__)

    async def _wanted(self) -> bool:
        if self.stopped:
            return False
        if self._state == "open" and self.stop_check is not None:
            return not await self.stop_check()
        return True

    async def _send(self, chunks: Parts) -> None:
        if self._state == "idle":
            await self._start(chunks)
        elif self._state == "open":
            await self._append(chunks)

    async def _start(self, chunks: Parts) -> None:
        in_dm = self.channel.startswith("D")
        started = asyncio.ensure_future(
            self.client.chat_startStream(
                channel=self.channel,
                thread_ts=self.stream_thread,
                chunks=chunks,
                task_display_mode="timeline",
                recipient_user_id=None if in_dm else self.user,
                recipient_team_id=None if in_dm else self.team_id,
            )
        )
        try:
            response = await asyncio.shield(started)
        except asyncio.CancelledError:
            # Stop pressed while Slack opens the stream: learn its ts, so it can be ended
            with contextlib.suppress(*SLACK_CALL_FAILURES):
                self._opened((await started).get("ts"))
            raise
        except SLACK_CALL_FAILURES as exc:
            # never worse than today: the reaction or status line, then one message
            logger.info("chat.startStream refused (%s): answering as a message", _why(exc))
            self._state = "classic"
            if self._progress_msg is not None:
                await self.inner.start_progress(self._progress_msg, self._progress_kind)
            return
        if self._opened(response.get("ts")) and self.on_started is not None:
            await self.on_started(self._ts or "")

    def _opened(self, ts: object) -> bool:
        if not isinstance(ts, str):
            self._state = "classic"
            return False
        self._state, self._ts = "open", ts
        return True

    async def _append(self, chunks: Parts, *, keep_open_if_refused: bool = False) -> bool:
        """Append `chunks`; False when Slack refused only them and `keep_open_if_refused`
        (early pages are a nicety: the stream goes on without them)."""
        assert self._ts is not None
        try:
            await self.client.chat_appendStream(channel=self.channel, ts=self._ts, chunks=chunks)
        except SLACK_CALL_FAILURES as exc:
            if keep_open_if_refused and _why(exc) in _CHUNK_REFUSALS:
                logger.info("a task update was refused (%s)", _why(exc))
                return False
            self._gone(exc)
        return True

    async def _stop(self, *, blocks: Parts | None = None, chunks: Parts | None = None) -> bool:
        assert self._ts is not None
        try:
            await self.client.chat_stopStream(
                channel=self.channel,
                ts=self._ts,
                blocks=blocks or None,
                chunks=chunks,
                session_status="active",
            )
        except SLACK_CALL_FAILURES as exc:
            self._gone(exc)
            return False
        self._state = "gone"
        return True

    def _gone(self, exc: BaseException) -> None:
        logger.info("the stream ended early (%s): finishing its message instead", _why(exc))
        self._state = "gone"
        if _why(exc) == "stopped_by_user":
            self.stopped = True

    async def _end_with(self, msg: render.Message) -> bool:
        """Finish the stream's message with `msg`; False when there is none."""
        if self._ts is None or self._state == "classic":
            return False
        if self._state == "open" and await self._stop(blocks=msg.get("blocks")):
            return True
        try:
            await self.client.chat_update(
                channel=self.channel, ts=self._ts, text=msg["text"], blocks=msg.get("blocks")
            )
        except SLACK_CALL_FAILURES as exc:
            logger.info("chat.update of the stream's message failed: %s", _why(exc))
            return False
        return True
