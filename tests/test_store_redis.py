"""The Redis store against a real redis-server: prefixes, a TTL on every key, scripts that
survive a server restart, and errors that never carry the password."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import redis

from bot.store import (
    JSON,
    TEXT,
    RedisStore,
    StoreConfigError,
    StoreError,
    StoreUnavailable,
    open_store,
    redis_store,
)
from tests.fakes.redis_server import RedisServer, _free_port


@pytest.fixture
async def store(redis_server: RedisServer) -> AsyncIterator[RedisStore]:
    opened = redis_store(redis_server.url, prefix="gdocs:")
    yield opened
    await opened.aclose()


async def test_two_prefixes_on_one_server_do_not_see_each_other(redis_server: RedisServer) -> None:
    """Two bots on one Redis: same keys, separate values, scans and deletes."""
    first = redis_store(redis_server.url, prefix="bot-a:")
    second = redis_store(redis_server.url, prefix="bot-a*:")  # a glob character in it
    try:
        await first.set("answer:q", "from a", TEXT, ttl=60)
        await second.set("answer:q", "from a*", TEXT, ttl=60)
        await first.set("answer:only-a", "x", TEXT, ttl=60)
        assert "from a" == await first.get("answer:q", TEXT)
        assert "from a*" == await second.get("answer:q", TEXT)
        assert [("answer:q", "from a*")] == await second.scan("", TEXT, limit=10)
        await second.delete("answer:q")
        assert "from a" == await first.get("answer:q", TEXT)
        assert await second.add("answer:only-a", "mine", TEXT, ttl=60) is True
    finally:
        await first.aclose()
        await second.aclose()


async def test_every_key_written_has_a_ttl(store: RedisStore, inspect: redis.Redis) -> None:
    """set, add, replace, incr and hit all leave keys that expire: nothing is kept forever."""
    await store.set("answer:q", "a", TEXT, ttl=60)
    await store.add("dedupe:Ev1", "w", TEXT, ttl=60)
    await store.set("pause:aq", "on", TEXT, ttl=60)
    await store.replace("pause:aq", "on", "off", TEXT, ttl=30)
    await store.incr("quota:day", 1, ttl=60)
    await store.incr("quota:odd", 1, ttl=60)
    await store.hit("rate:U1", limit=3, window=60, now=1000.0)
    keys = sorted(inspect.keys("*"))
    assert 6 == len(keys)
    assert all(key.startswith(b"gdocs:") for key in keys)
    ttls = {key: inspect.pttl(key) for key in keys}
    assert all(0 < ttl <= 60_000 for ttl in ttls.values()), ttls
    assert ttls[b"gdocs:pause:aq"] <= 30_000


async def test_ttls_are_set_in_milliseconds(store: RedisStore, inspect: redis.Redis) -> None:
    """A sub-second TTL is kept as such (PX), and counting again keeps a counter's TTL."""
    await store.set("lock:q", "me", TEXT, ttl=0.25)
    assert 0 < inspect.pttl("gdocs:lock:q") <= 250
    await store.incr("quota:day", 1, ttl=5)
    await store.incr("quota:day", 1, ttl=500)
    assert 0 < inspect.pttl("gdocs:quota:day") <= 5_000


async def test_a_short_lived_key_is_gone_once_its_ttl_passes(store: RedisStore) -> None:
    """Redis itself expires the key: polled (bounded) until it reads as absent."""
    await store.set("lock:short", "me", TEXT, ttl=0.05)
    async with asyncio.timeout(2):
        while await store.get("lock:short", TEXT) is not None:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
    assert await store.add("lock:short", "next", TEXT, ttl=60) is True


async def test_scripts_still_run_after_the_server_forgot_them(
    store: RedisStore, inspect: redis.Redis
) -> None:
    """A restarted server has no scripts (NOSCRIPT): they are loaded again transparently."""
    await store.set("pause:aq", "on", TEXT, ttl=60)
    assert await store.replace("pause:aq", "on", "off", TEXT, ttl=60) is True
    inspect.script_flush()
    assert await store.replace("pause:aq", "off", "on", TEXT, ttl=60) is True
    assert 2 == await store.incr("quota:day", 2, ttl=60)
    assert await store.hit("rate:U1", limit=1, window=60, now=1.0) is None


async def test_a_wrong_password_is_a_config_error_without_the_password() -> None:
    """Redis refuses the password: StoreConfigError naming STATE_URL, never the password."""
    server = RedisServer(password="right-horse-battery").start()
    try:
        url = f"redis://:wrong-staple-secret@127.0.0.1:{server.port}/0"
        with pytest.raises(StoreConfigError) as caught:
            await open_store(url, prefix="gdocs:", max_entries=10)
        message = str(caught.value)
        assert message.startswith(f"STATE_URL=redis://:[redacted]@127.0.0.1:{server.port}/0")
        assert "wrong-staple-secret" not in message
        assert "right-horse-battery" not in message
        assert "password" in message
        missing = f"redis://127.0.0.1:{server.port}/0"
        with pytest.raises(StoreConfigError):
            await open_store(missing, prefix="gdocs:", max_entries=10)
        good = await open_store(server.url, prefix="gdocs:", max_entries=10)
        await good.aclose()
    finally:
        server.kill()


async def test_an_unknown_database_number_is_a_config_error(redis_server: RedisServer) -> None:
    """redis://host:port/99 on a server with 16 databases: StoreConfigError."""
    url = f"redis://127.0.0.1:{redis_server.port}/99"
    with pytest.raises(StoreConfigError, match="DB index"):
        await open_store(url, prefix="gdocs:", max_entries=10)


async def test_no_server_at_start_up_is_retryable_and_keeps_the_password_out() -> None:
    """Connection refused: StoreUnavailable (retry), not a config error; no password shown."""
    url = f"redis://:refused-secret@127.0.0.1:{_free_port()}/0"
    with pytest.raises(StoreUnavailable) as caught:
        await open_store(url, prefix="gdocs:", max_entries=10)
    assert "refused-secret" not in str(caught.value)
    assert str(caught.value).startswith("STATE_URL=redis://:[redacted]@")


async def test_errors_during_an_outage_never_carry_the_password() -> None:
    """Every call on a stopped server raises StoreError with one line and no password."""
    server = RedisServer(password="outage-secret-pw").start()
    store = redis_store(server.url, prefix="gdocs:")
    try:
        await store.set("answer:q", "a", TEXT, ttl=60)
        server.stop()
        calls = [
            store.get("answer:q", TEXT),
            store.set("answer:q", "b", TEXT, ttl=60),
            store.incr("quota:day", 1, ttl=60),
            store.hit("rate:U", limit=1, window=1, now=1.0),
            store.scan("", JSON, limit=5),
        ]
        for call in calls:
            with pytest.raises(StoreError) as caught:
                await call
            assert "outage-secret-pw" not in str(caught.value)
            assert "\n" not in str(caught.value)
        leaky = RuntimeError("AUTH outage-secret-pw failed")
        assert "outage-secret-pw" not in store.safe_message("auth", leaky)
        cut = RuntimeError("x" * 270 + " outage-secret-pw")  # where the line is cut short
        assert "outage-se" not in store.safe_message("auth", cut)
    finally:
        await store.aclose()
        server.kill()
