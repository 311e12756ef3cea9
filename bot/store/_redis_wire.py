"""One Redis connection as an asyncio protocol: commands written as they come, replies parsed
(hiredis) in the event loop's own read callback.

Through redis-py's stream a reply woke a reader task first, which then woke its caller: a
turn of the loop more than needed, 10 to 15 ms of it under load (bench/FINDINGS.md, "Redis:
the acknowledgement's write"). Here each reply goes to `on_reply` as soon as its bytes are
read, in order; a lost connection goes to `on_lost` once. The handshake (AUTH, SELECT) is the
caller's: they are ordinary commands on the wire.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import cast

import hiredis
from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse, RedisError


@dataclass(frozen=True)
class Endpoint:
    """Where a Redis is and how to reach it (the password is kept out of repr)."""

    host: str
    port: int = 6379
    db: int = 0
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls: bool = False
    ca_certs: str | None = None
    check_hostname: bool = True
    connect_timeout: float = 1.0
    #: seconds without a reply before the connection is given up
    socket_timeout: float = 1.0

    @property
    def name(self) -> str:
        return f"{self.host}:{self.port}"

    def handshake(self) -> list[tuple[str | int, ...]]:
        """The commands a fresh connection starts with (their replies are OK)."""
        commands: list[tuple[str | int, ...]] = []
        if self.password:
            user = (self.username,) if self.username else ()
            commands.append(("AUTH", *user, self.password))
        if self.db:
            commands.append(("SELECT", self.db))
        return commands

    def tls_context(self) -> ssl.SSLContext | None:
        if not self.tls:
            return None
        context = ssl.create_default_context(cafile=self.ca_certs)
        context.check_hostname = self.check_hostname
        return context


class Wire(asyncio.Protocol):
    """The connection; `write` what to send, replies come to `on_reply` in order."""

    def __init__(
        self, on_reply: Callable[[object], None], on_lost: Callable[[RedisError], None]
    ) -> None:
        self._on_reply = on_reply
        self._on_lost = on_lost
        # an error reply becomes its exception (NoScriptError, AuthenticationError, ...),
        # handed over like any reply: it fails its own command only
        self._reader = hiredis.Reader(protocolError=InvalidResponse, replyError=_reply_error)
        self._transport: asyncio.Transport | None = None
        self._resumed: asyncio.Future[None] | None = None
        self._lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport (uvloop's is not a subclass of asyncio's, only alike)
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        reader = self._reader
        reader.feed(data)
        try:
            while (reply := reader.gets()) is not False:
                self._on_reply(reply)
        except InvalidResponse as exc:  # out of step: nothing after it can be trusted
            self.abort(RedisConnectionError(f"unreadable reply from Redis: {exc}"))

    def eof_received(self) -> bool:
        return False  # the server closed its side: close ours (connection_lost follows)

    def connection_lost(self, exc: Exception | None) -> None:
        reason = f": {exc}" if exc is not None else ""
        self._gone(RedisConnectionError(f"the connection to Redis was closed{reason}"))

    def pause_writing(self) -> None:
        self._resumed = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        resumed, self._resumed = self._resumed, None
        if resumed is not None and not resumed.done():
            resumed.set_result(None)

    async def writable(self) -> None:
        """Once the transport's buffer is below its high-water mark."""
        if self._resumed is not None:
            await asyncio.shield(self._resumed)

    def write(self, pieces: Iterable[bytes]) -> None:
        if self._transport is None or self._lost:
            raise RedisConnectionError("the connection to Redis is closed")
        self._transport.writelines(pieces)

    def abort(self, reason: RedisError) -> None:
        """Drop the connection now; `on_lost` gets `reason`."""
        self._gone(reason)
        if self._transport is not None:
            self._transport.abort()

    def _gone(self, reason: RedisError) -> None:
        if self._lost:
            return
        self._lost = True
        self.resume_writing()  # a writer waiting for room finds the connection gone
        self._on_lost(reason)


def _reply_error(message: str) -> Exception:
    error: Exception = BaseParser.parse_error(message)  # type: ignore[no-untyped-call]
    return error


async def connect(
    endpoint: Endpoint, on_reply: Callable[[object], None], on_lost: Callable[[RedisError], None]
) -> Wire:
    """A connected Wire (TCP, and TLS for rediss://). OSError or RedisConnectionError when
    the server cannot be reached in `connect_timeout`; the handshake is still to send."""
    loop = asyncio.get_running_loop()
    context = endpoint.tls_context()
    try:
        async with asyncio.timeout(endpoint.connect_timeout):
            _, wire = await loop.create_connection(
                lambda: Wire(on_reply, on_lost),
                endpoint.host,
                endpoint.port,
                ssl=context,
                server_hostname=endpoint.host if context is not None else None,
            )
    except TimeoutError:
        raise RedisConnectionError(
            f"no connection to Redis at {endpoint.name} within {endpoint.connect_timeout:g} s"
        ) from None
    return wire
