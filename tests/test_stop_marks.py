"""Stop markers (`ActiveStreams`): what one replica leaves for another, and for which
work it counts."""

from __future__ import annotations

from bot import keys
from bot.slack.work.stops import ActiveStreams, slack_time
from bot.store import TEXT, MemoryStore, StoreError


async def test_a_marker_stops_work_begun_before_the_stop_but_not_a_later_follow_up() -> None:
    """Stop pressed at 1710000100: work on a question asked at 1710000050 is stopped by it; a
    follow-up asked in the same thread at 1710000150 is not."""
    marks = ActiveStreams(MemoryStore(max_entries=10), shared=True)
    assert await marks.relay("C1", "1710000000.000100", 1710000100.0)

    assert await marks.pressed("C1", "1710000000.000100", since=1710000050.0)
    assert not await marks.pressed("C1", "1710000000.000100", since=1710000150.0)
    assert not await marks.pressed("C1", "1710000000.000999", since=1710000050.0)


async def test_a_marker_is_kept_ten_minutes() -> None:
    """The marker's TTL is a stream's lifetime (10 minutes); the stopped work's end removes
    it (tests/test_slack_stop.py)."""
    clock = [1_750_000_000.0]
    store = MemoryStore(max_entries=10, clock=lambda: clock[0])
    marks = ActiveStreams(store, shared=True)
    await marks.relay("C1", "171.1", None)
    clock[0] += 599
    assert await marks.pressed("C1", "171.1", since=None)
    clock[0] += 2
    assert not await marks.pressed("C1", "171.1", since=None)


async def test_a_store_of_one_process_gets_no_marker() -> None:
    """memory:// or SQLite: nothing is written (every Stop there is local)."""
    store = MemoryStore(max_entries=10)
    marks = ActiveStreams(store, shared=False)

    assert not await marks.relay("C1", "171.1", 1.0)
    assert [] == await store.scan(keys.STOP.prefix, TEXT, 10)


class _Down(MemoryStore):
    async def get(self, key: str, codec: object) -> object:  # type: ignore[override]
        raise StoreError("down")

    async def set(self, key: str, value: object, codec: object, ttl: float) -> None:  # type: ignore[override]
        raise StoreError("down")


async def test_a_store_that_fails_means_no_stop_rather_than_a_crash() -> None:
    """The marker cannot be written (the Stop only acknowledges) or read (the work goes on)."""
    marks = ActiveStreams(_Down(max_entries=10), shared=True)

    assert not await marks.relay("C1", "171.1", 1.0)
    assert not await marks.pressed("C1", "171.1", since=None)


def test_slack_time_reads_a_ts_and_nothing_else() -> None:
    """A Slack ts is seconds; anything else is None."""
    assert 1710000000.0001 == slack_time("1710000000.000100")
    assert slack_time("soon") is None
    assert slack_time(None) is None
