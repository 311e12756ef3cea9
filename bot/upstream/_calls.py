"""Calls to a documentation server, each within its time, and how the last ones went, kept in
the store (`upstream:<server>`): every replica's Home tab tells what people meet now."""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
import random
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from bot import keys
from bot.errors import GdocsError
from bot.store import AdapterCodec, Store, StoreError
from bot.upstream._errors import ServerContext, Transient

logger = logging.getLogger(__name__)
_T = TypeVar("_T")
_Work = Callable[..., Awaitable[_T]]
#: loop time by which the current operation must finish (set by `run`): optional work such
#: as fetching titles stops early so the answer itself is not lost
deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)

#: the calls kept per server, newest first
MAX_CALLS = 5
#: a call older than this says nothing about now
CALLS_TTL_SECONDS = 3600.0
#: errors that are an answer from the server (about the request, or its quota)
_ANSWERED = frozenset({"invalid_input", "not_found", "quota"})


async def retrying(
    server: ServerContext, retries: int, backoff: tuple[float, float], attempt: _Work[_T]
) -> _T:
    """`attempt()`, tried again (with backoff) while it fails transiently (MCP and REST)."""
    for tried in itertools.count():
        try:
            return await attempt()
        except Transient as exc:
            if tried >= retries:
                raise
            # full jitter: spread many callers' retries over the whole window
            window = min(backoff[1], backoff[0] * 2**tried)
            delay = random.uniform(0, window)  # noqa: S311 - jitter, not cryptography
            logger.info("%s: %s; retry %d in %.2fs", server.key, exc, tried + 1, delay)
            await asyncio.sleep(delay)
    raise AssertionError("unreachable")


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

    async def run(
        self, server: ServerContext, work: _Work[_T], *args: object, timeout: float = 0
    ) -> _T:
        """`work` within `timeout` (MCP_TIMEOUT_SECONDS: the server's) end to end, retries
        included, and how it went recorded."""
        timeout = timeout or server.timeout
        token = deadline.set(asyncio.get_running_loop().time() + timeout)
        try:
            async with asyncio.timeout(timeout):
                result = await work(*args)
        except TimeoutError:
            await self.record(server.key, "timeout")
            raise server.timeout_error() from None
        except GdocsError as exc:  # what a person meets, for the Home tab
            await self.record(server.key, exc.code.value)
            raise
        finally:
            deadline.reset(token)
        await self.record(server.key, None)
        return result

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
