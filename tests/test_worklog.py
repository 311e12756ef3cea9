"""The durable record of work in flight: one owner at a time, taken over once its lease has
expired, dropped when too old, released for the next process at shutdown."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from bot.observability.metrics import Metrics
from bot.slack.work.worklog import RECORD_CODEC, WorkLog
from bot.store import MemoryStore, SqliteStore, Store, redis_store
from tests.fakes.redis_server import RedisServer
from tests.store_backends import FakeClock

LEASE = 30.0
MAX_AGE = 3600.0


def _log(store: Store, clock: FakeClock, metrics: Metrics | None = None) -> WorkLog:
    return WorkLog(
        store, lease_seconds=LEASE, max_age_seconds=MAX_AGE, metrics=metrics, clock=clock
    )


async def test_a_delivery_is_recorded_once() -> None:
    """A retry of recorded work (same delivery key) is not recorded again."""
    clock = FakeClock()
    log = _log(MemoryStore(clock=clock), clock)
    first = await log.accept("command", {"text": "q"}, key="trigger:T1")
    assert first is not None
    assert await log.accept("command", {"text": "q"}, key="trigger:T1") is None
    assert 1 == log.owned


async def test_live_work_is_not_taken_over_and_finished_work_is_gone() -> None:
    """Another replica sees nothing to take while the owner's lease lives, and nothing at
    all once the owner has delivered."""
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    owner, other = _log(store, clock), _log(store, clock)
    record = await owner.accept("mention", {"event": {}}, key="event:E1")
    assert record is not None
    assert [] == await other.claim_orphans()
    await owner.finish(record)
    clock.advance(LEASE + 1)
    assert [] == await other.claim_orphans()


async def test_work_of_a_dead_owner_is_taken_over_by_exactly_one_replica() -> None:
    """Once the lease has expired, of two replicas recovering at the same moment one takes
    the work; the dead owner, were it to wake up, must not answer it too."""
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    dead, one, two = _log(store, clock), _log(store, clock), _log(store, clock)
    record = await dead.accept("dm", {"event": {"text": "q"}}, key="event:E2")
    assert record is not None
    clock.advance(LEASE + 1)
    taken = await asyncio.gather(one.claim_orphans(), two.claim_orphans())
    assert [1] == sorted(len(t) for t in taken if t)
    assert 1 == sum(len(t) for t in taken)
    assert (taken[0] or taken[1])[0].takeovers == 1
    assert not await dead.still_mine(record)


async def test_work_older_than_its_bound_is_dropped_and_counted() -> None:
    """An hour-old question is not answered late: it is dropped, and /metrics says so."""
    clock = FakeClock()
    metrics = Metrics()
    store = MemoryStore(clock=clock)
    owner, other = _log(store, clock), _log(store, clock, metrics)
    await owner.accept("command", {"text": "q"}, key="trigger:T3")
    clock.advance(MAX_AGE + 1)
    assert [] == await other.claim_orphans()
    assert 1 == metrics.counter_value("gdocs_work_dropped_total", reason="too_old")
    assert [] == await store.scan("work:", RECORD_CODEC, 10)


async def test_released_work_is_taken_over_at_once(tmp_path: Path) -> None:
    """A graceful stop leaves unfinished work in the (SQLite) store with its lease released:
    the next process takes it without waiting for the lease to expire."""
    clock = FakeClock()
    path = tmp_path / "state.db"
    first = await SqliteStore.open(path, clock=clock)
    stopping = _log(first, clock)
    await stopping.accept("action", {"actions": []}, key="trigger:T4")
    assert 1 == await stopping.release_all()
    await first.aclose()
    second = await SqliteStore.open(path, clock=clock)
    try:
        taken = await _log(second, clock).claim_orphans()
    finally:
        await second.aclose()
    assert ["trigger:T4"] == [r.id for r in taken]


async def test_work_recorded_on_sqlite_is_in_the_file_before_the_ack(tmp_path: Path) -> None:
    """The claim and the record the acknowledgement waits on are in the file: another
    process opening it finds the work."""
    clock = FakeClock()
    path = tmp_path / "state.db"
    store = await SqliteStore.open(path, clock=clock)
    try:
        log = _log(store, clock)
        accepted = await log.accept("mention", {"event": {"text": "q"}}, key="event:E9")
        assert accepted is not None
        await log.release_all()
    finally:
        await store.aclose()
    second = await SqliteStore.open(path, clock=clock)
    try:
        taken = await _log(second, clock).claim_orphans()
    finally:
        await second.aclose()
    assert ["event:E9"] == [r.id for r in taken]


async def test_replicas_on_redis_take_each_orphan_once(redis_server: RedisServer) -> None:
    """Two replicas on one Redis, recovering at the same moment: every orphan has one taker."""
    stores = [redis_store(redis_server.url, prefix="gdocs-test:") for _ in range(3)]
    try:
        dead = WorkLog(stores[0], lease_seconds=LEASE, max_age_seconds=MAX_AGE)
        for i in range(5):
            await dead.accept("command", {"text": f"q{i}"}, key=f"trigger:R{i}")
        one = WorkLog(stores[1], lease_seconds=LEASE, max_age_seconds=MAX_AGE)
        two = WorkLog(stores[2], lease_seconds=LEASE, max_age_seconds=MAX_AGE)
        assert [] == await one.claim_orphans()  # the owner's leases live: nothing to take
        for i in range(5):  # the owner died: its leases run out (Redis expires them: PX)
            await stores[0].delete(f"lease:trigger:R{i}")
        a, b = await asyncio.gather(one.claim_orphans(), two.claim_orphans())
    finally:
        for store in stores:
            await store.aclose()
    ids = sorted(r.id for r in [*a, *b])
    assert [f"trigger:R{i}" for i in range(5)] == ids


async def test_a_delivery_is_claimed_once_and_its_answer_keeps_retries_out() -> None:
    """A retry of a delivery in the works, or answered within the done TTL, is a duplicate;
    after that TTL the key is new again, and the store stays bounded."""
    clock = FakeClock()
    log = WorkLog(
        MemoryStore(clock=clock),
        lease_seconds=LEASE,
        max_age_seconds=MAX_AGE,
        done_seconds=600,
        clock=clock,
    )
    record = await log.accept("mention", {"event": {}}, key="event:E1")
    assert record is not None
    assert not await log.claim("event:E1")  # Slack's retry while it is answered
    await log.finish(record)
    clock.advance(LEASE + 1)
    assert not await log.claim("event:E1")  # a late retry of what was answered
    assert [] == await log.claim_orphans()
    clock.advance(600)
    assert await log.claim("event:E1")


async def test_a_claim_without_recorded_work_does_not_swallow_slacks_retry() -> None:
    """A delivery claimed by a process that died before recording its work (and before the
    ack) lets Slack's retry through once the claim's lease is over."""
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    dead, alive = _log(store, clock), _log(store, clock)
    assert await dead.claim("event:crashed")
    assert not await alive.claim("event:crashed")  # the immediate retry
    clock.advance(LEASE + 1)
    assert await alive.claim("event:crashed")  # Slack's retry a minute later


class _LosesWorkDeletes(MemoryStore):
    """A store whose deletes of work records are lost (as during an outage)."""

    async def delete(self, key: str) -> None:
        if not key.startswith("work:"):
            await super().delete(key)


async def test_work_answered_here_is_not_taken_over_when_its_delete_was_lost() -> None:
    """This process delivered the answer but the record's delete never reached the store:
    the record is cleared on the next scan, never answered again."""
    clock = FakeClock()
    store = _LosesWorkDeletes(clock=clock)
    log = _log(store, clock)
    record = await log.accept("command", {"text": "q"}, key="trigger:T9")
    assert record is not None
    await log.finish(record)
    clock.advance(LEASE + 1)
    assert [] == await log.claim_orphans()


async def test_a_retry_of_an_orphan_is_left_to_recovery() -> None:
    """A delivery whose record exists with no live lease (its owner died) is not recorded
    twice by the retry: recovery takes it, once."""
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    dead, alive = _log(store, clock), _log(store, clock)
    await dead.accept("mention", {"event": {}}, key="event:E5")
    clock.advance(LEASE + 1)
    assert await alive.accept("mention", {"event": {}}, key="event:E5") is None
    assert ["event:E5"] == [r.id for r in await alive.claim_orphans()]


async def test_the_replys_ts_is_kept_with_the_work_for_whoever_takes_it_over() -> None:
    """A streamed reply's message ts noted on the work is what a replica taking the work
    over reads (so it finishes that message); noting work this process no longer owns
    writes nothing."""
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    dead, other = _log(store, clock), _log(store, clock)
    record = await dead.accept("mention", {"event": {"text": "q"}}, key="event:E9")
    assert record is not None
    await dead.note_reply(record, "1710000000.000500")
    await other.note_reply(record, "1710000000.999999")  # not its work: ignored
    clock.advance(LEASE + 1)
    (taken,) = await other.claim_orphans()
    assert ("1710000000.000500", 1) == (taken.reply_ts, taken.takeovers)
    (stored,) = await store.scan("work:", RECORD_CODEC, 10)
    assert "1710000000.000500" == stored[1].reply_ts


class _HeldReplace(MemoryStore):
    """A store whose first `replace` waits until `release` is set (a slow round trip), so
    a renewal can overlap the work finishing (whose batch replaces without waiting)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.release = asyncio.Event()
        self.waiting = asyncio.Event()

    async def replace(self, *args: Any, **kwargs: Any) -> bool:
        if not self.waiting.is_set():
            self.waiting.set()
            await self.release.wait()
        return await super().replace(*args, **kwargs)


