"""Acknowledged Slack work survives a crash: it is recorded before the ack (`bot.worklog`),
its replies are tracked (the lease is checked before a reply goes out, the record forgotten
after), and a replica that finds work whose owner died finishes it with a short note.

What is recorded is only what finishing needs: for a command its text, channel, asker and
`response_url`; for a mention or DM the event's channel, ts, thread, user and text; for a
click the action, its message and `response_url`; for the message shortcut the message's
ts, thread, author and text, who used it, the channel and `response_url`. A `response_url`
lives 30 minutes: past that a resumed reply is posted in the channel or thread when the bot
may post there, and the work is dropped (with a log line and a metric) when it may not.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.render import Message, with_restart_note
from bot.slack.delivery.posting import CANNOT_POST
from bot.slack.delivery.replies import Reply
from bot.slack.work.after_answer import take
from bot.worklog import WorkLog, WorkRecord

logger = logging.getLogger(__name__)

#: Slack's lifetime of a response_url
RESPONSE_URL_SECONDS = 30 * 60
_COMMAND_FIELDS = ("command", "text", "channel_id", "user_id", "response_url", "team_id")
_EVENT_FIELDS = ("type", "channel", "channel_type", "user", "text", "ts", "thread_ts", "team")
_MESSAGE_FIELDS = ("ts", "thread_ts")
_SHORTCUT_FIELDS = ("ts", "thread_ts", "text", "user")


def command_payload(body: dict[str, Any]) -> dict[str, Any]:
    return {k: body[k] for k in _COMMAND_FIELDS if isinstance(body.get(k), str)}


def event_payload(event: dict[str, Any], bot_user_id: str | None) -> dict[str, Any]:
    kept = {k: event[k] for k in _EVENT_FIELDS if isinstance(event.get(k), str)}
    return {"event": kept, "bot_user_id": bot_user_id}


def action_payload(body: dict[str, Any]) -> dict[str, Any]:
    found = body.get("message")
    message: dict[str, Any] = found if isinstance(found, dict) else {}
    return {
        "actions": body.get("actions") if isinstance(body.get("actions"), list) else [],
        "container": body.get("container") if isinstance(body.get("container"), dict) else {},
        "channel": body.get("channel") if isinstance(body.get("channel"), dict) else {},
        "user": body.get("user") if isinstance(body.get("user"), dict) else {},
        "message": {k: message[k] for k in _MESSAGE_FIELDS if isinstance(message.get(k), str)},
        "response_url": body.get("response_url"),
    }


def shortcut_payload(body: dict[str, Any]) -> dict[str, Any]:
    """The message shortcut: the message asked about, who asked, where, and the response_url."""
    found = body.get("message")
    message: dict[str, Any] = found if isinstance(found, dict) else {}
    channel = body.get("channel") if isinstance(body.get("channel"), dict) else {}
    user = body.get("user") if isinstance(body.get("user"), dict) else {}
    return {
        "channel": (channel or {}).get("id"),
        "user": (user or {}).get("id"),
        "message": {k: message[k] for k in _SHORTCUT_FIELDS if isinstance(message.get(k), str)},
        "response_url": body.get("response_url"),
        # a streamed answer in a channel names the asker's team
        "team": team.get("id") if isinstance(team := body.get("team"), dict) else None,
    }


def without_stale_response_url(record: WorkRecord, now: float) -> dict[str, Any]:
    """The record's payload, its response_url gone once Slack no longer takes it."""
    payload = dict(record.payload)
    if now - record.accepted_at > RESPONSE_URL_SECONDS:
        payload["response_url"] = None
    return payload


class TrackedReply:
    """A `Reply` whose messages belong to a work record: before each reply the lease is
    checked (another process took the work over: this one stays silent, so nothing is
    answered twice), after it the record is forgotten. A resumed reply carries the note."""

    def __init__(self, inner: Reply, log: WorkLog, record: WorkRecord, *, resumed: bool) -> None:
        self._inner = inner
        self._log = log
        self._record = record
        self._resumed = resumed
        #: a reply went out: the record is forgotten, the rest of the work just goes on
        self._delivered = False

    @property
    def client(self) -> AsyncWebClient:
        return self._inner.client

    @property
    def channel(self) -> str | None:
        return self._inner.channel

    @property
    def user(self) -> str | None:
        return self._inner.user

    @property
    def response_url(self) -> str | None:
        return self._inner.response_url

    @property
    def thread_ts(self) -> str | None:
        return self._inner.thread_ts

    @property
    def progress(self) -> object:
        """The wrapped reply's timeline (bot.slack.delivery.streams), if it has one."""
        return getattr(self._inner, "progress", None)

    async def start_progress(self, msg: Message) -> None:
        await self._inner.start_progress(msg)

    async def update_progress(self, msg: Message) -> None:
        await self._inner.update_progress(msg)

    async def finish(self) -> None:
        await self._inner.finish()

    async def notify_asker(self, msg: Message) -> None:
        await self._final(self._inner.notify_asker, msg)

    async def notify_thread(self, msg: Message) -> None:
        await self._final(self._inner.notify_thread, msg)

    async def deliver(self, msg: Message) -> str | None:
        ts = await self._final(self._inner.deliver, msg)
        return ts if isinstance(ts, str) else None

    async def post_visibly(self, msg: Message) -> str | None:
        # None: nothing was shown (the bot may not post there), so nothing is delivered yet
        ts = await self._final(self._inner.post_visibly, msg, shown=lambda ts: ts is not None)
        return ts if isinstance(ts, str) else None

    async def _final(
        self,
        send: Callable[[Message], Awaitable[Any]],
        msg: Message,
        *,
        shown: Callable[[Any], bool] = lambda _: True,
    ) -> Any:
        if self._delivered:
            return await send(self._noted(msg))
        if not await self._log.still_mine(self._record):
            logger.info("another process took this work over; not answering twice")
            return None
        try:
            sent = await send(self._noted(msg))
        except SlackApiError as exc:
            if exc.response.get("error") not in CANNOT_POST or self.response_url:
                raise
            # resumed past its response_url, and the bot may not post there: nowhere to go
            await self._log.drop(self._record, "cannot_post")
            return None
        if shown(sent):
            self._delivered = True
            await self._finish(sent if isinstance(sent, str) else None)
        return sent

    async def _finish(self, ts: str | None) -> None:
        """Forget the record; the question's other writes (answer record, thread memory,
        recent questions) share its batch."""
        staged = take()
        if staged is None:
            await self._log.finish(self._record)
            return
        staged.ops = list(staged.writes(ts))
        staged.results = await self._log.finish(self._record, staged.ops)

    def _noted(self, msg: Message) -> Message:
        # a resumed answer apologises once, in its first message
        return with_restart_note(msg) if self._resumed and not self._delivered else msg


def track(log: WorkLog, reply: Reply, record: WorkRecord | None, *, resumed: bool = False) -> Reply:
    """`reply`, tracked by `record` when there is one."""
    if record is None:
        return reply
    return TrackedReply(reply, log, record, resumed=resumed)
