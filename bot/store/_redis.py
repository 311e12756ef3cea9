"""`redis://…` / `rediss://…`: state shared by replicas, through redis-py's asyncio client and
a blocking pool. Writes and the sliding windows (sorted sets under `<prefix>~window:`) are Lua
scripts, one round trip each. Errors are StoreError, one line without the password."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.connection import Connection, SSLConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, RedisError, ResponseError

from bot.redact import Redactor
from bot.store._api import (
    Codec,
    Op,
    Store,
    StoreConfigError,
    StoreError,
    StoreUnavailable,
    T,
    check,
    decoded,
)

#: connections per process; a call waits for a free one as long as for Redis itself
MAX_CONNECTIONS = 32


# --- Lua scripts: reads-then-writes, atomic on the server -------------------------------
# ARGV: the event's score; removes one member with exactly that score
_UNHIT = """
local found = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1], 'LIMIT', 0, 1)
if found[1] then
    return redis.call('ZREM', KEYS[1], found[1])
end
return 0
"""

# ARGV: cutoff (events at or before it have left), now, limit, ttl ms, a unique member.
# Returns nothing when the event was recorded, else the oldest event's score ('' if none).
_HIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return oldest[2] or ''
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return false
"""

# A batch (`Store.batch`) in one round trip, atomic on the server. Per operation, 5 ARGV:
# kind, the 1-based index of the operation it depends on (0: none), value, expected, ttl ms
# (the amount for incr); and 2 KEYS: the key and its window's key (for delete).
_BATCH = """
local results = {}
for i = 1, #ARGV / 5 do
    local base = (i - 1) * 5
    local kind, cond = ARGV[base + 1], tonumber(ARGV[base + 2])
    local value, expected, ttl = ARGV[base + 3], ARGV[base + 4], ARGV[base + 5]
    local key, window = KEYS[i * 2 - 1], KEYS[i * 2]
    local r = 0
    if cond == 0 or results[cond] == 1 then
        if kind == 'set' then
            redis.call('SET', key, value, 'PX', ttl)
        elseif kind == 'add' then
            if redis.call('SET', key, value, 'PX', ttl, 'NX') then r = 1 end
        elseif kind == 'replace' then
            if redis.call('GET', key) == expected then
                redis.call('SET', key, value, 'PX', ttl)
                r = 1
            end
        elseif kind == 'delete' then
            redis.call('DEL', key, window)
        elseif kind == 'delete_if' then
            if redis.call('GET', key) == expected then r = redis.call('DEL', key) end
        elseif kind == 'incr' then
            local current = redis.call('GET', key)
            if current and string.match(current, '^%-?%d+$') then
                r = redis.call('INCRBY', key, expected)
            else
                redis.call('SET', key, expected, 'PX', ttl)
                r = tonumber(expected)
            end
        end
    end
    results[i] = r
end
return results
"""


def _px(seconds: float) -> int:
    """A TTL in whole milliseconds, never 0 (which Redis refuses)."""
    return max(1, math.ceil(seconds * 1000))


