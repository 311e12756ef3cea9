"""The synchronous half of the SQLite backend: one connection, used from one thread only.

Rows carry their expiry (`expires`, seconds since the epoch) and a use stamp (`touched`)
that orders them for eviction: the store clock in microseconds, bumped to stay increasing on
this connection (so several processes on one file order roughly by time, and a file whose
stamps are the older per-namespace counters reads the same). Triggers keep a row count per
namespace in `sizes`, so the size bound costs one lookup per namespace written in a group
(checked after its jobs) instead of a count. Every statement that reads and then writes runs
inside BEGIN IMMEDIATE, so another process on the same file (a second bot, the CLI) cannot
interleave with it.
"""

from __future__ import annotations

import bisect
import json
import re
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from bot.store._api import namespace
from bot.store._sqlite_schema import SCHEMA, SCHEMA_VERSION

V = TypeVar("V")

_INTEGER = re.compile(rb"-?[0-9]{1,18}")

# a sweep deletes at most this many expired rows per table at a time, so it stays short
_SWEEP_BATCH = 500
# SQLite's limit on bound parameters is far higher; this keeps statements small
_KEYS_PER_STATEMENT = 200
# reads remembered for the use order until the next write; older ones are forgotten
_MAX_PENDING_TOUCHES = 1000

# an upsert, never INSERT OR REPLACE: REPLACE deletes without firing the delete trigger
_PUT_ENTRY = """
INSERT INTO entries (key, ns, value, expires, touched) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET
    value = excluded.value, expires = excluded.expires, touched = excluded.touched
"""
_PUT_WINDOW = """
INSERT INTO windows (key, ns, events, expires, touched) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET
    events = excluded.events, expires = excluded.expires, touched = excluded.touched
"""


@dataclass(frozen=True)
class EncodedOp:
    """A batch operation with its values as bytes (see `bot.store._ops.Op`)."""

    kind: str
    key: str
    value: bytes = b""
    expected: bytes = b""
    ttl: float = 0.0
    amount: int = 0
    only_if: int | None = None


class NewerSchema(Exception):
    """The file was written by a newer version of the bot."""

    def __init__(self, found: str) -> None:
        super().__init__(f"schema {found}")
        self.found = found


class Busy(sqlite3.OperationalError):
    """Another connection held the file's write lock (at once, on a connection that does not
    wait for it; or for longer than the busy timeout): nothing of the group was applied."""


def is_busy(exc: sqlite3.Error) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED: the lock is another connection's, for now."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    text = str(exc)
    return "locked" in text or "busy" in text


class Stamps:
    """The use stamps of one store: increasing, close to the store clock in microseconds.
    Shared by the store's writing connections; only used inside a write transaction, and
    SQLite lets one transaction write at a time, so they never race."""

    def __init__(self, last: int) -> None:
        self.last = last

    def next(self, now: float) -> int:
        stamp = int(now * 1_000_000)
        self.last = stamp = stamp if stamp > self.last else self.last + 1
        return stamp


