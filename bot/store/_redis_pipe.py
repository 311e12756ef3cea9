"""Auto-pipelining for the Redis store: one connection, every command issued during one
event-loop iteration written to it together, replies matched to callers in order.

Redis answers the commands of one connection in the order they were sent, so a caller's
reply is found by position: `call()` queues `(args, future)`; the first call of an iteration
starts a flush that runs once the iteration's other callers have queued theirs, packs up to
`MAX_PIPELINE` commands into one write (a pipeline without MULTI: each command stands alone)
and hands the futures to the reader, which resolves them one reply at a time. An error reply
fails only its own caller. A lost connection is dropped: the commands it had not answered
are sent once more on a fresh one (a restarted server drops its connections), then fail (a
real outage fails fast). A server that does not answer within socket_timeout fails every
caller waiting on it, without a retry. A caller that gave up (its future cancelled) is
skipped: unsent, its command is never sent; sent, its reply is read and dropped.

No pool, so no "Too many connections" and no wait for a free one: with 200 questions in
flight, the commands of one loop iteration share one write and one read of the socket.
A command issued inside `urgent()` (what an acknowledgement waits on) goes on the
`UrgentLink` instead when it is ready, answered without yielding (bot/store/_redis_urgent.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque
from collections.abc import Callable, Iterable

from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.store._redis_urgent import NotSent, UrgentLink
from bot.store._urgency import is_urgent

#: seconds without a reply before a connection is given up, when it has no socket_timeout
_PATIENCE = 1.0
#: commands in one write at most (bounds one write and one burst of replies)
MAX_PIPELINE = 256

Arg = bytes | str | int | float


class _Call:
    __slots__ = ("args", "future", "retried")

    def __init__(self, args: tuple[Arg, ...], future: asyncio.Future[object]) -> None:
        self.args = args
        self.future = future
        self.retried = False


class _Link:
    """One connection, the calls written to it and not yet answered, and its reader."""

    __slots__ = ("conn", "inflight", "reader", "replies", "stalled", "watchdog")

    def __init__(self, conn: AbstractConnection) -> None:
        self.conn = conn
        self.inflight: deque[_Call] = deque()
        self.reader: asyncio.Task[None] | None = None
        self.replies = 0  # read so far: the watchdog's measure of progress
        self.stalled = False  # the watchdog stopped the reader: no reply for too long
        self.watchdog: asyncio.TimerHandle | None = None


class AutoPipeline:
    """Commands sent on a connection from `connect`, pipelined per event-loop iteration."""

    def __init__(
        self, connect: Callable[[], AbstractConnection], urgent: UrgentLink | None = None
    ) -> None:
        self._new = connect
        #: the blocking link for urgent commands (None: they are pipelined too)
        self.urgent = urgent
        self._link: _Link | None = None
        self._pending: deque[_Call] = deque()  # queued, not yet written
        self._flusher: asyncio.Task[None] | None = None
        self._closed = False
        #: writes made so far (one per pipeline), for tests and the benchmark
        self.pipelines = 0
        #: commands written so far
        self.commands = 0

    async def call(self, *args: Arg) -> object:
        """The reply to one command; an error reply raises its ResponseError."""
        if self._closed:
            raise RedisConnectionError("the Redis store is closed")
        if self.urgent is not None and is_urgent() and self.urgent.ready():
            try:
                return await self.urgent.call([b"".join(pack([args]))])
            except NotSent:  # its connection was closed by the server: pipelined instead
                pass
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        self._pending.append(_Call(args, future))
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        try:
            while self._pending:
                link = self._link or await self._open()
                if link is None:
                    return
                chunk = self._take()
                if not chunk:
                    continue
                link.inflight.extend(chunk)  # before the write: the reader may be running
                packed = pack([call.args for call in chunk])
                self.pipelines += 1
                self.commands += len(chunk)
                try:
                    await link.conn.send_packed_command(packed, check_health=False)
                except (RedisError, OSError) as exc:
                    self._broken(link, exc)
                    continue
                if link.reader is None:
                    link.reader = asyncio.create_task(self._read(link))
        finally:
            self._flusher = None

    async def _open(self) -> _Link | None:
        conn = self._new()
        try:
            await conn.connect()  # type: ignore[no-untyped-call]
        except (RedisError, OSError) as exc:
            _fail(self._pending, exc)  # no server: nobody queued can be served
            return None
        if self._closed:
            await conn.disconnect()
            return None
        self._link = _Link(conn)
        return self._link

    def _take(self) -> list[_Call]:
        chunk: list[_Call] = []
        while self._pending and len(chunk) < MAX_PIPELINE:
            call = self._pending.popleft()
            if not call.future.done():  # a caller that gave up is not sent
                chunk.append(call)
        return chunk

    async def _read(self, link: _Link) -> None:
        # One watchdog per burst of replies, not a timeout per reply (a third of a reply's
        # cost): it stops the reader when no reply came for socket_timeout.
        patience = link.conn.socket_timeout or _PATIENCE
        link.watchdog = asyncio.get_running_loop().call_later(
            patience, self._watch, link, link.replies, patience
        )
        try:
            while link.inflight:
                try:
                    reply: object = await link.conn.read_response(timeout=math.inf)
                except ResponseError as exc:  # this command's own error: the rest go on
                    reply = exc
                link.replies += 1
                future = link.inflight.popleft().future
                if future.done():
                    continue
                if isinstance(reply, ResponseError):
                    future.set_exception(reply)
                else:
                    future.set_result(reply)
        except (RedisError, OSError) as exc:  # redis-py has closed the connection
            self._broken(link, exc)
        except asyncio.CancelledError:
            if not link.stalled:
                raise
            self._broken(link, RedisTimeoutError(f"no reply from Redis within {patience:g} s"))
        finally:
            if link.watchdog is not None:
                link.watchdog.cancel()
            link.watchdog = None
            link.reader = None

    def _watch(self, link: _Link, seen: int, patience: float) -> None:
        if link.reader is None:
            return
        if link.replies != seen:  # progress since the last look: look again later
            link.watchdog = asyncio.get_running_loop().call_later(
                patience, self._watch, link, link.replies, patience
            )
            return
        link.stalled = True
        link.reader.cancel()  # redis-py closes the connection of a cancelled read

    def _broken(self, link: _Link, exc: BaseException) -> None:
        """`link` failed: drop it. When the connection was lost (not stuck: a timeout is
        not retried), send once more what it had not answered; fail the rest."""
        if self._link is link:
            self._link = None
        if link.reader is not None and link.reader is not asyncio.current_task():
            link.reader.cancel()  # bound to the dead connection alone
        waiting, link.inflight = link.inflight, deque()
        lost = isinstance(exc, (RedisConnectionError, OSError))
        _fail((call for call in waiting if call.retried or not lost), exc)
        retry = [call for call in waiting if lost and not call.future.done()]
        for call in reversed(retry):
            call.retried = True
            self._pending.appendleft(call)
        if self._closed:
            _fail(self._pending, exc)
        elif self._pending and self._flusher is None:
            self._flusher = asyncio.create_task(self._flush())

    async def aclose(self) -> None:
        """Fail whatever is still waiting and close the connection."""
        self._closed = True
        if self.urgent is not None:
            await self.urgent.aclose()
        closed = RedisConnectionError("the Redis store is closed")
        link, self._link = self._link, None
        reader = link.reader if link is not None else None
        tasks = [task for task in (self._flusher, reader) if task is not None]
        for task in tasks:
            task.cancel()
        _fail(self._pending, closed)
        if link is not None:
            _fail(link.inflight, closed)
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if link is not None:
            await link.conn.disconnect()


def _fail(calls: Iterable[_Call], exc: BaseException) -> None:
    for call in calls:
        if not call.future.done():
            call.future.set_exception(exc)
    if isinstance(calls, deque):
        calls.clear()


#: `\r\n$<length>\r\n` for the lengths most arguments have: an argument's header, after
#: the end of the argument before it
_HEADS = [b"\r\n$%d\r\n" % n for n in range(1024)]


def pack(commands: Iterable[tuple[Arg, ...]]) -> list[bytes]:
    """`commands` in RESP, as pieces for one write. About a third of redis-py's packer's
    cost, which splits command names, goes through an Encoder and formats every length."""
    out: list[bytes] = [b""]
    put = out.append
    heads = _HEADS
    for args in commands:
        put(b"\r\n*%d" % len(args))
        for arg in args:
            kind = type(arg)
            if kind is bytes:
                data: bytes = arg  # type: ignore[assignment]
            elif kind is str:
                data = arg.encode()  # type: ignore[union-attr]
            elif kind is int:
                data = str(arg).encode()
            else:
                data = repr(arg).encode()  # a float (bool is never passed)
            size = len(data)
            put(heads[size] if size < 1024 else b"\r\n$%d\r\n" % size)
            put(data)
    put(b"\r\n")
    out[1] = out[1][2:]  # the first command has nothing before it to end
    return out
