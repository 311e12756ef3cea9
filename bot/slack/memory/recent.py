"""Each person's last questions (Home tab's Ask again): `recent:<user>`, at most ten,
newest first, each cut to 500 characters, text only; expires 30 days after the last."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel, ConfigDict, TypeAdapter

from bot import keys
from bot.store import AdapterCodec, Store, StoreError
from bot.text import one_line

logger = logging.getLogger(__name__)

MAX_RECENT = 10
MAX_RECENT_CHARS = 500
RECENT_TTL_SECONDS = 30 * 86_400.0
#: compare-and-set attempts when two questions of one person land at once
_CAS_TRIES = 3


class Asked(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    at: datetime


_RECENT = AdapterCodec(TypeAdapter(list[Asked]))


class RecentQuestions:
    """Who asked what lately; a nicety, so a store failure only costs the history."""

    def __init__(self, store: Store, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock

    async def remember(self, user: str, question: str) -> None:
        """`question` first in `user`'s list (an earlier copy of it moves up, not twice)."""
        text = one_line(question, MAX_RECENT_CHARS)
        if not text:
            return
        asked, key = Asked(text=text, at=self._clock()), keys.RECENT.key(user)
        try:
            for _ in range(_CAS_TRIES):
                current = await self._store.get(key, _RECENT)
                others = [a for a in current or [] if a.text != text]
                updated = [asked, *others][:MAX_RECENT]
                if current is None:
                    written = await self._store.add(key, updated, _RECENT, RECENT_TTL_SECONDS)
                else:
                    written = await self._store.replace(
                        key, current, updated, _RECENT, RECENT_TTL_SECONDS
                    )
                if written:
                    return
        except StoreError as exc:
            logger.info("recent questions not kept: %s", exc.message)

    async def of(self, user: str) -> list[Asked]:
        """`user`'s recent questions, newest first ([] when none, or the store fails)."""
        try:
            return (await self._store.get(keys.RECENT.key(user), _RECENT) or [])[:MAX_RECENT]
        except StoreError as exc:
            logger.info("recent questions unavailable: %s", exc.message)
            return []
