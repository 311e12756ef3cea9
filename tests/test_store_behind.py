"""Writes nobody waits for (`WriteBehind`): queued, then written with the next "done" batch,
within the interval, at a bound, or at close; never an error for the caller. Counts are
summed while they wait and ride at most one "done" batch per interval."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from bot.store import JSON, TEXT, MemoryStore, Op, StoreError, WriteBehind
from bot.worklog import WorkLog


class RecordingStore(MemoryStore):
    """A memory store that notes each batch and can refuse them."""

    def __init__(self) -> None:
        super().__init__(max_entries=1000)
        self.batches: list[list[str]] = []
        self.ops: list[list[Op]] = []
        self.written = asyncio.Event()
        self.failing = False

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        if self.failing:
            raise StoreError("the store is down")
        self.batches.append([op.key for op in ops])
        self.ops.append(list(ops))
        self.written.set()
        return await super().batch(ops)


async def test_queued_writes_ride_the_next_done_batch_and_leave_its_results_alone() -> None:
    """A question's "done" batch takes what is queued along: one batch, nothing left queued,
    and the caller's own results are the ones returned."""
    store = RecordingStore()
    behind = WriteBehind(store, interval=60)
    work = WorkLog(store, lease_seconds=60, max_age_seconds=600, behind=behind)
    record = await work.accept("command", {"text": "q"}, key="Ev1")
    assert record is not None
    behind.add([Op.set("doc:a", {"content": "x"}, JSON, 60), Op.incr("report:d:questions", 1, 60)])
    results = await work.finish(record, also=[Op.add("recent:U1", ["q"], JSON, 60)])
    assert [True] == results
    assert 0 == behind.pending
    assert any("doc:a" in keys and "recent:U1" in keys for keys in store.batches)
    assert {"content": "x"} == await store.get("doc:a", JSON)
    assert 1 == await store.incr("report:d:questions", 0, 60)


async def test_without_a_done_batch_they_are_written_within_the_interval() -> None:
    """Nothing else writes: one batch of everything queued, after `interval`."""
    store = RecordingStore()
    behind = WriteBehind(store, interval=0.01)
    behind.add([Op.set("title:a", "A", TEXT, 60)])
    behind.add([Op.set("title:b", "B", TEXT, 60)])
    await asyncio.wait_for(store.written.wait(), 5)
    assert [["title:a", "title:b"]] == store.batches
    assert "B" == await store.get("title:b", TEXT)


async def test_a_full_queue_is_written_at_once() -> None:
    """At `max_pending` operations the batch goes without waiting for the interval."""
    store = RecordingStore()
    behind = WriteBehind(store, interval=60, max_pending=3)
    behind.add([Op.set(f"title:{n}", "t", TEXT, 60) for n in range(3)])
    await asyncio.wait_for(store.written.wait(), 5)
    assert 0 == behind.pending


async def test_close_writes_what_is_left_and_a_failing_store_only_loses_the_writes() -> None:
    """aclose() writes the rest; a store that refuses them drops them without an error."""
    store = RecordingStore()
    behind = WriteBehind(store, interval=60)
    behind.add([Op.set("title:a", "A", TEXT, 60)])
    await behind.aclose()
    assert "A" == await store.get("title:a", TEXT)
    store.failing = True
    behind.add([Op.set("title:b", "B", TEXT, 60)])
    await behind.aclose()
    assert None is await store.get("title:b", TEXT)
    assert 0 == behind.pending


async def test_a_write_that_depends_on_another_is_refused() -> None:
    """`only_if` needs the batch it was built for: it cannot be deferred."""
    behind = WriteBehind(RecordingStore())
    with pytest.raises(ValueError, match="cannot depend"):
        behind.add([Op.set("a:1", "x", TEXT, 60, only_if=0)])


async def test_counts_are_summed_into_one_write_per_counter() -> None:
    """Many questions' counts waiting together: one `incr` per counter, by their sum."""
    store = RecordingStore()
    behind = WriteBehind(store, interval=60)
    for _ in range(5):
        behind.add([Op.incr("report:d:questions", 1, 60), Op.incr("report:d:generated", 1, 60)])
    behind.add([Op.incr("report:d:questions", 2, 60)])
    assert 2 == behind.pending == behind.counts
    await behind.flush()
    assert [[("report:d:questions", 7), ("report:d:generated", 5)]] == [
        [(op.key, op.amount) for op in ops] for ops in store.ops
    ]
    assert 7 == await store.incr("report:d:questions", 0, 60)


async def test_counts_ride_one_done_batch_per_interval_and_are_written_within_it() -> None:
    """The first "done" batch takes the counts along; later ones within the interval leave
    them (other writes still go); the interval's end writes what waited, in one batch."""
    store = RecordingStore()
    behind = WriteBehind(store, interval=0.2)
    behind.add([Op.incr("report:d:questions", 1, 60), Op.set("title:a", "A", TEXT, 60)])
    assert ["report:d:questions", "title:a"] == sorted(op.key for op in behind.take())
    behind.add([Op.incr("report:d:questions", 1, 60), Op.set("title:b", "B", TEXT, 60)])
    behind.add([Op.incr("report:d:questions", 1, 60)])
    assert ["title:b"] == [op.key for op in behind.take()]
    assert 1 == behind.pending == behind.counts
    await asyncio.wait_for(store.written.wait(), 5)
    assert [[("report:d:questions", 2)]] == [
        [(op.key, op.amount) for op in ops] for ops in store.ops
    ]
    assert 0 == behind.pending
