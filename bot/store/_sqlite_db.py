"""The synchronous half of the SQLite backend: one connection, used from one thread only.

Rows carry their expiry (`expires`, seconds since the epoch) and a per-namespace use counter
(`touched`) that orders them for eviction. Triggers keep a row count per namespace in
`sizes`, so the size bound costs one lookup per write instead of a count. Every statement
that reads and then writes runs inside BEGIN IMMEDIATE, so another process on the same file
(a second bot, the CLI) cannot interleave with it.
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

# the next value of the use counter in a namespace (an index lookup on (ns, touched))
_NEXT_TOUCH = "(SELECT COALESCE(MAX(touched), 0) + 1 FROM {tbl} WHERE ns = :ns)"

# an upsert, never INSERT OR REPLACE: REPLACE deletes without firing the delete trigger
_PUT_ENTRY = f"""
INSERT INTO entries (key, ns, value, expires, touched)
VALUES (:key, :ns, :value, :expires, {_NEXT_TOUCH.format(tbl="entries")})
ON CONFLICT (key) DO UPDATE SET
    value = excluded.value, expires = excluded.expires, touched = excluded.touched
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


class Db:
    """The store's statements on one connection. `now` is the store clock, passed in."""

    def __init__(self, conn: sqlite3.Connection, *, max_entries: int, sweep_every: float) -> None:
        self._conn = conn
        self._max = max_entries
        self._sweep_every = sweep_every
        self._next_sweep = 0.0
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
        """`check_same_thread=False` for the writer's connection, opened in one thread and
        then used by the writer's thread alone."""
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

    def close(self) -> None:
        self._conn.close()

    def ping(self) -> None:
        """Read the file (an unreadable or vanished file raises)."""
        self._conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()

    def write(self, jobs: Sequence[Callable[[Db], object]], now: float) -> list[object]:
        """Run writes together in ONE transaction (group commit): each job in a savepoint of
        its own, so a failing job (its result is the exception) leaves the others applied.
        The write lock is taken before anything is read; one COMMIT makes all of them
        durable (or, when it fails, none: every result is then the error)."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        results: list[object] = []
        try:
            self._record_touches(conn)
            self._sweep_if_due(conn, now)
            for job in jobs:
                conn.execute("SAVEPOINT job")
                try:
                    results.append(job(self))
                except sqlite3.Error as exc:
                    conn.execute("ROLLBACK TO job")
                    results.append(exc)
                conn.execute("RELEASE job")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.rollback()
            return [exc for _ in jobs]
        return results

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
        self._conn.execute(_PUT_ENTRY, _row(key, raw, expires))
        self._evict(self._conn, "entries", namespace(key))

    def add(self, key: str, raw: bytes, expires: float, now: float) -> bool:
        cursor = self._conn.execute(
            _PUT_ENTRY + " WHERE entries.expires <= :now",
            {**_row(key, raw, expires), "now": now},
        )
        self._evict(self._conn, "entries", namespace(key))
        return cursor.rowcount == 1

    def replace(self, key: str, expected: bytes, raw: bytes, expires: float, now: float) -> bool:
        cursor = self._conn.execute(
            "UPDATE entries SET value = :value, expires = :expires,"
            f" touched = {_NEXT_TOUCH.format(tbl='entries')}"
            " WHERE key = :key AND value = :expected AND expires > :now",
            {**_row(key, raw, expires), "expected": expected, "now": now},
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
        conn.execute(_PUT_ENTRY, _row(key, str(value).encode(), expires))
        self._evict(conn, "entries", namespace(key))
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
        conn.execute(
            "INSERT INTO windows (key, ns, events, expires, touched)"
            f" VALUES (:key, :ns, :events, :expires, {_NEXT_TOUCH.format(tbl='windows')})"
            " ON CONFLICT (key) DO UPDATE SET events = excluded.events,"
            " expires = excluded.expires, touched = excluded.touched",
            {
                "key": key,
                "ns": namespace(key),
                "events": json.dumps(events),
                "expires": events[-1] + window,
            },
        )
        self._evict(conn, "windows", namespace(key))
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

    def _record_touches(self, conn: sqlite3.Connection) -> None:
        """Give the keys read since the last write their place in the use order."""
        with self._touch_lock:
            keys = list(self._touched)
            self._touched.clear()
        if not keys:
            return
        conn.executemany(
            f"UPDATE entries SET touched = {_NEXT_TOUCH.format(tbl='entries')} WHERE key = :key",
            [{"key": key, "ns": namespace(key)} for key in keys],
        )

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


def _row(key: str, raw: bytes, expires: float) -> dict[str, object]:
    return {"key": key, "ns": namespace(key), "value": raw, "expires": expires}


def _as_int(raw: bytes) -> int | None:
    """The counter in `raw`, or None when it holds something else (then it starts afresh)."""
    return int(raw) if _INTEGER.fullmatch(raw) else None
