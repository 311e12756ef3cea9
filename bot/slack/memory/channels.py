"""Per-channel settings (`/gdocs channel …`) in the store (`channel:<id>`), read when a
question needs them; a store that does not answer reads as the defaults."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from pydantic import TypeAdapter

from bot import keys
from bot.channels import ChannelSettings
from bot.store import AdapterCodec, Store, StoreError

_CODEC = AdapterCodec(TypeAdapter(ChannelSettings))


class ChannelSettingsStore:
    def __init__(
        self,
        store: Store,
        *,
        answer_channels: frozenset[str] = frozenset(),
        retention_seconds: float = 365 * 86400,
    ) -> None:
        self._store = store
        #: ANSWER_CHANNELS: answer channels by configuration, whatever is stored
        self.answer_channels = answer_channels
        self._retention = retention_seconds

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
        found = await self._store.get(keys.CHANNEL.key(channel), _CODEC)
        return found if found is not None else ChannelSettings()

    async def save(self, channel: str, settings: ChannelSettings) -> None:
        """Store `settings` for `channel` (StoreError when the store does not take it)."""
        key = keys.CHANNEL.key(channel)
        if settings.is_default:
            await self._store.delete(key)
        else:
            await self._store.set(key, settings, _CODEC, self._retention)

    async def of_many(self, channels: Iterable[str]) -> dict[str, ChannelSettings]:
        """The channels among `channels` that have settings (stored or ANSWER_CHANNELS)."""
        ids = list(dict.fromkeys(channels))
        if not ids:
            return {}
        try:
            found = await self._store.get_many([keys.CHANNEL.key(c) for c in ids], _CODEC)
        except StoreError:
            found = [None] * len(ids)
        return {
            channel: self._effective(channel, settings or ChannelSettings())
            for channel, settings in zip(ids, found, strict=True)
            if settings is not None or self.is_fixed_auto(channel)
        }

    def _effective(self, channel: str, settings: ChannelSettings) -> ChannelSettings:
        return replace(settings, mode="auto") if self.is_fixed_auto(channel) else settings
