"""`memory://`: the store in this process's memory (tests, throwaway runs, an outage's state).

It keeps the objects themselves. A namespace holds at most `max_entries` keys and `max_chars`
bytes of their values' encoded form; past either, the least recently used go first, though
never the value just written.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Sequence
from typing import Any

from bot.store._api import BatchWrites, Codec, Op, T, applied, check, namespace

Clock = Callable[[], float]

#: bytes one namespace's values take at most (encoded), by default: a few MB of memory
MAX_CHARS = 4_000_000


class MemoryStore(BatchWrites):
    kind = "memory"

    def __init__(
        self, *, max_entries: int = 10_000, max_chars: int = MAX_CHARS, clock: Clock = time.time
    ) -> None:
        if max_entries < 1 or max_chars < 1:
            raise ValueError("max_entries and max_chars must be at least 1")
        self._max = max_entries
        self._max_chars = max_chars
        self._clock = clock
        #: namespace -> key -> (expires, value, its text size), least recently used first
        self._spaces: dict[str, OrderedDict[str, tuple[float, Any, int]]] = {}
        self._chars: Counter[str] = Counter()
        #: sliding windows: namespace -> key -> (expires, event times), least recent first
        self._windows: dict[str, OrderedDict[str, tuple[float, deque[float]]]] = {}

    def __len__(self) -> int:
        return sum(self.count(space) for space in {*self._spaces, *self._windows})

    def count(self, space: str) -> int:
        """How many keys namespace `space` holds now (entries and sliding windows)."""
        return len(self._spaces.get(space, ())) + len(self._windows.get(space, ()))

    def chars(self, space: str) -> int:
        """How many bytes the values of namespace `space` take now, encoded."""
        return self._chars[space]

    def _entries(self, key: str) -> OrderedDict[str, tuple[float, Any, int]]:
        return self._spaces.setdefault(namespace(key), OrderedDict())

    def _pop(self, key: str) -> None:
        entry = self._entries(key).pop(key, None)
        if entry is not None:
            self._chars[namespace(key)] -= entry[2]

    def _live(self, key: str) -> tuple[float, Any, int] | None:
        entries = self._entries(key)
        entry = entries.get(key)
        if entry is not None and entry[0] <= self._clock():
            self._pop(key)
            return None
        if entry is not None:
            entries.move_to_end(key)
        return entry

    def _put(self, key: str, value: Any, expires: float, size: int = 0) -> None:
        space, entries = namespace(key), self._entries(key)
        self._pop(key)
        entries[key] = (expires, value, size)
        self._chars[space] += entries[key][2]
        now = self._clock()
        # the value just written stays, whatever its size; a few expired ones go on the way
        while len(entries) > 1 and (
            len(entries) > self._max
            or self._chars[space] > self._max_chars
            or next(iter(entries.values()))[0] <= now
        ):
            self._pop(next(iter(entries)))

    # --- Store ---------------------------------------------------------------------------
    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        return [None if (entry := self._live(key)) is None else entry[1] for key in keys]

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        check(ops)
        return applied(ops, self._apply)  # no await inside: atomic in this process

    def _apply(self, op: Op) -> object:
        key, expires = op.key, self._clock() + op.ttl
        entry = self._live(key)
        size = len(op.codec.encode(op.value)) if op.codec and op.value is not None else 0
        if op.kind == "set":
            self._put(key, op.value, expires, size)
            return None
        if op.kind == "add":
            if entry is None:
                self._put(key, op.value, expires, size)
            return entry is None
        if op.kind == "delete":
            self._pop(key)
            if (windows := self._windows.get(namespace(key))) is not None:
                windows.pop(key, None)
            return None
        if op.kind == "incr":
            if entry is None or not isinstance(entry[1], int):
                value = op.amount
            else:
                value, expires = entry[1] + op.amount, entry[0]
            self._put(key, value, expires)
            return value
        if entry is None or entry[1] != op.expected:  # replace, delete_if
            return False
        if op.kind == "replace":
            self._put(key, op.value, expires, size)
        else:
            self._pop(key)
        return True

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
        while windows:  # windows whose last event has left them go, oldest first
            oldest, (expires, _) = next(iter(windows.items()))
            if expires > now:
                break
            del windows[oldest]
        return None

    async def unhit(self, key: str, at: float) -> bool:
        found = self._window(key)
        if found is None or at not in found[1]:
            return False
        found[1].remove(at)
        return True

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        return list(self._events(key, window, now))

    def _window(self, key: str) -> tuple[float, deque[float]] | None:
        windows = self._windows.get(namespace(key))
        return None if windows is None else windows.get(key)

    def _events(self, key: str, window: float, now: float) -> deque[float]:
        found = self._window(key)
        events = found[1] if found is not None else deque()
        while events and events[0] <= now - window:
            events.popleft()
        return events

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        now = self._clock()
        found: list[tuple[str, T]] = []
        spaces = [self._entries(prefix)] if ":" in prefix else list(self._spaces.values())
        for entries in spaces:
            for key, (expires, value, _) in list(entries.items()):
                if len(found) >= limit:
                    return found
                if key.startswith(prefix) and expires > now:
                    found.append((key, value))
        return found

    async def ping(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
