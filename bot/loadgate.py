"""New work waits while the event loop is behind, so acknowledgements never queue behind it.

The bot has one event-loop thread. Past what it can do (an incident burst on a small
instance), every question in flight adds callbacks to each loop iteration, and an incoming
request, whose acknowledgement Slack wants within 3 s, waits behind all of them: measured on
memory://, ack p99 went past 3 s under a load the bot could answer only later. So background
work (an answer, a fetched page, a vote) starts only while the loop keeps up; the
acknowledgement, the durable work record before it included, never waits here.

How far behind the loop is comes from one timer, due every `interval` while `watch_from` or
more jobs are in flight (a wake-up every 10 ms costs this machine 20 ms of CPU a second, and
a handful of questions cannot overload the loop): how late it fires is the *lag* (a timer
fires once the iteration that was running when it came due has finished). While the lag is
over `behind`, new work queues here, in order. Each tick that finds the loop on time lets
some out, and `per_tick` more at the next one; a late tick halves that (additive increase,
multiplicative decrease, as TCP paces its window): the pace at which work starts follows
what the loop can take, on a slow machine and on a fast one alike. With no queue and the
loop on time, `wait()` returns at once: at a normal load nothing changes.

Work queued here is recorded already (the work log renews its lease while it waits), so a
restart loses nothing; a cancelled waiter (Stop, shutdown) leaves the queue.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque

from bot.observability.metrics import Metrics

logger = logging.getLogger(__name__)

_WAITING = "gdocs_work_waiting"
_WAITING_HELP = "Background work waiting to start while the event loop is behind."
_HELD = "gdocs_work_held_total"
_HELD_HELP = "Background work that waited to start because the event loop was behind."
#: the most one tick lets out: work starting costs 1-2 ms of the loop before its first
#: wait, so more at once would make one long iteration (at 10 ms ticks, 800 a second)
MAX_PER_TICK = 8
#: jobs in flight from which the loop is watched (fewer cannot hold it up)
WATCH_FROM = 8
#: at most one warning a minute: under a long overload the queue empties and fills often
_WARN_EVERY = 60.0


class LoadGate:
    """`behind=None`: never holds anything (LOAD_GATE_LAG_MS=0)."""

    def __init__(
        self,
        *,
        interval: float = 0.01,
        behind: float | None = 0.01,
        per_tick: int = 2,
        watch_from: int = WATCH_FROM,
    ) -> None:
        self._interval = interval
        self._watch_from = watch_from
        self._behind = behind
        self._per_tick = per_tick
        #: work that has begun and waits to go on (let out first), and work not yet begun
        self._resuming: deque[asyncio.Future[None]] = deque()
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0
        #: the last tick's lateness, seconds
        self.lag = 0.0
        #: work that waited here (for /metrics); ticks so far
        self.held = 0
        self.ticks = 0
        self._busy = 0
        self._warned_at: float | None = None
        #: how much work the next on-time tick lets out
        self._pace = per_tick

    @property
    def waiting(self) -> int:
        queued = (*self._resuming, *self._waiting)
        return sum(1 for future in queued if not future.done())

    @property
    def watching(self) -> bool:
        """Whether the lag timer runs (only while `watch_from` jobs or more are in flight)."""
        return self._timer is not None

    @property
    def congested(self) -> bool:
        """Whether new work would wait now."""
        if self._behind is None:
            return False
        return bool(self._waiting or self._resuming) or self.lag > self._behind

    def busy(self) -> None:
        """Work has begun: the lag is watched while enough is in flight."""
        self._busy += 1
        if self._timer is None and self._behind is not None and self._busy >= self._watch_from:
            self._schedule(asyncio.get_running_loop())

    def idle(self) -> None:
        """Work has ended."""
        self._busy -= 1

    async def wait(self, *, resuming: bool = False) -> None:
        """Return once new work may start (at once unless the loop is behind). `resuming`:
        work that has begun (its upstream answer is in) and goes on before any new work, so
        that what has begun finishes first."""
        if not self.congested:
            return
        loop = asyncio.get_running_loop()
        if self._warned_at is None or loop.time() - self._warned_at > _WARN_EVERY:
            self._warned_at = loop.time()
            logger.warning(
                "the event loop is %.0f ms behind: new work waits its turn (%d waiting)",
                self.lag * 1000,
                self.waiting + 1,
            )
        future: asyncio.Future[None] = loop.create_future()
        (self._resuming if resuming else self._waiting).append(future)
        self.held += 1
        await future

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        self._due = loop.time() + self._interval
        self._timer = loop.call_at(self._due, self._tick, loop)

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        self.lag = max(0.0, loop.time() - self._due)
        self.ticks += 1
        if self._behind is not None and self.lag <= self._behind:
            self._let_out(self._pace)
            if self._waiting or self._resuming:  # on time, and more waits: a little more
                self._pace = min(self._pace + self._per_tick, MAX_PER_TICK)
        else:  # late: half as much (what it got was too much)
            self._pace = max(self._per_tick, self._pace // 2)
        if self._busy >= self._watch_from or self._waiting or self._resuming:
            self._schedule(loop)
        else:  # too little in flight to hold the loop up: no timer, and no lag to keep
            self._timer, self.lag = None, 0.0

    def _let_out(self, count: int) -> None:
        for queue in (self._resuming, self._waiting):
            while queue and count > 0:
                future = queue.popleft()
                if not future.done():  # a cancelled waiter is skipped
                    future.set_result(None)
                    count -= 1

    def publish(self, metrics: Metrics) -> None:
        """Before a /metrics scrape."""
        metrics.set_gauge(_WAITING, _WAITING_HELP, self.waiting)
        metrics.set_counter(_HELD, _HELD_HELP, self.held)
