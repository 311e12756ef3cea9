"""The SQLite store's group commit and bounds, the half of `Db` that is not statements.

`GroupCommit.write` runs several writes (jobs) in ONE transaction; a failing job fails only
its caller. It also keeps the bounds: the use stamps that order rows for eviction (the store
clock in microseconds, kept increasing; shared by the store's connections, and only used
inside a write transaction, which SQLite lets one connection hold at a time), the reads'
use recorded by the next write, the size bound checked once per namespace written in a
group, and the sweep of expired rows.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any

# a sweep deletes at most this many expired rows per table at a time, so it stays short
_SWEEP_BATCH = 500
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
        sweep_every: float,
    ) -> None:
        self._conn = conn
        self._max = max_entries
        self._sweep_every = sweep_every
        self._next_sweep = 0.0
        self.stamps = Stamps(0)
        #: (table, namespace) written in the current group: their size bound is checked once,
        #: after the group's jobs
        self._dirty: dict[tuple[str, str], None] = {}
        #: keys read since the last write, oldest first: reads stay pure SELECTs (in WAL mode
        #: they never wait for a writer) and the next write transaction records their use
        self._touched: dict[str, None] = {}
        self._touch_lock = threading.Lock()

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
