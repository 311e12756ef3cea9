"""The asker's recent questions (the Home tab's Ask again): what two replicas see when both
write one person's list."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.slack.memory import Asked, RecentQuestions
from bot.store import AdapterCodec, MemoryStore

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


async def test_one_question_in_another_form_is_one_entry_the_latest() -> None:
    """Case, punctuation and filler words do not make another question (the cache's key):
    the latest wording is kept, with its route, privacy and outcome."""
    recent = _recent(MemoryStore())
    await recent.remember("U1", "How do I create a bucket?", kind="answer", private=True)
    await recent.remember("U1", "firestore pricing", kind="search")
    await recent.remember("U1", "how to create a BUCKET", kind="answer", failed=True)
    asked = await recent.of("U1")
    assert [("how to create a BUCKET", "answer", False, True), ("firestore pricing", "search",
            False, False)] == [(a.text, a.kind, a.private, a.failed) for a in asked]  # fmt: skip


async def test_a_list_kept_by_an_older_version_is_read_without_its_duplicates() -> None:
    """Entries without a route (as typed) still read; case-only duplicates show once."""
    store, codec = MemoryStore(), AdapterCodec(list[Asked])
    at = NOW.isoformat()
    old = codec.decode(
        f'[{{"text": "Why?", "at": "{at}"}}, {{"text": "why", "at": "{at}"}}]'.encode()
    )
    await store.set("recent:U1", old, codec, 60)
    [asked] = await _recent(store).of("U1")
    assert ("Why?", None, False, False) == (asked.text, asked.kind, asked.private, asked.failed)
