"""What a work record keeps of each request, and replies tracked under it: the lease
checked before the first reply, the record forgotten after (with the question's writes in
the same batch); a resumed reply carries the restart note."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.render import Message, with_restart_note
from bot.slack.delivery.posting import CANNOT_POST
from bot.slack.delivery.replies import Reply, SlackReply
from bot.slack.delivery.streams import StreamReply
from bot.slack.work.worklog import WorkLog, WorkRecord
from bot.store import Op, Store, StoreError

logger = logging.getLogger(__name__)

#: Slack's lifetime of a response_url
RESPONSE_URL_SECONDS = 30 * 60
_COMMAND_FIELDS = ("command", "text", "channel_id", "user_id", "response_url", "team_id")
_EVENT_FIELDS = ("type", "channel", "channel_type", "user", "text", "ts", "thread_ts", "team")
_MESSAGE_FIELDS = ("ts", "thread_ts")
_SHORTCUT_FIELDS = ("ts", "thread_ts", "text", "user")


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def command_payload(body: dict[str, Any]) -> dict[str, Any]:
    return {k: body[k] for k in _COMMAND_FIELDS if isinstance(body.get(k), str)}


def event_payload(event: dict[str, Any], bot_user_id: str | None) -> dict[str, Any]:
    kept = {k: event[k] for k in _EVENT_FIELDS if isinstance(event.get(k), str)}
    return {"event": kept, "bot_user_id": bot_user_id}


def action_payload(body: dict[str, Any]) -> dict[str, Any]:
    message = _dict(body.get("message"))
    return {
        "actions": body.get("actions") if isinstance(body.get("actions"), list) else [],
        "container": _dict(body.get("container")),
        "channel": _dict(body.get("channel")),
        "user": _dict(body.get("user")),
        "message": {k: message[k] for k in _MESSAGE_FIELDS if isinstance(message.get(k), str)},
        "response_url": body.get("response_url"),
    }


def shortcut_payload(body: dict[str, Any], bot_user_id: str | None) -> dict[str, Any]:
    message = _dict(body.get("message"))
    return {
        "channel": _dict(body.get("channel")).get("id"),
        "user": _dict(body.get("user")).get("id"),
        "message": {k: message[k] for k in _SHORTCUT_FIELDS if isinstance(message.get(k), str)},
        "response_url": body.get("response_url"),
        "team": team.get("id") if isinstance(team := body.get("team"), dict) else None,
        "bot_user_id": bot_user_id,
    }


def without_stale_response_url(record: WorkRecord, now: float) -> dict[str, Any]:
    """The record's payload, without a response_url Slack no longer takes (30 minutes)."""
    payload = dict(record.payload)
    if now - record.accepted_at > RESPONSE_URL_SECONDS:
        payload["response_url"] = None
    return payload


Writes = Callable[[str | None], Sequence[Op]]


@dataclass
class Staged:
    writes: Writes
    results: list[object] | None = None
    ops: list[Op] = field(default_factory=list)

    async def write(self, store: Store, ts: str | None) -> list[object]:
        if self.results is None:
            self.ops = list(self.writes(ts))
            self.results = await store.batch(self.ops) if self.ops else []
        return self.results


_PENDING: ContextVar[Staged | None] = ContextVar("gdocs_after_answer", default=None)


@contextmanager
def delivering(writes: Writes) -> Iterator[Staged]:
    """Within the block, the next finished work record carries `writes` in its batch."""
    staged = Staged(writes)
    token = _PENDING.set(staged)
    try:
        yield staged
    finally:
        _PENDING.reset(token)


class TrackedReply:
    """A `Reply` under a work record: silent when another process took the work over."""

    def __init__(self, inner: Reply, log: WorkLog, record: WorkRecord, *, resumed: bool) -> None:
        self.inner = inner
        self._log = log
        self._record = record
        self._resumed = resumed
        self._delivered = False
        self.start_progress = inner.start_progress
        self.update_progress = inner.update_progress
        self.finish = inner.finish

    @property
    def client(self) -> AsyncWebClient:
        return self.inner.client

    @property
    def channel(self) -> str | None:
        return self.inner.channel

    @property
    def user(self) -> str | None:
        return self.inner.user

    @property
    def response_url(self) -> str | None:
        return self.inner.response_url

    @property
    def thread_ts(self) -> str | None:
        return self.inner.thread_ts

    @property
    def progress(self) -> object:
        return getattr(self.inner, "progress", None)

    async def notify_asker(self, msg: Message) -> None:
        await self._final(self.inner.notify_asker, msg)

    async def notify_thread(self, msg: Message) -> None:
        await self._final(self.inner.notify_thread, msg)

    async def deliver(self, msg: Message) -> str | None:
        ts = await self._final(self.inner.deliver, msg)
        return ts if isinstance(ts, str) else None

    async def post_visibly(self, msg: Message) -> str | None:
        # None: nothing was shown, so nothing is delivered yet
        ts = await self._final(self.inner.post_visibly, msg, shown=lambda ts: ts is not None)
        return ts if isinstance(ts, str) else None

    async def _final(
        self,
        send: Callable[[Message], Awaitable[Any]],
        msg: Message,
        *,
        shown: Callable[[Any], bool] = lambda _: True,
    ) -> Any:
        if self._delivered:
            return await send(msg)
        if not await self._log.still_mine(self._record):
            logger.info("another process took this work over; not answering twice")
            return None
        try:
            sent = await send(with_restart_note(msg) if self._resumed else msg)
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
        staged = _PENDING.get()
        if staged is None or staged.results is not None:
            await self._log.finish(self._record)
            return
        staged.ops = list(staged.writes(ts))
        staged.results = await self._log.finish(self._record, staged.ops)


def track(log: WorkLog, reply: Reply, record: WorkRecord | None, *, resumed: bool) -> Reply:
    return reply if record is None else TrackedReply(reply, log, record, resumed=resumed)


def streamed(
    log: WorkLog, inner: SlackReply, *, team: str | None, record: WorkRecord | None, resumed: bool
) -> StreamReply:
    """`inner` streamed, its ts kept with the work: resumed work finishes that message."""

    async def keep_ts(ts: str) -> None:
        if record is None:
            return
        try:
            await log.note_reply(record, ts)
        except StoreError as exc:  # a restart would post anew: worse, not broken
            logger.info("could not keep the stream's ts with its work: %s", exc.message)

    existing = record.reply_ts if record is not None and resumed else None
    return StreamReply(
        inner, team_id=team, existing_ts=existing, resumed=resumed, on_started=keep_ts
    )
