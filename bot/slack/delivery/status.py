"""The thread status under a direct-message question while the bot works on it
(`assistant.threads.setStatus`: "gdocs is searching Google's docs…" and a few rotating
loading messages), instead of the reaction channels get.

The status is sent in the background, like the reaction: it must not delay the answer. Every
later post waits for it first, so a slow status call can never land after the answer and
hang under it. Slack takes the status down itself when the app posts in that thread; when the
answer went elsewhere (a DM's top level) or the work failed, `finish` clears it explicitly.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from slack_sdk.web.async_client import AsyncWebClient

from bot.render import CLEARED_STATUS, Message, WorkKind, assistant_status, loading_messages
from bot.slack.delivery.replies import ThreadReply
from bot.slack.failures import SLACK_CALL_FAILURES

logger = logging.getLogger(__name__)

_WORK_KINDS: dict[str, WorkKind] = {
    "answer": "answer",
    "search": "search",
    "pay": "pay",
    "doc": "doc",
}


def work_kind(route_kind: str) -> WorkKind:
    """What the status says for a route (help and quota never show one)."""
    return _WORK_KINDS.get(route_kind, "answer")


@dataclass
class ThreadStatus:
    """One thread's status: set once, then cleared (or left to Slack to clear)."""

    client: AsyncWebClient
    channel: str
    thread_ts: str
    _set: asyncio.Task[None] | None = field(default=None, repr=False)

    def start(self, kind: WorkKind) -> None:
        status, loading = assistant_status(kind), loading_messages(kind)
        self._set = asyncio.ensure_future(self._send(status, loading))

    async def settled(self) -> None:
        """Wait until the status call has been answered (before posting anything)."""
        if self._set is not None:
            await self._set

    async def clear(self) -> None:
        """Take the status down (only if one was set; idempotent)."""
        if self._set is None:
            return
        started, self._set = self._set, None
        await started
        await self._send(CLEARED_STATUS, None)

    async def _send(self, status: str, loading: list[str] | None) -> None:
        try:
            await self.client.assistant_threads_setStatus(
                channel_id=self.channel,
                thread_ts=self.thread_ts,
                status=status,
                loading_messages=loading,
            )
        except SLACK_CALL_FAILURES as exc:
            # a progress signal: the answer still comes without it
            logger.info("assistant.threads.setStatus failed: %s", type(exc).__name__)


@dataclass
class DmReply(ThreadReply):
    """A direct message's replies: like a mention's, with the thread status as progress."""

    #: what the status says; the listener sets it once the question is routed
    status_kind: WorkKind = "answer"
    #: set when the answer was posted in the status's thread (Slack then clears the status)
    _answered_in_thread: bool = field(default=False, repr=False)
    _status: ThreadStatus | None = field(default=None, repr=False)

    async def start_progress(self, msg: Message) -> None:
        thread = self.thread_ts or self.message_ts
        self._status = ThreadStatus(self.client, self.channel, thread)
        self._status.start(self.status_kind)

    async def _status_settled(self) -> None:
        if self._status is not None:
            await self._status.settled()

    async def notify_asker(self, msg: Message) -> None:
        await self._status_settled()
        await super().notify_asker(msg)

    async def notify_thread(self, msg: Message) -> None:
        await self._status_settled()
        await super().notify_thread(msg)

    async def deliver(self, msg: Message) -> str | None:
        await self._status_settled()
        ts = await super().deliver(msg)
        status = self._status
        self._answered_in_thread = status is not None and self.thread_ts == status.thread_ts
        return ts

    async def post_visibly(self, msg: Message) -> str | None:
        await self._status_settled()
        return await super().post_visibly(msg)

    async def finish(self) -> None:
        if self._status is not None and not self._answered_in_thread:
            await self._status.clear()
        await super().finish()
