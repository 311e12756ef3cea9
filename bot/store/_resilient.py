"""A store that never fails the bot: a call that fails or takes over `timeout` is served by a
local MemoryStore, and the primary is left alone for `retry_after` seconds. Deletes served
locally are replayed once it is back, so work finished meanwhile does not reappear as live."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TypeVar

from bot.observability.metrics import Metrics
from bot.redact import redact_url
from bot.store._api import Codec, Op, Store, StoreError, StoreUnavailable, T
from bot.store._memory import Clock, MemoryStore

logger = logging.getLogger(__name__)

R = TypeVar("R")
Replay = Callable[[Store], Awaitable[object]]

_ERRORS = "gdocs_store_errors_total"
_ERRORS_HELP = "State store calls that failed or timed out (served by per-process state)."
_UP = "gdocs_store_up"
_UP_HELP = "1 while the state store answers, 0 while the bot runs on per-process state."
_CALLS = "gdocs_store_calls_total"
_CALLS_HELP = "Calls to the state store (round trips; a batch is one), by operation."
MAX_MISSED_DELETES = 10_000


class ResilientStore(Store):
    def __init__(
        self,
        primary: Store,
        *,
        timeout: float = 0.5,
        retry_after: float = 1.5,
        metrics: Metrics | None = None,
        url: str | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.kind = primary.kind
        self.primary = primary  # for a slow read the caller bounds itself
        # per namespace: about 50 pages of 40 KB
        self._fallback = MemoryStore(max_entries=2_000, max_chars=2_000_000)
        self._timeout = timeout
        self._retry_after = retry_after
        self._metrics = metrics or Metrics()  # none given: counted where nobody looks
        self._url = redact_url(url if url is not None else f"{primary.kind}://")
        self._clock = clock
        self.up = True  # whether the last call reached the primary
        self._detail = "ok"
        self._retry_at = 0.0
        self._missed: deque[Replay] = deque(maxlen=MAX_MISSED_DELETES)
        self._replaying: asyncio.Task[None] | None = None
        self.calls: Counter[str] = Counter()  # calls that went to the primary, by operation
        self._metrics.set_gauge(_UP, _UP_HELP, 1, backend=self.kind)

    def state(self) -> dict[str, object]:  # for /readyz
        return {"backend": self.kind, "url": self._url, "ok": self.up, "detail": self._detail}

    async def _call(
        self, op: str, call: Callable[[Store], Awaitable[R]], replay: Replay | None = None
    ) -> R:
        if self.up or self._clock() >= self._retry_at:
            if op != "ping":
                self.calls[op] += 1
                self._metrics.count(_CALLS, _CALLS_HELP, op=op)
            try:
                async with asyncio.timeout(self._timeout):
                    result = await call(self.primary)
            except StoreError as exc:
                self._failed(op, exc.message)
            except TimeoutError:
                self._failed(op, f"{op} took over {self._timeout * 1000:.0f} ms")
            else:
                self._succeeded()
                return result
        if replay is not None:
            self._missed.append(replay)
        return await call(self._fallback)

    def _failed(self, op: str, detail: str) -> None:
        self._metrics.count(_ERRORS, _ERRORS_HELP, op=op, backend=self.kind)
        self._retry_at = self._clock() + self._retry_after
        self._detail = detail
        if self.up:
            self.up = False
            self._metrics.set_gauge(_UP, _UP_HELP, 0, backend=self.kind)
            logger.warning(
                "state store %s is unavailable (%s): using per-process state until it is back",
                self._url,
                detail,
            )

    def _succeeded(self) -> None:
        if not self.up:
            self.up, self._detail = True, "ok"
            self._metrics.set_gauge(_UP, _UP_HELP, 1, backend=self.kind)
            logger.info("state store %s is back: shared state again", self._url)
        if self._missed and self._replaying is None:
            self._replaying = asyncio.ensure_future(self._replay())

    async def _replay(self) -> None:
        try:
            while self._missed and self.up:
                try:
                    async with asyncio.timeout(self._timeout * 4):
                        await self._missed[0](self.primary)
                except (StoreError, TimeoutError):
                    return
                self._missed.popleft()
        finally:
            self._replaying = None

    # --- Store (the single writes are batches of one) -----------------------------------
    async def get(self, key: str, codec: Codec[T]) -> T | None:
        return await self._call("get", lambda s: s.get(key, codec))

    async def get_many(self, keys: Sequence[str], codec: Codec[T]) -> list[T | None]:
        return await self._call("get_many", lambda s: s.get_many(keys, codec))

    async def hit(self, key: str, limit: int, window: float, now: float) -> float | None:
        return await self._call("hit", lambda s: s.hit(key, limit, window, now))

    async def unhit(self, key: str, at: float) -> bool:
        return await self._call("unhit", lambda s: s.unhit(key, at))

    async def window_events(self, key: str, window: float, now: float) -> list[float]:
        return await self._call("window_events", lambda s: s.window_events(key, window, now))

    async def scan(self, prefix: str, codec: Codec[T], limit: int) -> list[tuple[str, T]]:
        return await self._call("scan", lambda s: s.scan(prefix, codec, limit))

    async def batch(self, ops: Sequence[Op]) -> list[object]:
        # counted by the operation's kind when it is alone (a single write)
        name = ops[0].kind if len(ops) == 1 else "batch"
        deletes = [op for op in ops if op.kind in ("delete", "delete_if") and op.only_if is None]
        replay: Replay | None = (lambda s: s.batch(deletes)) if deletes else None
        return await self._call(name, lambda s: s.batch(ops), replay)

    async def ping(self) -> None:
        """Check the primary (not while the circuit is open); the outcome is in `state()`."""
        await self._call("ping", lambda s: s.ping())

    async def aclose(self) -> None:
        if self._replaying is not None:
            self._replaying.cancel()
        try:
            async with asyncio.timeout(max(self._timeout, 1.0)):
                await self.primary.aclose()
        except (StoreError, TimeoutError) as exc:
            logger.info("closing the state store %s: %s", self._url, exc)


@asynccontextmanager
async def on_primary(store: Store, seconds: float = 2.0) -> AsyncIterator[Store]:
    """`store`'s shared store, never a per-process stand-in, for a write or a read that must
    not be answered from one replica's memory: any failure, or a wait past `seconds`, is one
    StoreUnavailable (the caller says it could not save or read)."""
    try:
        async with asyncio.timeout(seconds):
            yield store.primary if isinstance(store, ResilientStore) else store
    except TimeoutError:
        raise StoreUnavailable("the state store did not answer in time") from None
    except StoreUnavailable:
        raise
    except StoreError as exc:
        raise StoreUnavailable(exc.message) from exc
