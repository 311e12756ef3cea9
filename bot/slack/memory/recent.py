"""Each person's last questions (Home tab's Ask again): `recent:<user>`, at most ten,
newest first, each cut to 500 characters, text only; expires 30 days after the last."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel, ConfigDict, TypeAdapter

from bot import keys
from bot.lru import SizedLru
from bot.store import AdapterCodec, Op, Store, StoreError
from bot.text import one_line

logger = logging.getLogger(__name__)

MAX_RECENT = 10
MAX_RECENT_CHARS = 500
RECENT_TTL_SECONDS = 30 * 86_400.0
#: compare-and-set attempts when two questions of one person land at once
_CAS_TRIES = 3
#: people whose list this process last wrote is kept (for a write without a read)
MAX_USERS_KEPT = 2_000
#: and the most those lists may cost: characters plus ~500 bytes a question (measured)
MAX_KEPT_SIZE = 4_000_000
_KEPT_PER_QUESTION = 500


class Asked(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    at: datetime


_RECENT = AdapterCodec(TypeAdapter(list[Asked]))


def _key(user: str) -> str:
    return keys.RECENT.key(user)


def _kept_size(asked: list[Asked]) -> int:
    return sum(len(a.text) + _KEPT_PER_QUESTION for a in asked)


def _updated(current: list[Asked] | None, asked: Asked) -> list[Asked]:
    others = [a for a in current or [] if a.text != asked.text]
    return [asked, *others][:MAX_RECENT]


class RecentQuestions:
    """Who asked what lately; a nicety, so a store failure only costs the history. The
    list this process last wrote is kept, so an update is one compare-and-set in the
    question's batch (`op`); when it did not match, `settle` reads and retries."""

    def __init__(
        self,
        store: Store,
        clock: Callable[[], datetime],
        *,
        max_kept_size: int = MAX_KEPT_SIZE,
    ) -> None:
        self._store = store
        self._clock = clock
        self._last: SizedLru[str, list[Asked]] = SizedLru(
            max_entries=MAX_USERS_KEPT, max_size=max_kept_size, size_of=_kept_size
        )

    async def remember(self, user: str, question: str) -> None:
        """`question` first in `user`'s list (an earlier copy of it moves up, not twice)."""
        staged = self.op(user, question)
        if staged is None:
            return
        try:
            (done,) = await self._store.batch([staged])
        except StoreError as exc:
            logger.info("recent questions not kept: %s", exc.message)
            return
        await self.settle(user, question, done)

    def op(self, user: str, question: str) -> Op | None:
        """The write putting `question` first in `user`'s list, for a batch (None: nothing
        to keep)."""
        asked = self._asked(question)
        if asked is None:
            return None
        current = self._last.get(user)
        updated = _updated(current, asked)
        self._keep(user, updated)
        if current is None:
            return Op.add(_key(user), updated, _RECENT, RECENT_TTL_SECONDS)
        return Op.replace(_key(user), current, updated, _RECENT, RECENT_TTL_SECONDS)

    async def settle(self, user: str, question: str, done: object) -> None:
        """After `op`'s batch: when its write did not match, read and compare-and-set."""
        if done is not False:
            return
        self._last.discard(user)
        asked = self._asked(question)
        if asked is None:
            return
        try:
            for _ in range(_CAS_TRIES):
                current = await self._store.get(_key(user), _RECENT)
                updated = _updated(current, asked)
                if current is None:
                    written = await self._store.add(
                        _key(user), updated, _RECENT, RECENT_TTL_SECONDS
                    )
                else:
                    written = await self._store.replace(
                        _key(user), current, updated, _RECENT, RECENT_TTL_SECONDS
                    )
                if written:
                    self._keep(user, updated)
                    return
        except StoreError as exc:
            logger.info("recent questions not kept: %s", exc.message)

    def _asked(self, question: str) -> Asked | None:
        text = one_line(question, MAX_RECENT_CHARS)
        return Asked(text=text, at=self._clock()) if text else None

    def _keep(self, user: str, asked: list[Asked]) -> None:
        self._last.put(user, asked)

    async def of(self, user: str) -> list[Asked]:
        """`user`'s recent questions, newest first ([] when none, or the store fails)."""
        try:
            return (await self._store.get(_key(user), _RECENT) or [])[:MAX_RECENT]
        except StoreError as exc:
            logger.info("recent questions unavailable: %s", exc.message)
            return []
