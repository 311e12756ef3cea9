"""One contract, three backends: memory://, an SQLite file and a real redis-server.

Expiry cases drive the injected clock, so they run on the memory and SQLite backends; Redis
expires keys on its own clock (its PX TTLs are checked in test_store_redis.py). Undecodable
values concern only the backends that store bytes; size bounds those that enforce them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from bot.store import JSON, TEXT, ModelCodec, Op
from tests.store_backends import MAX_ENTRIES, Backend, open_backend


class Answer(BaseModel):
    text: str
    sources: list[str]


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with open_backend(request.param, request, tmp_path) as opened:
        yield opened


@pytest.fixture(params=["memory", "sqlite"])
async def clocked(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """The backends whose expiry follows the injected clock."""
    async with open_backend(request.param, request, tmp_path) as opened:
        yield opened


@pytest.fixture(params=["sqlite", "redis"])
async def byte_backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """The backends that keep values as their codec's bytes."""
    async with open_backend(request.param, request, tmp_path) as opened:
        yield opened


# --- values ------------------------------------------------------------------------------
async def test_a_value_set_is_read_back_until_it_is_deleted(backend: Backend) -> None:
    """set, get and get_many see the value (missing keys read as None); delete removes it."""
    store = backend.store
    await store.set("answer:q1", {"text": "Use gcloud.", "n": 2}, JSON, ttl=60)
    assert {"text": "Use gcloud.", "n": 2} == await store.get("answer:q1", JSON)
    assert [{"text": "Use gcloud.", "n": 2}, None] == await store.get_many(
        ["answer:q1", "answer:q2"], JSON
    )
    await store.set("answer:q1", {"text": "Newer."}, JSON, ttl=60)
    assert {"text": "Newer."} == await store.get("answer:q1", JSON)
    await store.delete("answer:q1")
    assert await store.get("answer:q1", JSON) is None
    assert [] == await store.get_many([], JSON)


async def test_models_round_trip_through_their_codec(backend: Backend) -> None:
    """A pydantic model comes back equal, field for field (non-ASCII text included)."""
    codec = ModelCodec(Answer)
    answer = Answer(text="Créez un bucket — «gs://»", sources=["https://cloud.google.com/x"])
    await backend.store.set("answer:fr", answer, codec, ttl=60)
    assert answer == await backend.store.get("answer:fr", codec)


async def test_values_read_as_absent_once_their_ttl_has_passed(clocked: Backend) -> None:
    """A value lives exactly its TTL; past it get, get_many and scan no longer see it."""
    store, clock = clocked.store, clocked.clock
    await store.set("title:doc1", "Create buckets", TEXT, ttl=10)
    clock.advance(9.9)
    assert "Create buckets" == await store.get("title:doc1", TEXT)
    clock.advance(0.2)
    assert await store.get("title:doc1", TEXT) is None
    assert [None] == await store.get_many(["title:doc1"], TEXT)
    assert [] == await store.scan("title:", TEXT, limit=10)


# --- claims and compare-and-set ----------------------------------------------------------
async def test_only_one_of_many_concurrent_claims_wins(backend: Backend) -> None:
    """Twenty concurrent adds of one key: exactly one True, and the key holds its value."""
    claims = [backend.store.add("dedupe:Ev1", f"worker-{i}", TEXT, ttl=60) for i in range(20)]
    results = await asyncio.gather(*claims)
    assert 1 == results.count(True)
    assert f"worker-{results.index(True)}" == await backend.store.get("dedupe:Ev1", TEXT)


async def test_a_claim_can_be_taken_again_once_it_expires(clocked: Backend) -> None:
    """add over a live key fails; over an expired one it succeeds with the new value."""
    store = clocked.store
    assert await store.add("dedupe:Ev2", "first", TEXT, ttl=5) is True
    assert await store.add("dedupe:Ev2", "second", TEXT, ttl=5) is False
    clocked.clock.advance(5.1)
    assert await store.add("dedupe:Ev2", "third", TEXT, ttl=5) is True
    assert "third" == await store.get("dedupe:Ev2", TEXT)


