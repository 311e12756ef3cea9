"""The acknowledgement's Redis write on a link of its own, against a real redis-server:
answered with no turn of the event loop, a late reply read without holding the loop, a
connection the server closed noticed before the send, and TLS."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis
from redis.connection import Connection

from bot.observability.metrics import Metrics
from bot.store import (
    TEXT,
    CountingStore,
    Op,
    RedisStore,
    StoreError,
    open_store,
    redis_store,
    urgent,
)
from bot.store._redis import ACK_CLIENT_NAME
from bot.store._redis_urgent import UrgentLink
from bot.store._redis_wire import Endpoint
from tests.fakes.redis_server import RedisServer

#: generous: a slow CI machine must not make these tests about timing
_WAIT = 0.05


@pytest.fixture
async def store(redis_server: RedisServer) -> AsyncIterator[RedisStore]:
    opened = redis_store(redis_server.url, prefix="gdocs:", ack_wait=_WAIT)
    await opened.verify("redis://test")  # as at start-up: the urgent link is up
    yield opened
    await opened.aclose()


def _turn_counter() -> list[int]:
    """A list whose one item counts the loop's turns from now on (a callback re-armed each turn)."""
    turns = [0]
    loop = asyncio.get_running_loop()

    def tick() -> None:
        turns[0] += 1
        if turns[0] < 1000:
            loop.call_soon(tick)

    loop.call_soon(tick)
    return turns


def _link(store: RedisStore) -> UrgentLink:
    link = store.pipe.urgent
    assert link is not None
    return link


async def test_an_urgent_write_is_in_redis_with_no_turn_of_the_loop(
    store: RedisStore, inspect: redis.Redis
) -> None:
    """Inside `urgent()`, `add` returns with the key in Redis and the loop not yet turned;
    the pipeline wrote nothing for it."""
    pipelines = store.pipe.pipelines
    turns = _turn_counter()
    with urgent():
        assert await store.add("lease:E1", "owner", TEXT, ttl=60) is True
        assert await store.add("lease:E1", "other", TEXT, ttl=60) is False
    assert 0 == turns[0]
    assert b"owner" == inspect.get("gdocs:lease:E1")
    assert pipelines == store.pipe.pipelines
    assert 2 == _link(store).on_time


async def test_writes_outside_urgent_still_go_through_the_pipeline(store: RedisStore) -> None:
    """Only the acknowledgement's writes take the link: the rest are pipelined as before."""
    pipelines = store.pipe.pipelines
    await store.add("lease:E2", "owner", TEXT, ttl=60)
    assert 1 == store.pipe.pipelines - pipelines
    assert 0 == _link(store).on_time


async def test_a_script_the_server_forgot_is_loaded_again_on_the_link(
    store: RedisStore, inspect: redis.Redis
) -> None:
    """The batch (a Lua script) after SCRIPT FLUSH: NOSCRIPT, then EVAL, both on the link."""
    inspect.script_flush()
    with urgent():
        done = await store.batch(
            [Op.add("lease:E3", "o", TEXT, 60), Op.add("work:E3", "r", TEXT, 60)]
        )
    assert [True, True] == done
    assert b"r" == inspect.get("gdocs:work:E3")
    assert 2 == _link(store).on_time


async def test_a_late_reply_is_read_while_the_loop_goes_on_then_the_link_rests(
    store: RedisStore,
) -> None:
    """A reply later than the patience (a slow script ahead of it on the server) is still
    the caller's, read while the loop keeps turning; the next urgent write is pipelined."""
    spin = "local t = redis.call('TIME'); local s = t[1] * 1e6 + t[2]\n"
    spin += "repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] - s > 300000\nreturn 1"
    slow = asyncio.ensure_future(store.pipe.call("EVAL", spin, 0))
    await asyncio.sleep(0.05)  # the script is running on the server
    turns = _turn_counter()
    with urgent():
        assert await store.add("lease:E4", "owner", TEXT, ttl=60) is True
    assert turns[0] > 1  # the loop was not held for the 0.3 s
    assert 1 == await slow
    link = _link(store)
    assert (0, 1) == (link.on_time, link.late)
    pipelines = store.pipe.pipelines
    with urgent():
        assert await store.add("lease:E5", "owner", TEXT, ttl=60) is True
    assert 1 == store.pipe.pipelines - pipelines  # resting: pipelined
    metrics = Metrics()
    CountingStore(store).publish(metrics)
    assert 1 == metrics.counter_value("gdocs_store_urgent_writes_total", outcome="late")


async def test_a_link_the_server_closed_is_noticed_before_the_send(
    store: RedisStore, inspect: redis.Redis
) -> None:
    """The server dropped the link (an idle timeout): the write goes through the pipeline,
    made once, and the link is up again for the next one."""
    killed = [c["id"] for c in inspect.client_list() if c["name"] == ACK_CLIENT_NAME]
    assert 1 == len(killed)
    inspect.client_kill_filter(_id=killed[0])
    with urgent():
        assert await store.add("lease:E6", "owner", TEXT, ttl=60) is True
    assert b"owner" == inspect.get("gdocs:lease:E6")
    assert 0 == _link(store).on_time
    assert await _link(store).open() is True
    with urgent():
        assert await store.add("lease:E7", "owner", TEXT, ttl=60) is True
    assert 1 == _link(store).on_time


