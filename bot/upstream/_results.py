"""Answers and searches kept in the store (`answer:`, `search:`, `pay:`) and shared in flight:
a scope keys a result of its own, each asker sees their own wording, and a result is kept only
as long as it stays true (a quota fallback no longer than the quota stays spent)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from bot import keys
from bot.models import Answer, Scope
from bot.observability.metrics import Metrics
from bot.settings import Settings
from bot.store import ModelCodec, SharedFlight, Store

ANSWER = ModelCodec(Answer)


def result_key(family: keys.KeyFamily, text: str, scope: Scope) -> str:
    """A result's key: unscoped ones as ever, a scope a part of its own (never served to an
    unscoped question, nor the reverse)."""
    return family.key(text, "in=" + ",".join(scope)) if scope else family.key(text)


@dataclass(frozen=True)
class Results:
    _store: Store
    _flights: SharedFlight
    _metrics: Metrics
    _settings: Settings
    _clock: Callable[[], datetime]

    async def cached(self, key: str, query: str) -> Answer | None:
        cached = await self._store.get(key, ANSWER)
        self._metrics.cache(key.split(":", 1)[0], cached is not None)
        if cached is None:
            return None
        reuse = "exact" if cached.query == query else "normalised"
        return cached.model_copy(update={"cached": True, "query": query, "reuse": reuse})

    async def shared(
        self, key: str, query: str, compute: Callable[[], Awaitable[Answer]]
    ) -> Answer:
        computed = False

        async def computing() -> Answer:
            nonlocal computed
            computed = True
            return await compute()

        # the caller read `key` just before (a miss): the flight need not read it again
        answer = await self._flights.run(key, computing, ANSWER, self.keep_for, checked=True)
        if not computed:  # another request's call (here or on another replica) answered it
            answer = answer.model_copy(update={"reuse": "shared"})
        # each asker sees their own wording (keys ignore case, spacing and filler words)
        return answer if answer.query == query else answer.model_copy(update={"query": query})

    async def keep(self, key: str, answer: Answer) -> None:
        """`answer` kept again under `key` (its checked form), for as long as it is worth."""
        if (seconds := self.keep_for(answer)) > 0:
            await self._store.set(key, answer, ANSWER, seconds)

    def keep_for(self, answer: Answer) -> float:
        """Seconds a result is worth keeping (0: not at all). A quota fallback is kept no
        longer than the quota stays spent, and one person's allowance is theirs alone."""
        fallback = answer.fallback
        if answer.kind == "answer":
            return self._settings.cache_answer_ttl_seconds
        if fallback is None or fallback.reason != "answer_quota":
            return self._settings.cache_search_ttl_seconds
        if fallback.limit == "user" or fallback.until is None:
            return 0.0
        left = (fallback.until - self._clock()).total_seconds()
        return max(0.0, min(self._settings.cache_search_ttl_seconds, left))
