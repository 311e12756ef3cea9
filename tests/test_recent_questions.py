"""The asker's recent questions (the Home tab's Ask again): what two replicas see when both
write one person's list."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.slack.memory import RecentQuestions
from bot.store import MemoryStore

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _recent(store: MemoryStore) -> RecentQuestions:
    return RecentQuestions(store, lambda: NOW)


async def test_a_list_changed_by_another_replica_is_read_and_merged_not_overwritten() -> None:
    """Replica B writes after A: both lists' questions are kept, newest first."""
    store = MemoryStore()
    one, two = _recent(store), _recent(store)
    await one.remember("U1", "first question")
    await two.remember("U1", "second question")
    await one.remember("U1", "third question")
    assert ["third question", "second question", "first question"] == [
        a.text for a in await two.of("U1")
    ]
