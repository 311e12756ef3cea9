"""The acknowledgement's one Redis write, sent and answered on the caller's own stack.

Through `AutoPipeline` a command waits for three turns of the event loop: the flusher's, the
reader's and then the caller's own. Under the steady load (bench/FINDINGS.md, "Redis: the
acknowledgement's write") a turn is 10 to 15 ms, and the acknowledgement's write took 63 ms
at p50 on Redis against 0.1 ms on memory://. A write made inside `urgent()` goes instead on
a second connection of its own, a blocking one: sent and its reply read without yielding,
as SQLite commits the same write on the caller's stack. Its bounds:

- the loop waits `patience` at most (STATE_ACK_WAIT_MS, default 5 ms; a reply from a Redis on
  the same network comes in well under 1 ms). A reply not in by then is read in a worker
  thread, so the loop goes on, and the link rests for `rest` seconds: a slow Redis costs the
  loop one `patience`, not one per acknowledgement.
- The loop spends a tenth of its time at most waiting on the link (a budget that fills at
  0.1 s a second, up to `patience`): in a burst of acknowledgements the first are answered on
  the link and the rest share pipelined round trips, instead of holding the loop one round
  trip each (measured: 200 at once had their ack p50 at 343 ms against 167 ms on memory://).
- A Redis too far away to block for rests the link too: when its replies take over a fifth
  of `patience` on average (1 ms at the default: a Redis on another network), where a burst
  of acknowledgements would hold the loop one round trip each instead of sharing pipelined
  ones.
- The link connects in a worker thread, never on the loop. Until it is up, while it rests and
  while a late reply is read, urgent writes go through the pipeline as every other write.
- A connection the server closed (its idle `timeout`) is noticed before the send, by a poll
  of the socket that costs no wait: that write goes through the pipeline, and the link
  connects again. One that fails after the send fails its caller (the write may have been
  made), as a lost pipeline would after its one retry.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from redis.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.observability.metrics import Metrics

#: seconds the link rests after a reply came later than `patience`, or a connect failed
REST_SECONDS = 30.0
#: the link rests when its replies take over this share of `patience`, on average
FAR = 0.2
#: weight of the newest reply's time in that average
_WEIGHT = 1 / 16
#: the share of the loop's time it may spend waiting on the link
BUDGET_SHARE = 0.1
_URGENT = "gdocs_store_urgent_writes_total"
_URGENT_HELP = (
    "Acknowledgement writes sent on the Redis link of their own: answered within"
    " STATE_ACK_WAIT_MS (on_time), or read later in a thread (late)."
)


class NotSent(Exception):
    """The urgent link could not take this command before sending it: use the pipeline."""


class UrgentLink:
    """One blocking connection from `connect`, for writes an acknowledgement waits on."""

    def __init__(
        self,
        connect: Callable[[], AbstractConnection],
        *,
        patience: float,
        rest: float = REST_SECONDS,
        budget_share: float = BUDGET_SHARE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._new = connect
        self._share = budget_share
        self._patience = patience
        self._rest = rest
        self._clock = clock
        self._conn: AbstractConnection | None = None
        self._opening: asyncio.Future[AbstractConnection] | None = None
        self._late: asyncio.Future[object] | None = None
        self._resting_until = 0.0
        self._closed = False
        #: how long its on-time replies take, on average (seconds)
        self.reply_time = 0.0
        #: seconds of waiting the loop may still spend on the link, and when that was known
        self._budget = patience
        self._budget_at = clock()
        #: commands answered on the caller's stack, and those whose reply came late
        self.on_time = 0
        self.late = 0

    async def open(self) -> bool:
        """Connect now (at start-up, so the first acknowledgement finds the link up), in a
        worker thread; whether it connected. A failure only makes the link rest."""
        if self._conn is None and self._opening is None and not self._closed:
            self._open_soon()
        if self._opening is not None:
            await asyncio.wait([self._opening])
        return self._conn is not None

    def ready(self) -> bool:
        """Whether a command sent now would be answered on the caller's stack; starts the
        connection in the background when there is none."""
        now = self._clock()
        if self._closed or self._late is not None or now < self._resting_until:
            return False
        self._budget = min(self._patience, self._budget + (now - self._budget_at) * self._share)
        self._budget_at = now
        if self._budget <= 0:  # it has held the loop enough for now: pipelined
            return False
        if self._conn is None:
            if self._opening is None:
                self._open_soon()
            return False
        return True

    async def call(self, packed: list[bytes]) -> object:
        """The reply to one packed command (`ready()` first). NotSent when the connection
        turned out closed before the send; the reply's own error raises ResponseError."""
        conn = self._conn
        if conn is None or self._late is not None:
            raise NotSent
        try:
            if conn.can_read(timeout=0):  # bytes nobody asked for: out of step
                raise RedisConnectionError("unexpected bytes from Redis")
        except (RedisError, OSError):
            self._drop()
            raise NotSent from None
        sent = self._clock()
        try:
            conn.send_packed_command(packed, check_health=False)  # type: ignore[no-untyped-call]
            reply = conn.read_response(timeout=self._patience, disconnect_on_error=False)
        except RedisTimeoutError:
            return await self._read_late(conn)
        except ResponseError:  # the command's own error: answered, the link is fine
            self._answered(sent)
            raise
        except (RedisError, OSError):
            self._drop()
            raise
        self._answered(sent)
        return reply

    def _answered(self, sent: float) -> None:
        self.on_time += 1
        took = self._clock() - sent
        self._budget -= took
        self.reply_time += (took - self.reply_time) * _WEIGHT
        if self.reply_time > self._patience * FAR:  # too far to hold the loop for
            self._resting_until = self._clock() + self._rest

    async def _read_late(self, conn: AbstractConnection) -> object:
        """The rest of a reply past `patience`, read in a worker thread (socket_timeout)."""
        self.late += 1
        self._budget -= self._patience
        self._resting_until = self._clock() + self._rest
        late = asyncio.get_running_loop().run_in_executor(None, conn.read_response)
        self._late = late
        late.add_done_callback(self._late_done)
        # shielded: a caller that gives up leaves the thread to finish the read
        return await asyncio.shield(late)

    def _late_done(self, late: asyncio.Future[object]) -> None:
        self._late = None
        if late.cancelled() or not isinstance(late.exception(), (ResponseError, type(None))):
            self._drop()  # timed out or lost: redis-py has closed it already

    def _open_soon(self) -> None:
        conn = self._new()  # no I/O yet: the thread connects it
        opening = asyncio.get_running_loop().run_in_executor(None, _connected, conn)
        self._opening = opening
        opening.add_done_callback(self._opened)

    def _opened(self, opening: asyncio.Future[AbstractConnection]) -> None:
        self._opening = None
        if opening.cancelled() or opening.exception() is not None:
            self._resting_until = self._clock() + self._rest  # no server: try again later
            return
        conn = opening.result()
        if self._closed:
            conn.disconnect()  # type: ignore[no-untyped-call]
            return
        self._conn = conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.disconnect()  # type: ignore[no-untyped-call]

    def publish(self, metrics: Metrics) -> None:
        """Its counts on /metrics (set: they are totals already)."""
        for outcome, n in (("on_time", self.on_time), ("late", self.late)):
            metrics.set_counter(_URGENT, _URGENT_HELP, n, outcome=outcome)

    async def aclose(self) -> None:
        """Close the connection; a connect or a late read still running ends on its own."""
        self._closed = True
        for pending in (self._opening, self._late):
            if pending is not None:
                await asyncio.wait([pending], timeout=2.0)
        self._drop()


def _connected(conn: AbstractConnection) -> AbstractConnection:
    conn.connect()  # type: ignore[no-untyped-call]  # with its handshake: AUTH, SELECT, TLS
    return conn
