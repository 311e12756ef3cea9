"""Per-channel settings (`/gdocs channel …`) in the state store, so replicas share them and
a restart keeps them: key `channel:<id>` → `ChannelSettings`, kept CHANNEL_SETTINGS_RETENTION_DAYS
after the last change (each change writes it again; going back to every default deletes it).

The bot hears every message in every channel it is in, so the settings are read through a
short per-process cache (CACHE_SECONDS, at most MAX_CACHED channels): a change made on
another replica is seen within that, one made here at once. A store that does not answer
reads as the defaults (and ANSWER_CHANNELS), never as an error on the hot path.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import replace

from pydantic import TypeAdapter

from bot import keys
from bot.channels import ChannelSettings
from bot.store import AdapterCodec, Store, StoreError

CACHE_SECONDS = 10.0
MAX_CACHED = 10_000
_CODEC = AdapterCodec(TypeAdapter(ChannelSettings))


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

    def is_fixed_auto(self, channel: str) -> bool:
        return channel in self.answer_channels

    async def get(self, channel: str) -> ChannelSettings:
        """What applies in `channel` now (ANSWER_CHANNELS included), from the cache when it
        was read less than CACHE_SECONDS ago. Never raises."""
        now = self._clock()
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
        if settings.is_default:
            await self._store.delete(_key(channel))
        else:
            await self._store.set(_key(channel), settings, _CODEC, self._retention)
        self._remember(channel, settings, self._clock())

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

    def _effective(self, channel: str, settings: ChannelSettings) -> ChannelSettings:
        return replace(settings, mode="auto") if self.is_fixed_auto(channel) else settings

    def _remember(self, channel: str, settings: ChannelSettings, now: float) -> None:
        self._cache[channel] = (now + self._cache_seconds, settings)
        self._cache.move_to_end(channel)
        while len(self._cache) > MAX_CACHED:
            self._cache.popitem(last=False)


def _key(channel: str) -> str:
    return keys.CHANNEL.key(channel)
