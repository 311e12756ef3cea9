"""Shutdown waits for answers in flight, but never longer than its grace period."""

from __future__ import annotations

import asyncio

from bot.inflight import InFlight


async def _hold(inflight: InFlight, entered: asyncio.Event, release: asyncio.Event) -> None:
    """One answer being worked on until `release` is set."""
    async with inflight.track():
        entered.set()
        await release.wait()


async def test_drain_gives_up_after_its_timeout_with_work_still_in_flight() -> None:
    """Work that does not finish: drain returns False once the timeout passes, work untouched."""
    inflight = InFlight()
    entered, release = asyncio.Event(), asyncio.Event()
    work = asyncio.create_task(_hold(inflight, entered, release))
    await asyncio.wait_for(entered.wait(), 1)

    assert await asyncio.wait_for(inflight.drain(0.05), 5) is False
    assert 1 == inflight.count
    assert not work.done()
    assert inflight.accepting is False
    release.set()
    await asyncio.wait_for(work, 1)
    assert 0 == inflight.count


async def test_drain_returns_true_as_soon_as_the_work_finishes() -> None:
    """Drain waits for the answer in flight and reports True when it is done, well before the
    timeout."""
    inflight = InFlight()
    entered, release = asyncio.Event(), asyncio.Event()
    work = asyncio.create_task(_hold(inflight, entered, release))
    await asyncio.wait_for(entered.wait(), 1)

    drain = asyncio.create_task(inflight.drain(30))
    await asyncio.sleep(0)  # let drain start waiting
    assert not drain.done()
    release.set()
    assert await asyncio.wait_for(drain, 5) is True
    assert work.done()
    assert 0 == inflight.count


async def test_drain_with_nothing_in_flight_is_true_at_once() -> None:
    """An idle bot drains immediately and stops accepting new work."""
    inflight = InFlight()
    assert inflight.accepting is True
    assert await asyncio.wait_for(inflight.drain(30), 1) is True
    assert inflight.accepting is False


async def test_work_that_fails_still_leaves_the_count() -> None:
    """An answer that raises is no longer in flight: drain does not wait for it."""
    inflight = InFlight()

    async def failing() -> None:
        async with inflight.track():
            raise RuntimeError("boom")

    results = await asyncio.gather(failing(), return_exceptions=True)
    assert isinstance(results[0], RuntimeError)
    assert 0 == inflight.count
    assert await asyncio.wait_for(inflight.drain(30), 1) is True
