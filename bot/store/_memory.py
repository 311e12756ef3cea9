"""`memory://`: the store in this process's memory (tests, throwaway runs, an outage's state).
It keeps the objects themselves, bounded per namespace by keys and by encoded bytes."""

from __future__ import annotations

import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from typing import Any

from bot.store._api import Codec, Op, Store, T, applied, check, namespace

Clock = Callable[[], float]
_Entry = tuple[float, Any, int]  # (expires, value, its encoded size)

MAX_CHARS = 4_000_000  # bytes one namespace's values take at most (encoded), by default


class _Space:
    """One namespace, bounded by entries and encoded bytes (least recently used out first). A
    value over a quarter of `max_size` is not kept: one huge value would push out all others."""

    def __init__(self, max_entries: int, max_size: int) -> None:
        self.entries: OrderedDict[str, _Entry] = OrderedDict()
        self._max_entries, self._max_size = max_entries, max_size
        self.size = 0  # the encoded sizes of the entries, summed

    def get(self, key: str) -> _Entry | None:
        entry = self.entries.get(key)
        if entry is not None:
            self.entries.move_to_end(key)
        return entry

    def put(self, key: str, entry: _Entry) -> None:
        self.discard(key)
        if entry[2] > self._max_size // 4:
            return
        self.entries[key] = entry
        self.size += entry[2]
        while len(self.entries) > self._max_entries or self.size > self._max_size:
            self.size -= self.entries.popitem(last=False)[1][2]

    def discard(self, key: str) -> None:
        old = self.entries.pop(key, None)
        if old is not None:
            self.size -= old[2]


class MemoryStore(Store):
    kind = "memory"

    def __init__(
        self,
        *,
        max_entries: int = 10_000,
        max_chars: int = MAX_CHARS,
        clock: Clock = time.time,
        unevicted: Collection[str] = (),
    ) -> None:
        """`unevicted`: namespaces their owner bounds, never cut to the bounds."""
        if max_entries < 1 or max_chars < 1:
            raise ValueError("max_entries and max_chars must be at least 1")
        self._max, self._max_chars, self._clock = max_entries, max_chars, clock
        self._unevicted = frozenset(unevicted)
        self._spaces: dict[str, _Space] = {}
        #: sliding windows, bounded apart from the values: (expires, event times, 0)
        self._windows: dict[str, _Space] = {}

    def __len__(self) -> int:
        spaces = (*self._spaces.values(), *self._windows.values())
        return sum(len(space.entries) for space in spaces)

    def count(self, space: str) -> int:
        """How many keys namespace `space` holds now (entries and sliding windows)."""
        return sum(len(s[space].entries) for s in (self._spaces, self._windows) if space in s)

    def chars(self, space: str) -> int:
        """How many bytes the values of namespace `space` take now, encoded."""
        return self._space(space).size

    def _space(self, key: str, windows: bool = False) -> _Space:
        spaces, space = self._windows if windows else self._spaces, namespace(key)
        if space not in spaces:
            kept = space in self._unevicted
            bounds = (sys.maxsize, sys.maxsize) if kept else (self._max, self._max_chars)
            spaces[space] = _Space(*bounds)
        return spaces[space]

    def _live(self, key: str) -> _Entry | None:
        space = self._space(key)
        entry = space.get(key)
        if entry is not None and entry[0] <= self._clock():
            space.discard(key)
            return None
        return entry

    def _put(
        self, key: str, value: Any, expires: float, size: int = 0, windows: float | None = None
    ) -> None:
        """`windows`: a sliding window's, with the caller's `now` (windows run on its clock)."""
        space = self._space(key, windows is not None)
        now = self._clock() if windows is None else windows
        space.put(key, (expires, value, size))
        while (oldest := next(iter(space.entries.items()), None)) and oldest[1][0] <= now:
            space.discard(oldest[0])  # expired ones go on the way, oldest first

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
            self._space(key).discard(key)
            self._space(key, windows=True).discard(key)
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
            self._space(key).discard(key)
        return True

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        events = await self.window_events(key, window, now)
        if len(events) >= limit:
            return max(0.0, events[0] + window - now) if events else window
        self._put(key, [*events, now], now + window, windows=now)
        return None

    async def unhit(self, key: str, at: float) -> bool:
        entry = self._space(key, True).get(key)
        if entry is None or at not in entry[1]:
            return False
        entry[1].remove(at)
        return True

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        entry = self._space(key, True).get(key)
        events: list[float] = [] if entry is None else entry[1]
        return [t for t in events if t > now - window]

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        now = self._clock()
        spaces = [self._space(prefix)] if ":" in prefix else list(self._spaces.values())
        found = [
            (key, value)
            for space in spaces
            for key, (expires, value, _) in space.entries.items()
            if key.startswith(prefix) and expires > now
        ]
        return found[:limit]

    async def ping(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
