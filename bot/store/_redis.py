"""`redis://…` / `rediss://…`: state shared by several replicas (Redis ≥ 6, Valkey).

Every key starts with `prefix` (STATE_PREFIX, default `gdocs:`) so one Redis can serve several
bots, and every key has a TTL (PX): nothing outlives its retention even if no one deletes it.
Reads-then-writes are Lua scripts, atomic on the server, called by their SHA1 (EVALSHA); a
restarted server that answers NOSCRIPT gets the script's text once (EVAL, which loads it
again). Sliding windows are sorted sets under their own keys (`<prefix>~window:<key>`), so
they never collide with values. The size bound is Redis's own business (TTLs, and
`maxmemory-policy volatile-lru` on the server).

Commands go through `AutoPipeline` (bot/store/_redis_pipe.py): one connection per process,
the commands of one event-loop iteration written together. Measured with
`python -m bench.store_micro` (100 questions in flight, 7 store calls each): redis-py's own
pool (max_connections=50) raised "Too many connections", so most calls were served by the
ResilientStore's fallback; a BlockingConnectionPool (50 connections, 0.4 s wait) served them
at about 1.7 ms of CPU per question, 17 x memory://'s, each call paying for a checkout, its
own write and read and redis-py's command machinery; auto-pipelining costs a fraction of that
(figures in bench/FINDINGS.md, "Redis: the pool and pipelining"), on one socket.

Errors surface as StoreError with one line that never carries the password.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from redis.backoff import NoBackoff
from redis.connection import Connection, SSLConnection
from redis.exceptions import AuthenticationError, NoScriptError, RedisError, ResponseError
from redis.retry import Retry

from bot.observability.metrics import Metrics
from bot.redact import Redactor
from bot.store._api import Codec, StoreConfigError, StoreError, StoreUnavailable, T
from bot.store._ops import Op, check
from bot.store._redis_pipe import Arg, AutoPipeline
from bot.store._redis_scripts import _BATCH, _DELETE_IF, _HIT, _INCR, _REPLACE, _UNHIT
from bot.store._redis_urgent import UrgentLink
from bot.store._redis_wire import Endpoint

#: the urgent link's CLIENT SETNAME
ACK_CLIENT_NAME = "gdocs-ack"
_GLOB_SPECIALS = re.compile(r"([*?\[\]\\])")
_SCAN_BATCH = 200
#: each script's SHA1, the name EVALSHA calls it by
_SHA = {
    script: hashlib.sha1(script.encode()).hexdigest()  # noqa: S324 - Redis's script names
    for script in (_BATCH, _DELETE_IF, _HIT, _INCR, _REPLACE, _UNHIT)
}


def escape_glob(text: str) -> str:
    """`text` matched literally in a SCAN MATCH pattern."""
    return _GLOB_SPECIALS.sub(r"\\\1", text)


def _px(seconds: float) -> int:
    """A TTL in whole milliseconds, never 0 (which Redis refuses)."""
    return max(1, math.ceil(seconds * 1000))


class RedisStore:
    kind = "redis"

    def __init__(
        self, endpoint: Endpoint, *, prefix: str = "gdocs:", urgent: UrgentLink | None = None
    ) -> None:
        #: whether the connection is TLS (rediss://)
        self.tls = endpoint.tls
        self._prefix = prefix
        self._windows = f"{prefix}~window:"
        self._redact = Redactor([endpoint.password or ""], min_chars=1)
        self.pipe = AutoPipeline(endpoint, urgent)

    @classmethod
    def connect(
        cls,
        *,
        host: str,
        port: int = 6379,
        db: int = 0,
        username: str | None = None,
        password: str | None = None,
        tls: bool = False,
        tls_ca_certs: str | None = None,
        tls_check_hostname: bool = True,
        prefix: str = "gdocs:",
        connect_timeout: float = 1.0,
        socket_timeout: float = 1.0,
        ack_wait: float = 0.0,
    ) -> RedisStore:
        """A store (no connection is made until the first call: use `ping()` to check).
        `ack_wait`: how long an acknowledgement's write may hold the event loop for its reply
        (`UrgentLink`); 0 pipelines it like any other."""
        endpoint = Endpoint(
            host=host,
            port=port,
            db=db,
            username=username or None,
            password=password or None,
            tls=tls,
            ca_certs=tls_ca_certs,
            check_hostname=tls_check_hostname,
            connect_timeout=connect_timeout,
            socket_timeout=socket_timeout,
        )
        urgent = (
            UrgentLink(lambda: _blocking(endpoint), patience=ack_wait) if ack_wait > 0 else None
        )
        return cls(endpoint, prefix=prefix, urgent=urgent)

    @property
    def prefix(self) -> str:
        return self._prefix

    @contextmanager
    def _calling(self, op: str) -> Iterator[None]:
        try:
            yield
        except (RedisError, OSError) as exc:
            # `from None`: the original exception's text is not ours to vouch for
            raise StoreError(self.safe_message(f"redis {op} failed", exc)) from None

    def safe_message(self, what: str, exc: BaseException) -> str:
        """`what: ErrorType: first line of the error`, with any password blanked out."""
        text = self._redact(str(exc))  # before cutting, so no part of one can be left
        lines = text.strip().splitlines()
        return f"{what}: {type(exc).__name__}: {lines[0] if lines else 'no detail'}"[:300]

    async def verify(self, label: str) -> None:
        """PING once, at start-up. A refusal of the credentials or the db number is
        StoreConfigError; no answer is StoreUnavailable. `label`: the URL, password hidden."""
        try:
            await self.pipe.call("PING")
            if self.pipe.urgent is not None:
                await self.pipe.urgent.open()
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

    async def _eval(self, script: str, keys: Sequence[str], args: Sequence[Arg]) -> Any:
        """Run `script` by its SHA1; a server that forgot it (restarted) gets its text."""
        try:
            return await self.pipe.call("EVALSHA", _SHA[script], len(keys), *keys, *args)
        except NoScriptError:
            return await self.pipe.call("EVAL", script, len(keys), *keys, *args)

    # --- Store ---------------------------------------------------------------------------
    async def get(self, key: str, codec: Codec[T]) -> T | None:
        with self._calling("get"):
            raw: Any = await self.pipe.call("GET", self._prefix + key)
        return _decode(codec, raw)

    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        if not keys:
            return []
        prefix = self._prefix
        with self._calling("get_many"):
            raws: Any = await self.pipe.call("MGET", *[prefix + key for key in keys])
        return [_decode(codec, raw) for raw in raws]

    async def set(self, key: str, value: T, codec: Codec[T], ttl: float) -> None:
        with self._calling("set"):
            await self.pipe.call("SET", self._prefix + key, codec.encode(value), "PX", _px(ttl))

    async def add(self, key: str, value: T, codec: Codec[T], ttl: float) -> bool:
        encoded = codec.encode(value)
        with self._calling("add"):
            done = await self.pipe.call("SET", self._prefix + key, encoded, "PX", _px(ttl), "NX")
        return done is not None  # OK when set, nil when the key was there

    async def replace(self, key: str, expected: T, value: T, codec: Codec[T], ttl: float) -> bool:
        args: list[Arg] = [codec.encode(expected), codec.encode(value), _px(ttl)]
        with self._calling("replace"):
            done = await self._eval(_REPLACE, [self._prefix + key], args)
        return bool(done)

    async def delete(self, key: str) -> None:
        with self._calling("delete"):
            await self.pipe.call("DEL", self._prefix + key, self._windows + key)

    async def delete_if(self, key: str, expected: T, codec: Codec[T]) -> bool:
        with self._calling("delete_if"):
            done = await self._eval(_DELETE_IF, [self._prefix + key], [codec.encode(expected)])
        return bool(done)

    async def incr(self, key: str, amount: int, ttl: float) -> int:
        with self._calling("incr"):
            value = await self._eval(_INCR, [self._prefix + key], [amount, _px(ttl)])
        return int(value)

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        member = f"{now!r}:{os.urandom(6).hex()}"  # two events at one instant are two events
        args: list[Arg] = [repr(now - window), repr(now), limit, _px(window), member]
        with self._calling("hit"):
            oldest = await self._eval(_HIT, [self._windows + key], args)
        if oldest is None:
            return None
        if oldest == b"":
            return window
        return max(0.0, float(oldest) + window - now)

    async def unhit(self, key: str, at: float) -> bool:
        with self._calling("unhit"):
            done = await self._eval(_UNHIT, [self._windows + key], [repr(at)])
        return bool(done)

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        # one read command is atomic by itself: no script needed
        since = f"({now - window!r}"
        with self._calling("window_events"):
            found: Any = await self.pipe.call(
                "ZRANGEBYSCORE", self._windows + key, since, "+inf", "WITHSCORES"
            )
        return [float(score) for score in found[1::2]]  # member, score, member, score...

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        pattern = escape_glob(self._prefix + prefix) + "*"
        found: list[tuple[str, T]] = []
        cursor = 0
        with self._calling("scan"):
            while len(found) < limit:
                reply: Any = await self.pipe.call(
                    "SCAN", cursor, "MATCH", pattern, "COUNT", _SCAN_BATCH
                )
                cursor, keys = int(reply[0]), reply[1]
                if keys:
                    raws: Any = await self.pipe.call("MGET", *keys)
                    found.extend(self._decoded(keys, raws, codec))
                if cursor == 0:
                    break
        return found[:limit]

    def _decoded(
        self, keys: Sequence[bytes | str], raws: Sequence[bytes | str | None], codec: Codec[T]
    ) -> Iterator[tuple[str, T]]:
        skip = len(self._prefix.encode())
        for key, raw in zip(keys, raws, strict=True):
            value = _decode(codec, raw)  # None: a window (not a string), or expired meanwhile
            if value is not None:
                yield _as_bytes(key)[skip:].decode("utf-8", "replace"), value

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        check(ops)
        if not ops:
            return []
        keys: list[str] = []
        args: list[Arg] = []
        for op in ops:
            value, expected = op.encoded()
            if op.kind == "incr":
                expected = str(op.amount).encode()
            cond = 0 if op.only_if is None else op.only_if + 1
            ttl = _px(op.ttl) if op.ttl > 0 else 1
            keys += [self._prefix + op.key, self._windows + op.key]
            args += [op.kind, cond, value, expected, ttl]
        with self._calling("batch"):
            raw = await self._eval(_BATCH, keys, args)
        return [_result(op, r) for op, r in zip(ops, raw, strict=True)]

    def publish(self, metrics: Metrics) -> None:
        """What /metrics shows of this store beyond its calls: the urgent link's counts."""
        if self.pipe.urgent is not None:
            self.pipe.urgent.publish(metrics)

    async def ping(self) -> None:
        with self._calling("ping"):
            await self.pipe.call("PING")

    async def aclose(self) -> None:
        with self._calling("close"):
            await self.pipe.aclose()


