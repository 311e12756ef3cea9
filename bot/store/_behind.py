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

A batch that fails is logged at debug and dropped (the store's own outage handling serves
the bot meanwhile). Writes other flows wait for (claims, the answer cache under its lock,
work records) never come here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

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
        self._timer: asyncio.TimerHandle | None = None
        self._flushing: set[asyncio.Task[None]] = set()

    @property
    def pending(self) -> int:
        return len(self._pending)

    def add(self, ops: Sequence[Op]) -> None:
        """Queue `ops` (plain writes: no `only_if`) for a later batch."""
        if not ops:
            return
        if any(op.only_if is not None for op in ops):
            raise ValueError("a deferred write cannot depend on another one")
        self._pending.extend(ops)
        if len(self._pending) >= self._max_pending:
            self._start_flush()
        elif self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self._interval, self._start_flush)

    def take(self) -> list[Op]:
        """Everything queued, for a batch the caller writes now (and no longer queued)."""
        taken, self._pending = self._pending, []
        self._cancel_timer()
        return taken

    async def flush(self) -> None:
        """Write what is queued now (and wait for flushes already under way)."""
        self._start_flush()
        if self._flushing:
            await asyncio.gather(*self._flushing)

    async def aclose(self) -> None:
        await self.flush()

    def _start_flush(self) -> None:
        self._cancel_timer()
        ops = self.take()
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

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
