"""`sqlite:///…`: the default store, an SQLite file that outlives restarts.

Every statement runs on ONE dedicated thread holding ONE connection, so the event loop never
waits on the disk and the connection is never shared between threads. The file is in WAL
mode, so `gdocs-bot` CLI commands read it while the bot writes. Values are kept as the bytes
of their codec; a value that no longer decodes (written by another version) reads as absent.
Every row has an expiry and every namespace a size bound (`max_entries`): past it the least
recently used rows go. Expired rows read as absent at once and are deleted by a sweep that
runs with the writes, at most every `sweep_every` seconds.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ParamSpec, TypeVar

from bot.store._api import Codec, StoreConfigError, StoreError, T
from bot.store._memory import Clock
from bot.store._sqlite_db import Db, NewerSchema
from bot.store._sqlite_schema import SCHEMA_VERSION

P = ParamSpec("P")
R = TypeVar("R")


class SqliteStore:
    kind = "sqlite"

    def __init__(self, db: Db, executor: ThreadPoolExecutor, *, path: Path, clock: Clock) -> None:
        self._db = db
        self._executor = executor
        self._clock = clock
        self.path = path

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        max_entries: int = 10_000,
        clock: Clock = time.time,
        busy_timeout: float = 2.0,
        sweep_every: float = 60.0,
    ) -> SqliteStore:
        """Open (or create) the file. StoreConfigError, naming STATE_URL, when it cannot be used:
        not a database, locked, unwritable, or written by a newer version."""
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gdocs-store-sqlite")
        loop = asyncio.get_running_loop()
        where = await loop.run_in_executor(executor, Path(path).absolute)
        connect = functools.partial(
            _connect,
            where,
            busy_timeout=busy_timeout,
            max_entries=max_entries,
            sweep_every=sweep_every,
        )
        try:
            db = await loop.run_in_executor(executor, connect)
        except (sqlite3.Error, OSError, NewerSchema) as exc:
            executor.shutdown(wait=False)
            raise StoreConfigError(_explain(where, exc, busy_timeout)) from None
        return cls(db, executor, path=where, clock=clock)

    async def _run(self, op: str, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._executor, functools.partial(call, *args, **kwargs)
            )
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite {op} failed: {_one_line(exc)}") from None
        except RuntimeError as exc:  # the executor is shut down
            raise StoreError(f"sqlite {op} failed: the store is closed ({exc})") from None

    # --- Store ---------------------------------------------------------------------------
    async def get(self, key: str, codec: Codec[T]) -> T | None:
        raw = await self._run("get", self._db.get, key, self._clock())
        return None if raw is None else _decode(codec, raw)

    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        found = await self._run("get_many", self._db.get_many, list(keys), self._clock())
        return [None if key not in found else _decode(codec, found[key]) for key in keys]

    async def set(self, key: str, value: T, codec: Codec[T], ttl: float) -> None:
        now = self._clock()
        await self._run("set", self._db.set, key, codec.encode(value), now + ttl, now)

    async def add(self, key: str, value: T, codec: Codec[T], ttl: float) -> bool:
        now = self._clock()
        return await self._run("add", self._db.add, key, codec.encode(value), now + ttl, now)

    async def replace(self, key: str, expected: T, value: T, codec: Codec[T], ttl: float) -> bool:
        now = self._clock()
        old, new = codec.encode(expected), codec.encode(value)
        return await self._run("replace", self._db.replace, key, old, new, now + ttl, now)

    async def delete(self, key: str) -> None:
        await self._run("delete", self._db.delete, key)

    async def delete_if(self, key: str, expected: T, codec: Codec[T]) -> bool:
        old = codec.encode(expected)
        return await self._run("delete_if", self._db.delete_if, key, old, self._clock())

    async def incr(self, key: str, amount: int, ttl: float) -> int:
        now = self._clock()
        return await self._run("incr", self._db.incr, key, amount, now + ttl, now)

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        return await self._run("hit", self._db.hit, key, limit, window, now, self._clock())

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        return await self._run("window_events", self._db.window_events, key, window, now)

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        decode = functools.partial(_decode, codec)
        return await self._run("scan", self._db.scan, prefix, self._clock(), limit, decode)

    async def sweep(self) -> None:
        """Delete expired rows now (they already read as absent; this frees their space)."""
        await self._run("sweep", self._db.sweep, self._clock())

    async def ping(self) -> None:
        await self._run("ping", self._db.ping)

    async def aclose(self) -> None:
        try:
            await self._run("close", self._db.close)
        finally:
            self._executor.shutdown(wait=False)


def _decode(codec: Codec[T], raw: bytes) -> T | None:
    try:
        return codec.decode(raw)
    except ValueError:  # written by another version: as good as absent
        return None


def _connect(path: Path, *, busy_timeout: float, max_entries: int, sweep_every: float) -> Db:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        # the file may hold users' questions: readable by the bot's user only (SQLite gives
        # its -wal and -shm files the same mode)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    return Db.connect(
        str(path), busy_timeout=busy_timeout, max_entries=max_entries, sweep_every=sweep_every
    )


def _explain(path: Path, exc: Exception, busy_timeout: float) -> str:
    """One line for the operator: what is wrong with the file and what to do."""
    detail = _one_line(exc)
    if isinstance(exc, NewerSchema):
        return (
            f"STATE_URL: {path} was written by a newer gdocs-bot ({exc}; this one reads schema"
            f" {SCHEMA_VERSION}): run that version, or point STATE_URL at another file"
        )
    if "not a database" in detail or "malformed" in detail:
        return (
            f"STATE_URL: {path} is not a usable SQLite database ({detail}): move the file away"
            " (a new one is created) or point STATE_URL at another file"
        )
    if "locked" in detail or "busy" in detail:
        return (
            f"STATE_URL: {path} stayed locked by another process for {busy_timeout:g} s:"
            " stop whatever holds it, or point STATE_URL at another file"
        )
    return (
        f"STATE_URL: cannot write {path} ({detail}): make its directory writable by this user,"
        " or point STATE_URL at a writable path"
    )


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]
