"""The load gate: background work starts at once while the event loop keeps up, and waits its
turn, in order, while the loop is behind, so that acknowledgements do not queue behind it.
The loop is put behind the way a burst does it: a callback that holds it (a spin, not a
sleep)."""

from __future__ import annotations

import asyncio
import time

import pytest

from bot.loadgate import LoadGate
from bot.observability.metrics import Metrics
from bot.serving.inflight import InFlight


def _hold_loop(seconds: float) -> None:
    """Keep the event loop's thread busy, as a long iteration under load does."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


async def _turns_until(condition: object, most: int = 10_000) -> None:
    """Let the loop run one iteration at a time until `condition()` holds (bounded)."""
    for _ in range(most):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


async def _late_tick(gate: LoadGate) -> None:
    """The loop held past `behind`, then the tick that finds it late."""
    ticks = gate.ticks
    _hold_loop(0.2)
    await _turns_until(lambda: gate.ticks > ticks)


async def _behind(inflight: InFlight, parked: asyncio.Event) -> None:
    """Something in flight (so the gate watches the loop), then the loop held past `behind`."""
    inflight.spawn(_until_set(parked))
    await asyncio.sleep(0)
    await _late_tick(inflight.gate)
    assert inflight.gate.congested


async def _until_set(event: asyncio.Event) -> None:
    await event.wait()


def _gate() -> LoadGate:
    """Watching from one job in flight, so that one parked job makes the timer run."""
    return LoadGate(interval=0.05, behind=0.02, per_tick=2, watch_from=1)


async def test_work_starts_in_the_same_turn_while_the_loop_keeps_up() -> None:
    """At a normal load the gate adds nothing: the work runs as soon as its task does."""
    inflight = InFlight(_gate())
    started: list[str] = []

    async def work() -> None:
        started.append("work")

    task = inflight.spawn(work())
    await asyncio.sleep(0)
    assert ["work"] == started
    await task
    assert 0 == inflight.gate.held


async def test_work_spawned_while_the_loop_is_behind_waits_then_starts_in_order() -> None:
    """Five jobs spawned behind a held loop wait; once it catches up they start, oldest first."""
    inflight = InFlight(_gate())
    parked = asyncio.Event()
    await _behind(inflight, parked)
    order: list[int] = []

    async def work(number: int) -> None:
        order.append(number)

    tasks = [inflight.spawn(work(i)) for i in range(5)]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert [] == order
    assert 5 == inflight.gate.waiting
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=5)
    assert [0, 1, 2, 3, 4] == order
    assert 5 == inflight.gate.held
    parked.set()


async def test_queued_work_starts_faster_while_the_loop_keeps_up() -> None:
    """Sixty jobs queued behind a held loop: while the ticks come on time, each lets out more
    than the last (up to 8), so they are all going within 9 ticks (2 a tick would take 30)."""
    gate = LoadGate(interval=0.01, behind=0.05, per_tick=2, watch_from=1)
    inflight = InFlight(gate)
    parked = asyncio.Event()
    await _behind(inflight, parked)

    async def work() -> None:
        return None

    tasks = [inflight.spawn(work()) for _ in range(60)]
    await _turns_until(lambda: gate.waiting == 60)
    ticks = gate.ticks
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=10)
    assert gate.ticks - ticks <= 15
    parked.set()


async def test_an_acknowledgement_does_not_wait_for_a_first_reply_while_behind() -> None:
    """`start` returns at once when the work would wait: the ack goes out bare, not seconds
    later when the work's first reply would have come."""
    inflight = InFlight(_gate())
    parked = asyncio.Event()
    await _behind(inflight, parked)
    replied = asyncio.Event()

    async def work() -> None:
        replied.set()

    await inflight.start(work(), until=replied, within=30.0)
    assert not replied.is_set()
    await asyncio.wait_for(replied.wait(), timeout=5)  # the work still runs, later
    parked.set()


