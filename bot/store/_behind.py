"""Writes nobody waits for, coalesced: `behind.add(ops)` now, one store batch later.

Some writes only help later questions: a fetched page and its title kept for the next asker,
an answer kept again with its checked commands, the report's day counters. Nobody reads them
back before the question is answered, and losing one costs an upstream call or one count,
never an answer. They are queued here and written together:

- with the next "done" batch any question writes (`take()`, used by `WorkLog.finish`), so a
  busy bot adds no store call for them at all, and a question's own deferred writes land by
  the time it is finished;
- otherwise within `interval` seconds (one batch for everything queued), or at once when
  `max_pending` operations are queued;
- at `aclose()`, whatever is left.

Counts (`incr`, the report's day counters) are summed while they wait, one operation per
counter, and ride at most one "done" batch per `interval`: a question now and then takes its
own counts along, as before, while a busy bot writes each counter once a second instead of
three rows per question (the same hot rows each time; about a twentieth of SQLite's write
cost per question, bench/FINDINGS.md). What waits is still at most `interval` old.

A batch that fails is logged at debug and dropped (the store's own outage handling serves
the bot meanwhile). Writes other flows wait for (claims, the answer cache under its lock,
work records) never come here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace

from bot.store._api import Store, StoreError
from bot.store._ops import Op

logger = logging.getLogger(__name__)

#: operations queued before a flush is started without waiting for the interval
MAX_PENDING = 512


class WriteBehind:
    def __init__(
        self, store: Store, *, interval: float = 1.0, max_pending: int = MAX_PENDING
    ) -> None:
        self._store = store
        self._interval = interval
        self._max_pending = max_pending
        self._pending: list[Op] = []
        #: counts waiting, summed: one `incr` per key (the first's TTL: it makes the counter)
        self._counts: dict[str, Op] = {}
        #: when (loop time) a "done" batch may take the counts along again
        self._counts_after = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._flushing: set[asyncio.Task[None]] = set()

    @property
    def pending(self) -> int:
        """Operations queued (a counter waiting is one, whatever it sums)."""
        return len(self._pending) + len(self._counts)

    @property
    def counts(self) -> int:
        """Counters waiting (they may wait for a later batch; see the module's docstring)."""
        return len(self._counts)

    def add(self, ops: Sequence[Op]) -> None:
        """Queue `ops` (plain writes: no `only_if`) for a later batch."""
        if not ops:
            return
        if any(op.only_if is not None for op in ops):
            raise ValueError("a deferred write cannot depend on another one")
        for op in ops:
            if op.kind != "incr":
                self._pending.append(op)
            elif (waiting := self._counts.get(op.key)) is None:
                self._counts[op.key] = op
            else:
                self._counts[op.key] = replace(waiting, amount=waiting.amount + op.amount)
        if self.pending >= self._max_pending:
            self._start_flush()
        else:
            self._arm()

    def take(self) -> list[Op]:
        """What is queued, for a batch the caller writes now (and no longer queued): the counts
        only when none went out within `interval` (else they wait, summed, for a later one)."""
        return self._take(counts_due=asyncio.get_running_loop().time() >= self._counts_after)

    async def flush(self) -> None:
        """Write what is queued now (and wait for flushes already under way)."""
        self._start_flush()
        if self._flushing:
            await asyncio.gather(*self._flushing)

    async def aclose(self) -> None:
        await self.flush()

    def _take(self, *, counts_due: bool) -> list[Op]:
        """The queued writes, and the counts when they are due; the timer left armed for
        the counts that stay."""
        taken, self._pending = self._pending, []
        if self._counts and counts_due:
            taken += self._counts.values()
            self._counts = {}
            self._counts_after = asyncio.get_running_loop().time() + self._interval
        if self._counts:
            self._arm()
        else:
            self._cancel_timer()
        return taken

    def _start_flush(self) -> None:
        ops = self._take(counts_due=True)
        if not ops:
            return
        task = asyncio.ensure_future(self._write(ops))
        self._flushing.add(task)
        task.add_done_callback(self._flushing.discard)

    async def _write(self, ops: list[Op]) -> None:
        try:
            await self._store.batch(ops)
        except StoreError as exc:
            logger.debug("%d deferred writes not kept: %s", len(ops), exc.message)

    def _arm(self) -> None:
        """Everything queued is written within `interval`, whoever takes it first."""
        if self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self._interval, self._start_flush)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
