"""The SQLite store's checkpoints, in a thread of their own.

A checkpoint copies the WAL's pages into the database file and fsyncs both: the event loop's
connection never runs one (`PRAGMA wal_autocheckpoint = 0` there). The loop tells this
thread how many writes it committed; every `every_jobs` writes, or every `interval` seconds
while writes happen, it runs `PRAGMA wal_checkpoint(PASSIVE)` (which never blocks a writer),
after which the next writer starts the WAL from its beginning again, when every frame was
copied, and cuts its file back to `journal_size_limit`. Only when the WAL file grew past
`max_wal_bytes` all the same (a reader kept an old snapshot for long) does a TRUNCATE
checkpoint empty it: under a steady load a TRUNCATE every few megabytes held every write,
the acknowledgements' too, for its whole length (ack p99 of 0.5-2 s in the store bench).
That one holds off writers for a moment: meanwhile `holding` is True,
the loop keeps the writes that found the file busy, and `resume` (set by the loop's writer)
is called when it is over, so the loop commits them then instead of handing them to a
thread. Closing the store runs a last TRUNCATE checkpoint.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from bot.store._sqlite_db import Db

logger = logging.getLogger(__name__)

#: writes between checkpoints (about 1-3 MB of WAL at the bot's value sizes)
EVERY_JOBS = 128
#: seconds between checkpoints while fewer writes than that come
INTERVAL = 1.0
#: past this the WAL file is emptied (TRUNCATE), not only checkpointed
MAX_WAL_BYTES = 64 << 20


class Checkpointer:
    def __init__(
        self,
        db: Db,
        wal: Path,
        *,
        every_jobs: int = EVERY_JOBS,
        interval: float = INTERVAL,
        max_wal_bytes: int | None = None,
    ) -> None:
        self._db = db
        self._wal = wal
        self._every = every_jobs
        self._interval = interval
        self._max_wal = MAX_WAL_BYTES if max_wal_bytes is None else max_wal_bytes
        self._wake = threading.Event()
        #: written by the loop's thread only; read here (a stale value only delays a check)
        self._jobs = 0
        self._signalled = 0
        self._checked = 0
        self._stop = False
        #: True while a TRUNCATE checkpoint holds writers off; `resume` is called after it
        self.holding = False
        self.resume: Callable[[], None] = _nothing
        #: checkpoints run, and how many of them emptied the WAL file (for tests)
        self.passive = 0
        self.truncated = 0
        self._thread = threading.Thread(target=self._run, name="gdocs-store-sqlite-checkpoint")
        self._thread.daemon = True
        self._thread.start()

    def wrote(self, jobs: int) -> None:
        """`jobs` writes were committed (called on the loop's thread: a few additions)."""
        self._jobs += jobs
        if self._jobs - self._signalled >= self._every:
            self._signalled = self._jobs
            self._wake.set()

    def close(self) -> None:
        """A last checkpoint that empties the WAL, then the connection closes (blocks: call
        it in a thread, after the writers stopped)."""
        self._stop = True
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop:
                self._wake.wait(self._interval)
                self._wake.clear()
                if self._jobs != self._checked and not self._stop:
                    self._checked = self._jobs
                    self._checkpoint()
            self._empty()
        finally:
            self._db.close()

    def _checkpoint(self) -> None:
        try:
            self._db.checkpoint("PASSIVE")
        except sqlite3.Error as exc:  # the next one tries again; writes go on meanwhile
            logger.warning("SQLite checkpoint failed: %s", str(exc)[:200])
            return
        self.passive += 1
        if self._wal_bytes() > self._max_wal:
            self._empty()

    def _empty(self) -> None:
        """A TRUNCATE checkpoint; the loop's writes that found the file busy meanwhile are
        resumed after it."""
        self.holding = True
        try:
            busy, _, _ = self._db.checkpoint("TRUNCATE")
            if not busy:
                self.truncated += 1
        except sqlite3.Error as exc:
            logger.warning("SQLite checkpoint failed: %s", str(exc)[:200])
        finally:
            self.holding = False
            self.resume()

    def _wal_bytes(self) -> int:
        try:
            return os.stat(self._wal).st_size
        except OSError:  # no WAL file (yet, or it was just emptied)
            return 0


def _nothing() -> None:
    pass
