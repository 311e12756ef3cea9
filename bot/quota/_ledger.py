"""The answer_query governor: calls per minute, per Pacific day and per person, and the pauses
Google's 429s impose, kept in the shared `Store` (replicas and restarts share them)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from bot import keys
from bot.errors import QuotaSignal
from bot.observability.metrics import Metrics
from bot.quota._model import (
    LEDGER_WINDOW_SECONDS,
    MINUTE_KEY,
    PAUSE_KEY,
    WINDOW_SECONDS,
    Pause,
    PauseKind,
    Permit,
    QuotaConfig,
    QuotaState,
    Refusal,
    day_key,
    day_ttl,
    minute_room,
    next_pacific_midnight,
    pacific_day,
    read_pause,
)
from bot.store import JSON, Op, ResilientStore, Store, StoreError, abandonable

logger = logging.getLogger(__name__)

#: counts one event by name (never raises): `bot.report.tally.DailyTally.count`
Tally = Callable[[str], Awaitable[None]]

#: the longest pause a minute or unknown 429 can cause, whatever its retry delay says
MAX_SHORT_PAUSE_SECONDS = 900.0
#: a pause is never shorter than this, so a slot "about to free" is not hammered
MIN_PAUSE_SECONDS = 1.0
_USER_CHARS = 64
_CAS_TRIES = 3
_MIN_SLEEP = 0.05
_REFUSALS_HELP = "answer_query calls the server refused (429), by limit."


class AnswerQuota:
    def __init__(
        self,
        store: Store,
        config: QuotaConfig,
        *,
        clock: Callable[[], datetime],
        metrics: Metrics | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        tally: Tally | None = None,
    ) -> None:
        self._store = store
        self.config = config
        #: until when "no pause" read from the store is trusted (`pause_check_seconds`)
        self._no_pause_until: datetime | None = None
        self._clock = clock
        self._metrics = metrics or Metrics()
        self._sleep = sleep
        self._tally = tally
        self._store_down = False

    async def acquire(self, user: str | None) -> Permit | Refusal:
        """May one answer_query call for `user` go out now? A Permit has counted it."""
        try:
            decision = await self._decide(self._clock(), user)
        except StoreError as exc:
            self._store_failed(exc)
            decision = Permit(counted=False)
        else:
            self._store_down = False
        if isinstance(decision, Permit) and self._tally is not None:
            await self._tally("answer_query:made")
        return decision

    async def acquire_waiting(
        self, user: str | None, *, on_wait: Callable[[float], Awaitable[None]] | None = None
    ) -> Permit | Refusal:
        """`acquire`, waiting (`wait_seconds` at most) for a minute that opens soon; `on_wait`
        is told each wait's seconds first (to tell the asker why)."""
        waited = 0.0
        while True:
            decision = await self.acquire(user)
            if isinstance(decision, Permit) or decision.wait is None:
                return decision
            pause = max(decision.wait, _MIN_SLEEP)
            if waited + pause > self.config.wait_seconds:
                return decision
            if on_wait is not None:
                await on_wait(decision.wait)
            # a shared answer whose askers all left (Stop) gives the wait up: no call for nobody
            await abandonable(partial(self._sleep, pause))
            waited += pause

    async def _decide(self, now: datetime, user: str | None) -> Permit | Refusal:
        pause = await self._pause(now)
        if pause is not None:
            return self._refusal(pause.kind, pause.until, pause.limit_value)
        reset, day, ttl = next_pacific_midnight(now), pacific_day(now), day_ttl(now)
        user_key = self._user_key(day, user)
        counted = [key for key in (user_key, day_key(day)) if key is not None]
        # the person's and the day's counts in one round trip
        results = await self._store.batch([Op.incr(key, 1, ttl) for key in counted])
        used = dict(zip(counted, (v if isinstance(v, int) else 0 for v in results), strict=True))
        if user_key is not None and used[user_key] > self.config.per_user_per_day:
            await self._give_back(counted, ttl)
            return Refusal("user", reset, limit_value=self.config.per_user_per_day)
        if self.config.per_day and used.get(day_key(day), 0) > self.config.per_day:
            await self._give_back(counted, ttl)
            return Refusal("day", reset, limit_value=self.config.per_day)
        if not self.config.per_minute:
            return Permit()
        stamp, limit = now.timestamp(), self.config.per_minute
        wait = await self._store.hit(MINUTE_KEY, limit, LEDGER_WINDOW_SECONDS, stamp)
        if wait is None:
            return Permit(stamp=stamp)
        await self._give_back(counted, ttl)
        return self._refusal("minute", now + timedelta(seconds=wait), limit)

    async def user_spent(self, user: str | None) -> Refusal | None:
        """Refusal("user", reset) when `user` has used today's allowance (nothing counted)."""
        now = self._clock()
        key = self._user_key(pacific_day(now), user)
        if key is None:
            return None
        try:
            used = await self._count(key)
        except StoreError as exc:
            self._store_failed(exc)
            return None
        if used < self.config.per_user_per_day:
            return None
        return Refusal("user", next_pacific_midnight(now), limit_value=self.config.per_user_per_day)

    async def _count(self, key: str) -> int:
        """A counter's value, 0 when absent: a read, so asking writes nothing."""
        used = await self._store.get(key, JSON)
        return used if isinstance(used, int) else 0

    def _refusal(self, kind: PauseKind, until: datetime, size: int | None) -> Refusal:
        remaining = max(0.0, (until - self._clock()).total_seconds())
        wait = remaining if kind == "minute" and remaining <= self.config.wait_seconds else None
        return Refusal(kind, until, wait, limit_value=size)

    async def refused(
        self, signal: QuotaSignal | None, user: str | None, permit: Permit | None = None
    ) -> Pause:
        """Follow the server's 429: pause answer_query (minute: its retry delay or the window;
        day: until Pacific midnight, the day spent; unknown: a short pause); told not to
        pause (`skip_until_reset` off), only say until when."""
        now, signal = self._clock(), signal or QuotaSignal("unknown")
        if self._tally is not None:
            await self._tally("answer_query:refused")
        self._metrics.count("gdocs_quota_refusals_total", _REFUSALS_HELP, limit=signal.limit)
        until = now + timedelta(seconds=signal.retry_after or self.config.unknown_pause_seconds)
        pause = Pause(signal.limit, until, signal.limit_value)
        if not self.config.skip_until_reset:  # the next question tries answer_query again
            return pause
        try:
            pause = Pause(signal.limit, await self._pause_until(signal, now), signal.limit_value)
            await self._extend_pause(pause, now)
            day, ttl = pacific_day(now), day_ttl(now)
            user_key = self._user_key(day, user)
            # the refused call is the person's no more; a spent day stays spent for the team
            keys = [user_key] if user_key else []
            if signal.limit == "day":  # the day count goes up to the limit
                target = self.config.per_day or signal.limit_value or 0
                used = await self._count(day_key(day))
                if used < target:
                    await self._store.incr(day_key(day), target - used, ttl)
            else:
                keys.append(day_key(day))
            await self._give_back(keys, ttl)
            if permit is not None and permit.stamp is not None:
                await self._store.unhit(MINUTE_KEY, permit.stamp)
        except StoreError as exc:
            self._store_failed(exc)
            return pause
        await self.publish()
        return pause

    async def _pause_until(self, signal: QuotaSignal, now: datetime) -> datetime:
        if signal.limit == "day":
            return next_pacific_midnight(now)
        if signal.retry_after is not None:
            seconds = min(signal.retry_after, MAX_SHORT_PAUSE_SECONDS)
        elif signal.limit == "minute":
            # the server's window holds our oldest call or older ones: a slot frees by then
            events = await self._store.window_events(
                MINUTE_KEY, LEDGER_WINDOW_SECONDS, now.timestamp()
            )
            oldest = events[0] if events else now.timestamp()
            # Google's own window: its 429 says our calls reached it (no margin needed)
            seconds = oldest + WINDOW_SECONDS - now.timestamp()
        else:
            seconds = self.config.unknown_pause_seconds
        return now + timedelta(seconds=max(seconds, MIN_PAUSE_SECONDS))

    async def _extend_pause(self, pause: Pause, now: datetime) -> None:
        """Set the pause unless a longer one is active (compare-and-set: replicas race)."""
        value: dict[str, Any] = {"kind": pause.kind, "until": pause.until.timestamp()}
        value["limit_value"] = pause.limit_value
        ttl = max(MIN_PAUSE_SECONDS, (pause.until - now).total_seconds())
        try:
            for _ in range(_CAS_TRIES):
                current = await self._store.get(PAUSE_KEY, JSON)
                active = read_pause(current)
                if active is not None and active.until >= pause.until:
                    return
                if current is None:
                    if await self._store.add(PAUSE_KEY, value, JSON, ttl):
                        return
                elif await self._store.replace(PAUSE_KEY, current, value, JSON, ttl):
                    return
        finally:
            self._no_pause_until = None  # the next call reads the pause as it stands now

    async def state(self, user: str | None) -> QuotaState:
        """The team's and `user`'s answers left, the minute, the pause and the next reset."""
        now, cfg = self._clock(), self.config
        day = pacific_day(now)
        pause = await self._pause(now)
        used = await self._count(day_key(day))
        events = await self._store.window_events(MINUTE_KEY, LEDGER_WINDOW_SECONDS, now.timestamp())
        user_key = self._user_key(day, user)
        user_used = await self._count(user_key) if user_key else None
        if isinstance(self._store, ResilientStore) and not self._store.up:
            # those reads were served by this process alone: not where the team stands
            raise StoreError("the state store is not answering")
        spent = pause is not None and pause.kind == "day"
        left_today = (0 if spent else max(0, cfg.per_day - used)) if cfg.per_day else None
        left_minute, next_slot = minute_room(cfg.per_minute, events, pause)
        user_left = None if user_used is None else max(0, cfg.per_user_per_day - user_used)
        return QuotaState(
            per_minute=cfg.per_minute,
            per_day=cfg.per_day,
            per_user_per_day=cfg.per_user_per_day,
            used_today=max(0, used),
            left_today=left_today,
            used_this_minute=len(events),
            left_this_minute=left_minute,
            next_slot=next_slot,
            user_used_today=None if user_used is None else max(0, user_used),
            user_left_today=user_left,
            pause=pause,
            next_reset=next_pacific_midnight(now),
        )

    async def publish(self) -> None:
        """Set the /metrics gauges (answers left today, this minute) from the ledger; run
        before each scrape too, so every replica reports the team's numbers."""
        if not (self.config.per_day or self.config.per_minute):
            return  # no team limit: no gauge to show, nothing to read
        try:
            state = await self.state(None)
        except StoreError:
            return
        for name, value, what in (  # gdocs_answers_left_today, gdocs_answers_left_this_minute
            ("today", state.left_today, "left today, by the bot's ledger"),
            ("this_minute", state.left_this_minute, "left in the current minute"),
        ):
            if value is not None:
                help_ = f"Generated answers (answer_query) {what}."
                self._metrics.set_gauge(f"gdocs_answers_left_{name}", help_, value)

    def _user_key(self, day: str, user: str | None) -> str | None:
        if not user or not self.config.per_user_per_day:
            return None
        return keys.QUOTA.key("user", day, user[:_USER_CHARS])

    async def _pause(self, now: datetime) -> Pause | None:
        if self._no_pause_until is not None and now < self._no_pause_until:
            return None
        pause = read_pause(await self._store.get(PAUSE_KEY, JSON))
        check = self.config.pause_check_seconds
        if pause is None and check > 0:
            self._no_pause_until = now + timedelta(seconds=check)
        # the store's clock may differ from ours (Redis keeps its own): check the time too
        return pause if pause is not None and pause.until > now else None

    async def _give_back(self, keys: list[str], ttl: float) -> None:
        for key in keys:
            if await self._store.incr(key, -1, ttl) < 0:
                await self._store.incr(key, 1, ttl)  # never below zero (a day that turned)

    def _store_failed(self, exc: StoreError) -> None:
        if not self._store_down:  # once an outage, not once a question
            logger.warning("quota ledger unavailable (%s); the server decides alone", exc.message)
        self._store_down = True
