"""The synchronous half of the SQLite store: one connection, used on the event loop's thread.
Every write is one `BEGIN IMMEDIATE … COMMIT`; past `max_entries` in a namespace the rows
written longest ago (`touched`) go. A file of another schema version is refused, not misread."""

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

V = TypeVar("V")
R = TypeVar("R")

SCHEMA_VERSION = 2
_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, ns TEXT NOT NULL,"
    " value BLOB NOT NULL, expires REAL NOT NULL, touched INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS windows (key TEXT PRIMARY KEY, ns TEXT NOT NULL,"
    " events TEXT NOT NULL, expires REAL NOT NULL, touched INTEGER NOT NULL) WITHOUT ROWID",
    *(
        f"CREATE INDEX IF NOT EXISTS {t}_order ON {t} (ns, touched, expires)"
        for t in ("entries", "windows")
    ),
    f"INSERT OR IGNORE INTO meta VALUES ('schema', '{SCHEMA_VERSION}')",
]
_INTEGER = re.compile(rb"-?[0-9]{1,18}")
#: bytes the WAL file is cut back to when it starts over (PRAGMA journal_size_limit)
JOURNAL_SIZE_LIMIT = 4 << 20
#: how long a call waits for another process's lock (opening waits `busy_timeout`)
CALL_BUSY_MS = 250
_TABLES = {"entries": "value", "windows": "events"}
_LIVE = "SELECT value, expires FROM entries WHERE key = ? AND expires > ?"
_PUT = """INSERT INTO {0} (key, ns, {1}, expires, touched) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET {1} = excluded.{1}, expires = excluded.expires,
touched = excluded.touched"""


class NewerSchema(Exception):
    """The file was written by another version of the bot."""


class Db:
    """The store's statements on one connection. `now` is the store clock, passed in."""

    def __init__(
        self,
        path: Path,
        busy_timeout: float,
        sweep_every: float,
        max_entries: int,
        unevicted: frozenset[str],  # namespaces their owner bounds
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # the file may hold users' questions: readable by its owner only (as SQLite's -wal, -shm)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None)
        try:
            # WAL: readers (the CLI) never wait for the writer, nor it for them; NORMAL in WAL
            # mode: a power cut may lose the last commits, never corrupt the file
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
            with conn:  # one transaction: two processes opening one file take turns
                conn.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA:
                    conn.execute(statement)
            (found,) = conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            if found != str(SCHEMA_VERSION):
                raise NewerSchema(f"schema {found}")
            newest = [conn.execute(f"SELECT max(touched) FROM {t}").fetchone()[0] for t in _TABLES]
            # from now on a lock another process holds stalls the event loop: wait briefly, then
            # the call fails and the bot serves it from per-process state
            conn.execute(f"PRAGMA busy_timeout = {CALL_BUSY_MS}")
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._max, self._slack = max_entries, max_entries // 100
        self._unevicted = unevicted
        self._sweep_every, self._next_sweep = sweep_every, 0.0
        self._stamp = max(int(n or 0) for n in newest)
        #: (table, namespace) written in the current transaction
        self._dirty: set[tuple[str, str]] = set()
        #: (table, namespace) -> its rows at most: the last count plus the writes since
        self._rows: dict[tuple[str, str], int] = {}
        self._recount_at = 0.0

    def close(self) -> None:
        self._conn.close()

    def ping(self) -> None:
        self._conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()

    def write(self, job: Callable[[float], R], now: float) -> R:
        """`job(now)` in one transaction with the size bound and (when due) a sweep: all of it
        committed, or (on an error) none of it."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        if now >= self._recount_at:  # rows another process wrote are counted within 1 s
            self._rows.clear()
            self._recount_at = now + 1.0
        try:
            result = job(now)
            for table, ns in self._dirty:
                self._bound(table, ns)
            if now >= self._next_sweep:
                self._sweep(now)
            conn.execute("COMMIT")
        except BaseException:
            self._rows.clear()  # the counts may have counted deletes rolled back
            if conn.in_transaction:
                conn.rollback()
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
        self._dirty.add((table, ns))
        if (table, ns) in self._rows:
            self._rows[table, ns] += 1

    def _bound(self, table: str, ns: str) -> None:
        # count(*) reads the whole namespace: only when its upper bound passes max_entries
        if ns in self._unevicted or self._rows.get((table, ns), self._max + 1) <= self._max:
            return
        (rows,) = self._conn.execute(f"SELECT count(*) FROM {table} WHERE ns = ?", (ns,)).fetchone()
        if rows > self._max:
            self._conn.execute(
                f"DELETE FROM {table} WHERE key IN"
                f" (SELECT key FROM {table} WHERE ns = ? ORDER BY touched LIMIT ?)",
                (ns, rows - (self._max - self._slack)),
            )
            rows = self._max - self._slack
        self._rows[table, ns] = rows

    def _sweep(self, now: float) -> None:
        for table in _TABLES:  # at most CACHE_MAX_ENTRIES rows a family: one statement each
            self._conn.execute(f"DELETE FROM {table} WHERE expires <= ?", (now,))
        self._next_sweep = now + self._sweep_every

    # --- entries (the writes run inside `write`) -------------------------------------------
    def get_many(self, keys: Sequence[str], now: float) -> dict[str, bytes]:
        marks = ",".join("?" * len(keys))
        rows = self._conn.execute(
            f"SELECT key, value FROM entries WHERE key IN ({marks}) AND expires > ?", (*keys, now)
        )
        return {key: bytes(value) for key, value in rows}

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
