"""Per-channel settings (`/gdocs channel …`) in the store (`channel:<id>`). A question
costs no store read: each process keeps a copy of them all, scanned again only when the
change counter (`channels:generation`, read at most every CACHE_SECONDS) moved; a store
that does not answer reads as the last copy, or the defaults."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import replace

from pydantic import TypeAdapter

from bot import keys
from bot.channels import ChannelSettings
from bot.store import AdapterCodec, Op, Store, StoreError

CACHE_SECONDS = 10.0
#: the most channels with settings one process keeps a copy of
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
        self._snapshot: dict[str, ChannelSettings] = {}
        self._generation: int | None = None
        self._checked_until = float("-inf")
        self._refreshing: asyncio.Task[None] | None = None

    def is_fixed_auto(self, channel: str) -> bool:
        return channel in self.answer_channels

    async def get(self, channel: str) -> ChannelSettings:
        """What applies in `channel` now (ANSWER_CHANNELS included). Never raises."""
        if self._clock() >= self._checked_until:
            if self._refreshing is None:  # one at a time; a caller giving up cancels nothing
                self._refreshing = asyncio.ensure_future(self._reread())
            await asyncio.shield(self._refreshing)
        return self._effective(channel, self._snapshot.get(channel, ChannelSettings()))

    async def stored(self, channel: str) -> ChannelSettings:
        """What is stored for `channel` (not ANSWER_CHANNELS), read from the store itself."""
        found = await self._store.get(keys.CHANNEL.key(channel), _CODEC)
        return found if found is not None else ChannelSettings()

    async def save(self, channel: str, settings: ChannelSettings) -> None:
        """Store `settings` for `channel` (StoreError when the store does not take it)."""
        key = keys.CHANNEL.key(channel)
        change = (
            Op.delete(key)
            if settings.is_default
            else Op.set(key, settings, _CODEC, self._retention)
        )
        # the counter tells the other replicas to read the settings again
        await self._store.batch([change, Op.incr(_GENERATION, 1, self._retention)])
        self._snapshot.pop(channel, None)
        if not settings.is_default:
            self._snapshot[channel] = settings

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

    async def _reread(self) -> None:
        try:
            # incr by 0 is the store's one typed read of a counter
            generation = await self._store.incr(_GENERATION, 0, self._retention)
            if generation != self._generation:
                found = await self._store.scan(keys.CHANNEL.prefix, _CODEC, MAX_SNAPSHOT)
                prefix = keys.CHANNEL.prefix
                self._snapshot = {k.removeprefix(prefix): v for k, v in found}
                self._generation = generation
        except StoreError:
            pass  # the copy it had; tried again in CACHE_SECONDS
        finally:
            self._checked_until = self._clock() + self._cache_seconds
            self._refreshing = None

    def _effective(self, channel: str, settings: ChannelSettings) -> ChannelSettings:
        return replace(settings, mode="auto") if self.is_fixed_auto(channel) else settings
