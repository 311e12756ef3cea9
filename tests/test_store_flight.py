"""Identical computations in flight share one call: in a process, and across two replicas on
one real Redis; a replica that dies holding the lock delays the others by at most its TTL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.store import (
    JSON,
    TEXT,
    MemoryStore,
    RedisStore,
    SharedFlight,
    Store,
    abandonable,
    redis_store,
)
from tests.fakes.redis_server import RedisServer


class WatchedStore:
    """A store that tells when someone found a lock taken (it is then waiting)."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.found_locked = asyncio.Event()

    async def add(self, key: str, value: Any, codec: Any, ttl: float) -> bool:
        claimed = await self.inner.add(key, value, codec, ttl)
        if key.startswith("lock:") and not claimed:
            self.found_locked.set()
        return claimed

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Upstream:
    """Counts calls; each call waits for `release` (or fails with `error`)."""

    def __init__(self) -> None:
        self.calls = 0
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.error: Exception | None = None

    async def answer(self) -> dict[str, str]:
        self.calls += 1
        self.started.set()
        await self.release.wait()
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        return {"text": f"answer #{self.calls}"}


@pytest.fixture
async def replicas(redis_server: RedisServer) -> AsyncIterator[tuple[RedisStore, RedisStore]]:
    first = redis_store(redis_server.url, prefix="gdocs:")
    second = redis_store(redis_server.url, prefix="gdocs:")
    yield first, second
    await first.aclose()
    await second.aclose()


async def _b_asks_while_a_calls(
    replicas: tuple[RedisStore, RedisStore], upstream: Upstream
) -> tuple[asyncio.Task[Any], asyncio.Task[Any]]:
    """Replica A starts the call; B asks the same once A holds the lock, and is seen finding
    it taken; then A's call is let finish. The two callers' tasks."""
    watched = WatchedStore(replicas[1])
    a, b = SharedFlight(replicas[0], lock_ttl=5), SharedFlight(watched, lock_ttl=5)
    on_a = asyncio.create_task(a.run("answer:q", upstream.answer, JSON, ttl=60))
    await upstream.started.wait()
    on_b = asyncio.create_task(b.run("answer:q", upstream.answer, JSON, ttl=60))
    await watched.found_locked.wait()
    upstream.release.set()
    return on_a, on_b


async def test_two_replicas_asking_the_same_share_one_upstream_call(
    replicas: tuple[RedisStore, RedisStore],
) -> None:
    """Replica B asks while A's call is in flight: B waits for A's result; one call in all."""
    upstream = Upstream()
    async with asyncio.timeout(5):
        on_a, on_b = await _b_asks_while_a_calls(replicas, upstream)
        results = await asyncio.gather(on_a, on_b)
    assert [{"text": "answer #1"}] * 2 == results
    assert 1 == upstream.calls
    assert {"text": "answer #1"} == await replicas[1].get("answer:q", JSON)
    assert await replicas[1].get("lock:answer:q", TEXT) is None  # released


async def test_a_replica_that_never_releases_its_lock_delays_others_by_its_ttl_only(
    replicas: tuple[RedisStore, RedisStore],
) -> None:
    """A lock taken by a replica that then died: the other computes once the lock expires."""
    upstream = Upstream()
    upstream.release.set()
    assert await replicas[0].add("lock:answer:q", "dead-replica", TEXT, ttl=0.3)
    flight = SharedFlight(replicas[1], lock_ttl=0.3)
    loop = asyncio.get_running_loop()
    began = loop.time()
    async with asyncio.timeout(0.3 + 1.0):
        assert {"text": "answer #1"} == await flight.run("answer:q", upstream.answer, JSON, 60)
    assert loop.time() - began >= 0.25  # it did respect the lock while it lived
    assert 1 == upstream.calls


async def test_a_failed_call_is_not_shared_the_waiting_replica_calls_itself(
    replicas: tuple[RedisStore, RedisStore],
) -> None:
    """A's call fails: A's caller gets the error, nothing is stored, and B (waiting on A's
    lock) makes its own call and gets an answer."""
    upstream = Upstream()
    upstream.error = RuntimeError("upstream said 503")
    async with asyncio.timeout(5):
        on_a, on_b = await _b_asks_while_a_calls(replicas, upstream)
        with pytest.raises(RuntimeError, match="503"):
            await on_a
        assert {"text": "answer #2"} == await on_b
    assert 2 == upstream.calls


async def test_callers_in_one_process_share_a_call_and_one_leaving_does_not_cancel_it() -> None:
    """Five callers, one call; the first caller is cancelled, the others still get the
    answer, and it is stored for the next one."""
    store = MemoryStore()
    flight = SharedFlight(store, lock_ttl=5)
    upstream = Upstream()
    async with asyncio.timeout(5):
        callers = [
            asyncio.create_task(flight.run("answer:q", upstream.answer, JSON, ttl=60))
            for _ in range(5)
        ]
        await upstream.started.wait()
        callers[0].cancel()
        upstream.release.set()
        results = await asyncio.gather(*callers[1:])
    assert callers[0].cancelled()
    assert [{"text": "answer #1"}] * 4 == results
    assert 1 == upstream.calls
    assert {"text": "answer #1"} == await store.get("answer:q", JSON)
    assert 0 == flight.in_flight()