async def test_work_finished_while_its_lease_is_renewed_is_not_reported_lost(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The renewal pass overlaps the answer being delivered: no "lost the lease" warning
    for work that simply finished."""
    clock = FakeClock()
    store = _HeldReplace(clock=clock)
    log = _log(store, clock)
    record = await log.accept("mention", {"event": {}}, key="event:E9")
    assert record is not None
    clock.advance(LEASE / 2 + 1)  # the local record of the lease is too old to trust
    renewing = asyncio.ensure_future(log.renew_all())
    await asyncio.wait_for(store.waiting.wait(), 1)  # the renewal waits on the store
    await log.finish(record)  # its lease is the "done" marker now
    store.release.set()
    with caplog.at_level(logging.WARNING, logger="bot.slack.work.worklog"):
        await asyncio.wait_for(renewing, 1)
    assert [] == [r for r in caplog.records if "lost the lease" in r.getMessage()]


async def test_work_taken_over_by_another_replica_is_reported_lost(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A lease that expired and was taken by another replica: the renewal warns, and this
    process no longer owns the work."""
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    slow, other = _log(store, clock), _log(store, clock)
    record = await slow.accept("mention", {"event": {}}, key="event:E10")
    assert record is not None
    clock.advance(LEASE + 1)
    assert 1 == len(await other.claim_orphans())
    with caplog.at_level(logging.WARNING, logger="bot.slack.work.worklog"):
        await slow.renew_all()
    assert 1 == len([r for r in caplog.records if "lost the lease" in r.getMessage()])
    assert 0 == slow.owned
