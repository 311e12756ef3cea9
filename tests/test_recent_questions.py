"""The asker's recent questions (the Home tab's Ask again), written in the question's batch
with no read first: what two replicas see when both write one person's list."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.slack.memory.recent import RecentQuestions
from bot.store import MemoryStore

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _recent(store: MemoryStore) -> RecentQuestions:
    return RecentQuestions(store, lambda: NOW)


async def test_a_replicas_write_is_one_batch_operation_without_a_read() -> None:
    """The second question of a person on one replica is one compare-and-set, newest first."""
    store = MemoryStore()
    recent = _recent(store)
    for question in ("how do I create a bucket?", "how do I delete a bucket?"):
        op = recent.op("U1", question)
        assert op is not None
        (done,) = await store.batch([op])
        await recent.settle("U1", question, done)
        assert done is True
    assert ["how do I delete a bucket?", "how do I create a bucket?"] == [
        a.text for a in await recent.of("U1")
    ]


async def test_a_list_changed_by_another_replica_is_read_and_merged_not_overwritten() -> None:
    """Replica B's write did not match (A wrote meanwhile): B reads the list and keeps both."""
    store = MemoryStore()
    one, two = _recent(store), _recent(store)
    await one.remember("U1", "first question")
    await two.remember("U1", "second question")  # B's claim of a new list fails: it merges
    await one.remember("U1", "third question")  # A's stale copy fails: it merges too
    assert ["third question", "second question", "first question"] == [
        a.text for a in await two.of("U1")
    ]


async def test_the_lists_kept_for_a_write_without_a_read_are_bounded_by_their_size() -> None:
    """Past the size bound the least recent person's list is no longer kept: their next
    question's write does not match at once, and after a read it still lands, newest first;
    the latest person's is still one compare-and-set."""
    store = MemoryStore()
    long = "x" * 480  # 483 characters with the user's name: 983 kept, with the per-question cost
    recent = RecentQuestions(store, lambda: NOW, max_kept_size=4_000)  # four such lists
    for user in ("U1", "U2", "U3", "U4", "U5"):
        await recent.remember(user, f"{user} {long}")
    latest = recent.op("U5", "U5 again")
    assert latest is not None
    assert [True] == await store.batch([latest])
    dropped = recent.op("U1", "U1 again")
    assert dropped is not None
    (done,) = await store.batch([dropped])
    assert done is False  # a claim of a new list: U1's was not kept
    await recent.settle("U1", "U1 again", done)
    assert ["U1 again", f"U1 {long}"] == [a.text for a in await recent.of("U1")]
