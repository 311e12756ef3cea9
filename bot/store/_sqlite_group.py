"""The SQLite store's group commit and bounds, the half of `Db` that is not statements.

`GroupCommit.write` runs several writes (jobs) in ONE transaction; a failing job fails only
its caller. It also keeps the bounds: the use stamps that order rows for eviction (the store
clock in microseconds, kept increasing; shared by the store's connections, and only used
inside a write transaction, which SQLite lets one connection hold at a time), the reads'
use recorded by the next write, and the size bound. The sweep of expired rows is in two
halves: `expired` finds them (a read, on the store's reader thread) and `delete_expired`
deletes them (a write job).

The size bound is kept without counting rows on every write (a count per write, or
triggers keeping one, cost more than the rest of a write): each namespace has an upper
bound on its rows, the last count plus the writes since. Only when that bound passes
`max_entries`, or the count is `_RECOUNT_EVERY` seconds old, are its rows counted (an
index-only count); past `max_entries`, the least recently used rows go, down to 1 % under
it, so a namespace at its bound is counted once per 1 % of writes, not on each. Committed
rows never exceed `max_entries` for writes of this store; another process writing the same
file is seen at the next count (within `_RECOUNT_EVERY` seconds of its writes).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any

#: a sweep deletes at most this many expired rows per table at a time, so it stays short
SWEEP_BATCH = 500
#: a namespace's rows are counted again when its count is this old (seconds) and it is written
_RECOUNT_EVERY = 1.0
# reads remembered for the use order until the next write; older ones are forgotten
_MAX_PENDING_TOUCHES = 1000

Job = Callable[[Any], object]


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


class GroupCommit:
    """Group commit and bounds on one connection (`Db` adds the statements)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        max_entries: int,
    ) -> None:
        self._conn = conn
        self._max = max_entries
        #: rows evicted below the bound when it is passed, so the next count is not at once
        self._slack = max_entries // 100
        self.stamps = Stamps(0)
        #: (table, namespace) written in the current group, with the rows they may have added:
        #: their size bound is checked once, after the group's jobs
        self._dirty: dict[tuple[str, str], int] = {}
        #: (table, namespace) -> (at most this many rows, counted at): shared with the other
        #: writing connection, like the stamps
        self._sizes: dict[tuple[str, str], tuple[int, float]] = {}
        #: keys read since the last write, oldest first: reads stay pure SELECTs (in WAL mode
        #: they never wait for a writer) and the next write transaction records their use
        self._touched: dict[str, None] = {}
        self._touch_lock = threading.Lock()

    def seed_stamps(self) -> None:
        """Start the use stamps after the newest in the file (two index lookups per
        namespace), so a clock behind the file's stamps still orders new uses last."""
        for table in ("entries", "windows"):
            (newest,) = self._conn.execute(_NEWEST_STAMP.format(table=table)).fetchone()
            self.stamps.last = max(self.stamps.last, int(newest or 0))

    def write(self, jobs: Sequence[Job], now: float) -> list[object]:
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
        try:
            touched = self._record_touches(conn, now)
            results = self._run(conn, jobs)
            if len(jobs) == 1 and isinstance(results[0], Exception):
                # a lone job failed: nothing to commit (the reads' use is recorded next time)
                self._roll_back(touched)
                return results
            for (table, ns), added in self._dirty.items():
                self._bound(conn, table, ns, added, now)
            conn.execute("COMMIT")
        except BaseException as exc:
            self._roll_back(touched)
            if not isinstance(exc, sqlite3.Error):
                raise
            if is_busy(exc):
                raise Busy(str(exc)) from exc
            return [exc for _ in jobs]
        finally:
            self._dirty.clear()
        return results

    def _roll_back(self, touched: list[str]) -> None:
        if self._conn.in_transaction:
            self._conn.rollback()
        self._retouch(touched)
        for written in self._dirty:  # counted in a transaction that is gone: count again
            self._sizes.pop(written, None)

    def _wrote(self, table: str, ns: str) -> None:
        """A row of `ns` in `table` was written (perhaps added): for the size bound."""
        written = (table, ns)
        self._dirty[written] = self._dirty.get(written, 0) + 1

    def _run(self, conn: sqlite3.Connection, jobs: Sequence[Job]) -> list[object]:
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

    def _isolated(self, conn: sqlite3.Connection, job: Job) -> object:
        """`job`'s result, or its error with its writes undone."""
        conn.execute("SAVEPOINT job")
        result = _outcome(job, self)
        if isinstance(result, Exception):
            conn.execute("ROLLBACK TO job")
        conn.execute("RELEASE job")
        return result

    # --- bounds and retention -------------------------------------------------------------
    def _touch(self, key: str) -> None:
        with self._touch_lock:  # the reader's thread adds, the writer's takes
            self._touched.pop(key, None)
            self._touched[key] = None
            if len(self._touched) > _MAX_PENDING_TOUCHES:  # forget the oldest reads
                del self._touched[next(iter(self._touched))]

    def share_touches(self, writer: GroupCommit) -> None:
        """Reads on this connection are recorded by `writer`'s next transaction."""
        self._touched = writer._touched
        self._touch_lock = writer._touch_lock
        self.stamps = writer.stamps
        self._sizes = writer._sizes

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

    def _bound(self, conn: sqlite3.Connection, table: str, ns: str, added: int, now: float) -> None:
        """Keep `ns` within `max_entries` rows: counted only when its upper bound passes it
        or its count is old; past it, the least recently touched rows go."""
        known = self._sizes.get((table, ns))
        if known is not None and known[0] + added <= self._max and now - known[1] < _RECOUNT_EVERY:
            self._sizes[(table, ns)] = (known[0] + added, known[1])
            return
        (rows,) = conn.execute(f"SELECT count(*) FROM {table} WHERE ns = ?", (ns,)).fetchone()
        if rows > self._max:
            excess = rows - (self._max - self._slack)
            conn.execute(
                f"DELETE FROM {table} WHERE key IN"
                f" (SELECT key FROM {table} WHERE ns = ? ORDER BY touched LIMIT ?)",
                (ns, excess),
            )
            rows -= excess
        self._sizes[(table, ns)] = (rows, now)

    def expired(self, now: float) -> dict[str, list[str]]:
        """Keys of expired rows, at most `SWEEP_BATCH` per table (a read: their index holds
        `expires`, so the values are not read)."""
        return {
            table: [
                key
                for (key,) in self._conn.execute(
                    f"SELECT key FROM {table} INDEXED BY {table}_order WHERE expires <= ? LIMIT ?",
                    (now, SWEEP_BATCH),
                )
            ]
            for table in ("entries", "windows")
        }

    def delete_expired(self, found: dict[str, list[str]], now: float) -> None:
        """Delete the rows `expired` found, unless written again since (a write job)."""
        for table, keys in found.items():
            self._conn.executemany(
                f"DELETE FROM {table} WHERE key = ? AND expires <= ?", [(key, now) for key in keys]
            )


# the newest stamp of a table: a skip scan over its namespaces, two index lookups each
_NEWEST_STAMP = """
WITH RECURSIVE names(ns) AS (
    SELECT min(ns) FROM {table}
    UNION ALL
    SELECT (SELECT min(ns) FROM {table} WHERE ns > names.ns) FROM names WHERE ns IS NOT NULL
)
SELECT max((SELECT max(touched) FROM {table} WHERE {table}.ns = names.ns)) FROM names
"""


def _outcome(job: Job, db: Any) -> object:
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
