"""`memory://`: the store in this process's memory, for one replica, throwaway runs and tests.

It keeps the objects themselves (codecs are not used), so a cached answer costs no
serialisation. Every namespace holds at most `max_entries` keys and at most `max_chars`
characters of the text in their values (`text_size`; a count alone would let 5,000 pages of
40 KB take 200 MB): past either the least recently written or read go first, though never the
value just written, and expired keys are dropped as they are met.
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel

from bot.store._api import Codec, T, namespace
from bot.store._ops import Op, applies, check, skipped

Clock = Callable[[], float]

#: characters of text one namespace's values hold at most, by default: a few MB of memory
MAX_CHARS = 4_000_000
#: how deep `text_size` looks into a value (an answer's references are at depth 2)
_SIZE_DEPTH = 4
_SIZELESS = frozenset({int, float, bool, type(None)})


def text_size(value: object, depth: int = 0) -> int:
    """About how many characters of text `value` holds: the strings and bytes in it, in the
    pydantic models, dataclasses and containers it is made of (a few levels deep)."""
    if isinstance(value, str | bytes):
        return len(value)
    if depth >= _SIZE_DEPTH:
        return 0
    parts: Iterable[object]
    if isinstance(value, BaseModel):
        parts = value.__dict__.values()
    elif isinstance(value, dict):
        parts = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple | set | frozenset | deque):
        parts = value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = [getattr(value, f.name) for f in dataclasses.fields(value)]
    else:  # numbers, None, datetimes: next to nothing
        return 0
    total = 0
    for part in parts:  # the common parts without a call: a cached answer is sized per write
        kind = type(part)
        if kind is str:
            total += len(part)  # type: ignore[arg-type]
        elif kind not in _SIZELESS:
            total += text_size(part, depth + 1)
    return total


class _Space:
    """One namespace's entries, key -> (expires, value, size), least recently used first,
    and the sum of their sizes."""

    __slots__ = ("chars", "entries")

    def __init__(self) -> None:
        self.entries: OrderedDict[str, tuple[float, Any, int]] = OrderedDict()
        self.chars = 0

    def __len__(self) -> int:
        return len(self.entries)

    def put(self, key: str, expires: float, value: Any) -> None:
        self.pop(key)
        size = text_size(value)
        self.entries[key] = (expires, value, size)
        self.chars += size

    def pop(self, key: str) -> None:
        entry = self.entries.pop(key, None)
        if entry is not None:
            self.chars -= entry[2]

    def pop_oldest(self) -> None:
        self.chars -= self.entries.popitem(last=False)[1][2]


class MemoryStore:
    kind = "memory"

    def __init__(
        self, *, max_entries: int = 10_000, max_chars: int = MAX_CHARS, clock: Clock = time.time
    ) -> None:
        if max_entries < 1 or max_chars < 1:
            raise ValueError("max_entries and max_chars must be at least 1")
        self._max = max_entries
        self._max_chars = max_chars
        self._clock = clock
        #: namespace -> its entries
        self._spaces: dict[str, _Space] = {}
        #: sliding windows: namespace -> key -> (expires, event times), least recent first
        self._windows: dict[str, OrderedDict[str, tuple[float, deque[float]]]] = {}

    def __len__(self) -> int:
        entries = sum(len(space) for space in self._spaces.values())
        return entries + sum(len(windows) for windows in self._windows.values())

    def count(self, space: str) -> int:
        """How many keys namespace `space` holds now (entries and sliding windows)."""
        entries = self._spaces.get(space)
        return (len(entries) if entries else 0) + len(self._windows.get(space, ()))

    def chars(self, space: str) -> int:
        """How many characters of text the values of namespace `space` hold now."""
        entries = self._spaces.get(space)
        return entries.chars if entries else 0

    # --- the entries ---------------------------------------------------------------------
    def _space(self, key: str) -> _Space:
        name = namespace(key)
        space = self._spaces.get(name)
        if space is None:
            space = self._spaces[name] = _Space()
        return space

    def _live(self, key: str) -> tuple[float, Any, int] | None:
        space = self._space(key)
        entry = space.entries.get(key)
        if entry is None:
            return None
        if entry[0] <= self._clock():
            space.pop(key)
            return None
        space.entries.move_to_end(key)
        return entry

    def _put(self, key: str, value: Any, expires: float) -> None:
        space = self._space(key)
        space.put(key, expires, value)
        now = self._clock()
        # the value just written stays, whatever its size: a store keeps what it is given
        while len(space) > self._max or (space.chars > self._max_chars and len(space) > 1):
            space.pop_oldest()
        # drop a few expired entries from the cold end, so idle keys do not linger
        for _ in range(2):
            oldest = next(iter(space.entries.items()), None)
            if oldest is None or oldest[1][0] > now:
                break
            space.pop(oldest[0])

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
        self._space(key).pop(key)
        windows = self._windows.get(namespace(key))
        if windows is not None:
            windows.pop(key, None)

    async def delete_if(self, key: str, expected: T, codec: Codec[T]) -> bool:
        entry = self._live(key)
        if entry is None or entry[1] != expected:
            return False
        self._space(key).pop(key)
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
            spaces = [self._spaces.get(namespace(prefix)) or _Space()]
        else:
            spaces = list(self._spaces.values())
        for space in spaces:
            for key, (expires, value, _) in list(space.entries.items()):
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
