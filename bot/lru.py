"""A least-recently-used map bounded by its entries and by the size of what it holds: the
process's caches of pages (the pages fetched or read lately, verification's page indexes)
and of people's recent questions, where a count alone would let a few big values hold most
of the bot's memory."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SizedLru(Generic[K, V]):
    """At most `max_entries` values, and at most `max_size` of their sizes (`size_of`) in
    all; the least recently used go first. A value over a quarter of `max_size` is not kept,
    so that one huge value does not push out every other one. Safe to share between threads
    (verification checks big pages in worker threads)."""

    def __init__(self, *, max_entries: int, max_size: int, size_of: Callable[[V], int]) -> None:
        self._values: OrderedDict[K, V] = OrderedDict()
        self._max_entries = max_entries
        self._max_size = max_size
        self._size_of = size_of
        #: the sizes of the values kept, summed
        self.size = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: K, *, refresh: bool = True) -> V | None:
        """The value kept under `key` (None: none). `refresh`: it counts as used now."""
        with self._lock:
            value = self._values.get(key)
            if value is not None and refresh:
                self._values.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """`value` kept under `key` in place of what was there, unless it is too big (then
        `key` keeps nothing: what was there is older than `value`)."""
        size = self._size_of(value)
        with self._lock:
            self._forget(key)
            if size > self._max_size // 4:
                return
            self._values[key] = value
            self.size += size
            while len(self._values) > self._max_entries or self.size > self._max_size:
                _, dropped = self._values.popitem(last=False)
                self.size -= self._size_of(dropped)

    def discard(self, key: K) -> None:
        """Nothing kept under `key` any more."""
        with self._lock:
            self._forget(key)

    def _forget(self, key: K) -> None:
        """`key`'s value and its size taken off (the caller holds the lock)."""
        old = self._values.pop(key, None)
        if old is not None:
            self.size -= self._size_of(old)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self.size = 0
