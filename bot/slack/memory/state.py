"""The Slack side's small state in the store: delivery claims' keys, per-user rate windows,
people's Slack profiles and what each thread is about. Keys: `rate:<user>`,
`profile:<user>`, `thread:<channel>:<ts>`; the store bounds and expires each namespace."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter
from slack_sdk.web.async_client import AsyncWebClient

from bot import keys
from bot.slack.failures import SLACK_CALL_FAILURES
from bot.store import AdapterCodec, Op, Store
from bot.text import is_language_tag

logger = logging.getLogger(__name__)

Clock = Callable[[], float]
RATE_WINDOW_SECONDS = 60.0
#: thread topics this process remembers having read or written (for their first asker)
MAX_TOPICS_SEEN = 2_000


def delivery_key(body: dict[str, Any]) -> str | None:
    """What identifies one delivery: the event id, or the trigger id of a command or click."""
    event_id = body.get("event_id")
    if isinstance(event_id, str) and event_id:
        return f"event:{event_id}"
    trigger_id = body.get("trigger_id")
    if isinstance(trigger_id, str) and trigger_id:
        return f"trigger:{trigger_id}"
    return None


class RateLimiter:
    """A sliding one-minute window of questions per user (0 per minute: unlimited)."""

    def __init__(self, store: Store, per_minute: int, *, clock: Clock = time.time) -> None:
        self._store = store
        self.per_minute = per_minute
        self._clock = clock

    async def try_acquire(self, user: str) -> float | None:
        """Record a question and return None, or return seconds to wait when over the limit."""
        if self.per_minute <= 0:
            return None
        return await self._store.hit(
            keys.RATE.key(user), self.per_minute, RATE_WINDOW_SECONDS, self._clock()
        )


@dataclass(frozen=True)
class UserProfile:
    """What `users.info` says about a person that the bot uses."""

    #: BCP-47, e.g. "it-IT"
    locale: str | None = None
    #: IANA time zone, e.g. "Europe/Rome"
    tz: str | None = None
    #: a workspace admin or owner; None: not known (kept before the bot asked)
    is_admin: bool | None = None


PROFILE_CODEC = AdapterCodec(TypeAdapter(UserProfile))
Fetch = Callable[[str], Awaitable[UserProfile | None]]


async def user_profile(client: AsyncWebClient, user: str) -> UserProfile | None:
    """One `users.info`: locale, time zone and admin role; None when Slack will not say."""
    try:
        response = await client.users_info(user=user, include_locale=True)
    except SLACK_CALL_FAILURES as exc:
        logger.info("users.info failed: %s", type(exc).__name__)
        return None
    info = response.get("user")
    if not isinstance(info, dict):
        return None
    locale, tz = info.get("locale"), info.get("tz")
    return UserProfile(
        locale=locale if isinstance(locale, str) else None,
        tz=tz if isinstance(tz, str) else None,
        is_admin=info.get("is_admin") is True or info.get("is_owner") is True,
    )


class UserProfiles:
    """Slack user → `UserProfile`, kept 6 hours; failures are not kept, and concurrent
    questions from one person share one `users.info` call."""

    def __init__(self, store: Store, ttl_seconds: float = 6 * 3600) -> None:
        self._store = store
        self._ttl = ttl_seconds
        self._pending: dict[str, asyncio.Future[UserProfile | None]] = {}

    async def get(self, user: str, fetch: Fetch) -> UserProfile | None:
        cached = await self._store.get(keys.PROFILE.key(user), PROFILE_CODEC)
        if cached is not None:
            return cached
        pending = self._pending.get(user)
        if pending is None:
            pending = asyncio.ensure_future(self._fetch(user, fetch))
            self._pending[user] = pending
            pending.add_done_callback(lambda _: self._pending.pop(user, None))
        return await asyncio.shield(pending)

    async def refreshed(self, user: str, fetch: Fetch) -> UserProfile | None:
        """Ask again now (a kept profile lacks something newer code needs), and keep it."""
        return await self._fetch(user, fetch)

    async def locale(self, user: str, fetch: Fetch) -> str | None:
        profile = await self.get(user, fetch)
        return profile.locale if profile is not None else None

    async def of(self, client: AsyncWebClient, user: str | None) -> UserProfile | None:
        return await self.get(user, lambda u: user_profile(client, u)) if user else None

    async def tz(self, client: AsyncWebClient, user: str | None) -> str | None:
        profile = await self.of(client, user)
        return profile.tz if profile is not None else None

    async def is_admin(self, client: AsyncWebClient, user: str) -> bool | None:
        """Whether `user` is a workspace admin or owner; None when Slack will not say. A
        profile kept without the role is asked for again, not taken as "no"."""
        profile = await self.of(client, user)
        if profile is None or profile.is_admin is None:
            profile = await self.refreshed(user, lambda u: user_profile(client, u))
        return None if profile is None else profile.is_admin

    async def _fetch(self, user: str, fetch: Fetch) -> UserProfile | None:
        found = await fetch(user)
        if found is None:
            return None
        locale = found.locale if found.locale and is_language_tag(found.locale) else None
        tz = found.tz if _is_zone_name(found.tz) else None
        profile = UserProfile(locale=locale, tz=tz, is_admin=found.is_admin)
        if profile == UserProfile():
            return None  # nothing usable: ask again next time
        await self._store.set(keys.PROFILE.key(user), profile, PROFILE_CODEC, self._ttl)
        return profile


def _is_zone_name(tz: str | None) -> bool:
    """An IANA-shaped zone name ("Europe/Rome", "UTC"), not arbitrary text."""
    return bool(tz) and len(tz or "") <= 64 and all(c.isalnum() or c in "/_+-" for c in tz or "")


@dataclass(frozen=True)
class ThreadTopic:
    """What a thread the bot answered in is about, and who asked first there."""

    question: str
    asker: str | None = None


_TOPIC = AdapterCodec(TypeAdapter(ThreadTopic))


class ThreadMemory:
    """The question a thread is about (for short follow-ups) and its first asker (whose
    follow-ups are answered without a mention). Only threads the bot answered in have one:
    that lets the follow-up listener ignore every other thread without asking Slack."""

    def __init__(self, store: Store, ttl_seconds: float = 24 * 3600) -> None:
        self._store = store
        self._ttl = ttl_seconds
        #: topics read or written lately: who asked first, without a second read
        self._seen: OrderedDict[str, ThreadTopic] = OrderedDict()

    async def topic(self, channel: str, thread_ts: str) -> ThreadTopic | None:
        key = keys.THREAD.key(channel, thread_ts)
        found = await self._store.get(key, _TOPIC)
        if found is not None:
            self._saw(key, found)
        return found

    async def question(self, channel: str, thread_ts: str) -> str | None:
        found = await self.topic(channel, thread_ts)
        return found.question if found is not None else None

    async def remember(
        self, channel: str, thread_ts: str, question: str, asker: str | None = None
    ) -> None:
        """Record the thread's latest question; the first asker stays its asker."""
        await self.topic(channel, thread_ts)
        await self._store.batch([self.op(channel, thread_ts, question, asker)])

    def op(self, channel: str, thread_ts: str, question: str, asker: str | None) -> Op:
        """The write recording the thread's latest question, for a batch; the first asker
        is the one this process read or wrote for the thread, else `asker`."""
        key = keys.THREAD.key(channel, thread_ts)
        earlier = self._seen.get(key)
        topic = ThreadTopic(question, earlier.asker if earlier and earlier.asker else asker)
        self._saw(key, topic)
        return Op.set(key, topic, _TOPIC, self._ttl)

    def _saw(self, key: str, topic: ThreadTopic) -> None:
        self._seen[key] = topic
        self._seen.move_to_end(key)
        while len(self._seen) > MAX_TOPICS_SEEN:
            self._seen.popitem(last=False)
