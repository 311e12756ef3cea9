"""Where the replies to one question go, and how the asker sees progress.

A `/gdocs` command cannot be used in a thread: its answer is a visible channel message and
progress is an ephemeral "Looking that up…" carried by the acknowledgement itself (no extra
call, on screen at once), replaced or deleted through `response_url` when the answer lands.
Help, usage problems and "wait a moment" ride on the acknowledgement the same way.
A mention or DM is answered in its thread (or DM), and progress is a reaction on the asker's
message. A button click's progress is a reaction on the clicked message: an action's
`response_url` cannot carry it, since `replace_original`/`delete_original` there act on the
clicked message itself, and an ephemeral "Fetching…" could never be taken down again.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Protocol

from slack_sdk.web.async_client import AsyncWebClient

from bot.render import Message
from bot.slack.delivery import posting
from bot.slack.listeners.acks import OnceAck

logger = logging.getLogger(__name__)

PROGRESS_REACTION = "mag"


class Reply(Protocol):
    """Where one request's replies go. Notices come in two kinds: `notify_asker` (only the
    asker sees it) and `notify_thread` (the conversation sees it where the surface has one —
    a mention's thread, a DM; a command or a click has none, so the asker alone sees it)."""

    @property
    def client(self) -> AsyncWebClient: ...

    @property
    def channel(self) -> str | None: ...

    @property
    def user(self) -> str | None: ...

    @property
    def response_url(self) -> str | None: ...

    @property
    def thread_ts(self) -> str | None:
        """The thread replies belong in; None for a /gdocs answer, which starts one."""

    async def start_progress(self, msg: Message) -> None: ...

    async def update_progress(self, msg: Message) -> None:
        """Say more while the work goes on (e.g. why the answer takes longer)."""

    async def notify_asker(self, msg: Message) -> None:
        """A usage problem, a rate limit: only the asker sees it."""

    async def notify_thread(self, msg: Message) -> None:
        """Help, an outage: where the conversation sees it (the asker alone on surfaces
        without a visible thread)."""

    async def deliver(self, msg: Message) -> str | None:
        """Post the answer; the new message's ts (None when it went ephemerally)."""

    async def post_visibly(self, msg: Message) -> str | None:
        """Post where the conversation sees it; None, with nothing sent, when the bot can't."""

    async def finish(self) -> None:
        """Take the progress signal down (idempotent)."""


@dataclass
class _ProgressReaction:
    """A reaction on one message while the work goes on: added in the background (it must
    not delay the work), taken off once the reply has landed."""

    client: AsyncWebClient
    channel: str
    ts: str
    _added: asyncio.Task[None] | None = field(default=None, repr=False)

    def add(self) -> None:
        self._added = asyncio.ensure_future(self._react(add=True))

    async def remove(self) -> None:
        if self._added is None:
            return
        added, self._added = self._added, None
        await added
        await self._react(add=False)

    async def _react(self, *, add: bool) -> None:
        await posting.react(
            self.client, channel=self.channel, ts=self.ts, name=PROGRESS_REACTION, add=add
        )


@dataclass
class CommandReply:
    """Replies to a slash command: visible answer, ephemeral everything else."""

    client: AsyncWebClient
    channel: str | None
    user: str | None
    response_url: str | None
    #: the command's acknowledgement: the first ephemeral reply rides on it
    ack: OnceAck
    thread_ts: str | None = None
    _progress: asyncio.Task[bool] | None = field(default=None, repr=False)
    _progress_gone: bool = False

    async def start_progress(self, msg: Message) -> None:
        if await self.ack(msg):
            self._progress = asyncio.ensure_future(_already_on_screen())
            return
        # acknowledged already: delivered concurrently with the upstream call instead, and
        # awaited before it is replaced
        self._progress = asyncio.ensure_future(
            posting.respond(self.response_url, msg, session=self.client.session)
        )

    async def _progress_posted(self) -> bool:
        if self._progress is None or self._progress_gone:
            return False
        return await self._progress

    async def update_progress(self, msg: Message) -> None:
        if await self._progress_posted():  # the progress note becomes this one
            await posting.respond(
                self.response_url, msg, replace_original=True, session=self.client.session
            )

    async def notify_asker(self, msg: Message) -> None:
        if self._progress is None and await self.ack(msg):
            return
        replace = await self._progress_posted()
        await posting.respond(
            self.response_url, msg, replace_original=replace, session=self.client.session
        )
        self._progress_gone = self._progress_gone or replace

    async def notify_thread(self, msg: Message) -> None:
        # a command has no thread: its notices are the asker's
        await self.notify_asker(msg)

    async def deliver(self, msg: Message) -> str | None:
        replace = await self._progress_posted()
        ts = await posting.post_or_fallback(
            self.client,
            channel=self.channel,
            msg=msg,
            response_url=self.response_url,
            replace_original=replace,
        )
        if ts is None:
            self._progress_gone = self._progress_gone or replace
        return ts

    async def post_visibly(self, msg: Message) -> str | None:
        if not self.channel:
            return None
        return await posting.post_visibly(self.client, channel=self.channel, msg=msg)

    async def finish(self) -> None:
        if await self._progress_posted():
            self._progress_gone = True
            await posting.respond(
                self.response_url, delete_original=True, session=self.client.session
            )


async def _already_on_screen() -> bool:
    return True


@dataclass
class ThreadReply:
    """Replies to a mention or DM, in the thread (or DM) it came from. With a `response_url`
    (the message shortcut), where the bot may not post the replies go to the asker through
    it instead, with the hint to invite the bot."""

    client: AsyncWebClient
    channel: str
    user: str | None
    #: the asker's message, which carries the progress reaction
    message_ts: str
    thread_ts: str | None
    response_url: str | None = None
    _progress: _ProgressReaction | None = field(default=None, repr=False)

    async def start_progress(self, msg: Message) -> None:
        self._progress = _ProgressReaction(self.client, self.channel, self.message_ts)
        self._progress.add()

    async def update_progress(self, msg: Message) -> None:
        await self.notify_asker(msg)

    async def notify_asker(self, msg: Message) -> None:
        await posting.post_ephemeral(
            self.client,
            channel=self.channel,
            user=self.user,
            msg=msg,
            thread_ts=self.thread_ts,
            response_url=self.response_url,
        )

    async def notify_thread(self, msg: Message) -> None:
        await self._post(msg)

    async def deliver(self, msg: Message) -> str | None:
        return await self._post(msg)

    async def _post(self, msg: Message) -> str | None:
        if self.response_url:
            return await posting.post_or_fallback(
                self.client,
                channel=self.channel,
                msg=msg,
                response_url=self.response_url,
                thread_ts=self.thread_ts,
            )
        return await posting.post(
            self.client, channel=self.channel, msg=msg, thread_ts=self.thread_ts
        )

    async def post_visibly(self, msg: Message) -> str | None:
        return await posting.post_visibly(
            self.client, channel=self.channel, msg=msg, thread_ts=self.thread_ts
        )

    async def finish(self) -> None:
        if self._progress is not None:
            await self._progress.remove()


@dataclass
class ActionReply:
    """Replies to a button click: into the answer's thread, ephemeral notices to the clicker."""

    client: AsyncWebClient
    channel: str | None
    user: str | None
    response_url: str | None
    #: None when the clicked message is ephemeral: there is no visible thread to post into
    thread_ts: str | None
    #: the clicked message, which carries the progress reaction (None when ephemeral)
    message_ts: str | None = None
    _progress: _ProgressReaction | None = field(default=None, repr=False)

    async def start_progress(self, msg: Message) -> None:
        if self.channel and self.message_ts:
            self._progress = _ProgressReaction(self.client, self.channel, self.message_ts)
            self._progress.add()

    async def update_progress(self, msg: Message) -> None:
        await self.notify_asker(msg)

    async def notify_asker(self, msg: Message) -> None:
        await posting.post_ephemeral(
            self.client,
            channel=self.channel,
            user=self.user,
            msg=msg,
            thread_ts=self.thread_ts,
            response_url=self.response_url,
        )

    async def notify_thread(self, msg: Message) -> None:
        # a click's notices are the clicker's: the answer's thread is other people's
        await self.notify_asker(msg)

    async def deliver(self, msg: Message) -> str | None:
        if self.thread_ts is None:
            await posting.respond(self.response_url, msg, session=self.client.session)
            return None
        return await posting.post_or_fallback(
            self.client,
            channel=self.channel,
            msg=msg,
            response_url=self.response_url,
            thread_ts=self.thread_ts,
        )

    async def post_visibly(self, msg: Message) -> str | None:
        if self.thread_ts is None or not self.channel:
            return None
        return await posting.post_visibly(
            self.client, channel=self.channel, msg=msg, thread_ts=self.thread_ts
        )

    async def finish(self) -> None:
        if self._progress is not None:
            await self._progress.remove()
