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
    for code in ("timeout", "not_found", "timeout", "invalid_input", "quota"):
        await recorder.record("developer_knowledge", code)
    assert [None, None, "timeout", None, "timeout"] == [
        c.error for c in await recorder.last("developer_knowledge")
    ]


async def test_an_answer_after_another_replicas_failures_is_the_newest_call() -> None:
    """Replica one's answer, written without reading, comes first however many calls
    replica two saw fail; two's failures are counted together."""
    store, clock = MemoryStore(), _Clock()
    one, two = UpstreamCalls(store, clock), UpstreamCalls(store, clock)
    await one.record("developer_knowledge", None)
    await two.record("developer_knowledge", "unavailable")
    await two.record("developer_knowledge", "timeout")
    assert ["timeout", "unavailable", None] == [
        c.error for c in await one.last("developer_knowledge")
    ]
    await one.record("developer_knowledge", None)
    assert None is (await two.last("developer_knowledge"))[0].error


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
