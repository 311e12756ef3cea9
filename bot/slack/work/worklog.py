"""Work in flight, durably: each request is written before Slack is acknowledged
(`work:<id>`) with a lease (`lease:<id>` = the owning replica, renewed while it works) that
is also the delivery's claim, so one write drops Slack's retries and owns the work. The
reply turns the lease into a "done" marker against late retries; a record whose lease
expired is taken over by one replica (`claim_orphans`); records past `max_age` are dropped
and counted. Payloads are opaque JSON."""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from bot import keys
from bot.observability.metrics import Metrics
from bot.store import TEXT, ModelCodec, Op, Store

logger = logging.getLogger(__name__)

#: how many unfinished records one scan looks at
SCAN_LIMIT = 500
#: ids remembered in process (finished work, so a record whose delete was lost is not
#: answered again; deliveries claimed, until their listener accepts them or they age out)
MAX_REMEMBERED_IDS = 10_000
_RECOVERED = "gdocs_work_recovered_total"
_DROPPED = "gdocs_work_dropped_total"


class WorkRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    #: what to finish: command, mention, dm, action, … (the caller's vocabulary)
    kind: str
    payload: dict[str, Any]
    #: when the request was accepted (seconds since the epoch)
    accepted_at: float
    #: how many times a process took it over
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
        self._store = store
        self._lease = lease_seconds
        self._max_age = max_age_seconds
        self._done = done_seconds
        self._metrics = metrics
        self._clock = clock
        #: this process: a lease naming it is ours
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        #: work this process owns and has not finished
        self._mine: dict[str, WorkRecord] = {}
        #: work this process finished lately: never taken over again, even if its record
        #: came back (its delete went to per-process state while the store was out)
        self._finished: OrderedDict[str, None] = OrderedDict()
        #: deliveries this process claimed lately (their lease is ours): the listener's
        #: `accept` takes the claim over; claims of deliveries that need no work just age out
        self._claimed: OrderedDict[str, None] = OrderedDict()
        #: when each of our leases was last written (by the clock, taken before the write)
        self._leased: dict[str, float] = {}

    @property
    def lease_seconds(self) -> float:
        return self._lease

    @property
    def owned(self) -> int:
        return len(self._mine)

    async def claim(self, key: str) -> bool:
        """Claim a delivery as it arrives: False when it was claimed before (a retry of one
        being worked on, or answered within `done_seconds`)."""
        claimed = await self._store.add(keys.LEASE.key(key), self.owner, TEXT, self._lease)
        if not claimed:
            return False
        self._claimed[key] = None
        while len(self._claimed) > MAX_REMEMBERED_IDS:
            self._claimed.popitem(last=False)
        return True

    async def accept(
        self, kind: str, payload: dict[str, Any], *, key: str | None
    ) -> WorkRecord | None:
        """Record work before it is acknowledged: the delivery's lease (`key`: Slack's event
        or trigger id) and its record in one batch, the record only if the lease was free.
        None when that delivery's work is recorded already (a retry)."""
        record = WorkRecord(
            id=key or uuid.uuid4().hex, kind=kind, payload=payload, accepted_at=self._clock()
        )
        lease, work = keys.LEASE.key(record.id), keys.WORK.key(record.id)
        # the record outlives max_age by a little, so a scan sees it and counts the drop
        keep = self._max_age + 60
        since = self._clock()  # before the lease is written: it lives at least this long
        if key is not None and key in self._claimed:
            del self._claimed[record.id]
            leased: object = True
            recorded: object = await self._store.add(work, record, RECORD_CODEC, keep)
        else:
            leased, recorded = await self._store.batch(
                [
                    Op.add(lease, self.owner, TEXT, self._lease),
                    Op.add(work, record, RECORD_CODEC, keep, only_if=0),
                ]
            )
        if not leased:
            return None  # a live owner has it: this is a retry
        if not recorded:  # a record without its lease: a dead owner's, recovery's to take
            await self._store.delete_if(lease, self.owner, TEXT)
            return None
        self._mine[record.id] = record
        self._leased[record.id] = since
        return record

    async def still_mine(self, record: WorkRecord) -> bool:
        """Whether this process still holds the work's lease (False: another took it over;
        this one must not answer twice). A lease younger than half its life is ours without
        asking the store; an older one is renewed."""
        if record.id not in self._mine:
            return False
        since = self._leased.get(record.id)
        if since is not None and self._clock() - since < self._lease / 2:
            return True
        lease = keys.LEASE.key(record.id)
        now = self._clock()
        if await self._store.replace(lease, self.owner, self.owner, TEXT, self._lease):
            self._leased[record.id] = now
            return True
        # gone (expired while the store was out, or evicted from a full store) rather than
        # taken: ours again, unless another process holds it now
        if await self._store.add(lease, self.owner, TEXT, self._lease):
            self._leased[record.id] = now
            return True
        return False

    async def note_reply(self, record: WorkRecord, ts: str) -> None:
        """Keep the ts of the reply's message with the work (one write), so that a process
        taking the work over finishes that message instead of posting another."""
        mine = self._mine.get(record.id)
        if mine is None:
            return
        noted = mine.model_copy(update={"reply_ts": ts})
        self._mine[record.id] = noted
        await self._store.set(keys.WORK.key(record.id), noted, RECORD_CODEC, self._max_age + 60)

    async def finish(self, record: WorkRecord, also: Sequence[Op] = ()) -> list[object]:
        """The reply is delivered (or the failure told): forget the work, and turn its lease
        into the "done" marker against late retries. `also`: the question's other writes,
        in the same store batch (one transaction, one round trip); their results."""
        if self._mine.pop(record.id, None) is None:
            return await self._store.batch(also) if also else []
        self._leased.pop(record.id, None)
        self._remember_finished(record.id)
        ops = [
            Op.delete(keys.WORK.key(record.id)),
            Op.replace(keys.LEASE.key(record.id), self.owner, "done", TEXT, self._done),
            *also,
        ]
        return (await self._store.batch(ops))[2 : 2 + len(also)]

    async def renew_all(self) -> None:
        """Keep the leases of the work this process is doing (every lease/3 or so)."""
        for record in list(self._mine.values()):
            if record.id not in self._mine:  # finished while the ones before were renewed
                continue
            self._leased.pop(record.id, None)  # renewed in the store, not trusted locally
            if await self.still_mine(record) or record.id not in self._mine:
                continue  # kept, or finished meanwhile (its lease is the "done" marker now)
            logger.warning("lost the lease of work in flight", extra={"work_id": record.id})
            self._mine.pop(record.id, None)
            self._leased.pop(record.id, None)

    async def release_all(self) -> int:
        """At shutdown: leave unfinished work in the store for the next process, with its
        lease released so it is taken over at once. How many were left."""
        left = list(self._mine.values())
        self._mine.clear()
        self._leased.clear()
        for record in left:
            await self._store.delete_if(keys.LEASE.key(record.id), self.owner, TEXT)
        return len(left)

    async def claim_orphans(self) -> list[WorkRecord]:
        """Unfinished work whose owner is gone, now owned by this process (one taker among
        all replicas); records past max_age are dropped and counted."""
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
                await self._store.set(key, taken, RECORD_CODEC, self._max_age + 60)
                self._mine[record.id] = taken
                claimed.append(taken)
                self._count(_RECOVERED, "Unfinished work taken over from a process that died.")
        return claimed

    async def drop(self, record: WorkRecord, reason: str) -> None:
        """Give up on work that cannot be finished (e.g. nowhere left to post the reply)."""
        self._mine.pop(record.id, None)
        self._leased.pop(record.id, None)
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
        self._count(_DROPPED, "Unfinished work given up on, by reason.", reason=reason)

    def _remember_finished(self, work_id: str) -> None:
        self._finished[work_id] = None
        while len(self._finished) > MAX_REMEMBERED_IDS:
            self._finished.popitem(last=False)

    def _count(self, name: str, help_text: str, **labels: str) -> None:
        if self._metrics is not None:
            self._metrics.count(name, help_text, 1.0, **labels)