def _blocking(endpoint: Endpoint) -> Connection:
    """The urgent link's connection (redis-py's blocking one), not yet connected: named, so
    CLIENT LIST tells it from the pipeline's, and with no retry of its own (a link that
    cannot connect rests, and the pipeline serves the urgent writes meanwhile)."""
    options: dict[str, Any] = {
        "host": endpoint.host,
        "port": endpoint.port,
        "db": endpoint.db,
        "username": endpoint.username,
        "password": endpoint.password,
        "socket_connect_timeout": endpoint.connect_timeout,
        "socket_timeout": endpoint.socket_timeout,
        "protocol": 2,  # the reply shapes this module reads (RESP3 would pair up scores)
        "client_name": ACK_CLIENT_NAME,
        "retry": Retry(NoBackoff(), 0),
    }
    if endpoint.tls:
        options |= {
            "ssl_ca_certs": endpoint.ca_certs,
            "ssl_check_hostname": endpoint.check_hostname,
        }
        return SSLConnection(**options)
    return Connection(**options)  # type: ignore[no-untyped-call]


def _result(op: Op, raw: object) -> object:
    if op.kind in ("set", "delete"):
        return None
    if op.kind == "incr":
        return int(raw)  # type: ignore[call-overload]
    return bool(raw)


def _as_bytes(value: bytes | str) -> bytes:
    return value.encode() if isinstance(value, str) else value


def _decode(codec: Codec[T], raw: bytes | str | None) -> T | None:
    if raw is None:
        return None
    try:
        return codec.decode(_as_bytes(raw))
    except ValueError:  # written by another version: as good as absent
        return None
