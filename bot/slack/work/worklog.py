"""Work in flight, durably: each request's record (`work:<id>`) and its lease (`lease:<id>`,
the owner, also the delivery's claim) are one write before Slack's ack. The first reply turns
the lease into a "done" marker (with the question's writes in the same batch); work whose
lease expired is taken over by one replica and its reply carries the restart note."""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict
from slack_sdk.errors import SlackApiError

from bot import keys
from bot.observability.metrics import Metrics
from bot.render import Message, with_restart_note
from bot.slack.delivery.posting import CANNOT_POST
from bot.slack.delivery.replies import SlackReply
from bot.slack.delivery.streams import StreamReply
from bot.store import TEXT, ModelCodec, Op, Store, StoreError

logger = logging.getLogger(__name__)

SCAN_LIMIT = 500
#: finished here lately: not taken over again if its delete was lost in an outage
MAX_REMEMBERED_IDS = 10_000


class WorkRecord(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    id: str
    #: command, mention, dm, action, …
    kind: str
    payload: dict[str, Any]
    accepted_at: float
    takeovers: int = 0
    #: the reply's message once one exists (a streamed answer's): a restart finishes it
    reply_ts: str | None = None


RECORD_CODEC = ModelCodec(WorkRecord)


class WorkLog:
    def __init__(
        self,
        store: Store,
        *,
        lease_seconds: float,
        max_age_seconds: float,
        done_seconds: float = 600.0,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store, self._metrics, self._clock = store, metrics, clock
        self.lease_seconds = self._lease = lease_seconds
        self._max_age, self._done = max_age_seconds, done_seconds
        self._keep = max_age_seconds + 60  # a scan still sees a record too old, and counts it
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._mine: dict[str, WorkRecord] = {}
        self._finished: dict[str, None] = {}

    @property
    def owned(self) -> int:
        return len(self._mine)

    async def claim(self, key: str) -> bool:
        """Claim a delivery that records no work: False for a retry."""
        return await self._store.add(keys.LEASE.key(key), self.owner, TEXT, self._lease)

    async def accept(
        self, kind: str, payload: dict[str, Any], *, key: str | None
    ) -> WorkRecord | None:
        """The delivery's lease and its record in one batch, before the ack; None: a retry."""
        record = WorkRecord(
            id=key or uuid.uuid4().hex, kind=kind, payload=payload, accepted_at=self._clock()
        )
        lease, work = keys.LEASE.key(record.id), keys.WORK.key(record.id)
        leased, recorded = await self._store.batch(
            [
                Op.add(lease, self.owner, TEXT, self._lease),
                Op.add(work, record, RECORD_CODEC, self._keep, only_if=0),
            ]
        )
        if not leased:
            return None  # a live owner has it: this is a retry
        if not recorded:  # a record without its lease: a dead owner's, recovery's to take
            await self._store.delete_if(lease, self.owner, TEXT)
            return None
        self._mine[record.id] = record
        return record

    async def still_mine(self, record: WorkRecord) -> bool:
        """Renew the lease; False when another process took the work over."""
        if record.id not in self._mine:
            return False
        lease = keys.LEASE.key(record.id)
        if await self._store.replace(lease, self.owner, self.owner, TEXT, self._lease):
            return True
        # gone (expired while the store was out, or evicted from a full store) rather than
        # taken: ours again, unless another process holds it now
        return await self._store.add(lease, self.owner, TEXT, self._lease)

    async def note_reply(self, record: WorkRecord, ts: str) -> None:
        mine = self._mine.get(record.id)
        if mine is None:
            return
        noted = mine.model_copy(update={"reply_ts": ts})
        self._mine[record.id] = noted
        await self._store.set(keys.WORK.key(record.id), noted, RECORD_CODEC, self._keep)

    async def finish(self, record: WorkRecord, also: Sequence[Op] = ()) -> None:
        """Forget the work, its lease now the "done" marker; `also` (the question's writes)
        in the same batch."""
        ops: list[Op] = []
        if self._mine.pop(record.id, None) is not None:
            self._remember_finished(record.id)
            lease = keys.LEASE.key(record.id)
            ops = [Op.delete(keys.WORK.key(record.id))]
            ops.append(Op.replace(lease, self.owner, "done", TEXT, self._done))
        if ops or also:
            await self._store.batch([*ops, *also])

    async def renew_all(self) -> None:
        for record in list(self._mine.values()):
            if await self.still_mine(record) or record.id not in self._mine:
                continue  # kept, or finished meanwhile (its lease is the "done" marker now)
            logger.warning("lost the lease of work in flight", extra={"work_id": record.id})
            self._mine.pop(record.id, None)

    async def release_all(self) -> int:
        left = list(self._mine.values())
        self._mine.clear()
        for record in left:
            await self._store.delete_if(keys.LEASE.key(record.id), self.owner, TEXT)
        return len(left)

    async def claim_orphans(self) -> list[WorkRecord]:
        """Unfinished work whose owner is gone, now ours (one taker among replicas)."""
        now = self._clock()
        claimed: list[WorkRecord] = []
        for key, record in await self._store.scan(keys.WORK.prefix, RECORD_CODEC, SCAN_LIMIT):
            if record.id in self._mine:
                continue
            if record.id in self._finished:  # answered here: only its delete was lost
                await self._store.delete(key)
                continue
            if now - record.accepted_at > self._max_age:
                await self._drop(key, record, "too_old")
                continue
            if await self._store.add(keys.LEASE.key(record.id), self.owner, TEXT, self._lease):
                taken = record.model_copy(update={"takeovers": record.takeovers + 1})
                await self._store.set(key, taken, RECORD_CODEC, self._keep)
                self._mine[record.id] = taken
                claimed.append(taken)
                help_text = "Unfinished work taken over from a process that died."
                self._count("gdocs_work_recovered_total", help_text)
        return claimed

    async def drop(self, record: WorkRecord, reason: str) -> None:
        self._mine.pop(record.id, None)
        self._remember_finished(record.id)
        await self._drop(keys.WORK.key(record.id), record, reason)

    async def _drop(self, key: str, record: WorkRecord, reason: str) -> None:
        await self._store.delete(key)
        await self._store.delete(keys.LEASE.key(record.id))
        logger.warning(
            "dropped unfinished work (%s)",
            reason,
            extra={"work_id": record.id, "kind": record.kind, "outcome": f"dropped_{reason}"},
        )
        help_text = "Unfinished work given up on, by reason."
        self._count("gdocs_work_dropped_total", help_text, reason=reason)

    def _remember_finished(self, work_id: str) -> None:
        self._finished[work_id] = None
        if len(self._finished) > MAX_REMEMBERED_IDS:  # the oldest goes
            del self._finished[next(iter(self._finished))]

    def _count(self, name: str, help_text: str, **labels: str) -> None:
        if self._metrics is not None:
            self._metrics.count(name, help_text, 1.0, **labels)


Writes = Callable[[str | None], Sequence[Op]]


@dataclass
class Staged:
    """An answer's writes: in its work's "done" batch when that comes with the answer."""

    writes: Writes
    done: bool = False

    async def write(self, store: Store, ts: str | None) -> None:
        if ops := self.take(ts):
            await store.batch(ops)

    def take(self, ts: str | None) -> Sequence[Op]:
        if self.done:
            return ()
        self.done = True
        return self.writes(ts)


class TrackedReply:
    """A reply under a work record: silent when another process took the work over."""

    def __init__(
        self, inner: SlackReply | StreamReply, log: WorkLog, record: WorkRecord, *, resumed: bool
    ) -> None:
        self.inner, self._log, self._record, self._resumed = inner, log, record, resumed
        self._delivered = False
        self.staged: Staged | None = None
        self.client, self.channel, self.user = inner.client, inner.channel, inner.user
        self.response_url = inner.response_url
        self.progress = inner.progress
        self.start_progress = inner.start_progress
        self.update_progress = inner.update_progress
        self.finish = inner.finish

    @property
    def thread_ts(self) -> str | None:  # a stream's changes once it started
        return self.inner.thread_ts

    async def notify_asker(self, msg: Message) -> None:
        await self._final(self.inner.notify_asker, msg)

    async def notify_thread(self, msg: Message) -> None:
        await self._final(self.inner.notify_thread, msg)

    async def deliver(self, msg: Message) -> str | None:
        return await self._final(self.inner.deliver, msg)

    async def post_visibly(self, msg: Message) -> str | None:
        # None: nothing was shown, so nothing is delivered yet
        return await self._final(self.inner.post_visibly, msg, always=False)

    async def _final(
        self, send: Callable[[Message], Awaitable[str | None]], msg: Message, *, always: bool = True
    ) -> str | None:
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
        if always or sent is not None:
            self._delivered = True
            also = self.staged.take(sent) if self.staged else ()
            await self._log.finish(self._record, also)
        return sent


#: what the flows answer through
Reply = SlackReply | StreamReply | TrackedReply


def track(
    log: WorkLog, reply: SlackReply | StreamReply, record: WorkRecord | None, *, resumed: bool
) -> Reply:
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
