"""Single flight: identical computations in flight share one call, in this process (one
shielded task per key) and, through a store lock `lock:<key>`, across replicas. A wait marked
`abandonable` (for a quota slot) ends the computation once every caller has left (a Stop)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, cast

from bot import keys
from bot.store._api import TEXT, Codec, Op, Store, T

_LOCK = keys.LOCK.prefix
#: how long to keep a result: seconds, or a function of the result
Ttl = float | Callable[[T], float]
Compute = Callable[[], Awaitable[T]]


@dataclass
class _Flight:
    task: asyncio.Task[Any] = field(init=False)
    callers: int = 0
    waiting: bool = False  # in an `abandonable` wait now
    abandoned: bool = False  # every caller left: the next such wait ends it


_current: ContextVar[_Flight | None] = ContextVar("gdocs_flight", default=None)


async def abandonable(wait: Callable[[], Awaitable[object]]) -> None:
    """`await wait()`; inside a flight whose callers have all left, before or during the wait,
    the computation ends here (CancelledError)."""
    flight = _current.get() or _Flight()  # outside a flight: one nobody abandons
    if flight.abandoned:
        raise asyncio.CancelledError("every caller of this computation has left")
    flight.waiting = True
    try:
        await wait()
    finally:
        flight.waiting = False


class SharedFlight:
    """One `compute()` for every caller of `key`; `shared`: other processes use `store`, so
    the lock is needed (default: Redis)."""

    def __init__(self, store: Store, *, lock_ttl: float, shared: bool | None = None) -> None:
        self._store = store
        # other bot processes share a Redis store; an SQLite file is one bot's
        self._shared = store.kind == "redis" if shared is None else shared
        self._lock_ttl = lock_ttl
        self._flights: dict[str, _Flight] = {}

    def in_flight(self) -> int:
        return len(self._flights)

    async def run(
        self,
        key: str,
        compute: Compute[T],
        codec: Codec[T] | None = None,
        ttl: Ttl[T] = 0.0,
        *,
        checked: bool = False,
    ) -> T:
        """Without `codec`: shared in this process only, nothing stored. With one: the value
        under `key` if stored (`checked`: the caller just found none), else computed once by
        every caller in every replica and kept for `ttl` seconds (or `ttl(value)`; <= 0: not)."""
        flight = self._flights.get(key)
        if flight is None:
            flight = self._flights[key] = _Flight()
            work = compute() if codec is None else self._lead(key, compute, codec, ttl, checked)
            flight.task = asyncio.ensure_future(_within(flight, work))
            flight.task.add_done_callback(lambda done: self._finished(key, done))
        flight.callers += 1
        flight.abandoned = False
        try:
            return cast(T, await asyncio.shield(flight.task))
        finally:
            flight.callers -= 1
            if not flight.callers and not flight.task.done():
                flight.abandoned = True
                if flight.waiting:
                    flight.task.cancel()
                    if self._flights.get(key) is flight:
                        del self._flights[key]  # a caller arriving now starts afresh

    async def cancel(self) -> None:
        """At close: one whose callers all left would go on through a closed client."""
        tasks = [flight.task for flight in self._flights.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _finished(self, key: str, task: asyncio.Task[Any]) -> None:
        flight = self._flights.get(key)
        if flight is not None and flight.task is task:
            del self._flights[key]
        if not task.cancelled():
            task.exception()  # retrieved: every caller may have gone

    async def _lead(
        self, key: str, compute: Compute[T], codec: Codec[T], ttl: Ttl[T], checked: bool
    ) -> T:
        stored: T | None = None
        if not checked:
            stored = await self._store.get(key, codec)
        if stored is not None:
            return stored
        if not self._shared:
            return await self._compute_and_store(key, None, compute, codec, ttl)
        loop = asyncio.get_running_loop()
        # long enough for one holder to time out and the next to take over
        give_up = loop.time() + 2 * self._lock_ttl + 1.0
        owner = f"{os.getpid()}:{os.urandom(8).hex()}"
        waited = False
        while loop.time() < give_up:
            if await self._store.add(_LOCK + key, owner, TEXT, self._lock_ttl):
                # the previous holder may have stored its result just before releasing
                if waited:
                    stored = await self._store.get(key, codec)
                if stored is None:
                    return await self._compute_and_store(key, owner, compute, codec, ttl)
                await self._store.delete_if(_LOCK + key, owner, TEXT)
                return stored
            waited = True
            while loop.time() < give_up:  # until the result appears or the lock goes
                await asyncio.sleep(0.05)
                if (found := await self._store.get(key, codec)) is not None:
                    return found
                if await self._store.get(_LOCK + key, TEXT) is None:
                    break
        # the lock kept changing hands without a result: stop waiting, compute unshared
        return await compute()

    async def _compute_and_store(
        self, key: str, owner: str | None, compute: Compute[T], codec: Codec[T], ttl: Ttl[T]
    ) -> T:
        release = [] if owner is None else [Op.delete_if(_LOCK + key, owner, TEXT)]
        try:
            value = await compute()
        except BaseException:
            if release:
                await self._store.batch(release)
            raise
        seconds = ttl(value) if callable(ttl) else ttl
        kept = [Op.set(key, value, codec, seconds)] if seconds > 0 else []
        if kept or release:  # the result and the lock's release: one store write
            await self._store.batch([*kept, *release])
        return value


async def _within(flight: _Flight, work: Awaitable[T]) -> T:
    _current.set(flight)  # this task's own context: its waits see its callers
    return await work