async def test_replace_changes_a_value_only_when_it_holds_the_expected_one(
    backend: Backend,
) -> None:
    """Compare-and-set: a missing key or another value leave things as they are."""
    store = backend.store
    assert await store.replace("pause:aq", "on", "off", TEXT, ttl=60) is False
    assert await store.get("pause:aq", TEXT) is None
    await store.set("pause:aq", "on", TEXT, ttl=60)
    assert await store.replace("pause:aq", "maybe", "off", TEXT, ttl=60) is False
    assert "on" == await store.get("pause:aq", TEXT)
    assert await store.replace("pause:aq", "on", "off", TEXT, ttl=60) is True
    assert "off" == await store.get("pause:aq", TEXT)


async def test_replace_gives_the_value_its_new_ttl(clocked: Backend) -> None:
    """The replaced value lives for the TTL given to replace, not the old one."""
    store, clock = clocked.store, clocked.clock
    await store.set("pause:aq", "on", TEXT, ttl=5)
    assert await store.replace("pause:aq", "on", "off", TEXT, ttl=50) is True
    clock.advance(10)
    assert "off" == await store.get("pause:aq", TEXT)
    clock.advance(41)
    assert await store.get("pause:aq", TEXT) is None


async def test_delete_if_releases_only_ones_own_lock(backend: Backend) -> None:
    """delete_if with another owner keeps the lock; with the holder's value it deletes it."""
    store = backend.store
    await store.set("lock:q", "replica-a", TEXT, ttl=60)
    assert await store.delete_if("lock:q", "replica-b", TEXT) is False
    assert "replica-a" == await store.get("lock:q", TEXT)
    assert await store.delete_if("lock:q", "replica-a", TEXT) is True
    assert await store.get("lock:q", TEXT) is None
    assert await store.delete_if("lock:q", "replica-a", TEXT) is False


# --- counters ------------------------------------------------------------------------------
async def test_counters_start_at_zero_and_go_up_and_down(backend: Backend) -> None:
    """incr returns the new value; negative amounts subtract; get reads it as a number."""
    store = backend.store
    assert 5 == await store.incr("quota:2026-01-01", 5, ttl=60)
    assert -2 == await store.incr("quota:2026-01-01", -7, ttl=60)
    assert 1 == await store.incr("quota:2026-01-01", 3, ttl=60)
    assert 1 == await store.get("quota:2026-01-01", JSON)


async def test_a_counter_keeps_its_first_expiry(clocked: Backend) -> None:
    """Counting again does not extend a counter's life: it expires on its first TTL."""
    store, clock = clocked.store, clocked.clock
    await store.incr("quota:day", 1, ttl=10)
    clock.advance(6)
    assert 2 == await store.incr("quota:day", 1, ttl=10)
    clock.advance(5)
    assert await store.get("quota:day", JSON) is None
    assert 1 == await store.incr("quota:day", 1, ttl=10)


async def test_counting_over_a_value_that_is_no_counter_starts_afresh(backend: Backend) -> None:
    """incr on a key holding text starts from zero instead of failing."""
    await backend.store.set("quota:odd", "not a number", TEXT, ttl=60)
    assert 3 == await backend.store.incr("quota:odd", 3, ttl=60)


# --- sliding windows ----------------------------------------------------------------------
async def test_hit_allows_limit_events_per_window_then_says_when_to_retry(
    backend: Backend,
) -> None:
    """Three events in 10 s: the fourth is refused with the seconds until the oldest leaves,
    and is not recorded; once the oldest has left, an event is allowed again."""
    store, t = backend.store, backend.clock()
    for at in (t, t + 1, t + 2):
        assert await store.hit("rate:U1", limit=3, window=10, now=at) is None
    assert 7.0 == pytest.approx(await store.hit("rate:U1", limit=3, window=10, now=t + 3))
    assert [t, t + 1, t + 2] == await store.window_events("rate:U1", window=10, now=t + 3)
    assert await store.hit("rate:U1", limit=3, window=10, now=t + 10.5) is None
    assert [t + 1, t + 2, t + 10.5] == await store.window_events("rate:U1", window=10, now=t + 10.5)


async def test_events_leave_the_window_as_time_passes(backend: Backend) -> None:
    """window_events lists only the events of the last `window` seconds, oldest first."""
    # times from the store's own clock, as its callers pass: a window that ended long before
    # it is expired, and a write's sweep may delete it while the test reads it
    store, t = backend.store, backend.clock()
    await store.hit("rate:U2", limit=5, window=60, now=t)
    await store.hit("rate:U2", limit=5, window=60, now=t + 30)
    assert [t, t + 30] == await store.window_events("rate:U2", window=60, now=t + 59)
    assert [t + 30] == await store.window_events("rate:U2", window=60, now=t + 60)
    assert [] == await store.window_events("rate:U2", window=60, now=t + 90)
    assert [] == await store.window_events("rate:nobody", window=60, now=t + 90)


