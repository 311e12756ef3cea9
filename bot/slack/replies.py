"""Where the replies to one question go, and how the asker sees progress.

A `/gdocs` command cannot be used in a thread: its answer is a visible channel message and
progress is an ephemeral "Looking that up…" (replaced or deleted when the answer lands).
A mention or DM is answered in its thread (or DM), and progress is a reaction on the asker's
message.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Protocol

from slack_sdk.web.async_client import AsyncWebClient

from bot.render import Message
from bot.slack import posting

logger = logging.getLogger(__name__)

PROGRESS_REACTION = "mag"


class Reply(Protocol):
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

    async def notice(self, msg: Message, *, private: bool = False) -> None:
        """Help, usage problems, errors: ephemeral where the surface allows."""

    async def deliver(self, msg: Message) -> str | None:
        """Post the answer; the new message's ts (None when it went ephemerally)."""

    async def finish(self) -> None:
        """Take the progress signal down (idempotent)."""


@dataclass
class CommandReply:
    """Replies to a slash command: visible answer, ephemeral everything else."""

    client: AsyncWebClient
    channel: str | None
    user: str | None
    response_url: str | None
    thread_ts: str | None = None
    _progress: asyncio.Task[bool] | None = field(default=None, repr=False)
    _progress_gone: bool = False

    async def start_progress(self, msg: Message) -> None:
        # delivered concurrently with the upstream call; awaited before it is replaced
        self._progress = asyncio.ensure_future(
            posting.respond(self.response_url, msg, session=self.client.session)
        )

    async def _progress_posted(self) -> bool:
        if self._progress is None or self._progress_gone:
            return False
        return await self._progress

    async def notice(self, msg: Message, *, private: bool = True) -> None:
        replace = await self._progress_posted()
        await posting.respond(
            self.response_url, msg, replace_original=replace, session=self.client.session
        )
        self._progress_gone = self._progress_gone or replace

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

    async def finish(self) -> None:
        if await self._progress_posted():
            self._progress_gone = True
            await posting.respond(
                self.response_url, delete_original=True, session=self.client.session
            )


@dataclass
class ThreadReply:
    """Replies to a mention or DM, in the thread (or DM) it came from."""

    client: AsyncWebClient
    channel: str
    user: str | None
    #: the asker's message, which carries the progress reaction
    message_ts: str
    thread_ts: str | None
    response_url: str | None = None
    _reacted: asyncio.Task[None] | None = field(default=None, repr=False)

    async def start_progress(self, msg: Message) -> None:
        self._reacted = asyncio.ensure_future(
            posting.react(
                self.client,
                channel=self.channel,
                ts=self.message_ts,
                name=PROGRESS_REACTION,
                add=True,
            )
        )

    async def notice(self, msg: Message, *, private: bool = False) -> None:
        if private:
            await posting.post_ephemeral(
                self.client, channel=self.channel, user=self.user, msg=msg, thread_ts=self.thread_ts
            )
            return
        await posting.post(self.client, channel=self.channel, msg=msg, thread_ts=self.thread_ts)

    async def deliver(self, msg: Message) -> str | None:
        return await posting.post(
            self.client, channel=self.channel, msg=msg, thread_ts=self.thread_ts
        )

    async def finish(self) -> None:
        if self._reacted is None:
            return
        reacted, self._reacted = self._reacted, None
        await reacted
        await posting.react(
            self.client, channel=self.channel, ts=self.message_ts, name=PROGRESS_REACTION, add=False
        )


@dataclass
class ActionReply:
    """Replies to a button click: into the answer's thread, ephemeral notices to the clicker."""

    client: AsyncWebClient
    channel: str | None
    user: str | None
    response_url: str | None
    thread_ts: str | None

    async def start_progress(self, msg: Message) -> None:
        return None

    async def notice(self, msg: Message, *, private: bool = True) -> None:
        await posting.post_ephemeral(
            self.client,
            channel=self.channel,
            user=self.user,
            msg=msg,
            thread_ts=self.thread_ts,
            response_url=self.response_url,
        )

    async def deliver(self, msg: Message) -> str | None:
        if self.thread_ts is None:
            # an ephemeral message's button: there is no visible thread to post into
            await posting.respond(self.response_url, msg, session=self.client.session)
            return None
        return await posting.post_or_fallback(
            self.client,
            channel=self.channel,
            msg=msg,
            response_url=self.response_url,
            thread_ts=self.thread_ts,
        )

    async def finish(self) -> None:
        return None
