"""Where one request's replies go and how progress shows: a command's first notice rides on
its ack (later ones via `response_url`); a thread's or click's progress is a 🔍 reaction, a
DM's the thread status, Ask again's a DM message the answer replaces. Where the bot may not
post, replies with a `response_url` go to the asker alone."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from slack_sdk.web.async_client import AsyncWebClient

from bot import render
from bot.models import SearchHit
from bot.render import CLEARED_STATUS, Message, WorkKind, assistant_status, loading_messages
from bot.slack import SLACK_CALL_FAILURES
from bot.slack.delivery import posting
from bot.slack.delivery.posting import OnceAck

logger = logging.getLogger(__name__)

PROGRESS_REACTION = "mag"
Where = Literal["command", "thread", "dm", "click", "direct"]


@dataclass
class Step:
    title: str
    output: str | None = None
    status: Literal["complete", "error"] = "complete"
    task_id: str = ""
    closed: bool = False


class Progress:
    """Steps on a reply that shows no timeline: nothing is sent (StreamReply shows them)."""

    @property
    def streaming(self) -> bool:  # a timeline open: early pages can show (StreamReply)
        return False

    def decline(self) -> None:  # no timeline: a whole page, a private answer
        pass

    def stage(self, answer: render.StreamedAnswer) -> None:  # what `deliver` streams
        pass

    @asynccontextmanager
    async def step(self, title: str) -> AsyncIterator[Step]:
        opened = await self.open_step(title)
        try:
            yield opened
        except BaseException:
            await self.close_step(opened, "error")
            raise
        await self.close_step(opened, opened.status)

    async def open_step(self, title: str) -> Step:
        return Step(title)

    async def close_step(self, step: Step, status: str) -> None:
        pass

    async def show_sources(self, step: Step, hits: Sequence[SearchHit]) -> None:
        """Pages found early, shown on an open step until its answer comes."""


NO_PROGRESS = Progress()


@dataclass
class SlackReply:
    """`notify_asker`: the asker alone sees it; `notify_thread`: the conversation does;
    `deliver`: the answer's ts (None: ephemeral); `post_visibly`: None when the bot may not."""

    client: AsyncWebClient
    where: Where
    channel: str | None
    user: str | None
    response_url: str | None = None
    thread_ts: str | None = None
    message_ts: str | None = None
    ack: OnceAck | None = None
    #: what a DM's status says; set once the question is routed
    status_kind: WorkKind = "answer"
    #: a command's progress replaces the message its response_url came from (Try again's error)
    in_place: bool = False
    _signal: asyncio.Future[Any] | None = field(default=None, repr=False)
    _signal_thread: str | None = field(default=None, repr=False)
    _progress_gone: bool = field(default=False, repr=False)
    _progress_ts: str | None = field(default=None, repr=False)
    _answered_in_thread: bool = field(default=False, repr=False)
    progress: Progress = field(default=NO_PROGRESS, init=False, repr=False)

    async def start_progress(self, msg: Message, kind: WorkKind | None = None) -> None:
        """`kind`: what a DM's status says, when not `status_kind` (the team's answer)."""
        if self.where == "command":
            if self.ack is not None and await self.ack(msg):
                self._signal = asyncio.ensure_future(_true())
            else:  # acknowledged already: sent alongside the work, awaited before replaced
                self._signal = asyncio.ensure_future(
                    self._respond(msg, replace_original=self.in_place)
                )
        elif self.where == "direct":
            self._progress_ts = await self._post_direct(msg)
        elif self.where == "dm":
            self._signal_thread = self.thread_ts or self.message_ts
            kind = kind or self.status_kind
            status, loading = assistant_status(kind), loading_messages(kind)
            self._signal = asyncio.ensure_future(self._status(status, loading))
        elif self.channel and self.message_ts:
            self._signal = asyncio.ensure_future(self._react(add=True))

    async def update_progress(self, msg: Message) -> None:
        if self.where == "command":
            if await self._progress_posted():  # the progress note becomes this one
                await self._respond(msg, replace_original=True)
        elif self.where == "direct":
            if self._progress_ts is not None:
                await self._replace(self._progress_ts, msg)
        else:
            await self.notify_asker(msg)

    async def notify_asker(self, msg: Message) -> None:
        if self.where == "command":
            if self._signal is None and self.ack is not None and await self.ack(msg):
                return
            replace = await self._progress_posted()
            await self._respond(msg, replace_original=replace)
            self._progress_gone = self._progress_gone or replace
        elif self.where == "direct":
            await self._show(msg)
        else:
            await self._status_settled()
            await posting.post_ephemeral(
                self.client,
                channel=self.channel,
                user=self.user,
                msg=msg,
                thread_ts=self.thread_ts,
                response_url=self.response_url,
            )

    async def notify_thread(self, msg: Message) -> None:
        if self.where in ("command", "click"):  # no thread of its own: the asker's
            await self.notify_asker(msg)
        elif self.where == "direct":
            await self._show(msg)
        else:
            await self._post(msg)

    async def deliver(self, msg: Message) -> str | None:
        if self.where == "direct":
            return await self._show(msg)
        ts = await self._post(msg)
        if self.where == "dm":  # Slack takes the status down when the answer is under it
            self._answered_in_thread = self._signal is not None and (
                self.thread_ts == self._signal_thread
            )
        return ts

    async def _post(self, msg: Message) -> str | None:
        if self.where == "click" and self.thread_ts is None:
            await self._respond(msg)
            return None
        await self._status_settled()
        replace = self.where == "command" and await self._progress_posted()
        ts = None
        if self.channel:
            strict = not self.response_url  # nowhere else to go: the caller decides
            ts = await posting.post_visibly(
                self.client, channel=self.channel, msg=msg, thread_ts=self.thread_ts, strict=strict
            )
        if ts is None:  # to the asker alone, with the hint to invite the bot
            await self._respond(render.with_not_in_channel_hint(msg), replace_original=replace)
            self._progress_gone = self._progress_gone or replace
        return ts

    async def post_visibly(self, msg: Message) -> str | None:
        if self.where == "direct":
            return await self._post_direct(msg)
        await self._status_settled()
        if not self.channel or (self.where == "click" and self.thread_ts is None):
            return None
        return await posting.post_visibly(
            self.client, channel=self.channel, msg=msg, thread_ts=self.thread_ts
        )

    async def finish(self) -> None:
        if self.where == "command":
            if await self._progress_posted():
                self._progress_gone = True
                await self._respond(None, delete_original=True)
            return
        signal, self._signal = self._signal, None
        if signal is None or self.where == "direct":
            return
        await signal
        if self.where == "dm":
            if not self._answered_in_thread:  # Slack clears it when the answer is there
                await self._status(CLEARED_STATUS, None)
        else:
            await self._react(add=False)

    async def _progress_posted(self) -> bool:
        if self._signal is None or self._progress_gone:
            return False
        return await self._signal is True

    async def _status_settled(self) -> None:
        if self.where == "dm" and self._signal is not None:
            await self._signal

    async def _respond(self, msg: Message | None, **how: bool) -> bool:
        return await posting.respond(self.response_url, msg, session=self.client.session, **how)

    async def _react(self, *, add: bool) -> None:
        where = {"channel": self.channel or "", "timestamp": self.message_ts or ""}
        call = self.client.reactions_add if add else self.client.reactions_remove
        try:
            await call(name=PROGRESS_REACTION, **where)
        except SLACK_CALL_FAILURES as exc:
            logger.debug("reaction %s failed: %s", "add" if add else "remove", type(exc).__name__)

    async def _status(self, status: str, loading: list[str] | None) -> None:
        try:
            await self.client.assistant_threads_setStatus(
                channel_id=self.channel or "",
                thread_ts=self._signal_thread or "",
                status=status,
                loading_messages=loading,
            )
        except SLACK_CALL_FAILURES as exc:  # the answer still comes without it
            logger.info("assistant.threads.setStatus failed: %s", type(exc).__name__)

    async def _show(self, msg: Message) -> str | None:
        ts, self._progress_ts = self._progress_ts, None
        if ts is not None:
            await self._replace(ts, msg)
            return ts
        return await self._post_direct(msg)

    async def _replace(self, ts: str, msg: Message) -> None:
        # `blocks` always sent: without it chat.update keeps the old message's blocks
        await self.client.chat_update(
            channel=self.channel or "", ts=ts, text=msg["text"], blocks=msg.get("blocks") or []
        )

    async def _post_direct(self, msg: Message) -> str | None:
        """Posted with the user id as channel (Ask again): Slack answers with the DM's id."""
        if not self.channel:
            return None
        response = await self.client.chat_postMessage(
            channel=self.channel, unfurl_links=False, unfurl_media=False, **posting.payload(msg)
        )
        opened = response.get("channel")
        if isinstance(opened, str) and opened:
            self.channel = opened
        ts = response.get("ts")
        return ts if isinstance(ts, str) and ts else None


async def _true() -> bool:
    return True