async def test_work_cancelled_while_waiting_never_runs_and_leaves_the_queue() -> None:
    """A job stopped before its turn (Stop, shutdown) is not run, and is no longer counted."""
    inflight = InFlight(_gate())
    parked = asyncio.Event()
    await _behind(inflight, parked)
    ran: list[bool] = []

    async def work() -> None:
        ran.append(True)

    task = inflight.spawn(work())
    await _turns_until(lambda: inflight.gate.waiting == 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert 0 == inflight.gate.waiting
    assert 1 == inflight.count  # only the parked job
    parked.set()
    assert await inflight.drain(5)
    assert [] == ran


async def test_a_few_jobs_in_flight_start_no_timer() -> None:
    """Below `watch_from` jobs (the default: 8) nothing is watched, so nothing wakes the
    process every 10 ms at a team's usual load; from the eighth on, the timer runs."""
    inflight = InFlight(LoadGate())
    release = asyncio.Event()
    tasks = [inflight.spawn(_until_set(release)) for _ in range(7)]
    await asyncio.sleep(0)
    assert not inflight.gate.watching
    tasks.append(inflight.spawn(_until_set(release)))
    await asyncio.sleep(0)
    assert inflight.gate.watching
    release.set()
    await asyncio.gather(*tasks)


async def test_the_gate_watches_the_loop_only_while_work_is_in_flight() -> None:
    """No timer at idle: the gate's tick stops once the last job has ended."""
    inflight = InFlight(_gate())
    assert not inflight.gate.watching
    done = asyncio.Event()
    task = inflight.spawn(_until_set(done))
    await asyncio.sleep(0)
    assert inflight.gate.watching
    done.set()
    await task
    await _turns_until(lambda: not inflight.gate.watching, most=1_000_000)


async def test_the_gate_reports_waiting_and_held_work_in_metrics() -> None:
    """/metrics shows how much work waited, and how much waits now."""
    inflight = InFlight(_gate())
    parked = asyncio.Event()
    await _behind(inflight, parked)
    release = asyncio.Event()
    tasks = [inflight.spawn(_until_set(release)) for _ in range(2)]
    await _turns_until(lambda: inflight.gate.waiting == 2)
    metrics = Metrics()
    inflight.gate.publish(metrics)
    assert 2 == metrics.gauge_value("gdocs_work_waiting")
    assert 2 == metrics.counter_value("gdocs_work_held_total")
    release.set()
    parked.set()
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=5)
    inflight.gate.publish(metrics)
    assert 0 == metrics.gauge_value("gdocs_work_waiting")
    assert "gdocs_work_held_total 2" in metrics.render()


async def test_a_long_overload_logs_one_warning_not_one_per_job(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Twenty jobs held back: one warning line, with how many wait."""
    inflight = InFlight(_gate())
    parked = asyncio.Event()
    await _behind(inflight, parked)

    async def work() -> None:
        return None

    with caplog.at_level("WARNING", logger="bot.loadgate"):
        tasks = [inflight.spawn(work()) for _ in range(20)]
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=10)
    warnings = [r.getMessage() for r in caplog.records if r.name == "bot.loadgate"]
    assert 1 == len(warnings)
    assert "new work waits its turn (1 waiting)" in warnings[0]
    parked.set()


async def test_a_gate_without_a_bound_never_holds_work() -> None:
    """LOAD_GATE_LAG_MS=0: a held loop does not make work wait, and no timer runs."""
    inflight = InFlight(LoadGate(behind=None))
    parked = asyncio.Event()
    inflight.spawn(_until_set(parked))
    await asyncio.sleep(0)
    _hold_loop(0.1)
    started: list[bool] = []

    async def work() -> None:
        started.append(True)

    task = inflight.spawn(work())
    await asyncio.sleep(0)
    assert [True] == started
    assert not inflight.gate.watching
    await task
    parked.set()


async def test_work_that_has_begun_goes_on_before_new_work() -> None:
    """Behind a held loop, a job whose upstream answer is in resumes before jobs not begun."""
    gate = _gate()
    inflight = InFlight(gate)
    parked = asyncio.Event()
    await _behind(inflight, parked)
    order: list[str] = []

    async def new(name: str) -> None:
        order.append(name)

    async def resumed(name: str) -> None:
        await gate.wait(resuming=True)
        order.append(name)

    loop = asyncio.get_running_loop()
    tasks = [inflight.spawn(new("new 1")), inflight.spawn(new("new 2"))]
    tasks += [loop.create_task(resumed("resumed 1")), loop.create_task(resumed("resumed 2"))]
    await _turns_until(lambda: gate.waiting == 4)
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=5)
    assert ["resumed 1", "resumed 2", "new 1", "new 2"] == order
    parked.set()
