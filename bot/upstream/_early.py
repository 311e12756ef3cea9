"""REST only: the search shown while an answer is written (`with_early_sources`), and the
deployment's search units of the rolling minute (`SearchUnits`), which keep that extra
search off Google's per-minute search quota."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from bot import keys
from bot.errors import GdocsError
from bot.models import Answer, SearchHit
from bot.service import OnSources
from bot.store import Store, StoreError

logger = logging.getLogger(__name__)

#: this deployment's search units of the rolling minute (shared by replicas)
UNITS_KEY = keys.QUOTA.key("search_minute")
_MINUTE = 60.0


class SearchUnits:
    """Google's search quota counts every search and every answer (100 a minute by default).
    The calls users ask for are counted, never held back; the early search is the one extra,
    made only while the minute has room to spare: a fifth of the limit stays for the rest."""

    def __init__(self, store: Store, per_minute: int, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._per_minute = per_minute
        self._clock = clock

    async def spend(self) -> None:
        if not self._per_minute:
            return
        try:
            await self._store.hit(UNITS_KEY, 1 << 30, _MINUTE, self._clock().timestamp())
        except StoreError as exc:
            logger.info("search unit not counted: %s", exc.message)

    async def room(self) -> bool:
        """Whether an early search fits: used + 1 stays within the limit less its reserve."""
        if not self._per_minute:
            return True
        now = self._clock().timestamp()
        try:
            used = len(await self._store.window_events(UNITS_KEY, _MINUTE, now))
        except StoreError:
            return False  # unknown: the answer alone is worth more than early pages
        return used + 1 <= self._per_minute - max(1, self._per_minute // 5)


async def with_early_sources(
    answering: Awaitable[Answer],
    search: Callable[[], Awaitable[Answer]],
    units: SearchUnits,
    on_sources: OnSources,
) -> Answer:
    """The answer; the search's pages go to `on_sources` first if they come before it. The
    search never fails nor delays the answer: its failure is logged, and when the answer comes
    first the wait for it ends (its single flight still finishes into the cache)."""
    answer = asyncio.ensure_future(answering)
    early = asyncio.ensure_future(_early_hits(search, units))
    try:
        done, _ = await asyncio.wait({answer, early}, return_when=asyncio.FIRST_COMPLETED)
        if early in done and not answer.done():
            await _show(early, on_sources)
        return await answer
    finally:
        for task in (early, answer):  # a Stop ends the answer's wait as it did before
            if not task.done():
                task.cancel()
        await asyncio.wait({early, answer})
        if not early.cancelled():
            early.exception()  # retrieved: a failed early search is no error of the answer


async def _early_hits(
    search: Callable[[], Awaitable[Answer]], units: SearchUnits
) -> tuple[SearchHit, ...]:
    """One search unit more, spent only while the minute has room (the search is cached, so
    a quota fallback reuses it)."""
    return (await search()).hits if await units.room() else ()


async def _show(early: asyncio.Future[tuple[SearchHit, ...]], on_sources: OnSources) -> None:
    try:
        hits = early.result()
    except (GdocsError, StoreError) as exc:  # upstream's or the store's: the answer goes on
        logger.info("early sources unavailable: %s", type(exc).__name__)
        return
    try:
        if hits:
            await on_sources(hits)
    except Exception:  # a nicety: showing them must not cost the answer
        logger.warning("early sources not shown", exc_info=True)
