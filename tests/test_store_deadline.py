"""The store calls' shared timeout: a slow call is cut off as `asyncio.timeout` would cut
it, fast calls and outside cancellations are left alone."""

from __future__ import annotations

import asyncio

import pytest

from bot.store._deadline import Deadlines


async def _never() -> None:
    await asyncio.Event().wait()


async def _quick(value: int) -> int:
    await asyncio.sleep(0)
    return value


async def _outcome(deadlines: Deadlines) -> str:
    """What a call that never finishes ends in (the test's guard, `wait_for`, cancels this
    coroutine instead of raising TimeoutError inside it)."""
    try:
        await deadlines.run(_never())
    except TimeoutError:
        return "timed out"
    return "finished"


async def test_a_call_past_its_timeout_raises_timeout_error() -> None:
    """A call that never finishes raises TimeoutError, and the task goes on uncancelled."""
    deadlines = Deadlines(0.05)
    assert "timed out" == await asyncio.wait_for(_outcome(deadlines), 2)
    assert "timed out" == await _outcome(deadlines)  # in this very task
    task = asyncio.current_task()
    assert task is not None
    assert 0 == task.cancelling()
    assert 7 == await deadlines.run(_quick(7))


async def test_only_the_slow_call_among_many_times_out() -> None:
    """Fast calls in flight beside a slow one get their results; the slow one alone fails."""
    deadlines = Deadlines(0.05)

    async def many_quick() -> list[int]:
        return [await deadlines.run(_quick(i)) for i in range(200)]

    both = asyncio.gather(_outcome(deadlines), many_quick())
    slow, quick = await asyncio.wait_for(both, 2)
    assert "timed out" == slow
    assert list(range(200)) == quick


async def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    """Cancelling the caller while its call is in flight is CancelledError, not a timeout."""
    deadlines = Deadlines(5)
    started = asyncio.Event()

    async def caller() -> None:
        started.set()
        await deadlines.run(_never())

    task = asyncio.ensure_future(caller())
    await asyncio.wait_for(started.wait(), 1)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_the_timeout_holds_on_a_second_event_loop() -> None:
    """One Deadlines used from two event loops in turn (a test's loops, a restart) still
    times out on the second."""
    deadlines = Deadlines(0.05)
    for _ in range(2):
        with asyncio.Runner() as runner:
            assert "timed out" == runner.run(asyncio.wait_for(_outcome(deadlines), 2))
