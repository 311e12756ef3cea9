"""How the last calls to Google's documentation servers went, as every replica reads it
from the store (the Home tab's servers' state): the latest few, for an hour, never an error."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.store import MemoryStore, StoreUnavailable
from bot.upstream import UpstreamCalls

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


class _Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


async def test_replicas_share_the_last_five_calls_newest_first() -> None:
    """What one replica records another reads; only the five latest are kept."""
    store, clock = MemoryStore(), _Clock()
    one, two = UpstreamCalls(store, clock), UpstreamCalls(store, clock)
    for n in range(7):
        clock.now = NOW + timedelta(seconds=n)
        await (one if n % 2 else two).record("developer_knowledge", "unavailable" if n else None)
    calls = await two.last("developer_knowledge")
    assert [NOW + timedelta(seconds=n) for n in (6, 5, 4, 3, 2)] == [c.at for c in calls]
    assert {"unavailable"} == {c.error for c in calls}
    assert [] == await one.last("pay")


async def test_an_error_about_the_request_is_an_answer_not_an_outage() -> None:
    """A page not found, a refused question or a quota answer: the server answered."""
    recorder = UpstreamCalls(MemoryStore(), _Clock())
    for code in ("not_found", "invalid_input", "quota", "timeout"):
        await recorder.record("developer_knowledge", code)
    assert ["timeout", None, None, None] == [
        c.error for c in await recorder.last("developer_knowledge")
    ]


async def test_calls_older_than_an_hour_say_nothing_about_now() -> None:
    clock = _Clock()
    recorder = UpstreamCalls(MemoryStore(), clock)
    await recorder.record("developer_knowledge", "unavailable")
    clock.now = NOW + timedelta(hours=1, seconds=1)
    assert [] == await recorder.last("developer_knowledge")


class _Down(MemoryStore):
    async def batch(self, ops: object) -> list[object]:  # type: ignore[override]
        raise StoreUnavailable("down")


async def test_a_store_that_does_not_answer_costs_only_the_record() -> None:
    """Recording never fails a question; reading gives no calls."""
    recorder = UpstreamCalls(_Down(), _Clock())
    await recorder.record("developer_knowledge", "unavailable")
    assert [] == await recorder.last("developer_knowledge")
