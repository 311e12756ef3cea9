"""What the Slack side keeps in the store: delivery keys, per-user rate windows (`rate:`),
profiles (`profile:`), thread topics (`thread:`), channel settings (`channel:`, read as the
defaults when the store does not answer) and each person's last questions (`recent:`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import KW_ONLY, dataclass, replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict
from slack_sdk.web.async_client import AsyncWebClient

from bot import keys, tenant
from bot.channels import ChannelSettings
from bot.models import Scope
from bot.slack import SLACK_CALL_FAILURES
from bot.store import AdapterCodec, Op, Store, StoreError
from bot.text import is_language_tag, one_line
from bot.upstream import question_key

logger = logging.getLogger(__name__)

Clock = Callable[[], float]
RATE_WINDOW_SECONDS = 60.0


def delivery_key(body: dict[str, Any]) -> str | None:
    for field, kind in (("event_id", "event"), ("trigger_id", "trigger")):
        if isinstance(found := body.get(field), str) and found:
            return f"{kind}:{found}"
    return None


class RateLimiter:
    """A sliding one-minute window of questions per user (0: unlimited)."""

    def __init__(self, store: Store, per_minute: int, *, clock: Clock = time.time) -> None:
        self._store = store
        self.per_minute = per_minute
        self._clock = clock

    async def try_acquire(self, user: str) -> float | None:
        """Record a question (None), or the seconds to wait when over the limit."""
        if self.per_minute <= 0:
            return None
        key, now = keys.RATE.key(user), self._clock()
        return await self._store.hit(key, self.per_minute, RATE_WINDOW_SECONDS, now)


@dataclass(frozen=True)
class UserProfile:
    locale: str | None = None  # BCP-47, e.g. "it-IT"
    tz: str | None = None  # IANA, e.g. "Europe/Rome"
    is_admin: bool | None = None  # a workspace admin or owner; None: not known
    team: str | None = None  # their workspace (T…), as users.info said; None: not asked yet
    org: str | None = None  # their Grid organisation (E…; None: in none): guests.py on Grid


PROFILE_CODEC = AdapterCodec(UserProfile)
Fetch = Callable[[str], Awaitable[UserProfile | None]]


async def user_profile(client: AsyncWebClient, user: str) -> UserProfile | None:
    try:
        response = await client.users_info(user=user, include_locale=True)
    except SLACK_CALL_FAILURES as exc:
        logger.info("users.info failed: %s", type(exc).__name__)
        return None
    info = response.get("user")
    if not isinstance(info, dict):
        return None
    grid = info.get("enterprise_user") or {}  # a Grid member's organisation
    said = (info.get("locale"), info.get("tz"), info.get("team_id"), grid.get("enterprise_id"))
    locale, tz, team, org = (s if isinstance(s, str) and s else None for s in said)
    admin = info.get("is_admin") is True or info.get("is_owner") is True
    return UserProfile(locale, tz, admin, team, org)


class UserProfiles:
    """Slack user → `UserProfile`, kept 6 hours; failures are not kept."""

    def __init__(self, store: Store, ttl_seconds: float = 6 * 3600) -> None:
        self._store = store
        self._ttl = ttl_seconds
        self._asking: dict[str, asyncio.Future[UserProfile | None]] = {}

    async def get(self, user: str, fetch: Fetch) -> UserProfile | None:
        """The kept profile, else one users.info call shared by the questions asking at once."""
        key = tenant.scoped(keys.PROFILE.key(user))  # Grid: is_admin is one workspace's
        if (cached := await self._store.get(key, PROFILE_CODEC)) is not None:
            return cached
        if (asking := self._asking.get(key)) is None:
            asking = self._asking[key] = asyncio.ensure_future(self._fetch(user, fetch))
            asking.add_done_callback(lambda _: self._asking.pop(key, None))
        return await asyncio.shield(asking)

    async def of(self, client: AsyncWebClient, user: str | None) -> UserProfile | None:
        return await self.get(user, lambda u: user_profile(client, u)) if user else None

    async def tz(self, client: AsyncWebClient, user: str | None) -> str | None:
        return getattr(await self.of(client, user), "tz", None)

    async def is_admin(self, client: AsyncWebClient, user: str) -> bool | None:
        """A workspace admin or owner? None when Slack will not say."""
        return getattr(await self.knowing(client, user, "is_admin"), "is_admin", None)

    async def knowing(self, client: AsyncWebClient, user: str, field: str) -> UserProfile | None:
        """The profile with `field` known: one kept without it (by an older bot) is asked for
        again; None, or `field` None, when Slack will not say."""
        profile = await self.of(client, user)
        if profile is not None and getattr(profile, field) is None:
            profile = await self._fetch(user, lambda u: user_profile(client, u))
        return profile

    async def _fetch(self, user: str, fetch: Fetch) -> UserProfile | None:
        if (found := await fetch(user)) is None:
            return None
        locale = found.locale if found.locale and is_language_tag(found.locale) else None
        tz = found.tz if _is_zone_name(found.tz) else None
        profile = replace(found, locale=locale, tz=tz)
        if profile == UserProfile():
            return None  # nothing usable: ask again next time
        kept = tenant.scoped(keys.PROFILE.key(user))
        await self._store.set(kept, profile, PROFILE_CODEC, self._ttl)
        return profile


def _is_zone_name(tz: str | None) -> bool:
    return bool(tz) and len(tz or "") <= 64 and all(c.isalnum() or c in "/_+-" for c in tz or "")


@dataclass(frozen=True)
class ThreadTopic:
    question: str
    asker: str | None = None
    #: the products its question named itself (`in:…`); None: it named none
    scope: Scope | None = None


_TOPIC = AdapterCodec(ThreadTopic)


class ThreadMemory:
    """What a thread the bot answered in is about (for short follow-ups) and its first asker
    (whose follow-ups need no mention); other threads have none."""

    def __init__(self, store: Store, ttl_seconds: float = 24 * 3600) -> None:
        self._store = store
        self._ttl = ttl_seconds

    async def topic(self, channel: str, thread_ts: str) -> ThreadTopic | None:
        return await self._store.get(keys.THREAD.key(channel, thread_ts), _TOPIC)

    async def remember(self, channel: str, thread_ts: str, topic: ThreadTopic) -> None:
        """Record the thread's latest question; the first asker stays its asker."""
        earlier = await self.topic(channel, thread_ts)
        if earlier is not None and earlier.asker:
            topic = replace(topic, asker=earlier.asker)
        await self._store.batch([self.op(channel, thread_ts, topic)])

    def op(self, channel: str, thread_ts: str, topic: ThreadTopic) -> Op:
        """The write recording a new thread's topic, for a batch."""
        return Op.set(keys.THREAD.key(channel, thread_ts), topic, _TOPIC, self._ttl)


