"""Identical computations in flight share ONE upstream call, in this process and across replicas.

In a process: one asyncio task per key, shielded, so a caller that gives up (Slack retried,
the user left) neither cancels the call for the others nor wastes it: its result is still
stored. Across replicas: the first to `add` the lock key `lock:<key>` computes, stores the
result under `key` and releases its lock; the others poll `key` (25 ms, growing to 200 ms)
until the result appears, or the lock disappears (then they try to take it). The lock's TTL
is the upstream timeout, so a replica that dies holding it blocks nobody for longer; past
`deadline` a waiter stops waiting and computes by itself.

Only a store the replicas share (Redis) holds the lock: an SQLite file is for one bot
(docs/deployment.md), so there the process's own single flight is all the sharing there is,
and the lock's two writes per computation (about a quarter of SQLite's statement work per
fresh answer, bench/FINDINGS.md) are not made. A `gdocs-bot ask` run on the bot's file
meanwhile may then make one call the bot is making too (the answer_query ledger still
counts both).

Failures are not stored. Callers in the holder's process get the holder's exception; waiters on
other replicas see the lock released without a result and compute themselves (one at a time,
through the lock again): their own call reports its own error, which another process's
exception could not faithfully carry. Results must not be None (None reads as "no result").

A computation may mark a wait before its costly call as one it can give up
(`await abandonable(wait)`, e.g. answer_query's wait for a free minute slot): when every
caller in this process has left (a Stop) during such a wait, the computation ends there
(cancelled, its lock released) instead of spending the call for nobody. While any caller
remains, it goes on; past its waits it always goes on (its result is kept for the next).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

from bot import keys
from bot.store._api import TEXT, Codec, Store, T
from bot.store._ops import Op

_LOCK = keys.LOCK.prefix
#: how long to keep a result: seconds, or a function of the result
Ttl = float | Callable[[T], float]


@dataclass
class _Callers:
    """Who waits on one computation in this process, and whether it may give up now."""

    count: int = 0
    #: in an `abandonable` wait: cancelled at once when the last caller leaves
    waiting: bool = False
    #: every caller left: the next `abandonable` wait ends the computation
    abandoned: bool = False


#: the callers of the flight whose computation runs in this task (None outside a flight)
_callers: ContextVar[_Callers | None] = ContextVar("gdocs_flight_callers", default=None)


async def abandonable(wait: Callable[[], Awaitable[object]]) -> None:
    """`await wait()`, a wait the shared computation running it may give up: when every
    caller has left, before or during it, the computation ends here (CancelledError).
    Outside a SharedFlight computation it is simply awaited."""
    callers = _callers.get()
    if callers is None:
        await wait()
        return
    if callers.abandoned:
        raise asyncio.CancelledError("every caller of this computation has left")
    callers.waiting = True
    try:
        await wait()
    finally:
        callers.waiting = False


@dataclass
class _Flight:
    task: asyncio.Task[Any]
    callers: _Callers


class SharedFlight:
    """`await flight.run(key, compute, codec, ttl)`: the result under `key`, computed once."""

    def __init__(
        self,
        store: Store,
        *,
        lock_ttl: float,
        deadline: float | None = None,
        first_poll: float = 0.025,
        max_poll: float = 0.2,
        shared: bool = True,
    ) -> None:
        """`shared=False`: no other process computes with this store (memory://, SQLite), so
        no lock is taken in it."""
        self._store = store
        self._shared = shared
        self._lock_ttl = lock_ttl
        # long enough for one holder to time out and the next to take over
        self._deadline = deadline if deadline is not None else 2 * lock_ttl + 1.0
        self._first_poll = first_poll
        self._max_poll = max_poll
        self._owner = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(4).hex()}"
        self._count = 0
        self._tasks: dict[str, _Flight] = {}

    def in_flight(self) -> int:
        return len(self._tasks)

    async def run(
        self,
        key: str,
        compute: Callable[[], Awaitable[T]],
        codec: Codec[T],
        ttl: Ttl[T],
        *,
        checked: bool = False,
    ) -> T:
        """The value under `key` if stored; else one `compute()` shared by every caller of
        this key in every replica, stored under `key` for `ttl` seconds (or `ttl(value)`:
        how long a result is worth keeping may depend on it; 0 or less: not kept)."""
        flight = self._tasks.get(key)
        if flight is None:
            callers = _Callers()
            task = asyncio.ensure_future(self._led(callers, key, compute, codec, ttl, checked))
            flight = self._tasks[key] = _Flight(task, callers)
            task.add_done_callback(lambda done: self._finished(key, done))
        flight.callers.count += 1
        flight.callers.abandoned = False
        try:
            return cast(T, await asyncio.shield(flight.task))
        finally:
            flight.callers.count -= 1
            if not flight.callers.count and not flight.task.done():
                self._left(key, flight)

    async def cancel(self) -> None:
        """Cancels the computations still running (at close: one whose callers all left
        would go on calling upstream through a closed client) and waits for them."""
        tasks = [flight.task for flight in self._tasks.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _left(self, key: str, flight: _Flight) -> None:
        """Every caller here left (cancelled) while the computation runs: it gives up at its
        next abandonable wait, at once if it is in one."""
        flight.callers.abandoned = True
        if flight.callers.waiting:
            flight.task.cancel()
            if self._tasks.get(key) is flight:
                del self._tasks[key]  # a caller arriving now starts afresh

    def _finished(self, key: str, task: asyncio.Task[Any]) -> None:
        flight = self._tasks.get(key)
        if flight is not None and flight.task is task:
            del self._tasks[key]
        if not task.cancelled():
            task.exception()  # retrieved: every caller may have gone

    async def _led(
        self,
        callers: _Callers,
        key: str,
        compute: Callable[[], Awaitable[T]],
        codec: Codec[T],
        ttl: Ttl[T],
        checked: bool,
    ) -> T:
        _callers.set(callers)  # this task's own context: its waits see its callers
        return await self._lead(key, compute, codec, ttl, checked)

    async def _lead(
        self,
        key: str,
        compute: Callable[[], Awaitable[T]],
        codec: Codec[T],
        ttl: Ttl[T],
        checked: bool,
    ) -> T:
        # `checked`: the caller has just read `key` and found nothing; no second read
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
        """`owner`: the lock's holder (None: no lock was taken)."""
        release = [] if owner is None else [Op.delete_if(_LOCK + key, owner, TEXT)]
        try:
            value = await compute()
        except BaseException:
            if release:
                await self._store.batch(release)
            raise
        seconds = ttl(value) if callable(ttl) else ttl
        # the result and the lock's release: one store write
        kept = [Op.set(key, value, codec, seconds)] if seconds > 0 else []
        if kept or release:
            await self._store.batch([*kept, *release])
        return value

    async def _await_other(self, key: str, codec: Codec[T], give_up: float) -> T | None:
        """Poll until another replica's result appears (it), or its lock is gone or
        `give_up` passes (None)."""
        loop = asyncio.get_running_loop()
        delay = self._first_poll
        while loop.time() < give_up:
            await asyncio.sleep(min(delay, max(0.0, give_up - loop.time())))
            delay = min(delay * 2, self._max_poll)
            found = await self._store.get(key, codec)
            if found is not None:
                return found
            if await self._store.get(_LOCK + key, TEXT) is None:
                return None
        return None
