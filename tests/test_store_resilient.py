"""A store outage degrades, never breaks: calls are bounded, served from per-process state,
logged once, counted, shown in state(), and the shared store is used again once it is back."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import pytest

from bot.observability.metrics import Metrics
from bot.store import JSON, TEXT, ResilientStore, SqliteStore, redis_store
from tests.fakes.redis_server import RedisServer
from tests.store_backends import FakeClock

_PASSWORD = "resilient-secret-pw"


def _store_logs(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("bot.store") and r.levelno == level]


async def test_a_redis_outage_is_served_locally_and_the_store_is_used_again_after(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Redis stopped mid-run: calls keep answering from per-process state within the bound,
    one warning, counted, state() not ok; Redis back: writes are shared again."""
    caplog.set_level(logging.INFO, logger="bot.store")
    server = RedisServer(password=_PASSWORD).start()
    metrics, clock = Metrics(), FakeClock()
    store = ResilientStore(
        redis_store(server.url, prefix="gdocs:"),
        timeout=0.15,
        retry_after=1.5,
        metrics=metrics,
        url=server.url,
        clock=clock,
    )
    other = redis_store(server.url, prefix="gdocs:")  # another replica's view
    try:
        await store.set("answer:q", "shared", TEXT, ttl=60)
        assert "shared" == await other.get("answer:q", TEXT)
        server.stop()

        async with asyncio.timeout(2):  # ten calls, none waiting on the dead server
            assert await store.get("answer:q", TEXT) is None  # a cache miss, not an error
            assert await store.add("dedupe:Ev1", "me", TEXT, ttl=60) is True
            assert await store.add("dedupe:Ev1", "again", TEXT, ttl=60) is False
            assert 1 == await store.incr("quota:day", 1, ttl=60)
            assert 2 == await store.incr("quota:day", 1, ttl=60)
            assert await store.hit("rate:U1", limit=1, window=60, now=1.0) is None
            for _ in range(4):
                await store.get("answer:q", TEXT)

        # the circuit: one failed call reached the server, the others went straight to
        # per-process state
        assert 1 == metrics.counter_value("gdocs_store_errors_total")
        assert 0 == metrics.registry.get_sample_value("gdocs_store_up", {"backend": "redis"})
        assert 1 == len(_store_logs(caplog, logging.WARNING))
        state = store.state()
        assert (state["backend"], state["ok"]) == ("redis", False)
        assert f"redis://:[redacted]@127.0.0.1:{server.port}/0" == state["url"]
        assert _PASSWORD not in repr(state) + caplog.text

        server.start()
        clock.advance(1.5)
        await store.set("answer:after", "shared again", TEXT, ttl=60)
        assert "shared again" == await other.get("answer:after", TEXT)
        assert store.state()["ok"] is True
        assert 1 == metrics.registry.get_sample_value("gdocs_store_up", {"backend": "redis"})
        assert 1 == len(_store_logs(caplog, logging.INFO))
        assert 1 == len(_store_logs(caplog, logging.WARNING))
    finally:
        await store.aclose()
        await other.aclose()
        server.kill()


async def test_a_slow_redis_costs_at_most_the_timeout(redis_server: RedisServer) -> None:
    """Redis stalls (CLIENT PAUSE): the call gives up after its bound and is served locally."""
    metrics = Metrics()
    store = ResilientStore(
        redis_store(redis_server.url, prefix="gdocs:"), timeout=0.1, metrics=metrics
    )
    try:
        await store.ping()
        redis_server.command("CLIENT", "PAUSE", "400", "ALL")
        async with asyncio.timeout(1):
            assert await store.add("dedupe:Ev9", "me", TEXT, ttl=60) is True
        assert "took over 100 ms" in str(store.state()["detail"])
        assert 1 == metrics.counter_value("gdocs_store_errors_total", op="add")
    finally:
        redis_server.command("CLIENT", "UNPAUSE")  # answered once the pause is over
        await store.aclose()


async def test_a_locked_sqlite_file_does_not_hold_the_bot_up(tmp_path: Path) -> None:
    """Another process keeps the file's write lock: writes give up after the bound and the
    bot carries on with per-process state; reads of committed values still work (WAL)."""
    primary = await SqliteStore.open(tmp_path / "state.db", busy_timeout=2.0)
    store = ResilientStore(primary, timeout=0.1, url="sqlite:///state.db")
    await store.set("answer:q", 1, JSON, ttl=60)
    holder = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        async with asyncio.timeout(1):
            assert await store.add("dedupe:Ev1", "me", TEXT, ttl=60) is True
        assert store.state()["ok"] is False
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        await store.aclose()


async def test_the_primary_is_tried_again_only_after_the_retry_interval(
    redis_server: RedisServer,
) -> None:
    """While the circuit is open, calls do not touch the primary: a value written to Redis
    meanwhile stays invisible until the interval has passed."""
    clock = FakeClock()
    primary = redis_store(redis_server.url, prefix="gdocs:")
    store = ResilientStore(primary, timeout=0.1, retry_after=1.5, clock=clock)
    other = redis_store(redis_server.url, prefix="gdocs:")
    try:
        redis_server.command("CLIENT", "PAUSE", "300", "ALL")
        assert await store.get("answer:q", TEXT) is None  # times out: circuit opens
        redis_server.command("CLIENT", "UNPAUSE")
        await other.set("answer:q", "in redis", TEXT, ttl=60)
        clock.advance(1.0)
        assert await store.get("answer:q", TEXT) is None  # still per-process
        clock.advance(0.6)
        assert "in redis" == await store.get("answer:q", TEXT)
    finally:
        await store.aclose()
        await other.aclose()


async def test_deletes_made_during_an_outage_reach_the_shared_store_once_it_is_back(
    redis_server: RedisServer,
) -> None:
    """A record deleted while Redis stalled (finished work, a released lease) does not stay
    in the shared store as if it were still live: the delete is replayed once Redis answers."""
    clock = FakeClock()
    store = ResilientStore(
        redis_store(redis_server.url, prefix="gdocs:"), timeout=0.1, retry_after=1.5, clock=clock
    )
    other = redis_store(redis_server.url, prefix="gdocs:")  # another replica's view
    try:
        await store.set("work:E1", "pending", TEXT, ttl=600)
        await store.set("lease:E1", "me", TEXT, ttl=600)
        redis_server.command("CLIENT", "PAUSE", "300", "WRITE")
        await store.set("answer:q", "x", TEXT, ttl=60)  # times out: the circuit opens
        await store.delete("work:E1")  # the circuit is open: served locally, never sent
        await store.delete_if("lease:E1", "me", TEXT)
        redis_server.command("CLIENT", "UNPAUSE")
        assert "pending" == await other.get("work:E1", TEXT)  # still there, for now
        clock.advance(1.5)
        await store.ping()  # the first call after the outage closes the circuit
        replay = store._replaying
        assert replay is not None
        async with asyncio.timeout(2):
            await replay
        assert await other.get("work:E1", TEXT) is None
        assert await other.get("lease:E1", TEXT) is None
    finally:
        redis_server.command("CLIENT", "UNPAUSE")
        await store.aclose()
        await other.aclose()
