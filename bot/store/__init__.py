"""State behind one interface: `memory://`, `sqlite:///…` (the default) and `redis://…`.

    store = MemoryStore()
    await store.set("answer:how do i …", answer, ModelCodec(Answer), ttl=3600)
    claimed = await store.add("dedupe:Ev123", "working", TEXT, ttl=60)

The store knows nothing of Slack or MCP: it keeps values under keys with TTLs and offers
atomic claims, compare-and-set, counters and sliding windows. See `_api.Store`.
"""

from __future__ import annotations

from bot.store._api import (
    JSON,
    TEXT,
    AdapterCodec,
    Codec,
    JsonCodec,
    ModelCodec,
    Store,
    StoreError,
    TextCodec,
    namespace,
)
from bot.store._memory import MemoryStore

__all__ = [
    "JSON",
    "TEXT",
    "AdapterCodec",
    "Codec",
    "JsonCodec",
    "MemoryStore",
    "ModelCodec",
    "Store",
    "StoreError",
    "TextCodec",
    "namespace",
]
