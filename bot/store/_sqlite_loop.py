"""The SQLite store's writes, committed on the event loop's own thread (group commit).

Every write submitted during one iteration of the loop goes into ONE transaction
(`BEGIN IMMEDIATE` … `COMMIT`, at most `max_group` writes; more wait for the next one), run
by a callback at the loop's next iteration; each caller resumes once that COMMIT returned: a
write awaited is a write in the file (WAL, `synchronous=NORMAL`: it survives a crash or a
`kill -9` of the bot). Running it on the loop's thread costs less than handing it to a
thread: no queue, no wake-ups, and no convoy on the GIL (each `sqlite3` call releases and
takes the GIL again, and a busy loop gives it back only every switch interval).

The loop must never wait for another process, so its connection has `busy_timeout = 0`:
when another connection holds the file's write lock (a second bot, a CLI command, a
TRUNCATE checkpoint), the group goes to the fallback `Writer` thread, which waits for the
lock (its busy timeout). Later groups follow it there until the fallback committed one (the
lock is free again), then the loop commits again: writes in flight together have no order
among them, and one caller's writes are awaited one after the other. COMMITs never
checkpoint (`Checkpointer` does, in a thread); while its TRUNCATE checkpoint holds writers
off, the loop keeps the groups that found the file busy and commits them when the
checkpointer says it is done (a thread waiting for the lock would only fight the loop for
the GIL).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable
from typing import Any

from bot.store._sqlite_checkpoint import Checkpointer
from bot.store._sqlite_db import Db
from bot.store._sqlite_group import Busy
from bot.store._sqlite_writer import MAX_GROUP, Job, Writer, resolve

logger = logging.getLogger(__name__)

_Pending = tuple[Job, "asyncio.Future[Any]"]


class LoopWriter:
    def __init__(
        self,
        db: Db,
        fallback: Writer,
        checkpointer: Checkpointer,
        clock: Callable[[], float],
        loop: asyncio.AbstractEventLoop,
        *,
        max_group: int = MAX_GROUP,
    ) -> None:
        self._db = db
        self.fallback = fallback
        self.checkpointer = checkpointer
        self._clock = clock
        self._loop = loop
        self._max_group = max_group
        self._pending: list[_Pending] = []
        #: writes that found the file held by our own checkpointer, until it is done
        self._held: list[_Pending] = []
        self._scheduled = False
        #: the file was found locked and the fallback has not committed since: groups go there
        self._locked = False
        self._closed = False
        #: groups committed on the loop, the writes in them, groups handed to the fallback
        self.groups = 0
        self.jobs = 0
        self.handoffs = 0
        self.held = 0
        #: urgent writes, each committed at once in a group of its own (`bot.store._urgency`)
        self.at_once = 0
        checkpointer.resume = self._resume_soon

    def submit(self, job: Job, *, at_once: bool = False) -> asyncio.Future[Any]:
        """Queue `job` for this iteration's group; the future resolves once it is committed.
        `at_once`: commit it now, in a transaction of its own, so that the future is done on
        return (unless the file is held: then it waits as any write does). RuntimeError when
        the writer is closed."""
        if self._closed:
            raise RuntimeError("the SQLite writer is closed")
        future: asyncio.Future[Any] = self._loop.create_future()
        if at_once:  # alone: the writes queued for the next group are not its to wait for
            self.at_once += 1
            self._commit([(job, future)])  # (held or handed off, as any group, if it must)
            return future
        self._pending.append((job, future))
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._flush)
        return future

    def close(self) -> None:
        """Commit what is queued (on the loop's thread); no write is taken after this."""
        self._closed = True
        self._pending[:0] = self._held
        self._held = []
        while self._pending:
            self._flush()

    def _flush(self) -> None:
        group = self._pending[: self._max_group]
        del self._pending[: self._max_group]
        if self._pending:  # past the bound: the rest is the next iteration's group
            self._loop.call_soon(self._flush)
        else:
            self._scheduled = False
        if group:
            self._commit(group)

    def _commit(self, group: list[_Pending]) -> None:
        if self._held and not self._closed:
            self._held += group
            return
        if self._locked:
            self._hand_off(group)
            return
        try:
            results = self._db.write([job for job, _ in group], self._clock())
        except Busy:
            if self.checkpointer.holding and not self._closed:
                self.held += 1
                self._held += group
            else:
                self._hand_off(group)
            return
        # the loop's boundary for a bug in the group commit: its callers fail, the loop goes on
        except Exception as exc:
            logger.exception("the SQLite store failed a group of writes")
            results = [exc for _ in group]
        self.groups += 1
        self.jobs += len(group)
        self.checkpointer.wrote(len(group))
        resolve([(future, result) for (_, future), result in zip(group, results, strict=True)])

    def _resume_soon(self) -> None:
        """From the checkpointer's thread: its TRUNCATE is over."""
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            self._loop.call_soon_threadsafe(self._resume)

    def _resume(self) -> None:
        if self._held:
            self._pending[:0] = self._held
            self._held = []
            if not self._scheduled:
                self._scheduled = True
                self._loop.call_soon(self._flush)

    def _hand_off(self, group: list[_Pending]) -> None:
        """The file is locked by another connection: the fallback thread waits for it."""
        self.handoffs += 1
        self._locked = True
        for job, future in group:
            try:
                inner = self.fallback.submit(job)
            except RuntimeError as exc:  # closed
                if not future.done():
                    future.set_exception(exc)
                continue
            inner.add_done_callback(functools.partial(self._handed_back, future))

    def _handed_back(self, future: asyncio.Future[Any], inner: asyncio.Future[Any]) -> None:
        if not inner.cancelled() and inner.exception() is None:
            self._locked = False  # the fallback got the lock: it is free again
        if future.done():
            return
        if inner.cancelled():
            future.cancel()
        elif (exc := inner.exception()) is not None:
            future.set_exception(exc)
        else:
            future.set_result(inner.result())
