"""The synchronous half of the SQLite backend: one connection, used from one thread only.

Rows carry their expiry (`expires`, seconds since the epoch) and a use stamp (`touched`)
that orders them for eviction: the store clock in microseconds, bumped to stay increasing
(so several processes on one file order roughly by time, and a file whose stamps are the
older per-namespace counters reads the same; see `_sqlite_group`, which keeps the size bound
and the sweep). Every statement that reads and then writes runs
inside BEGIN IMMEDIATE, so another process on the same file (a second bot, the CLI) cannot
interleave with it.
"""

from __future__ import annotations

import bisect
import json
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from bot.store._api import namespace
from bot.store._sqlite_group import GroupCommit
from bot.store._sqlite_schema import prepare

V = TypeVar("V")

_INTEGER = re.compile(rb"-?[0-9]{1,18}")

#: bytes the WAL file is cut back to when it starts over (PRAGMA journal_size_limit)
JOURNAL_SIZE_LIMIT = 4 << 20
#: the page cache of the connections that seldom read, in KiB (SQLite's default: 2000)
_SMALL_CACHE_KIB = 256
# SQLite's limit on bound parameters is far higher; this keeps statements small
_KEYS_PER_STATEMENT = 200

# an upsert, not INSERT OR REPLACE (a delete and an insert: twice the index work)
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


class Db(GroupCommit):
    """The store's statements on one connection. `now` is the store clock, passed in."""

    @classmethod
    def connect(
        cls,
        path: str,
        *,
        busy_timeout: float,
        max_entries: int,
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
            # when a writer starts the WAL over, its file is cut back to this size: the file
            # stays bounded without a TRUNCATE checkpoint, which would hold writers off
            conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
            prepare(conn)
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            conn.close()
            raise
        return cls(conn, max_entries=max_entries)

    def never_wait(self) -> None:
        """For the event loop's connection: a lock another connection holds is an immediate
        SQLITE_BUSY (the group goes to a thread that may wait), and no COMMIT runs a
        checkpoint (they fsync; `Checkpointer` runs them in a thread of its own)."""
        self._conn.execute("PRAGMA busy_timeout = 0")
        self._conn.execute("PRAGMA wal_autocheckpoint = 0")

    def small_cache(self) -> None:
        """For the connections that seldom read (the reader's scans, the checkpointer, the
        fallback writer): a page cache of 256 KiB instead of SQLite's 2 MiB, which each
        connection fills as it reads (the OS keeps the file's pages cached anyway)."""
        self._conn.execute(f"PRAGMA cache_size = -{_SMALL_CACHE_KIB}")

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
        self._wrote("entries", ns)

    def add(self, key: str, raw: bytes, expires: float, now: float) -> bool:
        ns = namespace(key)
        cursor = self._conn.execute(
            _PUT_ENTRY + " WHERE entries.expires <= ?",
            (key, ns, raw, expires, self.stamps.next(now), now),
        )
        if cursor.rowcount == 1:
            self._wrote("entries", ns)
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
        self._wrote("entries", ns)
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
        self._wrote("windows", ns)
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


def _as_int(raw: bytes) -> int | None:
    """The counter in `raw`, or None when it holds something else (then it starts afresh)."""
    return int(raw) if _INTEGER.fullmatch(raw) else None
