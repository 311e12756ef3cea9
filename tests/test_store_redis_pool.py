"""The Redis store (redis-py's asyncio client and its bounded pool) against a real
redis-server: many callers at once, each its own reply or its own error, and a restarted or
stalled server survived."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path

import pytest
import redis

from bot.store import (
    TEXT,
    RedisStore,
    ResilientStore,
    StoreError,
    open_store,
    redis_store,
)
from tests.fakes.redis_server import RedisServer

MAX_CONNECTIONS = 32  # the pool's bound (bot/store/_redis.py)


@pytest.fixture
async def store(redis_server: RedisServer) -> AsyncIterator[RedisStore]:
    opened = redis_store(redis_server.url, prefix="gdocs:")
    await opened.ping()  # connected: the tests below count writes, not the handshake
    yield opened
    await opened.aclose()


async def _get(store: RedisStore, key: str) -> str | None:
    return await store.get(key, TEXT)


def _other_clients(inspect: redis.Redis) -> int:
    """Connections to the server other than `inspect`'s own."""
    mine = inspect.client_id()
    return sum(1 for client in inspect.client_list() if int(client["id"]) != mine)


async def test_300_concurrent_calls_all_reach_redis_through_the_bounded_pool(
    redis_server: RedisServer, inspect: redis.Redis
) -> None:
    """300 questions at once (more than the pool's connections): none is served by the
    fallback, and the server sees no more connections than the pool holds."""
    # what is shown is the pool, not speed: a slow CI machine (and coverage) may take seconds
    patient = RedisStore(host="127.0.0.1", port=redis_server.port, prefix="gdocs:", timeout=10.0)
    async with aclosing(patient):
        resilient = ResilientStore(patient, timeout=10.0)
        added = await asyncio.gather(
            *(resilient.add(f"lease:E{i}", "owner", TEXT, ttl=60) for i in range(300))
        )
        assert 1 <= _other_clients(inspect) <= MAX_CONNECTIONS  # before the pool closes
    assert all(added)
    assert resilient.up is True
    assert 300 == sum(resilient.calls.values())
    assert 300 == len(inspect.keys("gdocs:lease:E*"))
    assert b"owner" == inspect.get("gdocs:lease:E299")


async def test_one_failing_command_fails_only_its_caller(
    store: RedisStore, inspect: redis.Redis
) -> None:
    """A window key holding a string (WRONGTYPE): that read fails; its neighbours do not."""
    inspect.set("gdocs:~window:rate:U1", "not a sorted set", px=60_000)
    await store.set("answer:q", "cached", TEXT, ttl=60)
    await store.incr("quota:warm", 1, ttl=60)  # the script loaded: EVALSHA, no NOSCRIPT
    results = await asyncio.gather(
        _get(store, "answer:q"),
        store.window_events("rate:U1", window=60, now=1000.0),
        store.incr("quota:day", 1, ttl=60),
        _get(store, "answer:q"),
        return_exceptions=True,
    )
    assert "cached" == results[0]
    assert isinstance(results[1], StoreError)
    assert "WRONGTYPE" in str(results[1])
    assert 1 == results[2]
    assert "cached" == results[3]


async def test_a_caller_that_gave_up_leaves_the_replies_in_order(store: RedisStore) -> None:
    """A read that timed out behind a slow script: the next callers get their own values."""
    await store.set("a", "A", TEXT, ttl=60)
    await store.set("b", "B", TEXT, ttl=60)
    spin = "local t = redis.call('TIME'); local s = t[1] * 1e6 + t[2]\n"
    spin += "repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] - s > 200000\nreturn 1"
    slow = asyncio.ensure_future(store.client.eval(spin, 0))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(_get(store, "a"), timeout=0.05)
    assert 1 == await slow
    assert ["B", "A"] == list(await asyncio.gather(_get(store, "b"), _get(store, "a")))


async def test_a_restarted_server_still_serves_scripts() -> None:
    """The server restarts (its connection dropped, its scripts forgotten): the next calls
    reconnect, reload the scripts (NOSCRIPT) and succeed."""
    server = RedisServer().start()
    store = redis_store(server.url, prefix="gdocs:")
    try:
        await store.set("pause:aq", "on", TEXT, ttl=60)
        assert await store.replace("pause:aq", "on", "off", TEXT, ttl=60) is True
        server.stop()
        server.start()
        await store.set("pause:aq", "off", TEXT, ttl=60)
        assert await store.replace("pause:aq", "off", "on", TEXT, ttl=60) is True
        assert "on" == await _get(store, "pause:aq")
        assert 3 == await store.incr("quota:day", 3, ttl=60)
    finally:
        await store.aclose()
        server.kill()


async def test_a_stalled_server_fails_the_waiting_calls_then_recovers() -> None:
    """redis-server frozen (SIGSTOP): calls fail with StoreError after the socket timeout,
    not never; once it runs again, the next call is served on a fresh connection."""
    server = RedisServer().start()
    assert server._proc is not None
    store = RedisStore(host="127.0.0.1", port=server.port, timeout=0.2)
    try:
        await store.set("answer:q", "a", TEXT, ttl=60)
        os.kill(server._proc.pid, signal.SIGSTOP)
        try:
            async with asyncio.timeout(3):
                with pytest.raises(StoreError, match="redis get_many failed"):
                    await _get(store, "answer:q")
        finally:
            os.kill(server._proc.pid, signal.SIGCONT)
        assert "a" == await _get(store, "answer:q")
    finally:
        await store.aclose()
        server.kill()


async def test_calls_after_close_fail_cleanly(redis_server: RedisServer) -> None:
    """A closed store raises StoreError (one line), it does not hang or reconnect."""
    store = redis_store(redis_server.url, prefix="gdocs:")
    await store.set("answer:q", "a", TEXT, ttl=60)
    await store.aclose()
    with pytest.raises(StoreError, match="closed"):
        await _get(store, "answer:q")


async def test_rediss_serves_concurrent_calls_over_tls(tls_redis: tuple[int, Path]) -> None:
    """rediss:// with the server's CA: the same concurrent calls, over TLS."""
    port, cert = tls_redis
    url = f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={cert}"
    async with aclosing(await open_store(url, prefix="gdocs:", max_entries=10)) as store:
        assert store.tls is True  # type: ignore[attr-defined]
        added = await asyncio.gather(
            *(store.add(f"lease:E{i}", "owner", TEXT, ttl=60) for i in range(100))
        )
        assert all(added)
        assert await store.replace("lease:E1", "owner", "done", TEXT, ttl=60) is True
        assert "done" == await store.get("lease:E1", TEXT)