_CHANNEL = AdapterCodec(ChannelSettings)


@dataclass(frozen=True)
class ChannelSettingsStore:
    store: Store
    _: KW_ONLY
    answer_channels: frozenset[str] = frozenset()  # by configuration, whatever is stored
    retention_seconds: float = 365 * 86400

    def is_fixed_auto(self, channel: str) -> bool:
        return channel in self.answer_channels

    async def get(self, channel: str) -> ChannelSettings:
        """What applies in `channel` now (ANSWER_CHANNELS included). Never raises."""
        try:
            found = await self.stored(channel)
        except StoreError:
            found = ChannelSettings()
        return self._effective(channel, found)

    async def stored(self, channel: str) -> ChannelSettings:
        """What is stored for `channel` (not ANSWER_CHANNELS)."""
        return await self.store.get(keys.CHANNEL.key(channel), _CHANNEL) or ChannelSettings()

    async def save(self, channel: str, settings: ChannelSettings) -> None:
        """Keep `settings` for `channel`, as this installation's (StoreError: not kept)."""
        key, settings = keys.CHANNEL.key(channel), replace(settings, workspace=tenant.current())
        if settings.is_default:
            await self.store.delete(key)
        else:
            await self.store.set(key, settings, _CHANNEL, self.retention_seconds)

    async def of_many(self, channels: Iterable[str]) -> dict[str, ChannelSettings]:
        """The channels among `channels` that have settings (stored or ANSWER_CHANNELS)."""
        if not (ids := list(dict.fromkeys(channels))):
            return {}
        try:
            found = await self.store.get_many([keys.CHANNEL.key(c) for c in ids], _CHANNEL)
        except StoreError:
            found = [None] * len(ids)
        return {
            channel: self._effective(channel, settings or ChannelSettings())
            for channel, settings in zip(ids, found, strict=True)
            if settings is not None or self.is_fixed_auto(channel)
        }

    def _effective(self, channel: str, settings: ChannelSettings) -> ChannelSettings:
        return replace(settings, mode="auto") if self.is_fixed_auto(channel) else settings


MAX_RECENT = 10
MAX_RECENT_CHARS = 500
RECENT_TTL_SECONDS = 30 * 86_400.0
#: compare-and-set attempts when two questions of one person land at once
_CAS_TRIES = 3


class Asked(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    #: what was asked, without the subcommand (`private`, `search`…) that routed it
    text: str
    at: datetime
    #: the route it took ("answer", "search", "pay", "doc"); None: kept by an older version,
    #: whose `text` is as typed
    kind: str | None = None
    private: bool = False
    #: it got an error instead of an answer
    failed: bool = False
    #: the products it was limited to (`in:…`, the channel's)
    scope: Scope = ()


_RECENT = AdapterCodec(list[Asked])


def _distinct(asked: list[Asked]) -> list[Asked]:
    """The first of each normalised question (the cache's key: case, spacing and filler
    words do not count)."""
    first: dict[str, Asked] = {}
    for a in asked:
        first.setdefault(question_key(a.text), a)
    return list(first.values())[:MAX_RECENT]


class RecentQuestions:
    """Who asked what lately; a nicety, so a store failure only costs the history."""

    def __init__(self, store: Store, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock

    async def remember(
        self,
        user: str,
        question: str,
        *,
        kind: str | None = None,
        private: bool = False,
        failed: bool = False,
        scope: Scope = (),
    ) -> None:
        """`question` first in `user`'s list (an earlier form of it moves up, not twice)."""
        if not (text := one_line(question, MAX_RECENT_CHARS)):
            return
        asked = Asked(
            text=text, at=self._clock(), kind=kind, private=private, failed=failed, scope=scope
        )
        key, store, ttl = keys.RECENT.key(user), self._store, RECENT_TTL_SECONDS
        try:
            for _ in range(_CAS_TRIES):
                current = await store.get(key, _RECENT)
                updated = _distinct([asked, *(current or [])])
                if current is None:
                    written = await store.add(key, updated, _RECENT, ttl)
                else:
                    written = await store.replace(key, current, updated, _RECENT, ttl)
                if written:
                    return
        except StoreError as exc:
            logger.info("recent questions not kept: %s", exc.message)

    async def of(self, user: str) -> list[Asked]:
        """`user`'s recent questions, newest first ([] when none, or the store fails)."""
        try:
            return _distinct(await self._store.get(keys.RECENT.key(user), _RECENT) or [])
        except StoreError as exc:
            logger.info("recent questions unavailable: %s", exc.message)
            return []
