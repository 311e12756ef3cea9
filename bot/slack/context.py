"""Everything a listener needs, built once and passed in (no module globals)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.docs import DocsService
from bot.inflight import InFlight
from bot.observability.metrics import Metrics
from bot.settings import Settings
from bot.slack.identity import SlackIdentity
from bot.slack.stores import (
    DedupeStore,
    InMemoryDedupeStore,
    LocaleCache,
    RateLimiter,
    ThreadMemory,
)


@dataclass
class BotContext:
    settings: Settings
    service: DocsService
    metrics: Metrics
    inflight: InFlight
    dedupe: DedupeStore
    limiter: RateLimiter
    locales: LocaleCache
    threads: ThreadMemory
    #: the bot's own ids (auth.test), fetched once; the runtime may `prime()` it
    identity: SlackIdentity = field(default_factory=SlackIdentity)


def build_context(settings: Settings, service: DocsService, metrics: Metrics) -> BotContext:
    """A context with in-memory stores sized from `settings`."""
    return BotContext(
        settings=settings,
        service=service,
        metrics=metrics,
        inflight=InFlight(),
        dedupe=InMemoryDedupeStore(settings.dedupe_ttl_seconds),
        limiter=RateLimiter(settings.rate_limit_per_user_per_minute),
        locales=LocaleCache(),
        threads=ThreadMemory(),
    )
