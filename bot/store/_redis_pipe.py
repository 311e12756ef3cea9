"""Auto-pipelining for the Redis store: one connection, every command issued during one
event-loop iteration written to it together, replies matched to callers in order.

Redis answers the commands of one connection in the order they were sent, so a caller's
reply is found by position: `call()` queues `(args, future)`; the first call of an iteration
starts a flush that runs once the iteration's other callers have queued theirs, packs up to
`MAX_PIPELINE` commands into one write (a pipeline without MULTI: each command stands alone)
and leaves the futures to the connection (`Wire`, bot/store/_redis_wire.py), which resolves
them one reply at a time as the bytes are read. An error reply fails only its own caller.
A lost connection is dropped: the commands it had not answered are sent once more on a fresh
one (a restarted server drops its connections), then fail (a real outage fails fast). A
server that does not answer within socket_timeout fails every caller waiting on it, without
a retry (one watchdog timer per connection, re-armed while replies come). A caller that gave
up (its future cancelled) is skipped: unsent, its command is never sent; sent, its reply is
read and dropped.

No pool, so no "Too many connections" and no wait for a free one: with 200 questions in
flight, the commands of one loop iteration share one write and one read of the socket.
A command issued inside `urgent()` (what an acknowledgement waits on) goes on the
`UrgentLink` instead when it is ready, answered without yielding (bot/store/_redis_urgent.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import deque
from collections.abc import Iterable

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.store._redis_urgent import NotSent, UrgentLink
from bot.store._redis_wire import Endpoint, Wire, connect
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
    """One connection, the calls written to it and not yet answered, and its watchdog."""

    __slots__ = ("inflight", "lost", "replies", "watchdog", "wire")

    def __init__(self) -> None:
        self.wire: Wire | None = None
        self.inflight: deque[_Call] = deque()
        self.replies = 0  # read so far: the watchdog's measure of progress
        self.watchdog: asyncio.TimerHandle | None = None
        self.lost = False


class AutoPipeline:
    """Commands sent on a connection to `endpoint`, pipelined per event-loop iteration."""

    def __init__(self, endpoint: Endpoint, urgent: UrgentLink | None = None) -> None:
        self._endpoint = endpoint
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
                assert link.wire is not None
                await link.wire.writable()
                chunk = self._take()
                if not chunk or link.lost:
                    self._pending.extendleft(reversed(chunk))
                    continue
                self._send(link, chunk)
        finally:
            self._flusher = None

    def _send(self, link: _Link, chunk: list[_Call]) -> None:
        assert link.wire is not None
        link.inflight.extend(chunk)
        self.pipelines += 1
        self.commands += len(chunk)
        link.wire.write(pack([call.args for call in chunk]))
        if link.watchdog is None:
            self._watch_later(link, link.replies)

    async def _open(self) -> _Link | None:
        """A fresh connection, its handshake answered; None when there is none to be had
        (everyone queued has been failed with the reason)."""
        link = _Link()
        replied = functools.partial(self._replied, link)
        lost = functools.partial(self._broken, link)
        for attempt in (1, 2):  # one immediate retry, for a server that is just restarting
            try:
                wire = await connect(self._endpoint, replied, lost)
                break
            except (RedisError, OSError) as exc:
                if attempt == 2:
                    _fail(self._pending, exc)  # no server: nobody queued can be served
                    return None
        link.wire = wire
        if self._closed:
            wire.abort(RedisConnectionError("the Redis store is closed"))
            return None
        self._link = link
        loop = asyncio.get_running_loop()
        handshake = [_Call(args, loop.create_future()) for args in self._endpoint.handshake()]
        if handshake:
            self._send(link, handshake)
            done = await asyncio.gather(*(c.future for c in handshake), return_exceptions=True)
            refused = next((r for r in done if isinstance(r, BaseException)), None)
            if refused is not None:  # a refused password or database, or a lost connection
                self._broken(link, refused)
                _fail(self._pending, refused)
                return None
        return link

    def _take(self) -> list[_Call]:
        chunk: list[_Call] = []
        while self._pending and len(chunk) < MAX_PIPELINE:
            call = self._pending.popleft()
            if not call.future.done():  # a caller that gave up is not sent
                chunk.append(call)
        return chunk

    def _replied(self, link: _Link, reply: object) -> None:
        """The wire read one reply: it is the oldest unanswered call's."""
        if not link.inflight:
            assert link.wire is not None
            link.wire.abort(RedisConnectionError("a reply from Redis that nobody asked for"))
            return
        link.replies += 1
        future = link.inflight.popleft().future
        if future.done():  # its caller gave up: the reply is dropped
            return
        # this command's own error (hiredis hands error replies over as exceptions, some
        # of them ConnectionErrors such as NOAUTH's): it fails its caller, the rest go on
        if isinstance(reply, Exception):
            future.set_exception(reply)
        else:
            future.set_result(reply)

    def _watch_later(self, link: _Link, seen: int) -> None:
        patience = self._endpoint.socket_timeout or _PATIENCE
        link.watchdog = asyncio.get_running_loop().call_later(
            patience, self._watch, link, seen, patience
        )

    def _watch(self, link: _Link, seen: int, patience: float) -> None:
        # One watchdog per burst of replies, not a timeout per reply: it gives the
        # connection up when no reply came for socket_timeout while some were awaited.
        link.watchdog = None
        if link.lost or not link.inflight:
            return
        if link.replies != seen:  # progress since the last look: look again later
            self._watch_later(link, link.replies)
            return
        assert link.wire is not None
        link.wire.abort(RedisTimeoutError(f"no reply from Redis within {patience:g} s"))

    def _broken(self, link: _Link, exc: BaseException) -> None:
        """`link` failed: drop it. When the connection was lost (not stuck: a timeout is
        not retried), send once more what it had not answered; fail the rest."""
        if link.lost:
            return
        link.lost = True
        if self._link is link:
            self._link = None
        if link.watchdog is not None:
            link.watchdog.cancel()
            link.watchdog = None
        if link.wire is not None:
            link.wire.abort(RedisConnectionError("dropped"))  # no-op when already gone
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
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
        _fail(self._pending, closed)
        if link is not None:
            self._broken(link, closed)


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