async def test_two_events_at_the_same_instant_count_twice(backend: Backend) -> None:
    """Events are not deduplicated by their time."""
    store, t = backend.store, backend.clock()
    assert await store.hit("rate:U3", limit=2, window=10, now=t) is None
    assert await store.hit("rate:U3", limit=2, window=10, now=t) is None
    assert await store.hit("rate:U3", limit=2, window=10, now=t) is not None


async def test_unhit_takes_back_one_event_of_a_window(backend: Backend) -> None:
    """An event taken back leaves room for another; one at another time stays."""
    store, now = backend.store, backend.clock()
    assert await store.hit("uh:k", 2, 60.0, now) is None
    assert await store.hit("uh:k", 2, 60.0, now + 1) is None
    assert await store.hit("uh:k", 2, 60.0, now + 2) is not None
    assert await store.unhit("uh:k", now + 1)
    assert not await store.unhit("uh:k", now + 1)  # only once
    assert [now] == await store.window_events("uh:k", 60.0, now + 2)
    assert await store.hit("uh:k", 2, 60.0, now + 2) is None


async def test_delete_clears_a_window_too(backend: Backend) -> None:
    """delete(key) forgets a limiter's events."""
    t = backend.clock()
    await backend.store.hit("rate:U4", limit=1, window=10, now=t)
    await backend.store.delete("rate:U4")
    assert await backend.store.hit("rate:U4", limit=1, window=10, now=t + 1) is None


# --- scans ---------------------------------------------------------------------------------
async def test_scan_lists_the_live_values_under_a_prefix(backend: Backend) -> None:
    """scan returns (key, value) pairs starting with the prefix, at most `limit` of them, and
    never a limiter's events."""
    store = backend.store
    await store.set("feedback:T1:a", "up", TEXT, ttl=60)
    await store.set("feedback:T1:b", "down", TEXT, ttl=60)
    await store.set("feedback:T2:a", "up", TEXT, ttl=60)
    await store.set("other:T1", "x", TEXT, ttl=60)
    await store.hit("feedback:T1:rate", limit=5, window=10, now=backend.clock())
    found = await store.scan("feedback:T1:", TEXT, limit=10)
    assert [("feedback:T1:a", "up"), ("feedback:T1:b", "down")] == sorted(found)
    two = await store.scan("feedback:", TEXT, limit=2)
    assert 2 == len(two)
    assert {key for key, _ in two} <= {"feedback:T1:a", "feedback:T1:b", "feedback:T2:a"}
    everything = await store.scan("", TEXT, limit=100)
    assert {"feedback:T1:a", "feedback:T1:b", "feedback:T2:a", "other:T1"} == {
        key for key, _ in everything
    }


async def test_scan_leaves_out_expired_values(clocked: Backend) -> None:
    """A value past its TTL is not listed."""
    store = clocked.store
    await store.set("thread:C1:1", "short", TEXT, ttl=1)
    await store.set("thread:C1:2", "long", TEXT, ttl=100)
    clocked.clock.advance(2)
    assert [("thread:C1:2", "long")] == await store.scan("thread:C1:", TEXT, limit=10)


# --- what the stored bytes no longer say --------------------------------------------------
async def test_values_that_no_longer_decode_read_as_absent(byte_backend: Backend) -> None:
    """A value written by another version (not JSON, or not this model) is as good as
    missing for get, get_many and scan."""
    store = byte_backend.store
    await store.set("answer:old", "{not json", TEXT, ttl=60)
    await store.set("answer:shape", '{"unrelated": 1}', TEXT, ttl=60)
    await store.set("answer:bytes", "\udcff", TextSurrogates(), ttl=60)
    assert await store.get("answer:old", JSON) is None
    assert await store.get("answer:shape", ModelCodec(Answer)) is None
    assert await store.get("answer:bytes", TEXT) is None
    assert [None, None] == await store.get_many(["answer:old", "answer:bytes"], JSON)
    assert [] == await store.scan("answer:", ModelCodec(Answer), limit=10)


class TextSurrogates:
    """Writes bytes that are not UTF-8 (as a foreign writer might)."""

    def encode(self, value: str) -> bytes:
        return value.encode("utf-8", "surrogateescape")

    def decode(self, raw: bytes) -> str:
        return raw.decode("utf-8", "surrogateescape")


