"""Every call the bot makes to its store, counted: round trips and write transactions.

`CountingStore` wraps the backend (inside the ResilientStore, so calls served by the
per-process fallback during an outage are not counted as store calls). Each call is one
round trip (one SQLite job, one Redis command or script); `batch` is one, however many
operations it carries. What writes (a transaction in SQLite) is counted apart. The counts
go to /metrics at each scrape (`publish`) and let tests assert what one question costs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from bot.observability.metrics import Metrics
from bot.store._api import Codec, Store, T
from bot.store._ops import Op

WRITES = frozenset(
    {"set", "add", "replace", "delete", "delete_if", "incr", "hit", "unhit", "batch"}
)
_CALLS = "gdocs_store_calls_total"
_CALLS_HELP = "Calls to the state store (round trips; a batch is one), by operation."


class CountingStore:
    def __init__(self, inner: Store) -> None:
        self.kind = inner.kind
        self.inner = inner
        #: calls by operation since start
        self.calls: Counter[str] = Counter()

    @property
    def round_trips(self) -> int:
        return sum(self.calls.values())

    @property
    def writes(self) -> int:
        return sum(n for op, n in self.calls.items() if op in WRITES)

    def publish(self, metrics: Metrics) -> None:
        """The counts as /metrics counters (set, not added: they are totals already)."""
        for op, n in list(self.calls.items()):
            metrics.set_counter(_CALLS, _CALLS_HELP, n, op=op)
        publish = getattr(self.inner, "publish", None)  # a backend's own figures (Redis)
        if publish is not None:
            publish(metrics)

    async def get(self, key: str, codec: Codec[T]) -> T | None:
        self.calls["get"] += 1
        return await self.inner.get(key, codec)

    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        self.calls["get_many"] += 1
        return await self.inner.get_many(keys, codec)

    async def set(self, key: str, value: T, codec: Codec[T], ttl: float) -> None:
        self.calls["set"] += 1
        await self.inner.set(key, value, codec, ttl)

    async def add(self, key: str, value: T, codec: Codec[T], ttl: float) -> bool:
        self.calls["add"] += 1
        return await self.inner.add(key, value, codec, ttl)

    async def replace(self, key: str, expected: T, value: T, codec: Codec[T], ttl: float) -> bool:
        self.calls["replace"] += 1
        return await self.inner.replace(key, expected, value, codec, ttl)

    async def delete(self, key: str) -> None:
        self.calls["delete"] += 1
        await self.inner.delete(key)

    async def delete_if(self, key: str, expected: T, codec: Codec[T]) -> bool:
        self.calls["delete_if"] += 1
        return await self.inner.delete_if(key, expected, codec)

    async def incr(self, key: str, amount: int, ttl: float) -> int:
        self.calls["incr"] += 1
        return await self.inner.incr(key, amount, ttl)

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        self.calls["hit"] += 1
        return await self.inner.hit(key, limit, window, now)

    async def unhit(self, key: str, at: float) -> bool:
        self.calls["unhit"] += 1
        return await self.inner.unhit(key, at)

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        self.calls["window_events"] += 1
        return await self.inner.window_events(key, window, now)

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        self.calls["scan"] += 1
        return await self.inner.scan(prefix, codec, limit)

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        self.calls["batch"] += 1
        return await self.inner.batch(ops)

    async def ping(self) -> None:
        await self.inner.ping()

    async def aclose(self) -> None:
        await self.inner.aclose()
