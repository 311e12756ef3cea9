"""The synchronous half of the SQLite store: one connection, used by one thread only.

Every write is one `BEGIN IMMEDIATE … COMMIT` (`write`). Rows carry their expiry and a use
stamp (`touched`, kept increasing) for eviction; keys read get theirs in the next write. A
namespace is counted when its last count plus the writes since pass `max_entries` or the
count is a second old; past the bound the least recently used rows go, to 1 % under it.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bot.store._api import Op, applied, namespace
from bot.store._sqlite_schema import prepare

V = TypeVar("V")
R = TypeVar("R")

_INTEGER = re.compile(rb"-?[0-9]{1,18}")
#: bytes the WAL file is cut back to when it starts over (PRAGMA journal_size_limit)
JOURNAL_SIZE_LIMIT = 4 << 20
SWEEP_BATCH = 500
_RECOUNT_EVERY = 1.0
_MAX_PENDING_TOUCHES = 1000
_TABLES = {"entries": "value", "windows": "events"}
_LIVE = "SELECT value, expires FROM entries WHERE key = ? AND expires > ?"
# an upsert, not INSERT OR REPLACE (a delete and an insert: twice the index work)
_PUT = """INSERT INTO {0} (key, ns, {1}, expires, touched) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET {1} = excluded.{1}, expires = excluded.expires,
touched = excluded.touched"""


class Db:
    """The store's statements on one connection. `now` is the store clock, passed in."""

    def __init__(
        self, path: Path, *, busy_timeout: float, max_entries: int, sweep_every: float
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # the file may hold users' questions: readable by its owner only (as SQLite's -wal, -shm)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        conn = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            # WAL: readers (the CLI) never wait for the writer, nor it for them; NORMAL in WAL
            # mode: a power cut may lose the last commits, never corrupt the file
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
            prepare(conn)
            newest = [conn.execute(f"SELECT max(touched) FROM {t}").fetchone()[0] for t in _TABLES]
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._max, self._slack = max_entries, max_entries // 100
        self._sweep_every, self._next_sweep = sweep_every, 0.0
        self._stamp = max(int(n or 0) for n in newest)
        #: (table, namespace) -> (at most this many rows, counted at)
        self._sizes: dict[tuple[str, str], tuple[int, float]] = {}
        self._dirty: dict[tuple[str, str], int] = {}
        #: keys read since the last write, oldest first
        self._touched: dict[str, None] = {}

    def close(self) -> None:
        self._conn.close()

    def ping(self) -> None:
        self._conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()

    def write(self, job: Callable[[float], R], now: float) -> R:
        """`job(now)` in one transaction with the reads' use stamps, the size bound and (when
        due) a sweep: all of it committed, or (on an error) none of it."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        touched, self._touched = self._touched, {}
        try:
            conn.executemany(
                "UPDATE entries SET touched = ? WHERE key = ?",
                [(self._next_stamp(now), key) for key in touched],
            )
            result = job(now)
            for (table, ns), added in self._dirty.items():
                self._bound(table, ns, added, now)
            if now >= self._next_sweep:
                self._sweep(now)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            for written in self._dirty:  # counted in a transaction that is gone
                self._sizes.pop(written, None)
            self._touched = {**touched, **self._touched}
            raise
        finally:
            self._dirty.clear()
        return result

    def _next_stamp(self, now: float) -> int:
        self._stamp = max(int(now * 1_000_000), self._stamp + 1)
        return self._stamp

    def _put(self, table: str, key: str, data: object, expires: float, now: float) -> None:
        ns = namespace(key)
        stamp = self._next_stamp(now)
        self._conn.execute(_PUT.format(table, _TABLES[table]), (key, ns, data, expires, stamp))
        self._dirty[(table, ns)] = self._dirty.get((table, ns), 0) + 1

    def _bound(self, table: str, ns: str, added: int, now: float) -> None:
        known = self._sizes.get((table, ns))
        if known is not None and known[0] + added <= self._max and now - known[1] < _RECOUNT_EVERY:
            self._sizes[(table, ns)] = (known[0] + added, known[1])
            return
        query = f"SELECT count(*) FROM {table} WHERE ns = ?"
        (rows,) = self._conn.execute(query, (ns,)).fetchone()
        if rows > self._max:
            excess = rows - (self._max - self._slack)
            self._conn.execute(
                f"DELETE FROM {table} WHERE key IN"
                f" (SELECT key FROM {table} WHERE ns = ? ORDER BY touched LIMIT ?)",
                (ns, excess),
            )
            rows -= excess
        self._sizes[(table, ns)] = (rows, now)

    def _sweep(self, now: float) -> None:
        deleted = [
            self._conn.execute(
                f"DELETE FROM {table} WHERE key IN (SELECT key FROM {table}"
                f" INDEXED BY {table}_order WHERE expires <= ? LIMIT ?)",
                (now, SWEEP_BATCH),
            ).rowcount
            for table in _TABLES
        ]
        # a full batch: more are waiting, and the next write sweeps again
        self._next_sweep = now if max(deleted) >= SWEEP_BATCH else now + self._sweep_every

    # --- entries (the writes run inside `write`) -------------------------------------------
    def get_many(self, keys: Sequence[str], now: float) -> dict[str, bytes]:
        marks = ",".join("?" * len(keys))
        rows = self._conn.execute(
            f"SELECT key, value FROM entries WHERE key IN ({marks}) AND expires > ?", (*keys, now)
        )
        found = {key: bytes(value) for key, value in rows}
        for key in found:
            self._touched.pop(key, None)
            self._touched[key] = None
        while len(self._touched) > _MAX_PENDING_TOUCHES:
            del self._touched[next(iter(self._touched))]
        return found

    def batch(self, ops: Sequence[Op], now: float) -> list[object]:
        return applied(ops, lambda op: self._apply(op, now))

    def _apply(self, op: Op, now: float) -> object:
        value, expected = op.encoded()
        key, expires, conn = op.key, now + op.ttl, self._conn
        if op.kind in ("set", "add", "incr"):
            row: Any = None if op.kind == "set" else conn.execute(_LIVE, (key, now)).fetchone()
            if op.kind == "add" and row is not None:
                return False
            result: object = None if op.kind == "set" else True
            if op.kind == "incr":  # a counter (an existing one keeps its expiry), or afresh
                counter = row is not None and _INTEGER.fullmatch(row[0])
                result = int(row[0]) + op.amount if counter else op.amount
                value, expires = str(result).encode(), row[1] if counter else expires
            self._put("entries", key, value, expires, now)
            return result
        if op.kind == "delete":
            conn.execute("DELETE FROM entries WHERE key = ?", (key,))
            conn.execute("DELETE FROM windows WHERE key = ?", (key,))
            return None
        if op.kind == "replace":
            cursor = conn.execute(
                "UPDATE entries SET value = ?, expires = ?, touched = ?"
                " WHERE key = ? AND value = ? AND expires > ?",
                (value, expires, self._next_stamp(now), key, expected, now),
            )
        else:  # delete_if
            cursor = conn.execute(
                "DELETE FROM entries WHERE key = ? AND value = ? AND expires > ?",
                (key, expected, now),
            )
        return cursor.rowcount == 1

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
            if (value := decode(bytes(raw))) is not None:
                found.append((key, value))
        rows.close()
        return found

    # --- sliding windows -------------------------------------------------------------------
    def hit(self, key: str, limit: int, window: float, at: float, now: float) -> float | None:
        events = self.window_events(key, window, at)
        if len(events) >= limit:
            return max(0.0, events[0] + window - at) if events else window
        bisect.insort(events, at)
        self._put("windows", key, json.dumps(events), events[-1] + window, now)
        return None

    def unhit(self, key: str, at: float) -> bool:
        events = self._events(key)
        if at not in events:
            return False
        events.remove(at)
        self._conn.execute("UPDATE windows SET events = ? WHERE key = ?", (json.dumps(events), key))
        return True

    def window_events(self, key: str, window: float, at: float) -> list[float]:
        return [t for t in self._events(key) if t > at - window]

    def _events(self, key: str) -> list[float]:
        row = self._conn.execute("SELECT events FROM windows WHERE key = ?", (key,)).fetchone()
        try:
            return sorted(float(t) for t in json.loads(row[0])) if row else []
        except (ValueError, TypeError):
            return []
