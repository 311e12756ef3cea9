"""Per-channel settings (`/gdocs channel …`) in the store, `channel:<id>`, kept
CHANNEL_SETTINGS_RETENTION_DAYS after the last change (all defaults: deleted).

A question must not cost a store read: each process keeps a copy of every stored setting
and the store's change counter (`channels:generation`), reads the counter at most every
CACHE_SECONDS and scans again only when it moved. Past MAX_SNAPSHOT channels each is read
through a short cache. A store that does not answer reads as the last copy or the defaults.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import replace

from pydantic import TypeAdapter

from bot import keys
from bot.channels import ChannelSettings
from bot.store import AdapterCodec, Op, Store, StoreError

CACHE_SECONDS = 10.0
MAX_CACHED = 10_000
#: the most channels with settings one process keeps a complete copy of
MAX_SNAPSHOT = 10_000
_CODEC = AdapterCodec(TypeAdapter(ChannelSettings))
_GENERATION = keys.CHANNEL_GENERATION.key("generation")


class ChannelSettingsStore:
    def __init__(
        self,
        store: Store,
        *,
        answer_channels: frozenset[str] = frozenset(),
        retention_seconds: float = 365 * 86400,
        cache_seconds: float = CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        #: ANSWER_CHANNELS: answer channels by configuration, whatever is stored
        self.answer_channels = answer_channels
        self._retention = retention_seconds
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._cache: OrderedDict[str, tuple[float, ChannelSettings]] = OrderedDict()
        #: every stored setting as of `_generation` (None: not read yet, or too many)
        self._snapshot: dict[str, ChannelSettings] | None = None
        self._generation: int | None = None
        self._checked_until = float("-inf")
        self._refreshing: asyncio.Task[None] | None = None

    def is_fixed_auto(self, channel: str) -> bool:
        return channel in self.answer_channels

    async def get(self, channel: str) -> ChannelSettings:
        """What applies in `channel` now (ANSWER_CHANNELS included), from the cache when it
        was read less than CACHE_SECONDS ago. Never raises."""
        now = self._clock()
        if now >= self._checked_until:
            await self._refresh()
        if self._snapshot is not None:
            return self._effective(channel, self._snapshot.get(channel, ChannelSettings()))
        cached = self._cache.get(channel)
        if cached is not None and cached[0] > now:
            return self._effective(channel, cached[1])
        try:
            stored = await self.stored(channel)
        except StoreError:
            stored = ChannelSettings()  # degrade to the defaults; asked again next time
        else:
            self._remember(channel, stored, now)
        return self._effective(channel, stored)

    async def stored(self, channel: str) -> ChannelSettings:
        """What is stored for `channel` (not ANSWER_CHANNELS), read from the store itself."""
        found = await self._store.get(_key(channel), _CODEC)
        return found if found is not None else ChannelSettings()

    async def save(self, channel: str, settings: ChannelSettings) -> None:
        """Store `settings` for `channel` (StoreError when the store does not take it)."""
        change = (
            Op.delete(_key(channel))
            if settings.is_default
            else Op.set(_key(channel), settings, _CODEC, self._retention)
        )
        # the counter tells the other replicas to read the settings again
        await self._store.batch([change, Op.incr(_GENERATION, 1, self._retention)])
        self._remember(channel, settings, self._clock())
        if self._snapshot is not None:
            self._snapshot.pop(channel, None)
            if not settings.is_default:
                self._snapshot[channel] = settings

    async def of_many(self, channels: Iterable[str]) -> dict[str, ChannelSettings]:
        """The channels among `channels` that have settings (stored or ANSWER_CHANNELS)."""
        ids = list(dict.fromkeys(channels))
        if not ids:
            return {}
        try:
            found = await self._store.get_many([_key(c) for c in ids], _CODEC)
        except StoreError:
            found = [None] * len(ids)
        shown: dict[str, ChannelSettings] = {}
        for channel, settings in zip(ids, found, strict=True):
            if settings is not None or self.is_fixed_auto(channel):
                shown[channel] = self._effective(channel, settings or ChannelSettings())
        return shown

    async def _refresh(self) -> None:
        """The copy brought up to date: one refresh at a time, which every question
        arriving meanwhile waits for (shielded: one asker giving up does not cancel it)."""
        if self._refreshing is None:
            self._refreshing = asyncio.ensure_future(self._reread())
        await asyncio.shield(self._refreshing)

    async def _reread(self) -> None:
        try:
            # incr by 0 is the store's one typed read of a counter
            generation = await self._store.incr(_GENERATION, 0, self._retention)
            if generation != self._generation or self._snapshot is None:
                found = await self._store.scan(keys.CHANNEL.prefix, _CODEC, MAX_SNAPSHOT + 1)
                self._snapshot = _complete(found)
                self._generation = generation
        except StoreError:
            pass  # the copy it had (or a read per channel); tried again in CACHE_SECONDS
        finally:
            self._checked_until = self._clock() + self._cache_seconds
            self._refreshing = None

    def _effective(self, channel: str, settings: ChannelSettings) -> ChannelSettings:
        return replace(settings, mode="auto") if self.is_fixed_auto(channel) else settings

    def _remember(self, channel: str, settings: ChannelSettings, now: float) -> None:
        self._cache[channel] = (now + self._cache_seconds, settings)
        self._cache.move_to_end(channel)
        while len(self._cache) > MAX_CACHED:
            self._cache.popitem(last=False)


def _key(channel: str) -> str:
    return keys.CHANNEL.key(channel)


def _complete(found: list[tuple[str, ChannelSettings]]) -> dict[str, ChannelSettings] | None:
    """Every channel's settings from a scan, or None when there were too many to keep."""
    if len(found) > MAX_SNAPSHOT:
        return None
    prefix = keys.CHANNEL.prefix
    return {
        key.removeprefix(prefix): value
        for key, value in found
        if isinstance(value, ChannelSettings)
    }
