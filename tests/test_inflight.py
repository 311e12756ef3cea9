"""Shutdown waits for answers in flight, but never longer than its grace period."""

from __future__ import annotations

import asyncio

from bot.serving.inflight import InFlight
from tests.fakes.loop_turns import LoopTurns


async def _hold(entered: asyncio.Event, release: asyncio.Event) -> None:
    """One answer being worked on until `release` is set."""
    entered.set()
    await release.wait()


async def _wait(event: asyncio.Event) -> None:
    await event.wait()


async def test_drain_gives_up_after_its_timeout_with_work_still_in_flight() -> None:
    """Work that does not finish: drain returns False once the timeout passes, work untouched."""
    inflight = InFlight()
    entered, release = asyncio.Event(), asyncio.Event()
    work = inflight.spawn(_hold(entered, release))
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
    work = inflight.spawn(_hold(entered, release))
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
        raise RuntimeError("boom")

    results = await asyncio.gather(inflight.spawn(failing()), return_exceptions=True)
    assert isinstance(results[0], RuntimeError)
    assert 0 == inflight.count
    assert await asyncio.wait_for(inflight.drain(30), 1) is True


async def test_spawned_work_counts_before_it_first_runs() -> None:
    """A drain that starts right after `spawn` still waits for the spawned work."""
    inflight = InFlight()
    release = asyncio.Event()
    inflight.spawn(_wait(release))

    assert 1 == inflight.count
    draining = asyncio.create_task(inflight.drain(5))
    release.set()
    assert await asyncio.wait_for(draining, 5) is True
    assert 0 == inflight.count


async def test_start_returns_at_the_first_reply_and_the_work_goes_on() -> None:
    """`start` comes back once the work signals its first reply; the work keeps running."""
    inflight = InFlight()
    replied, release, finished = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def work() -> None:
        replied.set()
        await release.wait()
        finished.set()

    await asyncio.wait_for(inflight.start(work(), until=replied, within=30), 5)

    assert (1, False) == (inflight.count, finished.is_set())
    release.set()
    await asyncio.wait_for(finished.wait(), 5)


async def test_start_returns_in_the_loop_turn_after_the_first_reply() -> None:
    """The caller (the acknowledgement) resumes one turn after the reply, not two: on a
    loaded loop each turn holds the ack a few ms."""
    inflight = InFlight()
    replied, release = asyncio.Event(), asyncio.Event()
    turns = LoopTurns()
    at_reply: list[int] = []

    async def work() -> None:
        replied.set()
        at_reply.append(turns.count)
        await release.wait()

    async with asyncio.timeout(5):  # not wait_for: its own task would add turns
        await inflight.start(work(), until=replied, within=30)
    turns.stop()

    assert 1 == turns.count - at_reply[0]
    release.set()
    assert await asyncio.wait_for(inflight.drain(5), 5) is True


async def test_start_returns_once_the_work_ends_without_a_reply() -> None:
    """Work that ends without replying (a duplicate, an error) frees the ack at once, not
    after `within`."""
    inflight = InFlight()
    never = asyncio.Event()

    async def work() -> None:
        return None

    # within 5 s, though `start` would wait 30 for a reply that never comes
    await asyncio.wait_for(inflight.start(work(), until=never, within=30), 5)

    assert 0 == inflight.count


async def test_start_gives_up_waiting_for_a_reply_after_within_seconds() -> None:
    """Work that never replies does not hold the acknowledgement past `within`."""
    inflight = InFlight()
    never, release = asyncio.Event(), asyncio.Event()

    await asyncio.wait_for(inflight.start(_wait(release), until=never, within=0.05), 5)

    assert 1 == inflight.count
    release.set()
    assert await asyncio.wait_for(inflight.drain(5), 5) is True
