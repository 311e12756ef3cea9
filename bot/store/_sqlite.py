"""`sqlite:///…`: the default store. One connection (`Db`), WAL; a write returns once
committed, so it survives a crash or `kill -9` of the bot. Calls run on the event loop's
thread: one takes tens of microseconds, less than handing it to a worker thread cost (the
guard's burst: 8.0 → 5.5 ms of CPU a question without the thread)."""

from __future__ import annotations

import functools
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bot.store._api import Codec, Op, Store, StoreConfigError, StoreError, T, check, decoded
from bot.store._memory import Clock
from bot.store._sqlite_db import SCHEMA_VERSION, Db, NewerSchema

R = TypeVar("R")


class SqliteStore(Store):
    kind = "sqlite"

    def __init__(self, db: Db, clock: Clock) -> None:
        self._db, self._clock = db, clock

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        max_entries: int = 10_000,
        clock: Clock = time.time,
        busy_timeout: float = 2.0,
        sweep_every: float = 60.0,
        unevicted: Collection[str] = (),
    ) -> SqliteStore:
        """`unevicted`: namespaces their owner bounds, never cut to `max_entries`."""
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        where = Path(os.path.abspath(path))  # noqa: ASYNC240 - no file system call
        try:
            db = Db(where, busy_timeout, sweep_every, max_entries, frozenset(unevicted))
        except (sqlite3.Error, OSError, NewerSchema) as exc:
            raise StoreConfigError(_explain(where, exc, busy_timeout)) from None
        return cls(db, clock)

    async def _run(self, op: str, call: Callable[..., R], *args: Any) -> R:
        try:
            return call(*args)
        except sqlite3.Error as exc:  # a closed connection too (ProgrammingError)
            raise StoreError(f"sqlite {op} failed: {_one_line(exc)}") from None

    async def _write(self, op: str, job: Callable[[float], R]) -> R:
        return await self._run(op, self._db.write, job, self._clock())

    # --- Store ---------------------------------------------------------------------------
    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        found = await self._run("get", self._db.get_many, list(keys), self._clock())
        return [decoded(codec, found.get(key)) for key in keys]

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        return await self._write("hit", lambda clock: self._db.hit(key, limit, window, now, clock))

    async def unhit(self, key: str, at: float) -> bool:
        return await self._write("unhit", lambda now: self._db.unhit(key, at))

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        return await self._run("window_events", self._db.window_events, key, window, now)

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        decode = functools.partial(decoded, codec)
        return await self._run("scan", self._db.scan, prefix, self._clock(), limit, decode)

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        check(ops)
        return await self._write("batch", functools.partial(self._db.batch, ops))

    async def ping(self) -> None:
        await self._run("ping", self._db.ping)

    async def aclose(self) -> None:
        await self._run("close", self._db.close)


def _explain(path: Path, exc: Exception, busy_timeout: float) -> str:
    detail, other = _one_line(exc), "or point STATE_URL at another file"
    if isinstance(exc, NewerSchema):
        why = f"was written by a newer gdocs-bot ({exc}; this one reads schema {SCHEMA_VERSION})"
        return f"STATE_URL: {path} {why}: run that version, {other}"
    if "not a database" in detail or "malformed" in detail:
        why = f"is not a usable SQLite database ({detail})"
        return f"STATE_URL: {path} {why}: move the file away (a new one is created) {other}"
    if "locked" in detail or "busy" in detail:
        why = f"stayed locked by another process for {busy_timeout:g} s"
        return f"STATE_URL: {path} {why}: stop whatever holds it, {other}"
    return (
        f"STATE_URL: cannot write {path} ({detail}): make its directory writable by this user,"
        " or point STATE_URL at a writable path"
    )


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]
