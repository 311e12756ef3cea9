"""`sqlite:///…`: the default store, an SQLite file that outlives restarts.

Four connections, each used by one thread only. The event loop's own connection reads by key
(an indexed SELECT costs less than a thread hand-off) and commits the writes of every
question in flight together (`_sqlite_loop.LoopWriter`: one transaction per loop iteration,
each caller resumed once its write is in the file); it never waits for a lock (busy timeout
0): a group that finds the file locked by another process goes to a fallback writer thread
(`_sqlite_writer.Writer`) that waits for it, and a read that finds it so goes to the reader.
A reader in a worker thread serves scans; a checkpointer thread (`_sqlite_checkpoint`) runs
the WAL's checkpoints (they fsync), so COMMITs on the loop never do. Reads never queue behind
writes (WAL: readers and writers do not wait for each other, and `gdocs-bot` CLI commands
read the file while the bot writes); the loop never waits for a scan. Values are kept as
the bytes of their codec; a value that no longer decodes (written by another version) reads
as absent. Every row has an expiry and every namespace a size bound (`max_entries`): past it
the least recently used rows go. Expired rows read as absent at once and are deleted by a
sweep that a write starts, at most every `sweep_every` seconds: the reader's thread finds
them, and a write job of the loop's next group deletes them (nothing waits for it).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
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
from bot.store._sqlite_checkpoint import Checkpointer
from bot.store._sqlite_db import Db, EncodedOp
from bot.store._sqlite_group import SWEEP_BATCH, is_busy
from bot.store._sqlite_loop import LoopWriter
from bot.store._sqlite_schema import SCHEMA_VERSION, NewerSchema
from bot.store._sqlite_writer import Writer
from bot.store._urgency import is_urgent

#: how long a TRUNCATE checkpoint waits for readers (it holds writers off meanwhile)
_CHECKPOINT_BUSY_TIMEOUT = 0.2

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


class SqliteStore:
    kind = "sqlite"

    def __init__(
        self,
        reader: Db,
        point: Db,
        writer: LoopWriter,
        executor: ThreadPoolExecutor,
        *,
        path: Path,
        clock: Clock,
        sweep_every: float,
    ) -> None:
        self._reader = reader
        #: key lookups and group commits, on the event loop's own thread (see `_key_read`)
        self._point = point
        self._writer = writer
        self._executor = executor
        self._clock = clock
        self.path = path
        self._sweep_every = sweep_every
        self._next_sweep = 0.0
        #: the sweep a write started, while it runs
        self._sweeping: asyncio.Task[None] | None = None

    @property
    def writer(self) -> LoopWriter:
        """The loop's writer (`groups`, `jobs` and `handoffs` say how writes were grouped and
        how often the file was locked; `fallback` and `checkpointer` have counts of theirs)."""
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
            _connect, where, busy_timeout=busy_timeout, max_entries=max_entries
        )
        try:
            # the fallback writer's connection first (it creates the schema); it is handed to
            # the writer's thread and used by that thread alone
            written = await loop.run_in_executor(executor, functools.partial(connect, shared=True))
            try:
                await loop.run_in_executor(executor, written.seed_stamps)
                reader = await loop.run_in_executor(executor, connect)
                # opened here, used by the event loop's thread alone
                point = await loop.run_in_executor(
                    executor, functools.partial(connect, shared=True)
                )
                await loop.run_in_executor(executor, point.never_wait)
                for seldom in (written, reader):
                    await loop.run_in_executor(executor, seldom.small_cache)
                # opened here, used by the checkpointer's thread alone
                ckpt = await loop.run_in_executor(executor, functools.partial(connect, shared=True))
                await loop.run_in_executor(
                    executor, ckpt.wait_at_most, min(busy_timeout, _CHECKPOINT_BUSY_TIMEOUT)
                )
                await loop.run_in_executor(executor, ckpt.small_cache)
            except BaseException:
                written.close()
                raise
        except (sqlite3.Error, OSError, NewerSchema) as exc:
            executor.shutdown(wait=False)
            raise StoreConfigError(_explain(where, exc, busy_timeout)) from None
        reader.share_touches(written)
        point.share_touches(written)
        checkpointer = Checkpointer(ckpt, where.with_name(where.name + "-wal"))
        writer = LoopWriter(point, Writer(written, clock), checkpointer, clock, loop)
        return cls(
            reader, point, writer, executor, path=where, clock=clock, sweep_every=sweep_every
        )

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

    async def _key_read(self, op: str, call: Callable[..., R], *args: Any) -> R:
        """`call(db, *args)`, a read by key, on the loop's connection: one indexed SELECT in
        WAL mode costs less than handing it to a thread and waking up for its result (about
        a tenth, measured). That connection never waits for a lock: in the rare case a read
        would (another process recovering the WAL), the reader's thread does it instead."""
        try:
            return call(self._point, *args)
        except sqlite3.Error as exc:  # a closed store too (ProgrammingError)
            if not is_busy(exc):
                raise StoreError(f"sqlite {op} failed: {_one_line(exc)}") from None
        return await self._read(op, call, self._reader, *args)

    async def _write(self, op: str, job: Callable[[Db], Any]) -> Any:
        """`job` in the writer's next group; returns once it is committed."""
        if self._sweeping is None and self._clock() >= self._next_sweep:
            self._start_sweep()
        try:
            return await self._writer.submit(job, at_once=is_urgent())
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite {op} failed: {_one_line(exc)}") from None
        except RuntimeError as exc:  # the writer is closed
            raise StoreError(f"sqlite {op} failed: the store is closed ({exc})") from None

    # --- Store ---------------------------------------------------------------------------
    async def get(self, key: str, codec: Codec[T]) -> T | None:
        raw = await self._key_read("get", Db.get, key, self._clock())
        return None if raw is None else _decode(codec, raw)

    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        found = await self._key_read("get_many", Db.get_many, list(keys), self._clock())
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
        return await self._key_read("window_events", Db.window_events, key, window, now)

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
        """Delete expired rows now, one batch per table (they already read as absent; this
        frees their space)."""
        await self._sweep(self._clock())

    @property
    def sweeping(self) -> asyncio.Task[None] | None:
        """The sweep a write started, while it runs."""
        return self._sweeping

    async def _sweep(self, now: float) -> bool:
        """True when a batch was full (more rows are waiting)."""
        found = await self._read("sweep", self._reader.expired, now)
        if any(found.values()):
            await self._write("sweep", lambda db: db.delete_expired(found, now))
        return any(len(keys) >= SWEEP_BATCH for keys in found.values())

    def _start_sweep(self) -> None:
        now = self._clock()
        self._next_sweep = now + self._sweep_every
        self._sweeping = asyncio.get_running_loop().create_task(self._sweep_in_background(now))

    async def _sweep_in_background(self, now: float) -> None:
        try:
            if await self._sweep(now):
                self._next_sweep = now  # more are waiting: the next write sweeps again
        except StoreError as exc:  # the store closed meanwhile, or a fault
            logger.warning("the SQLite store's sweep of expired rows failed: %s", _one_line(exc))
        finally:
            self._sweeping = None

    async def ping(self) -> None:
        await self._read("ping", self._reader.ping)

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        if self._sweeping is not None:  # short: one read, one write job
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeping
        try:
            self._writer.close()  # what is queued is committed now
            await loop.run_in_executor(self._executor, self._writer.fallback.close)
            await self._read("close", self._reader.close)
            self._point.close()
            # last: a checkpoint that empties the WAL, then its connection closes
            await loop.run_in_executor(self._executor, self._writer.checkpointer.close)
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


def _connect(path: Path, *, busy_timeout: float, max_entries: int, shared: bool = False) -> Db:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        # the file may hold users' questions: readable by the bot's user only (SQLite gives
        # its -wal and -shm files the same mode)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    return Db.connect(
        str(path),
        busy_timeout=busy_timeout,
        max_entries=max_entries,
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
