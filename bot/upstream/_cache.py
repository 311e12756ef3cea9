"""The result cache (an injected instance with an async interface a shared store such as
Redis can implement) and single-flight, so identical requests in flight share one call.

Values are strings (the service stores pydantic JSON), which keeps a networked implementation
a thin wrapper: `GET key` / `SET key value EX ttl`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
_M = TypeVar("_M", bound=BaseModel)


class Cache(Protocol):
    """What the service needs from a cache; implementations must be safe to share."""

    async def get(self, key: str) -> str | None: ...

    async def set(self, key: str, value: str, ttl: float) -> None:
        """Keep `value` for `ttl` seconds (ttl <= 0: do not keep it)."""


def parse_cached(model: type[_M], raw: str | None) -> _M | None:
    """A cached value, or None when absent or unreadable (a shared cache outlives versions)."""
    if raw is None:
        return None
    try:
        return model.model_validate_json(raw)
    except ValidationError:
        logger.warning("ignoring an unreadable %s in the cache", model.__name__)
        return None


class MemoryCache:
    """In-process TTL + LRU cache bounded to `max_entries`."""

    def __init__(self, max_entries: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, str]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, key: str) -> str | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if expires <= self._clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return value

    async def set(self, key: str, value: str, ttl: float) -> None:
        if ttl <= 0:
            self._entries.pop(key, None)
            return
        self._entries[key] = (self._clock() + ttl, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)


class SingleFlight(Generic[_T]):
    """Runs one task per key; callers arriving while it runs await the same result.

    The task is shielded from any one caller's cancellation (a Slack request giving up must
    not fail the others waiting on it); it is bounded by the service's own timeout.
    """

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[_T]] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    async def run(self, key: str, factory: Callable[[], Awaitable[_T]]) -> _T:
        task = self._tasks.get(key)
        if task is None:
            task = asyncio.ensure_future(factory())
            self._tasks[key] = task
            task.add_done_callback(lambda t: self._done(key, t))
        return await asyncio.shield(task)

    def _done(self, key: str, task: asyncio.Task[_T]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
        if not task.cancelled():
            task.exception()  # retrieved: no "never retrieved" warning when every caller left
