"""Single flight: identical computations in flight share one call, in this process and, through a
store lock, across replicas.

In a process: one shielded task per key, so a caller that leaves neither cancels the call for
the others nor wastes it (a result is still stored). With a `codec` the result is kept under
`key`; in a store the replicas share (`shared`, i.e. Redis) the first to `add` `lock:<key>`
computes while the others poll `key` until the result appears or the lock goes. The lock's TTL
is the upstream timeout: a replica dying with it blocks nobody longer. Failures are not stored;
results must not be None.

`await abandonable(wait)` marks a wait before the costly call (answer_query's wait for a minute
slot): when every caller in this process has left (a Stop), the computation ends there.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, cast

from bot import keys
from bot.store._api import TEXT, Codec, Op, Store, T, shared_by_replicas

_LOCK = keys.LOCK.prefix
#: how long to keep a result: seconds, or a function of the result
Ttl = float | Callable[[T], float]


@dataclass
class _Flight:
    task: asyncio.Task[Any] = field(init=False)
    callers: int = 0
    #: in an `abandonable` wait now / every caller left: the next such wait ends it
    waiting: bool = False
    abandoned: bool = False


_current: ContextVar[_Flight | None] = ContextVar("gdocs_flight", default=None)


async def abandonable(wait: Callable[[], Awaitable[object]]) -> None:
    """`await wait()`; inside a flight whose callers have all left, before or during the wait,
    the computation ends here (CancelledError)."""
    flight = _current.get()
    if flight is not None and flight.abandoned:
        raise asyncio.CancelledError("every caller of this computation has left")
    if flight is None:
        await wait()
        return
    flight.waiting = True
    try:
        await wait()
    finally:
        flight.waiting = False


class SharedFlight:
    """`await flight.run(key, compute[, codec, ttl])`: one `compute()` for every caller of `key`."""

    def __init__(self, store: Store, *, lock_ttl: float, shared: bool | None = None) -> None:
        """`shared`: whether other processes compute with `store` (default: Redis does;
        memory:// and an SQLite file are one bot's), so that the lock is needed."""
        self._store = store
        self._shared = shared_by_replicas(store) if shared is None else shared
        self._lock_ttl = lock_ttl
        # long enough for one holder to time out and the next to take over
        self._deadline = 2 * lock_ttl + 1.0
        self._owner = f"{os.getpid()}:{os.urandom(6).hex()}"
        self._count = 0
        self._flights: dict[str, _Flight] = {}

    def in_flight(self) -> int:
        return len(self._flights)

    async def run(
        self,
        key: str,
        compute: Callable[[], Awaitable[T]],
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
            flight.task = asyncio.ensure_future(self._within(flight, work))
            flight.task.add_done_callback(lambda done: self._finished(key, done))
        flight.callers += 1
        flight.abandoned = False
        try:
            return cast(T, await asyncio.shield(flight.task))
        finally:
            flight.callers -= 1
            if not flight.callers and not flight.task.done():
                # every caller left: it gives up at its next abandonable wait, now if in one
                flight.abandoned = True
                if flight.waiting:
                    flight.task.cancel()
                    if self._flights.get(key) is flight:
                        del self._flights[key]  # a caller arriving now starts afresh

    async def cancel(self) -> None:
        """Cancels the computations still running and waits for them (at close: one whose
        callers all left would go on calling upstream through a closed client)."""
        tasks = [flight.task for flight in self._flights.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    @staticmethod
    async def _within(flight: _Flight, work: Awaitable[T]) -> T:
        _current.set(flight)  # this task's own context: its waits see its callers
        return await work

    def _finished(self, key: str, task: asyncio.Task[Any]) -> None:
        flight = self._flights.get(key)
        if flight is not None and flight.task is task:
            del self._flights[key]
        if not task.cancelled():
            task.exception()  # retrieved: every caller may have gone

    async def _lead(
        self,
        key: str,
        compute: Callable[[], Awaitable[T]],
        codec: Codec[T],
        ttl: Ttl[T],
        checked: bool,
    ) -> T:
        stored: T | None = None
        if not checked:
            stored = await self._store.get(key, codec)
        if stored is not None:
            return stored
        if not self._shared:
            return await self._compute_and_store(key, None, compute, codec, ttl)
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self._deadline
        self._count += 1
        owner = f"{self._owner}:{self._count}"
        waited = False
        while loop.time() < give_up:
            if await self._store.add(_LOCK + key, owner, TEXT, self._lock_ttl):
                # the previous holder may have stored its result just before releasing
                if waited:
                    stored = await self._store.get(key, codec)
                if stored is not None:
                    await self._store.delete_if(_LOCK + key, owner, TEXT)
                    return stored
                return await self._compute_and_store(key, owner, compute, codec, ttl)
            waited = True
            found = await self._await_other(key, codec, give_up)
            if found is not None:
                return found
        # the lock kept changing hands without a result: stop waiting, compute unshared
        return await compute()

    async def _compute_and_store(
        self,
        key: str,
        owner: str | None,
        compute: Callable[[], Awaitable[T]],
        codec: Codec[T],
        ttl: Ttl[T],
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

    async def _await_other(self, key: str, codec: Codec[T], give_up: float) -> T | None:
        """Poll until another replica's result appears, or its lock goes or `give_up` passes."""
        loop = asyncio.get_running_loop()
        delay = 0.025
        while loop.time() < give_up:
            await asyncio.sleep(min(delay, max(0.0, give_up - loop.time())))
            delay = min(delay * 2, 0.2)
            found = await self._store.get(key, codec)
            if found is not None:
                return found
            if await self._store.get(_LOCK + key, TEXT) is None:
                return None
        return None
