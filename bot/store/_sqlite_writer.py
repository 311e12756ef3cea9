"""The SQLite store's fallback writer: a thread owning a connection that may wait for locks.

Writes are committed on the event loop's thread (`_sqlite_loop.LoopWriter`), whose
connection never waits: when another connection holds the file's write lock, the group
comes here instead, and this thread waits for the lock (up to the busy timeout), so a lock
held by another process costs a thread hand-off, never a stalled loop. The thread takes
whatever is queued (up to `max_group` jobs) and commits it in ONE transaction (see
`Db.write`: a failing job fails only its caller), then resumes each caller once that COMMIT
returned: a write awaited is a write in the file (WAL, synchronous=NORMAL).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from bot.store._sqlite_db import Db
from bot.store._sqlite_group import Busy

logger = logging.getLogger(__name__)

Job = Callable[[Db], object]
_Entry = tuple[Job, asyncio.AbstractEventLoop, "asyncio.Future[Any]"]
#: the most jobs one transaction takes (a bound on how long one COMMIT holds the lock)
MAX_GROUP = 256


class Writer:
    def __init__(self, db: Db, clock: Callable[[], float], *, max_group: int = MAX_GROUP) -> None:
        self._db = db
        self._clock = clock
        self._max_group = max_group
        self._queue: queue.SimpleQueue[_Entry | None] = queue.SimpleQueue()
        self._closed = False
        #: groups committed, jobs in them (for the benchmark's and tests' counts)
        self.groups = 0
        self.jobs = 0
        self._thread = threading.Thread(target=self._run, name="gdocs-store-sqlite-writer")
        self._thread.daemon = True
        self._thread.start()

    def submit(self, job: Job) -> asyncio.Future[Any]:
        """Queue `job`; the future resolves (on the caller's loop) once it is committed.
        RuntimeError when the writer is closed."""
        if self._closed:
            raise RuntimeError("the SQLite writer is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queue.put((job, loop, future))
        return future

    def close(self) -> None:
        """Commit what is queued, stop the thread, close the connection (blocks: call it in
        a thread)."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)
        self._thread.join()

    def _run(self) -> None:
        stop = False
        while not stop:
            first = self._queue.get()
            if first is None:
                break
            group = [first]
            while len(group) < self._max_group:
                try:
                    entry = self._queue.get_nowait()
                except queue.Empty:
                    break
                if entry is None:
                    stop = True
                    break
                group.append(entry)
            self._commit(group)
        self._db.close()

    def _commit(self, group: list[_Entry]) -> None:
        try:
            results = self._db.write([job for job, _, _ in group], self._clock())
        except Busy as exc:  # locked for longer than the busy timeout: each caller hears so
            logger.warning("the SQLite file stayed locked: %s", str(exc)[:200])
            results = [exc for _ in group]
        # the thread's top level: a bug in a job must fail its callers, not kill the writer
        except BaseException as exc:
            logger.exception("the SQLite writer failed a group of writes")
            results = [exc for _ in group]
        self.groups += 1
        self.jobs += len(group)
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], object]]] = {}
        for (_, loop, future), result in zip(group, results, strict=True):
            by_loop.setdefault(loop, []).append((future, result))
        for loop, done in by_loop.items():
            try:  # one wake-up of the loop per group, not one per caller
                loop.call_soon_threadsafe(resolve, done)
            except RuntimeError:  # that loop is closed: nobody is waiting any more
                continue


def resolve(done: list[tuple[asyncio.Future[Any], object]]) -> None:
    """Each waiting caller gets its write's result or error (on the callers' loop)."""
    for future, result in done:
        if future.done():  # the caller gave up (a timeout): the write is on disk anyway
            continue
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)
