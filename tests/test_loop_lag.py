"""The event loop's lag: measured by a monitor that sleeps and times its wake-up, shown in
/metrics (`gdocs_event_loop_lag_seconds`) and, while over a second, as a line in /readyz."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bench.render_corpus import corpus
from bot.observability.loop_lag import LAG_METRIC, LoopLagMonitor
from bot.observability.metrics import Metrics
from bot.render import markdown_to_blocks
from bot.serving.health import Readiness, build_web_app
from tests.test_runtime_readiness import FakeClock, RecordingService


class LateSleep:
    """A sleep that moves a fake clock by the interval plus the next scripted lateness."""

    def __init__(self, clock: FakeClock, late: list[float]) -> None:
        self.clock = clock
        self.late = late

    async def __call__(self, seconds: float) -> None:
        self.clock.now += seconds + (self.late.pop(0) if self.late else 0.0)


def _monitor(late: list[float]) -> tuple[LoopLagMonitor, Metrics, FakeClock]:
    clock, metrics = FakeClock(), Metrics()
    monitor = LoopLagMonitor(metrics, interval=0.25, clock=clock, sleep=LateSleep(clock, late))
    return monitor, metrics, clock


async def test_each_tick_records_how_late_the_loop_woke_up_in_the_histogram() -> None:
    """A wake-up 0.3 s late lands in the 0.5 s bucket, not in 0.25; the sum adds up."""
    monitor, metrics, _ = _monitor([0.0, 0.3, 0.004])
    assert [0.0, 0.3, 0.004] == pytest.approx([await monitor.tick() for _ in range(3)])
    text = metrics.render()
    assert f"# TYPE {LAG_METRIC} histogram" in text
    assert f'{LAG_METRIC}_bucket{{le="0.005"}} 2' in text
    assert f'{LAG_METRIC}_bucket{{le="0.25"}} 2' in text
    assert f'{LAG_METRIC}_bucket{{le="0.5"}} 3' in text
    assert f"{LAG_METRIC}_count 3" in text
    assert 0.304 == pytest.approx(float(text.split(f"{LAG_METRIC}_sum ")[1].split()[0]))


async def test_readyz_names_a_slow_loop_for_a_minute_without_leaving_rotation() -> None:
    """A 1.5 s lag is a line in /readyz (still 200); a minute later it is gone."""
    monitor, metrics, clock = _monitor([1.5])
    service = RecordingService(clock)
    readiness = Readiness(service, mode="http", clock=clock)  # type: ignore[arg-type]
    readiness.slack_authenticated = True
    readiness.loop_lag = monitor
    await readiness.probe()
    assert "event_loop" not in await readiness.report()

    await monitor.tick()
    async with TestClient(TestServer(build_web_app(readiness, metrics))) as client:
        response = await client.get("/readyz")
        body = await response.json()
    assert 200 == response.status
    assert 1.5 == body["event_loop"]["lag_seconds"]
    assert "1.5s late" in body["event_loop"]["detail"]

    clock.now += 61
    service.answered_at = clock.now
    assert "event_loop" not in await readiness.report()


async def test_a_lag_under_a_second_is_no_line_in_readyz() -> None:
    """Ordinary lateness (0.9 s at most) is only in the histogram."""
    monitor, _, _ = _monitor([0.9])
    await monitor.tick()
    assert monitor.slow_report() is None


async def test_the_lag_metric_moves_when_a_heavy_render_holds_the_loop() -> None:
    """A render run on the loop itself (what the bot no longer does) shows as lag."""
    metrics = Metrics()
    monitor = LoopLagMonitor(metrics, interval=0.01)
    tick = asyncio.create_task(monitor.tick())
    await asyncio.sleep(0)  # the monitor is asleep now
    started = time.perf_counter()
    markdown_to_blocks(corpus()["huge_table"])  # ~0.2 s of CPU on the loop's thread
    held = time.perf_counter() - started
    lag = await tick
    assert held - 0.01 <= lag + 0.005
    assert 1 == metrics.histogram_count(LAG_METRIC)
    assert f'{LAG_METRIC}_bucket{{le="0.001"}} 0' in metrics.render()


def test_a_monitor_needs_a_positive_interval() -> None:
    """An interval of 0 would spin: refused."""
    with pytest.raises(ValueError, match="positive"):
        LoopLagMonitor(Metrics(), interval=0)


def test_a_new_monitor_shows_its_histogram_before_the_first_tick() -> None:
    """A scrape right after start-up sees the lag series with zero counts, not nothing."""
    monitor, metrics, _ = _monitor([])
    text = metrics.render()
    assert f"# TYPE {LAG_METRIC} histogram" in text
    assert f'{LAG_METRIC}_bucket{{le="+Inf"}} 0' in text
    assert 0 == metrics.histogram_count(LAG_METRIC)
    assert monitor.interval == 0.25