async def test_without_a_codec_callers_share_one_call_and_nothing_is_stored() -> None:
    """In-process sharing only (document fetches): one call for every caller, its error for
    all of them, nothing written to the store, and the key forgotten after."""
    store, upstream = WritesSeen(), Upstream()
    flight = SharedFlight(store, lock_ttl=5)
    upstream.error = RuntimeError("503")
    async with asyncio.timeout(5):
        callers = [asyncio.create_task(flight.run("docs", upstream.answer)) for _ in range(5)]
        await upstream.started.wait()
        upstream.release.set()
        results = await asyncio.gather(*callers, return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    assert (1, [], 0) == (upstream.calls, store.written, flight.in_flight())
    assert {"text": "answer #2"} == await flight.run("docs", upstream.answer)


async def test_a_stored_result_is_returned_without_a_call() -> None:
    """A result already under the key is the answer: no upstream call, no lock."""
    store = MemoryStore()
    await store.set("answer:q", {"text": "cached"}, JSON, ttl=60)
    upstream = Upstream()
    flight = SharedFlight(store, lock_ttl=5)
    assert {"text": "cached"} == await flight.run("answer:q", upstream.answer, JSON, ttl=60)
    assert 0 == upstream.calls


class WritesSeen(MemoryStore):
    """A memory store that notes every key it is asked to write (its writes are batches)."""

    def __init__(self) -> None:
        super().__init__(max_entries=100)
        self.written: list[str] = []

    async def batch(self, ops: Any) -> list[object]:
        self.written += [op.key for op in ops]
        return await super().batch(ops)


@pytest.mark.parametrize("shared", [True, False], ids=["shared store", "one process's store"])
async def test_a_store_no_other_process_shares_gets_the_result_without_a_lock(
    shared: bool,
) -> None:
    """`shared=False` (memory://, SQLite: one bot per file): callers here still share one
    call and the result is kept, and the lock is never written; a shared store takes it."""
    store, upstream = WritesSeen(), Upstream()
    flight = SharedFlight(store, lock_ttl=5, shared=shared)
    async with asyncio.timeout(5):
        callers = [
            asyncio.create_task(flight.run("answer:q", upstream.answer, JSON, ttl=60))
            for _ in range(3)
        ]
        await upstream.started.wait()
        upstream.release.set()
        results = await asyncio.gather(*callers)
    assert [{"text": "answer #1"}] * 3 == results
    assert 1 == upstream.calls
    assert {"text": "answer #1"} == await store.get("answer:q", JSON)
    locks = [key for key in store.written if key.startswith("lock:")]
    assert locks == (["lock:answer:q", "lock:answer:q"] if shared else []), store.written


class SlotWait:
    """A computation that first waits for a slot (abandonable, like answer_query's quota
    wait), then makes its upstream call."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.waiting = asyncio.Event()
        self.slot = asyncio.Event()

    async def answer(self) -> dict[str, str]:
        self.waiting.set()
        await abandonable(self.slot.wait)
        return await self.upstream.answer()


async def test_the_only_caller_leaving_during_the_wait_gives_the_call_up() -> None:
    """The one caller is cancelled (a Stop) while the computation waits for its slot: the
    wait ends, the upstream call is never made, the lock is released, and a later caller
    computes afresh."""
    store, upstream = MemoryStore(max_entries=100), Upstream()
    flight, work = SharedFlight(store, lock_ttl=5), SlotWait(upstream)
    caller = asyncio.create_task(flight.run("answer:q", work.answer, JSON, ttl=60))
    await work.waiting.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    work.slot.set()
    async with asyncio.timeout(5):  # the given-up computation releases its lock
        while await store.get("lock:answer:q", TEXT) is not None:  # noqa: ASYNC110
            await asyncio.sleep(0)

    assert 0 == upstream.calls
    assert 0 == flight.in_flight()
    upstream.release.set()
    assert {"text": "answer #1"} == await flight.run("answer:q", work.answer, JSON, ttl=60)


async def test_a_wait_goes_on_while_another_caller_still_waits_for_it() -> None:
    """Two callers share the wait; one is cancelled: the other still gets the answer, from
    one upstream call."""
    store, upstream = MemoryStore(max_entries=100), Upstream()
    flight, work = SharedFlight(store, lock_ttl=5), SlotWait(upstream)
    leaving = asyncio.create_task(flight.run("answer:q", work.answer, JSON, ttl=60))
    staying = asyncio.create_task(flight.run("answer:q", work.answer, JSON, ttl=60))
    await work.waiting.wait()
    leaving.cancel()
    work.slot.set()
    upstream.release.set()

    assert {"text": "answer #1"} == await staying
    assert leaving.cancelled()
    assert 1 == upstream.calls


async def test_a_caller_leaving_after_the_wait_does_not_waste_the_call() -> None:
    """The only caller leaves once the call is out (past the wait): the call completes and
    its result is kept for the next caller, who makes no call of its own."""
    store, upstream = MemoryStore(max_entries=100), Upstream()
    flight, work = SharedFlight(store, lock_ttl=5), SlotWait(upstream)
    work.slot.set()
    caller = asyncio.create_task(flight.run("answer:q", work.answer, JSON, ttl=60))
    await upstream.started.wait()
    caller.cancel()
    upstream.release.set()
    while flight.in_flight():  # noqa: ASYNC110 - the shielded computation has no event
        await asyncio.sleep(0)

    assert {"text": "answer #1"} == await flight.run("answer:q", work.answer, JSON, ttl=60)
    assert 1 == upstream.calls


async def test_outside_a_flight_an_abandonable_wait_is_just_awaited() -> None:
    """`abandonable` outside a shared computation: the wait runs to its end."""
    done = asyncio.Event()

    async def wait() -> None:
        done.set()

    await abandonable(wait)
    assert done.is_set()
