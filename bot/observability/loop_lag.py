"""How late the event loop runs: a task sleeps `interval` and measures how much longer it
took to wake up. Anything that holds the loop (a long render, a blocking call) shows as lag,
and every Slack acknowledgement waits that long too.

The lag goes into `gdocs_event_loop_lag_seconds` (a histogram in /metrics); the worst lag of
the last minute, when over `SLOW_LOOP_SECONDS`, is a line in /readyz (it never makes the bot
unready: the loop is late, not stuck, and taking the replica out would only load the others).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from bot.observability.metrics import Metrics

LAG_METRIC = "gdocs_event_loop_lag_seconds"
LAG_HELP = "How much later than asked the event loop woke a sleeping task."
#: from "nothing to see" (1 ms) to "acks are timing out" (3 s and more)
LAG_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: a lag over this is reported in /readyz: Slack gives an acknowledgement 3 s in all
SLOW_LOOP_SECONDS = 1.0
#: how long a slow lag stays in /readyz
REPORT_WINDOW_SECONDS = 60.0
DEFAULT_INTERVAL_SECONDS = 0.25


class LoopLagMonitor:
    """Measures the loop's lag every `interval` seconds while `run()` runs (cancel to stop)."""

    def __init__(
        self,
        metrics: Metrics,
        *,
        interval: float = DEFAULT_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.interval = interval
        self._metrics = metrics
        metrics.declare_histogram(LAG_METRIC, LAG_HELP, LAG_BUCKETS)
        self._clock = clock
        self._sleep = sleep
        self._worst = 0.0
        self._worst_at: float | None = None

    async def run(self) -> None:
        while True:
            await self.tick()

    async def tick(self) -> float:
        """One measurement: sleep `interval`, record and return the overshoot."""
        started = self._clock()
        await self._sleep(self.interval)
        lag = max(0.0, self._clock() - started - self.interval)
        self.record(lag)
        return lag

    def record(self, lag: float) -> None:
        self._metrics.observe(LAG_METRIC, LAG_HELP, lag, LAG_BUCKETS)
        now = self._clock()
        stale = self._worst_at is None or now - self._worst_at > REPORT_WINDOW_SECONDS
        if stale or lag >= self._worst:
            self._worst, self._worst_at = lag, now

    def slow_report(self) -> dict[str, object] | None:
        """The /readyz line while the worst lag of the last minute is over a second."""
        if self._worst_at is None or self._worst <= SLOW_LOOP_SECONDS:
            return None
        ago = self._clock() - self._worst_at
        if ago > REPORT_WINDOW_SECONDS:
            return None
        return {
            "lag_seconds": round(self._worst, 3),
            "detail": (
                f"the event loop ran {self._worst:.1f}s late {ago:.0f}s ago: "
                "acknowledgements to Slack were delayed as long"
            ),
        }
