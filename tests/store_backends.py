"""The store backends under test, opened the way the bot opens them, and a clock to drive."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.store import MemoryStore, SqliteStore, Store, redis_store

#: the size bound of every namespace in these tests
MAX_ENTRIES = 3


class FakeClock:
    """Seconds since the epoch that move only when told to."""

    def __init__(self, now: float = 1_750_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Backend:
    kind: str
    store: Store
    #: drives expiry in memory and SQLite; Redis expires on its own clock
    clock: FakeClock


@asynccontextmanager
async def open_backend(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Backend]:
    clock = FakeClock()
    store: Store
    if kind == "memory":
        store = MemoryStore(max_entries=MAX_ENTRIES, clock=clock)
    elif kind == "sqlite":
        store = await SqliteStore.open(tmp_path / "state.db", max_entries=MAX_ENTRIES, clock=clock)
    else:
        server = request.getfixturevalue("redis_server")
        store = redis_store(server.url, prefix="contract:")
    try:
        yield Backend(kind, store, clock)
    finally:
        await store.aclose()