class RedisStore(Store):
    kind = "redis"

    def __init__(
        self,
        *,
        prefix: str = "gdocs:",
        password: str | None = None,
        tls: bool = False,
        timeout: float = 1.0,
        **connection: Any,
    ) -> None:
        """Nothing connects before the first call. `connection`: redis-py's host, port..."""
        pool = BlockingConnectionPool(
            max_connections=MAX_CONNECTIONS,
            # the caller's own bound (STATE_TIMEOUT_SECONDS) is usually the shorter one
            timeout=timeout,
            connection_class=SSLConnection if tls else Connection,
            password=password or None,
            socket_connect_timeout=timeout,
            socket_timeout=timeout,
            # one quick retry (a restarted server drops its connections); an outage fails fast
            retry=Retry(NoBackoff(), 1),
            protocol=2,
            **connection,
        )
        self.client = Redis(connection_pool=pool)
        #: whether the connection is TLS (rediss://)
        self.tls = tls
        self.prefix = prefix
        self._windows = f"{prefix}~window:"
        self._redact = Redactor([password or ""], min_chars=1)
        self._closed = False
        self._scripts = {
            name: self.client.register_script(script)
            for name, script in (("BATCH", _BATCH), ("HIT", _HIT), ("UNHIT", _UNHIT))
        }

    def safe_message(self, what: str, exc: BaseException) -> str:
        """`what: ErrorType: first line of the error`, with any password blanked out."""
        lines = self._redact(str(exc)).strip().splitlines()
        return f"{what}: {type(exc).__name__}: {lines[0] if lines else 'no detail'}"[:300]

    @contextmanager
    def _calling(self, op: str) -> Iterator[None]:
        if self._closed:
            raise StoreError(f"redis {op} failed: the store is closed")
        try:
            yield
        except (RedisError, OSError) as exc:
            # `from None`: the original exception's text is not ours to vouch for
            raise StoreError(self.safe_message(f"redis {op} failed", exc)) from None

    async def verify(self, label: str) -> None:
        """PING at start-up. `label`: the URL, password hidden."""
        try:
            await self.client.ping()
        except (AuthenticationError, ResponseError) as exc:
            await self.aclose()
            raise StoreConfigError(
                f"STATE_URL={label}: Redis refused the connection"
                f" ({self.safe_message('ping', exc)}): fix the user, password or database number"
            ) from None
        except (RedisError, OSError) as exc:
            await self.aclose()
            message = self.safe_message("ping", exc)
            if "SSL" in message or "certificate" in message:
                raise StoreConfigError(
                    f"STATE_URL={label}: the TLS handshake failed ({message}): use redis:// for"
                    " a server without TLS, or ?ssl_ca_certs=/path/to/ca.pem for its CA"
                ) from None
            raise StoreUnavailable(f"STATE_URL={label}: Redis did not answer ({message})") from None

    async def _eval(self, op: str, script: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        with self._calling(op):
            return await self._scripts[script](keys=list(keys), args=list(args))

    # --- Store ---------------------------------------------------------------------------
    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        if not keys:
            return []
        with self._calling("get_many"):
            raws: list[Any] = await self.client.mget([self.prefix + key for key in keys])
        return [decoded(codec, raw) for raw in raws]

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        member = f"{now!r}:{os.urandom(6).hex()}"  # two events at one instant are two events
        args = [repr(now - window), repr(now), limit, _px(window), member]
        oldest = await self._eval("hit", "HIT", [self._windows + key], args)
        if oldest is None:
            return None
        if oldest == b"":
            return window
        return max(0.0, float(oldest) + window - now)

    async def unhit(self, key: str, at: float) -> bool:
        return bool(await self._eval("unhit", "UNHIT", [self._windows + key], [repr(at)]))

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        with self._calling("window_events"):
            found: Any = await self.client.zrangebyscore(
                self._windows + key, f"({now - window!r}", "+inf", withscores=True
            )
        return [float(score) for _, score in found]

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self.prefix + prefix) + "*"
        skip = len(self.prefix.encode())
        found: list[tuple[str, T]] = []
        cursor = 0
        with self._calling("scan"):
            while len(found) < limit:
                cursor, keys = await self.client.scan(cursor, match=pattern, count=200)
                names: list[bytes] = keys  # type: ignore[assignment]  # decode_responses off
                raws: list[Any] = await self.client.mget(names) if names else []
                for name, raw in zip(names, raws, strict=True):
                    value = decoded(codec, raw)  # None: a window, or expired meanwhile
                    if value is not None:
                        found.append((name[skip:].decode("utf-8", "replace"), value))
                if cursor == 0:
                    break
        return found[:limit]

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        check(ops)
        if not ops:
            return []
        keys: list[str] = []
        args: list[Any] = []
        for op in ops:
            value, expected = op.encoded()
            cond = 0 if op.only_if is None else op.only_if + 1
            amount_or_expected = str(op.amount).encode() if op.kind == "incr" else expected
            keys += [self.prefix + op.key, self._windows + op.key]
            args += [op.kind, cond, value, amount_or_expected, _px(op.ttl) if op.ttl > 0 else 1]
        raw = await self._eval("batch", "BATCH", keys, args)
        return [
            None if op.kind in ("set", "delete") else int(r) if op.kind == "incr" else bool(r)
            for op, r in zip(ops, raw, strict=True)
        ]

    async def ping(self) -> None:
        with self._calling("ping"):
            await self.client.ping()

    async def aclose(self) -> None:
        if not self._closed:
            with self._calling("close"):
                self._closed = True
                await self.client.aclose()
                await self.client.connection_pool.disconnect()
