"""Small in-memory state the Slack app keeps: dedupe keys, per-user rate windows, user
locales and thread context. Each is an injected instance with an injectable clock and a
maximum size (a burst of new users or threads evicts the oldest entries instead of growing
memory), and the dedupe store sits behind a protocol so several replicas can share one.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from typing import Generic, Protocol, TypeVar

Clock = Callable[[], float]

# BCP-47-ish: "it-IT", "en-US", "pt-BR", "zh-Hant-TW"
V = TypeVar("V")

_LOCALE_RE = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8}){0,3}$")


class _TtlMap(Generic[V]):
    """An insertion-ordered map whose entries expire; the oldest go first when it is full."""

    def __init__(self, ttl_seconds: float, max_entries: int, clock: Clock) -> None:
        self._ttl = ttl_seconds
        self._max = max_entries
        self._clock = clock
        self._items: OrderedDict[str, tuple[float, V]] = OrderedDict()

    def _prune(self, now: float) -> None:
        while self._items:
            key, (expires, _) = next(iter(self._items.items()))
            if expires > now and len(self._items) <= self._max:
                break
            del self._items[key]

    def get(self, key: str) -> V | None:
        now = self._clock()
        self._prune(now)
        item = self._items.get(key)
        if item is None or item[0] <= now:
            return None
        return item[1]

    def put(self, key: str, value: V) -> None:
        now = self._clock()
        self._items.pop(key, None)
        self._items[key] = (now + self._ttl, value)
        self._prune(now)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def max_entries(self) -> int:
        return self._max


class DedupeStore(Protocol):
    """Answers "have we seen this delivery before?" across retries (and, shared, replicas)."""

    async def first_time(self, key: str) -> bool:
        """True the first time `key` is seen within the store's TTL, False afterwards."""


class InMemoryDedupeStore:
    """A per-process `DedupeStore`: enough for one replica."""

    def __init__(
        self,
        ttl_seconds: float = 600.0,
        *,
        max_entries: int = 50_000,
        clock: Clock = time.monotonic,
    ) -> None:
        self._seen: _TtlMap[bool] = _TtlMap(ttl_seconds, max_entries, clock)
        self.max_entries = max_entries

    def __len__(self) -> int:
        return len(self._seen)

    async def first_time(self, key: str) -> bool:
        if self._seen.get(key):
            return False
        self._seen.put(key, True)
        return True


class RateLimiter:
    """A sliding one-minute window of questions per user, for at most `max_users` users.

    Users are kept in order of their last question; those idle for a whole window are
    forgotten first, and past `max_users` the least recently active go (they start afresh).
    """

    def __init__(
        self,
        per_minute: int,
        *,
        max_users: int = 10_000,
        clock: Clock = time.monotonic,
        window: float = 60.0,
    ) -> None:
        self.per_minute = per_minute
        self.max_users = max_users
        self._window = window
        self._clock = clock
        self._hits: OrderedDict[str, deque[float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._hits)

    def try_acquire(self, user: str) -> float | None:
        """Record a question and return None, or return seconds to wait when over the limit."""
        if self.per_minute <= 0:
            return None
        now = self._clock()
        hits = self._hits.pop(user, None)
        self._forget(now)
        hits = hits if hits is not None else deque()
        self._hits[user] = hits  # now the most recently active
        while hits and hits[0] <= now - self._window:
            hits.popleft()
        if len(hits) >= self.per_minute:
            return max(0.0, hits[0] + self._window - now)
        hits.append(now)
        return None

    def _forget(self, now: float) -> None:
        """Drop idle users from the front, and make room for one more."""
        while self._hits:
            user, hits = next(iter(self._hits.items()))
            idle = not hits or hits[-1] <= now - self._window
            if not idle and len(self._hits) < self.max_users:
                break
            del self._hits[user]


def wait_message(limit: int, retry_after: float) -> str:
    seconds = max(1, math.ceil(retry_after))
    return f"You've asked {limit} questions in the last minute — try again in {seconds} s."


class LocaleCache:
    """Slack user → BCP-47 locale (`users.info`), cached; failures are not cached."""

    def __init__(
        self,
        ttl_seconds: float = 6 * 3600,
        *,
        max_entries: int = 10_000,
        clock: Clock = time.monotonic,
    ) -> None:
        self._locales: _TtlMap[str] = _TtlMap(ttl_seconds, max_entries, clock)
        self.max_entries = max_entries
        #: lookups in flight, one per user: bounded by the requests in flight
        self._pending: dict[str, asyncio.Future[str | None]] = {}

    def __len__(self) -> int:
        return len(self._locales)

    async def locale(self, user: str, fetch: Callable[[str], Awaitable[str | None]]) -> str | None:
        cached = self._locales.get(user)
        if cached is not None:
            return cached
        pending = self._pending.get(user)
        if pending is None:
            # one users.info per user at a time: a burst of questions shares the lookup
            pending = asyncio.ensure_future(self._fetch(user, fetch))
            self._pending[user] = pending
            pending.add_done_callback(lambda _: self._pending.pop(user, None))
        return await asyncio.shield(pending)

    async def _fetch(self, user: str, fetch: Callable[[str], Awaitable[str | None]]) -> str | None:
        found = await fetch(user)
        if found is None or not _LOCALE_RE.match(found):
            return None
        self._locales.put(user, found)
        return found


class ThreadMemory:
    """The question a Slack thread is about, so a short follow-up can refer back to it."""

    def __init__(
        self,
        ttl_seconds: float = 24 * 3600,
        *,
        max_entries: int = 10_000,
        clock: Clock = time.monotonic,
    ) -> None:
        self._questions: _TtlMap[str] = _TtlMap(ttl_seconds, max_entries, clock)
        self.max_entries = max_entries

    def __len__(self) -> int:
        return len(self._questions)

    def question(self, channel: str, thread_ts: str) -> str | None:
        return self._questions.get(f"{channel}:{thread_ts}")

    def remember(self, channel: str, thread_ts: str, question: str) -> None:
        self._questions.put(f"{channel}:{thread_ts}", question)
