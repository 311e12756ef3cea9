"""A least-recently-used map bounded by its entries and by the size of what it holds."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SizedLru(Generic[K, V]):
    """At most `max_entries` values and `max_size` of their sizes (`size_of`); the least
    recently used go first. A value over a quarter of `max_size` is not kept, so that one
    huge value does not push out every other one."""

    def __init__(self, *, max_entries: int, max_size: int, size_of: Callable[[V], int]) -> None:
        self._values: OrderedDict[K, V] = OrderedDict()
        self._max_entries = max_entries
        self._max_size = max_size
        self._size_of = size_of
        self.size = 0  # the sizes of the values kept, summed

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: K, *, refresh: bool = True) -> V | None:
        """The value kept under `key` (None: none). `refresh`: it counts as used now."""
        value = self._values.get(key)
        if value is not None and refresh:
            self._values.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        """`value` in place of what `key` held; unless it is too big, then nothing."""
        self.discard(key)
        size = self._size_of(value)
        if size > self._max_size // 4:
            return
        self._values[key] = value
        self.size += size
        while len(self._values) > self._max_entries or self.size > self._max_size:
            self.size -= self._size_of(self._values.popitem(last=False)[1])

    def items(self) -> list[tuple[K, V]]:
        return list(self._values.items())

    def oldest(self) -> tuple[K, V] | None:
        return next(iter(self._values.items()), None)

    def discard(self, key: K) -> None:
        old = self._values.pop(key, None)
        if old is not None:
            self.size -= self._size_of(old)
