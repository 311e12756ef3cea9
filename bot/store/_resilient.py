"""A store that never fails the bot: the shared store when it answers, per-process state when not.

Every call to the primary (SQLite, Redis) is bounded by `timeout` (0.5 s by default, so
Slack's 3 s acknowledgement is never at risk; one timer serves them all, see `_deadline`).
A call that fails or times out is served by a local MemoryStore instead: claims succeed
locally, caches miss, counters count locally. After a failure the primary is left alone for
`retry_after` seconds (a circuit: an outage must not cost the timeout per call), then one
call tries it again; the first success closes the circuit.
An outage logs one warning and its end one info line, never a line per call.

Deletes served locally during an outage are remembered (the last 10,000) and replayed on the
primary once it is back: a claim released or a record of finished work deleted meanwhile must
not reappear in the shared store as if it were still live.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from bot.observability.metrics import Metrics
from bot.redact import redact_url
from bot.store._api import Codec, Store, StoreError, T
from bot.store._deadline import Deadlines
from bot.store._memory import Clock, MemoryStore
from bot.store._ops import Op

logger = logging.getLogger(__name__)

R = TypeVar("R")

_ERRORS = "gdocs_store_errors_total"
_ERRORS_HELP = "State store calls that failed or timed out (served by per-process state)."
_UP = "gdocs_store_up"
_UP_HELP = "1 while the state store answers, 0 while the bot runs on per-process state."
#: deletes remembered during an outage, to replay on the primary when it is back
MAX_MISSED_DELETES = 10_000
#: the per-process store that serves during an outage: keys and characters of text per
#: namespace (documents are the large values: about 50 pages of 40 KB)
FALLBACK_MAX_ENTRIES = 2_000
FALLBACK_MAX_CHARS = 2_000_000


class ResilientStore:
    """Wraps any Store; see the module's docstring. `state()` is for /readyz."""

    def __init__(
        self,
        primary: Store,
        *,
        timeout: float = 0.5,
        retry_after: float = 1.5,
        metrics: Metrics | None = None,
        url: str | None = None,
        fallback: MemoryStore | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.kind = primary.kind
        self._primary = primary
        self._fallback = (
            fallback
            if fallback is not None
            else MemoryStore(max_entries=FALLBACK_MAX_ENTRIES, max_chars=FALLBACK_MAX_CHARS)
        )
        self._timeout = timeout
        self._deadlines = Deadlines(timeout)
        self._retry_after = retry_after
        self._metrics = metrics
        self._url = redact_url(url if url is not None else f"{primary.kind}://")
        self._clock = clock
        self._up = True
        self._detail = "ok"
        self._retry_at = 0.0
        self._probing = False
        self._missed: deque[Callable[[Store], Awaitable[object]]] = deque(maxlen=MAX_MISSED_DELETES)
        self._replaying: asyncio.Task[None] | None = None
        self._gauge(1)

    @property
    def primary(self) -> Store:
        """The shared store itself, for a slow read that must neither stall the bot nor
        open the circuit (the caller bounds it, and takes a StoreError as "unknown")."""
        return self._primary

    @property
    def up(self) -> bool:
        """Whether the last call reached the primary (False: calls are served locally)."""
        return self._up

    def state(self) -> dict[str, object]:
        """For /readyz, e.g. {"backend": "redis", "url": "redis://:[redacted]@host:6379/0",
        "ok": True, "detail": "ok"}"""
        return {"backend": self.kind, "url": self._url, "ok": self._up, "detail": self._detail}

    # --- the circuit ---------------------------------------------------------------------
    async def _call(
        self,
        op: str,
        call: Callable[[Store], Awaitable[R]],
        *,
        replay: bool = False,
        replay_with: Callable[[Store], Awaitable[object]] | None = None,
    ) -> R:
        if replay and replay_with is None:
            replay_with = call
        if not self._primary_due():
            if replay_with is not None:
                self._missed.append(replay_with)
            return await call(self._fallback)
        probe = not self._up
        try:
            result = await self._deadlines.run(call(self._primary))
        except StoreError as exc:
            self._failed(op, exc.message)
            if replay_with is not None:
                self._missed.append(replay_with)
            return await call(self._fallback)
        except TimeoutError:
            self._failed(op, f"{op} took over {self._timeout * 1000:.0f} ms")
            if replay_with is not None:
                self._missed.append(replay_with)
            return await call(self._fallback)
        finally:
            if probe:
                self._probing = False
        self._succeeded()
        return result

    def _primary_due(self) -> bool:
        """Whether this call goes to the primary: always while it is up; while it is down, one
        call at a time once `retry_after` has passed."""
        if self._up:
            return True
        if self._probing or self._clock() < self._retry_at:
            return False
        self._probing = True
        return True

    def _failed(self, op: str, detail: str) -> None:
        if self._metrics is not None:
            self._metrics.count(_ERRORS, _ERRORS_HELP, op=op, backend=self.kind)
        self._retry_at = self._clock() + self._retry_after
        self._detail = detail
        if self._up:
            self._up = False
            self._gauge(0)
            logger.warning(
                "state store %s is unavailable (%s): using per-process state until it is back",
                self._url,
                detail,
            )

    def _succeeded(self) -> None:
        if not self._up:
            self._up = True
            self._detail = "ok"
            self._gauge(1)
            logger.info("state store %s is back: shared state again", self._url)
        if self._missed and self._replaying is None:
            self._replaying = asyncio.ensure_future(self._replay())

    async def _replay(self) -> None:
        """The deletes the primary missed, in order, each bounded; stops at a new failure
        (the rest wait for the next recovery)."""
        try:
            while self._missed and self._up:
                call = self._missed[0]
                try:
                    async with asyncio.timeout(self._timeout * 4):
                        await call(self._primary)
                except (StoreError, TimeoutError):
                    return
                self._missed.popleft()
        finally:
            self._replaying = None

    def _gauge(self, value: int) -> None:
        if self._metrics is not None:
            self._metrics.set_gauge(_UP, _UP_HELP, value, backend=self.kind)

    # --- Store ---------------------------------------------------------------------------
    async def get(self, key: str, codec: Codec[T]) -> T | None:
        return await self._call("get", lambda s: s.get(key, codec))

    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        return await self._call("get_many", lambda s: s.get_many(keys, codec))

    async def set(self, key: str, value: T, codec: Codec[T], ttl: float) -> None:
        await self._call("set", lambda s: s.set(key, value, codec, ttl))

    async def add(self, key: str, value: T, codec: Codec[T], ttl: float) -> bool:
        return await self._call("add", lambda s: s.add(key, value, codec, ttl))

    async def replace(self, key: str, expected: T, value: T, codec: Codec[T], ttl: float) -> bool:
        return await self._call("replace", lambda s: s.replace(key, expected, value, codec, ttl))

    async def delete(self, key: str) -> None:
        await self._call("delete", lambda s: s.delete(key), replay=True)

    async def delete_if(self, key: str, expected: T, codec: Codec[T]) -> bool:
        return await self._call(
            "delete_if", lambda s: s.delete_if(key, expected, codec), replay=True
        )

    async def incr(self, key: str, amount: int, ttl: float) -> int:
        return await self._call("incr", lambda s: s.incr(key, amount, ttl))

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        return await self._call("hit", lambda s: s.hit(key, limit, window, now))

    async def unhit(self, key: str, at: float) -> bool:
        return await self._call("unhit", lambda s: s.unhit(key, at))

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        return await self._call("window_events", lambda s: s.window_events(key, window, now))

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        return await self._call("scan", lambda s: s.scan(prefix, codec, limit))

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        deletes = [op for op in ops if op.kind in ("delete", "delete_if") and op.only_if is None]
        if not deletes:
            return await self._call("batch", lambda s: s.batch(ops))
        # replayed after an outage: the batch's deletes only (its other writes were served
        # locally and are not the shared store's business any more)
        results = await self._call(
            "batch", lambda s: s.batch(ops), replay_with=lambda s: s.batch(deletes)
        )
        return results

    async def ping(self) -> None:
        """Check the primary (bounded, and not while the circuit is open); never raises: this
        store can always be used. Read the outcome in `state()`."""
        await self._call("ping", lambda s: s.ping())

    async def aclose(self) -> None:
        if self._replaying is not None:
            self._replaying.cancel()
        try:
            async with asyncio.timeout(max(self._timeout, 1.0)):
                await self._primary.aclose()
        except (StoreError, TimeoutError) as exc:
            logger.info("closing the state store %s: %s", self._url, exc)
        await self._fallback.aclose()