# --- size bounds ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_each_namespace_keeps_its_most_recently_written_values(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Past max_entries in one namespace the value written longest ago goes; other
    namespaces are not touched."""
    async with open_backend(kind, request, tmp_path) as opened:
        store = opened.store
        for i in range(MAX_ENTRIES):
            await store.set(f"dedupe:{i}", i, JSON, ttl=60)
            await store.set(f"answer:{i}", i, JSON, ttl=60)
        await store.set("answer:new", 9, JSON, ttl=60)
        answers = await store.get_many([f"answer:{i}" for i in range(MAX_ENTRIES)], JSON)
        assert [None, 1, 2] == answers
        assert 9 == await store.get("answer:new", JSON)
        assert [0, 1, 2] == await store.get_many([f"dedupe:{i}" for i in range(3)], JSON)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_limiters_are_bounded_like_values(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Past max_entries limiters, the one used longest ago forgets its events."""
    async with open_backend(kind, request, tmp_path) as opened:
        t = opened.clock()
        for i in range(MAX_ENTRIES + 1):
            await opened.store.hit(f"rate:U{i}", limit=5, window=60, now=t + i)
        assert [] == await opened.store.window_events("rate:U0", window=60, now=t + 10)
        last = f"rate:U{MAX_ENTRIES}"
        assert [t + MAX_ENTRIES] == await opened.store.window_events(last, 60, now=t + 10)


async def test_ping_answers_when_the_backend_is_usable(backend: Backend) -> None:
    """ping returns quietly on a working store."""
    await backend.store.ping()


# --- batches -----------------------------------------------------------------------------
async def test_a_batch_applies_every_kind_of_write_and_returns_each_result(
    backend: Backend,
) -> None:
    """One batch sets, claims, compares-and-sets, counts and deletes, each result in order."""
    store = backend.store
    await store.set("bo:old", "x", TEXT, ttl=60)
    await store.set("bg:gone", "y", TEXT, ttl=60)
    results = await store.batch(
        [
            Op.set("bn:new", "v", TEXT, ttl=60),
            Op.add("bn:new", "w", TEXT, ttl=60),
            Op.add("bc:claim", "me", TEXT, ttl=60),
            Op.replace("bo:old", "x", "x2", TEXT, ttl=60),
            Op.replace("bo:old", "nope", "x3", TEXT, ttl=60),
            Op.incr("bk:count", 5, ttl=60),
            Op.incr("bk:count", -2, ttl=60),
            Op.delete("bg:gone"),
            Op.delete_if("bc:claim", "me", TEXT),
        ]
    )
    assert results == [None, False, True, True, False, 5, 3, None, True]
    found = await store.get_many(["bn:new", "bc:claim", "bo:old", "bg:gone"], TEXT)
    assert found == ["v", None, "x2", None]
    assert await store.incr("bk:count", 0, ttl=60) == 3


async def test_a_batch_operation_runs_only_when_the_claim_it_depends_on_succeeded(
    backend: Backend,
) -> None:
    """`only_if`: the record is written only by whoever won the lease, never by a retry."""
    store = backend.store

    def claim(owner: str) -> list[Op]:
        return [
            Op.add("lease:e1", owner, TEXT, ttl=60),
            Op.add("work:e1", owner, TEXT, ttl=60, only_if=0),
        ]

    first, second = await asyncio.gather(store.batch(claim("a")), store.batch(claim("b")))
    assert sorted([first, second]) == [[False, False], [True, True]]
    winner = "a" if first[0] else "b"
    assert await store.get_many(["lease:e1", "work:e1"], TEXT) == [winner, winner]
    # finished work leaves a "done" lease: a late retry claims nothing, records nothing
    await store.delete("work:e1")
    assert await store.batch(claim("c")) == [False, False]
    assert await store.get("work:e1", TEXT) is None


async def test_a_batch_that_names_a_later_or_unconditional_operation_is_refused(
    backend: Backend,
) -> None:
    """A malformed batch is a ValueError before anything is written."""
    with pytest.raises(ValueError, match="only_if"):
        await backend.store.batch(
            [Op.set("b:x", "1", TEXT, ttl=60), Op.set("b:y", "2", TEXT, ttl=60, only_if=0)]
        )
    assert await backend.store.get("b:x", TEXT) is None
