"""`memory://`: the store in this process's memory, for one replica, throwaway runs and tests.

It keeps the objects themselves (codecs are not used), so a cached answer costs no
serialisation. Every namespace holds at most `max_entries` keys: past that the least
recently written or read go first, and expired keys are dropped as they are met.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from typing import Any

from bot.store._api import Codec, T, namespace
from bot.store._ops import Op, applies, check, skipped

Clock = Callable[[], float]


class MemoryStore:
    kind = "memory"

    def __init__(self, *, max_entries: int = 10_000, clock: Clock = time.time) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max = max_entries
        self._clock = clock
        #: namespace -> key -> (expires, value), least recently used first
        self._spaces: dict[str, OrderedDict[str, tuple[float, Any]]] = {}
        #: sliding windows: namespace -> key -> (expires, event times), least recent first
        self._windows: dict[str, OrderedDict[str, tuple[float, deque[float]]]] = {}

    def __len__(self) -> int:
        spaces = [*self._spaces.values(), *self._windows.values()]
        return sum(len(space) for space in spaces)

    def count(self, space: str) -> int:
        """How many keys namespace `space` holds now (entries and sliding windows)."""
        return len(self._spaces.get(space, ())) + len(self._windows.get(space, ()))

    # --- the entries ---------------------------------------------------------------------
    def _space(self, key: str) -> OrderedDict[str, tuple[float, Any]]:
        return self._spaces.setdefault(namespace(key), OrderedDict())

    def _live(self, key: str) -> tuple[float, Any] | None:
        space = self._space(key)
        entry = space.get(key)
        if entry is None:
            return None
        if entry[0] <= self._clock():
            del space[key]
            return None
        space.move_to_end(key)
        return entry

    def _put(self, key: str, value: Any, expires: float) -> None:
        space = self._space(key)
        space[key] = (expires, value)
        space.move_to_end(key)
        now = self._clock()
        while len(space) > self._max:
            space.popitem(last=False)
        # drop a few expired entries from the cold end, so idle keys do not linger
        for _ in range(2):
            oldest = next(iter(space.items()), None)
            if oldest is None or oldest[1][0] > now:
                break
            del space[oldest[0]]

    # --- Store ---------------------------------------------------------------------------
    async def get(self, key: str, codec: Codec[T]) -> T | None:
        entry = self._live(key)
        return None if entry is None else entry[1]

    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        found: list[T | None] = []
        for key in keys:
            entry = self._live(key)
            found.append(None if entry is None else entry[1])
        return found

    async def set(self, key: str, value: T, codec: Codec[T], ttl: float) -> None:
        self._put(key, value, self._clock() + ttl)

    async def add(self, key: str, value: T, codec: Codec[T], ttl: float) -> bool:
        if self._live(key) is not None:
            return False
        self._put(key, value, self._clock() + ttl)
        return True

    async def replace(self, key: str, expected: T, value: T, codec: Codec[T], ttl: float) -> bool:
        entry = self._live(key)
        if entry is None or entry[1] != expected:
            return False
        self._put(key, value, self._clock() + ttl)
        return True

    async def delete(self, key: str) -> None:
        self._space(key).pop(key, None)
        windows = self._windows.get(namespace(key))
        if windows is not None:
            windows.pop(key, None)

    async def delete_if(self, key: str, expected: T, codec: Codec[T]) -> bool:
        entry = self._live(key)
        if entry is None or entry[1] != expected:
            return False
        del self._space(key)[key]
        return True

    async def incr(self, key: str, amount: int, ttl: float) -> int:
        entry = self._live(key)
        if entry is None or not isinstance(entry[1], int):
            value, expires = amount, self._clock() + ttl
        else:
            value, expires = entry[1] + amount, entry[0]
        self._put(key, value, expires)
        return value

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        events = self._events(key, window, now)
        if len(events) >= limit:
            return max(0.0, events[0] + window - now) if events else window
        events.append(now)
        windows = self._windows.setdefault(namespace(key), OrderedDict())
        windows[key] = (now + window, events)
        windows.move_to_end(key)
        while len(windows) > self._max:
            windows.popitem(last=False)
        # windows whose last event has left them are forgotten, oldest first
        while windows:
            oldest, (expires, _) = next(iter(windows.items()))
            if expires > now:
                break
            del windows[oldest]
        return None

    async def unhit(self, key: str, at: float) -> bool:
        windows = self._windows.get(namespace(key))
        found = windows.get(key) if windows is not None else None
        if found is None or at not in found[1]:
            return False
        found[1].remove(at)
        return True

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        return list(self._events(key, window, now))

    def _events(self, key: str, window: float, now: float) -> deque[float]:
        windows = self._windows.get(namespace(key))
        found = windows.get(key) if windows is not None else None
        events = found[1] if found is not None else deque()
        while events and events[0] <= now - window:
            events.popleft()
        return events

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        now = self._clock()
        found: list[tuple[str, T]] = []
        if ":" in prefix:  # one namespace (or none)
            spaces = [self._spaces.get(namespace(prefix)) or OrderedDict()]
        else:
            spaces = list(self._spaces.values())
        for entries in spaces:
            for key, (expires, value) in list(entries.items()):
                if len(found) >= limit:
                    return found
                if key.startswith(prefix) and expires > now:
                    found.append((key, value))
        return found

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        check(ops)
        results: list[object] = []
        # no await between the operations' effects: the batch is atomic in this process
        for op in ops:
            results.append(await self._apply(op) if applies(op, results) else skipped(op))
        return results

    async def _apply(self, op: Op) -> object:
        codec: Any = op.codec
        if op.kind == "set":
            await self.set(op.key, op.value, codec, op.ttl)
            return None
        if op.kind == "add":
            return await self.add(op.key, op.value, codec, op.ttl)
        if op.kind == "replace":
            return await self.replace(op.key, op.expected, op.value, codec, op.ttl)
        if op.kind == "delete":
            await self.delete(op.key)
            return None
        if op.kind == "delete_if":
            return await self.delete_if(op.key, op.expected, codec)
        return await self.incr(op.key, op.amount, op.ttl)

    async def ping(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
