"""State behind one interface: `memory://`, `sqlite:///…` (the default) and `redis://…`.

    store = ResilientStore(await open_store(url, prefix="gdocs:", max_entries=10_000))
    await store.set("answer:how do i …", answer, ModelCodec(Answer), ttl=3600)
    claimed = await store.add("dedupe:Ev123", "working", TEXT, ttl=60)

The store knows nothing of Slack or MCP: it keeps values under keys with TTLs and offers
atomic claims, compare-and-set, counters, sliding windows and all-or-none batches (`Store`,
`Op`). `SharedFlight` makes identical computations in flight, on any replica, share one call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.store._api import (
    JSON,
    TEXT,
    AdapterCodec,
    Codec,
    JsonCodec,
    ModelCodec,
    Store,
    StoreConfigError,
    StoreError,
    StoreUnavailable,
    TextCodec,
    namespace,
    shared_by_replicas,
)
from bot.store._flight import SharedFlight, abandonable
from bot.store._memory import MemoryStore
from bot.store._open import open_store, redis_store, state_file
from bot.store._ops import Op
from bot.store._resilient import ResilientStore
from bot.store._sqlite import SqliteStore

if TYPE_CHECKING:
    from bot.store._redis import RedisStore


def __getattr__(name: str) -> Any:
    # the Redis client (redis-py, ~0.1-0.3 s to import) only for a run that uses Redis
    if name == "RedisStore":
        from bot.store._redis import RedisStore

        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "JSON",
    "TEXT",
    "AdapterCodec",
    "Codec",
    "JsonCodec",
    "MemoryStore",
    "ModelCodec",
    "Op",
    "RedisStore",
    "ResilientStore",
    "SharedFlight",
    "SqliteStore",
    "Store",
    "StoreConfigError",
    "StoreError",
    "StoreUnavailable",
    "TextCodec",
    "abandonable",
    "namespace",
    "open_store",
    "redis_store",
    "shared_by_replicas",
    "state_file",
]