class Db:
    """The store's statements on one connection. `now` is the store clock, passed in."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        max_entries: int,
        sweep_every: float,
        stamps: Stamps | None = None,
    ) -> None:
        self._conn = conn
        self._max = max_entries
        self._sweep_every = sweep_every
        self._next_sweep = 0.0
        self.stamps = stamps if stamps is not None else Stamps(0)
        #: (table, namespace) written in the current group: their size bound is checked once,
        #: after the group's jobs
        self._dirty: dict[tuple[str, str], None] = {}
        #: keys read since the last write, oldest first: reads stay pure SELECTs (in WAL mode
        #: they never wait for a writer) and the next write transaction records their use
        self._touched: dict[str, None] = {}
        self._touch_lock = threading.Lock()

    @classmethod
    def connect(
        cls,
        path: str,
        *,
        busy_timeout: float,
        max_entries: int,
        sweep_every: float,
        check_same_thread: bool = True,
    ) -> Db:
        """`check_same_thread=False` for a connection opened in one thread and then used by
        another thread alone."""
        conn = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=check_same_thread
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            # WAL: readers (the CLI) never wait for the writer, nor it for them
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            # NORMAL in WAL mode: a power cut may lose the last commits, never corrupt the file
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(SCHEMA)
            (found,) = conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            if found != str(SCHEMA_VERSION):
                raise NewerSchema(found)
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            conn.close()
            raise
        return cls(conn, max_entries=max_entries, sweep_every=sweep_every)

    def seed_stamps(self) -> None:
        """Start the use stamps after the newest in the file (one indexed lookup per
        namespace), so a clock behind the file's stamps still orders new uses last."""
        row = self._conn.execute(
            "SELECT max(COALESCE((SELECT max((SELECT max(touched) FROM entries"
            " WHERE entries.ns = sizes.ns)) FROM sizes WHERE tbl = 'entries'), 0),"
            " COALESCE((SELECT max((SELECT max(touched) FROM windows"
            " WHERE windows.ns = sizes.ns)) FROM sizes WHERE tbl = 'windows'), 0))"
        ).fetchone()
        self.stamps.last = max(self.stamps.last, int(row[0]))

    def never_wait(self) -> None:
        """For the event loop's connection: a lock another connection holds is an immediate
        SQLITE_BUSY (the group goes to a thread that may wait), and no COMMIT runs a
        checkpoint (they fsync; `Checkpointer` runs them in a thread of its own)."""
        self._conn.execute("PRAGMA busy_timeout = 0")
        self._conn.execute("PRAGMA wal_autocheckpoint = 0")

    def wait_at_most(self, seconds: float) -> None:
        """Wait this long, at most, for a lock another connection holds."""
        self._conn.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")

    def close(self) -> None:
        self._conn.close()

    def ping(self) -> None:
        """Read the file (an unreadable or vanished file raises)."""
        self._conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()

    def checkpoint(self, mode: str) -> tuple[int, int, int]:
        """`PRAGMA wal_checkpoint(mode)`: (busy, frames in the WAL, frames checkpointed)."""
        row = self._conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    def write(self, jobs: Sequence[Callable[[Db], object]], now: float) -> list[object]:
        """Run writes together in ONE transaction (group commit); a failing job (its result is
        the exception) leaves the others applied. The write lock is taken before anything is
        read; one COMMIT makes all of them durable (or, when it fails, none: every result is
        then the error). Busy when the lock is another connection's (nothing applied)."""
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            if is_busy(exc):
                raise Busy(str(exc)) from exc
            return [exc for _ in jobs]
        touched: list[str] = []
        next_sweep = self._next_sweep
        try:
            touched = self._record_touches(conn, now)
            self._sweep_if_due(conn, now)
            results = self._run(conn, jobs)
            if len(jobs) == 1 and isinstance(results[0], Exception):
                # a lone job failed: nothing to commit (the reads' use is recorded next time)
                conn.rollback()
                self._retouch(touched)
                self._next_sweep = next_sweep
                return results
            for table, ns in self._dirty:
                self._evict(conn, table, ns)
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.rollback()
            self._retouch(touched)
            self._next_sweep = next_sweep
            if not isinstance(exc, sqlite3.Error):
                raise
            if is_busy(exc):
                raise Busy(str(exc)) from exc
            return [exc for _ in jobs]
        finally:
            self._dirty.clear()
        return results

    def _run(
        self, conn: sqlite3.Connection, jobs: Sequence[Callable[[Db], object]]
    ) -> list[object]:
        """Each job's result (a failing job's is its error). A lone job runs bare (the caller
        rolls back when it failed). Several run under ONE savepoint; only when one raises are
        they run again each in a savepoint of its own, so the failing one is undone alone
        (and the others see the state they would have seen)."""
        if len(jobs) == 1:
            return [_outcome(jobs[0], self)]
        conn.execute("SAVEPOINT jobs")
        try:
            results = [job(self) for job in jobs]
        # a job's error (a bug in it too) is its caller's: the group runs again, isolated
        except Exception:  # noqa: BLE001
            conn.execute("ROLLBACK TO jobs")
            conn.execute("RELEASE jobs")
            return [self._isolated(conn, job) for job in jobs]
        conn.execute("RELEASE jobs")
        return results

    def _isolated(self, conn: sqlite3.Connection, job: Callable[[Db], object]) -> object:
        """`job`'s result, or its error with its writes undone."""
        conn.execute("SAVEPOINT job")
        result = _outcome(job, self)
        if isinstance(result, Exception):
            conn.execute("ROLLBACK TO job")
        conn.execute("RELEASE job")
        return result

    # --- entries -------------------------------------------------------------------------
    def get(self, key: str, now: float) -> bytes | None:
        row = self._conn.execute(
            "SELECT value FROM entries WHERE key = ? AND expires > ?", (key, now)
        ).fetchone()
        if row is None:
            return None
        self._touch(key)
        return bytes(row[0])

    def get_many(self, keys: Sequence[str], now: float) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for start in range(0, len(keys), _KEYS_PER_STATEMENT):
            chunk = keys[start : start + _KEYS_PER_STATEMENT]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT key, value FROM entries WHERE key IN ({marks}) AND expires > ?",
                (*chunk, now),
            ).fetchall()
            found.update((key, bytes(value)) for key, value in rows)
        for key in keys:
            if key in found:
                self._touch(key)
        return found

    # the writes below run inside `write`'s transaction
    def set(self, key: str, raw: bytes, expires: float, now: float) -> None:
        ns = namespace(key)
        self._conn.execute(_PUT_ENTRY, (key, ns, raw, expires, self.stamps.next(now)))
        self._dirty[("entries", ns)] = None

    def add(self, key: str, raw: bytes, expires: float, now: float) -> bool:
        ns = namespace(key)
        cursor = self._conn.execute(
            _PUT_ENTRY + " WHERE entries.expires <= ?",
            (key, ns, raw, expires, self.stamps.next(now), now),
        )
        self._dirty[("entries", ns)] = None
        return cursor.rowcount == 1

    def replace(self, key: str, expected: bytes, raw: bytes, expires: float, now: float) -> bool:
        cursor = self._conn.execute(
            "UPDATE entries SET value = ?, expires = ?, touched = ?"
            " WHERE key = ? AND value = ? AND expires > ?",
            (raw, expires, self.stamps.next(now), key, expected, now),
        )
        return cursor.rowcount == 1

    def delete(self, key: str) -> None:
        self._conn.execute("DELETE FROM entries WHERE key = ?", (key,))
        self._conn.execute("DELETE FROM windows WHERE key = ?", (key,))

    def delete_if(self, key: str, expected: bytes, now: float) -> bool:
        cursor = self._conn.execute(
            "DELETE FROM entries WHERE key = ? AND value = ? AND expires > ?",
            (key, expected, now),
        )
        return cursor.rowcount == 1

    def incr(self, key: str, amount: int, expires: float, now: float) -> int:
        conn = self._conn
        row = conn.execute(
            "SELECT value, expires FROM entries WHERE key = ? AND expires > ?", (key, now)
        ).fetchone()
        current = None if row is None else _as_int(bytes(row[0]))
        if current is not None:  # an existing counter keeps its expiry
            value, expires = current + amount, row[1]
        else:
            value = amount
        ns = namespace(key)
        conn.execute(_PUT_ENTRY, (key, ns, str(value).encode(), expires, self.stamps.next(now)))
        self._dirty[("entries", ns)] = None
        return value

    def batch(self, ops: Sequence[EncodedOp], now: float) -> list[object]:
        """A `Store.batch`, inside the caller's transaction; all or none (a savepoint)."""
        results: list[object] = []
        for op in ops:
            if op.only_if is not None and results[op.only_if] is not True:
                results.append(
                    0 if op.kind == "incr" else (None if op.kind in ("set", "delete") else False)
                )
                continue
            results.append(self._apply(op, now))
        return results

    def _apply(self, op: EncodedOp, now: float) -> object:
        expires = now + op.ttl
        if op.kind == "set":
            self.set(op.key, op.value, expires, now)
            return None
        if op.kind == "add":
            return self.add(op.key, op.value, expires, now)
        if op.kind == "replace":
            return self.replace(op.key, op.expected, op.value, expires, now)
        if op.kind == "delete":
            self.delete(op.key)
            return None
        if op.kind == "delete_if":
            return self.delete_if(op.key, op.expected, now)
        return self.incr(op.key, op.amount, expires, now)

    def scan(
        self, prefix: str, now: float, limit: int, decode: Callable[[bytes], V | None]
    ) -> list[tuple[str, V]]:
        found: list[tuple[str, V]] = []
        rows = self._conn.execute(
            "SELECT key, value FROM entries WHERE key >= ? AND expires > ? ORDER BY key",
            (prefix, now),
        )
        for key, raw in rows:
            if len(found) >= limit or not key.startswith(prefix):
                break
            value = decode(bytes(raw))
            if value is not None:
                found.append((key, value))
        rows.close()
        return found

    # --- sliding windows -------------------------------------------------------------------
    def hit(self, key: str, limit: int, window: float, at: float, now: float) -> float | None:
        conn = self._conn
        events = self._events(conn, key, window, at)
        if len(events) >= limit:
            return max(0.0, events[0] + window - at) if events else window
        bisect.insort(events, at)
        ns = namespace(key)
        conn.execute(
            _PUT_WINDOW,
            (key, ns, json.dumps(events), events[-1] + window, self.stamps.next(now)),
        )
        self._dirty[("windows", ns)] = None
        return None

    def unhit(self, key: str, at: float) -> bool:
        row = self._conn.execute("SELECT events FROM windows WHERE key = ?", (key,)).fetchone()
        if row is None:
            return False
        try:
            events = [float(t) for t in json.loads(row[0])]
        except (ValueError, TypeError):
            return False
        if at not in events:
            return False
        events.remove(at)
        self._conn.execute(
            "UPDATE windows SET events = ? WHERE key = ?", (json.dumps(sorted(events)), key)
        )
        return True

    def window_events(self, key: str, window: float, at: float) -> list[float]:
        return self._events(self._conn, key, window, at)

    @staticmethod
    def _events(conn: sqlite3.Connection, key: str, window: float, at: float) -> list[float]:
        row = conn.execute("SELECT events FROM windows WHERE key = ?", (key,)).fetchone()
        if row is None:
            return []
        try:
            events = [float(t) for t in json.loads(row[0])]
        except (ValueError, TypeError):
            return []
        return sorted(t for t in events if t > at - window)

    # --- bounds and retention -------------------------------------------------------------
    def _touch(self, key: str) -> None:
        with self._touch_lock:  # the reader's thread adds, the writer's takes
            self._touched.pop(key, None)
            self._touched[key] = None
            if len(self._touched) > _MAX_PENDING_TOUCHES:  # forget the oldest reads
                del self._touched[next(iter(self._touched))]

    def share_touches(self, writer: Db) -> None:
        """Reads on this connection are recorded by `writer`'s next transaction."""
        self._touched = writer._touched
        self._touch_lock = writer._touch_lock
        self.stamps = writer.stamps

    def _record_touches(self, conn: sqlite3.Connection, now: float) -> list[str]:
        """Give the keys read since the last write their place in the use order (returned, to
        be given back when the transaction is rolled back)."""
        with self._touch_lock:
            keys = list(self._touched)
            self._touched.clear()
        if keys:
            stamps = self.stamps
            conn.executemany(
                "UPDATE entries SET touched = ? WHERE key = ?",
                [(stamps.next(now), key) for key in keys],
            )
        return keys

    def _retouch(self, keys: list[str]) -> None:
        """Keys whose use a rolled-back transaction did not record: before any read since."""
        if keys:
            with self._touch_lock:
                later = list(self._touched)
                self._touched.clear()
                self._touched.update(dict.fromkeys([*keys, *later]))

    def _evict(self, conn: sqlite3.Connection, table: str, ns: str) -> None:
        """Past `max_entries` rows in `ns`, drop the least recently touched ones."""
        row = conn.execute("SELECT n FROM sizes WHERE tbl = ? AND ns = ?", (table, ns)).fetchone()
        excess = 0 if row is None else row[0] - self._max
        if excess > 0:
            conn.execute(
                f"DELETE FROM {table} WHERE key IN"
                f" (SELECT key FROM {table} WHERE ns = ? ORDER BY touched LIMIT ?)",
                (ns, excess),
            )

    def _sweep_if_due(self, conn: sqlite3.Connection, now: float) -> None:
        if now < self._next_sweep:
            return
        full = False
        for table in ("entries", "windows"):
            cursor = conn.execute(
                f"DELETE FROM {table} WHERE key IN"
                f" (SELECT key FROM {table} WHERE expires <= ? LIMIT {_SWEEP_BATCH})",
                (now,),
            )
            full = full or cursor.rowcount >= _SWEEP_BATCH
        # a full batch means more are waiting: sweep again on the next write
        self._next_sweep = now if full else now + self._sweep_every

    def sweep(self, now: float) -> None:
        """Drop expired rows now (one batch per table), in a job of `write`."""
        self._next_sweep = 0.0
        self._sweep_if_due(self._conn, now)


def _outcome(job: Callable[[Db], object], db: Db) -> object:
    """`job(db)`, or the error it raised (a lock that is another connection's raises on)."""
    try:
        return job(db)
    except sqlite3.Error as exc:
        if is_busy(exc):
            raise
        return exc
    # a bug in a job fails its caller, not the others in its group nor the writer
    except Exception as exc:  # noqa: BLE001
        return exc


def _as_int(raw: bytes) -> int | None:
    """The counter in `raw`, or None when it holds something else (then it starts afresh)."""
    return int(raw) if _INTEGER.fullmatch(raw) else None
