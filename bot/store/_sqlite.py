"""`sqlite:///…`: the default store, an SQLite file that outlives restarts.

Three connections, each used by one thread only: ONE writer (`_sqlite_writer.Writer`, a
thread of its own) that commits the writes of every question in flight together (group
commit: one transaction, one COMMIT, each caller resumed once its write is on disk), a
reader for scans (in a worker thread), and one for reads by key on the event loop's thread
(an indexed SELECT costs less than a thread hand-off). Reads never queue behind writes (WAL:
readers and the writer do not wait for each other, and `gdocs-bot` CLI commands read the
file while the bot writes); the loop never waits for a COMMIT or a scan. Values are kept as
the bytes of their codec; a value that no longer decodes (written by another version) reads
as absent. Every row has an expiry and every namespace a size bound (`max_entries`): past it
the least recently used rows go. Expired rows read as absent at once and are deleted by a
sweep that runs with the writes, at most every `sweep_every` seconds.
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
from typing import Any, ParamSpec, TypeVar

from bot.store._api import Codec, StoreConfigError, StoreError, T
from bot.store._memory import Clock
from bot.store._ops import Op, check
from bot.store._sqlite_db import Db, EncodedOp, NewerSchema
from bot.store._sqlite_schema import SCHEMA_VERSION
from bot.store._sqlite_writer import Writer

P = ParamSpec("P")
R = TypeVar("R")


class SqliteStore:
    kind = "sqlite"

    def __init__(
        self,
        reader: Db,
        writer: Writer,
        executor: ThreadPoolExecutor,
        *,
        path: Path,
        clock: Clock,
        point: Db | None = None,
    ) -> None:
        self._reader = reader
        #: key lookups, run on the event loop's own thread (see `_lookup`)
        self._point = point if point is not None else reader
        self._writer = writer
        self._executor = executor
        self._clock = clock
        self.path = path

    @property
    def writer(self) -> Writer:
        """The one writer (its `groups` and `jobs` say how well writes were grouped)."""
        return self._writer

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
            # the writer's connection first (it creates the schema); it is handed to the
            # writer's thread and used by that thread alone
            written = await loop.run_in_executor(executor, functools.partial(connect, shared=True))
            try:
                reader = await loop.run_in_executor(executor, connect)
                # opened here, used by the event loop's thread alone
                point = await loop.run_in_executor(
                    executor, functools.partial(connect, shared=True)
                )
            except BaseException:
                written.close()
                raise
        except (sqlite3.Error, OSError, NewerSchema) as exc:
            executor.shutdown(wait=False)
            raise StoreConfigError(_explain(where, exc, busy_timeout)) from None
        reader.share_touches(written)
        point.share_touches(written)
        writer = Writer(written, clock)
        return cls(reader, writer, executor, path=where, clock=clock, point=point)

    async def _read(self, op: str, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._executor, functools.partial(call, *args, **kwargs)
            )
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite {op} failed: {_one_line(exc)}") from None
        except RuntimeError as exc:  # the executor is shut down
            raise StoreError(f"sqlite {op} failed: the store is closed ({exc})") from None

    def _lookup(self, op: str, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """A read by key, on the loop's thread: one indexed SELECT in WAL mode (it never waits
        for the writer) costs less than handing it to a thread and waking up for its result
        (about a tenth, measured)."""
        try:
            return call(*args, **kwargs)
        except sqlite3.Error as exc:  # a closed store too (ProgrammingError)
            raise StoreError(f"sqlite {op} failed: {_one_line(exc)}") from None

    async def _write(self, op: str, job: Callable[[Db], Any]) -> Any:
        """`job` in the writer's next group; returns once it is committed."""
        try:
            return await self._writer.submit(job)
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite {op} failed: {_one_line(exc)}") from None
        except RuntimeError as exc:  # the writer is closed
            raise StoreError(f"sqlite {op} failed: the store is closed ({exc})") from None

    # --- Store ---------------------------------------------------------------------------
    async def get(self, key: str, codec: Codec[T]) -> T | None:
        raw = self._lookup("get", self._point.get, key, self._clock())
        return None if raw is None else _decode(codec, raw)

    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        found = self._lookup("get_many", self._point.get_many, list(keys), self._clock())
        return [None if key not in found else _decode(codec, found[key]) for key in keys]

    async def set(self, key: str, value: T, codec: Codec[T], ttl: float) -> None:
        now, raw = self._clock(), codec.encode(value)
        await self._write("set", lambda db: db.set(key, raw, now + ttl, now))

    async def add(self, key: str, value: T, codec: Codec[T], ttl: float) -> bool:
        now, raw = self._clock(), codec.encode(value)
        return bool(await self._write("add", lambda db: db.add(key, raw, now + ttl, now)))

    async def replace(self, key: str, expected: T, value: T, codec: Codec[T], ttl: float) -> bool:
        now = self._clock()
        old, new = codec.encode(expected), codec.encode(value)
        done = await self._write("replace", lambda db: db.replace(key, old, new, now + ttl, now))
        return bool(done)

    async def delete(self, key: str) -> None:
        await self._write("delete", lambda db: db.delete(key))

    async def delete_if(self, key: str, expected: T, codec: Codec[T]) -> bool:
        now, old = self._clock(), codec.encode(expected)
        return bool(await self._write("delete_if", lambda db: db.delete_if(key, old, now)))

    async def incr(self, key: str, amount: int, ttl: float) -> int:
        now = self._clock()
        return int(await self._write("incr", lambda db: db.incr(key, amount, now + ttl, now)))

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        found: float | None = await self._write(
            "hit", lambda db: db.hit(key, limit, window, now, self._clock())
        )
        return found

    async def unhit(self, key: str, at: float) -> bool:
        return bool(await self._write("unhit", lambda db: db.unhit(key, at)))

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        return self._lookup("window_events", self._point.window_events, key, window, now)

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        decode = functools.partial(_decode, codec)
        return await self._read("scan", self._reader.scan, prefix, self._clock(), limit, decode)

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        check(ops)
        encoded = [_encode(op) for op in ops]
        now = self._clock()
        results: list[object] = await self._write("batch", lambda db: db.batch(encoded, now))
        return results

    async def sweep(self) -> None:
        """Delete expired rows now (they already read as absent; this frees their space)."""
        now = self._clock()
        await self._write("sweep", lambda db: db.sweep(now))

    async def ping(self) -> None:
        await self._read("ping", self._reader.ping)

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._executor, self._writer.close)
            await self._read("close", self._reader.close)
            if self._point is not self._reader:
                self._point.close()
        finally:
            self._executor.shutdown(wait=False)


def _encode(op: Op) -> EncodedOp:
    value, expected = op.encoded()
    return EncodedOp(op.kind, op.key, value, expected, op.ttl, op.amount, op.only_if)


def _decode(codec: Codec[T], raw: bytes) -> T | None:
    try:
        return codec.decode(raw)
    except ValueError:  # written by another version: as good as absent
        return None


def _connect(
    path: Path, *, busy_timeout: float, max_entries: int, sweep_every: float, shared: bool = False
) -> Db:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        # the file may hold users' questions: readable by the bot's user only (SQLite gives
        # its -wal and -shm files the same mode)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    return Db.connect(
        str(path),
        busy_timeout=busy_timeout,
        max_entries=max_entries,
        sweep_every=sweep_every,
        check_same_thread=not shared,
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
