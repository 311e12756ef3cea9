"""How the last calls to a documentation server went (`upstream:<server>`), kept in the store
so every replica's Home tab tells what people meet now, not what one replica's probe saw."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict

from bot import keys
from bot.store import AdapterCodec, Store, StoreError

logger = logging.getLogger(__name__)

#: the calls kept per server, newest first
MAX_CALLS = 5
#: a call older than this says nothing about now
CALLS_TTL_SECONDS = 3600.0
#: errors that are an answer from the server (about the request, or its quota)
_ANSWERED = frozenset({"invalid_input", "not_found", "quota"})


class Call(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    at: datetime
    #: None: it answered; else the error's code ("unavailable", "timeout", …)
    error: str | None = None


_CALLS = AdapterCodec(list[Call])


class UpstreamCalls:
    """A sample, not a ledger: an answer is written without reading what other replicas
    wrote (the newest call is what counts: one store call); a failure is added to theirs
    (how many failed in a row)."""

    def __init__(self, store: Store, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock
        #: what this replica last wrote, per server
        self._written: dict[str, list[Call]] = {}

    async def record(self, server: str, error: str | None) -> None:
        failed = None if error in _ANSWERED else error
        try:
            earlier = (
                await self.last(server, strict=True) if failed else self._written.get(server, [])
            )
            calls = [Call(at=self._clock(), error=failed), *earlier][:MAX_CALLS]
            await self._store.set(keys.UPSTREAM.key(server), calls, _CALLS, CALLS_TTL_SECONDS)
            self._written[server] = calls
        except StoreError as exc:
            logger.info("upstream call not recorded: %s", exc.message)

    async def last(self, server: str, *, strict: bool = False) -> list[Call]:
        """The server's calls of the last hour, newest first ([] when the store fails)."""
        try:
            found = await self._store.get(keys.UPSTREAM.key(server), _CALLS) or []
        except StoreError:
            if strict:
                raise
            return []
        since = self._clock() - timedelta(seconds=CALLS_TTL_SECONDS)
        return [c for c in found if c.at >= since][:MAX_CALLS]