async def test_a_stalled_server_fails_the_urgent_write_without_holding_the_loop() -> None:
    """redis-server frozen: the urgent write fails with StoreError after the socket timeout
    while the loop goes on; once the server runs again, writes are served."""
    server = RedisServer().start()
    assert server._proc is not None
    store = RedisStore.connect(
        host="127.0.0.1", port=server.port, socket_timeout=0.3, ack_wait=_WAIT
    )
    try:
        await store.verify("redis://test")
        os.kill(server._proc.pid, signal.SIGSTOP)
        turns = _turn_counter()
        try:
            async with asyncio.timeout(3):
                with pytest.raises(StoreError), urgent():
                    await store.add("lease:E8", "owner", TEXT, ttl=60)
        finally:
            os.kill(server._proc.pid, signal.SIGCONT)
        assert turns[0] > 1
        with urgent():
            assert await store.add("lease:E9", "owner", TEXT, ttl=60) is True
        assert "owner" == await store.get("lease:E9", TEXT)
    finally:
        await store.aclose()
        server.kill()


async def test_no_ack_wait_means_no_link(redis_server: RedisServer) -> None:
    """STATE_ACK_WAIT_MS=0: urgent writes are pipelined, and no second connection is made."""
    store = redis_store(redis_server.url, prefix="gdocs:", ack_wait=0)
    try:
        await store.verify("redis://test")
        assert store.pipe.urgent is None
        with urgent():
            assert await store.add("lease:E10", "owner", TEXT, ttl=60) is True
    finally:
        await store.aclose()


async def test_the_urgent_link_serves_over_tls(tls_redis: tuple[int, Path]) -> None:
    """rediss:// with the server's CA: the acknowledgement's write on the link, over TLS."""
    port, cert = tls_redis
    url = f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={cert}"
    store = await open_store(url, prefix="gdocs:", max_entries=10, ack_wait=_WAIT)
    try:
        with urgent():
            assert await store.add("lease:E11", "owner", TEXT, ttl=60) is True
        assert "owner" == await store.get("lease:E11", TEXT)
        assert 1 == store.pipe.urgent.on_time  # type: ignore[attr-defined]
    finally:
        await store.aclose()


async def test_a_redis_too_far_to_block_for_rests_the_link(redis_server: RedisServer) -> None:
    """Replies that take over a fifth of the patience on average (a Redis on another
    network, here a clock that moves 3 ms a reading): the link rests after a few, and the
    acknowledgements' writes are pipelined, sharing round trips, instead."""
    readings = iter(range(0, 10_000_000, 3))
    link = UrgentLink(
        lambda: Connection(port=redis_server.port),  # type: ignore[no-untyped-call]
        patience=0.005,
        budget_share=1.0,  # the budget never runs out: what is shown is the distance
        clock=lambda: next(readings) / 1000,
    )
    store = RedisStore(Endpoint(host="127.0.0.1", port=redis_server.port), urgent=link)
    try:
        assert await link.open() is True
        for i in range(20):
            with urgent():
                assert await store.add(f"lease:F{i}", "owner", TEXT, ttl=60) is True
        assert 3 <= link.on_time < 20  # rested once the average passed 1 ms
        assert link.reply_time > 0.001
        assert link.ready() is False
    finally:
        await store.aclose()


async def test_a_burst_of_urgent_writes_holds_the_loop_a_tenth_of_the_time_at_most(
    redis_server: RedisServer,
) -> None:
    """Replies of 1 ms each (a clock that moves 1 ms a reading), 40 acknowledgements in a
    row: the link answers some, the rest are pipelined, and the loop's time spent waiting on
    the link stays within a tenth of the time that passed (plus the first patience)."""
    now = [0.0]

    def clock() -> float:
        now[0] += 0.001
        return now[0]

    link = UrgentLink(
        lambda: Connection(port=redis_server.port),  # type: ignore[no-untyped-call]
        patience=0.005,
        clock=clock,
    )
    store = RedisStore(Endpoint(host="127.0.0.1", port=redis_server.port), urgent=link)
    try:
        assert await link.open() is True
        pipelines = store.pipe.pipelines
        start = now[0]
        for i in range(40):
            with urgent():
                assert await store.add(f"lease:G{i}", "owner", TEXT, ttl=60) is True
        waited = link.on_time * 0.001
        assert 0 < link.on_time < 40
        assert 40 - link.on_time == store.pipe.pipelines - pipelines
        assert waited <= 0.005 + (now[0] - start) * 0.1 + 0.001
        assert 0 == link.late  # paced, not resting
    finally:
        await store.aclose()
