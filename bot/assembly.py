"""The composition root: one place that builds every part, in order, and one that closes
them, in reverse (an `AsyncExitStack`). `serve`, the CLI and the tests all build here.

    async with open_core(settings) as core:      # the CLI: store + docs service
        await core.service.ask("…")
    async with open_state(settings) as store:    # the CLI's read of what the bot stored
        await store.scan("feedback:", …)
    async with open_bot(settings) as bot:        # serve and the tests: + Slack and health
        ...

Nothing is contacted while building: the store may open a file or a connection pool, the
docs service and Slack's client connect on first use.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.health import Readiness
from bot.observability.metrics import Metrics
from bot.report.tally import DailyTally
from bot.settings import Settings
from bot.store import (
    MemoryStore,
    ResilientStore,
    Store,
    StoreUnavailable,
    describe_url,
    open_store,
)
from bot.store._open import redis_store
from bot.upstream import GoogleDocsService, UpstreamConfig, build_service

logger = logging.getLogger(__name__)

if TYPE_CHECKING:  # the CLI never loads the Slack side
    from slack_bolt.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.deps import SlackDeps


@dataclass(frozen=True)
class Core:
    """What every command needs: settings, metrics, the state store and the docs service."""

    settings: Settings
    metrics: Metrics
    store: Store
    service: GoogleDocsService
    #: the per-day counters behind `gdocs-bot report`
    tally: DailyTally


@dataclass(frozen=True)
class Bot:
    """The Slack bot's parts, on top of the core (the runtime adds serving and signals)."""

    core: Core
    client: AsyncWebClient
    app: AsyncApp
    #: what the listeners share
    deps: SlackDeps
    readiness: Readiness

    @property
    def settings(self) -> Settings:
        return self.core.settings

    @property
    def metrics(self) -> Metrics:
        return self.core.metrics


@asynccontextmanager
async def open_core(
    settings: Settings,
    *,
    metrics: Metrics | None = None,
    clock: Callable[[], datetime] | None = None,
    backoff_base: float = 0.5,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> AsyncIterator[Core]:
    """Build the store and the docs service; close them (service first) on exit.

    StoreConfigError when STATE_URL cannot work (a wrong URL or password, a file that is not
    a database): start-up stops with its one line. A store that does not answer yet (Redis
    down) is not fatal: the bot starts on per-process state and uses the store once it is up.
    `clock` (aware UTC) and `sleep` (how the quota waits for a minute slot) are for tests.
    """
    metrics = Metrics() if metrics is None else metrics
    async with AsyncExitStack() as stack:
        store = await _open_state(settings, metrics)
        stack.push_async_callback(store.aclose)
        tally = DailyTally(
            store, retention_days=settings.feedback_retention_days, clock=clock or _utc_now
        )
        service = build_service(
            UpstreamConfig.from_settings(settings),
            store=store,
            metrics=metrics,
            clock=clock,
            backoff_base=backoff_base,
            sleep=sleep,
            tally=tally.count,
        )
        stack.push_async_callback(service.aclose)
        yield Core(settings=settings, metrics=metrics, store=store, service=service, tally=tally)


@asynccontextmanager
async def open_bot(
    settings: Settings,
    *,
    metrics: Metrics | None = None,
    clock: Callable[[], datetime] | None = None,
    backoff_base: float = 0.5,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> AsyncIterator[Bot]:
    """The core, Slack's Web API client, the listeners' dependencies, the Bolt app and the
    readiness state. Building it makes no Slack call."""
    from bot.slack.app import build_bolt_app, build_web_client
    from bot.slack.deps import build_deps

    async with AsyncExitStack() as stack:
        core = await stack.enter_async_context(
            open_core(
                settings, metrics=metrics, clock=clock, backoff_base=backoff_base, sleep=sleep
            )
        )
        token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
        client = build_web_client(token, str(settings.slack_api_url))
        stack.push_async_callback(_close_session, client)
        readiness = Readiness(
            core.service,
            store=core.store,
            mode="socket" if settings.socket_mode else "http",
            probe_interval=settings.readiness_probe_seconds,
            # the service bounds each server's check by MCP_TIMEOUT_SECONDS; this is a backstop
            probe_timeout=settings.mcp_timeout_seconds + 5,
        )
        deps = build_deps(
            settings,
            service=core.service,
            quota=core.service.quota,
            metrics=core.metrics,
            store=core.store,
            clock=clock,
            docs_status=readiness.dk_status,
            tally=core.tally,
        )
        app = build_bolt_app(deps, client)
        yield Bot(core=core, client=client, app=app, deps=deps, readiness=readiness)


@asynccontextmanager
async def open_state(settings: Settings) -> AsyncIterator[Store]:
    """The store STATE_URL names, as it is: no per-process fallback and no per-call timeout.
    For a command that reads what the bot wrote (`gdocs-bot feedback export`), a store that
    does not answer is an error (StoreError), never an empty result."""
    store = await open_store(
        settings.state_url.get_secret_value(),
        prefix=settings.state_prefix,
        max_entries=settings.cache_max_entries,
    )
    try:
        yield store
    finally:
        await store.aclose()


async def _open_state(settings: Settings, metrics: Metrics) -> Store:
    url = settings.state_url.get_secret_value()
    prefix, bound = settings.state_prefix, settings.cache_max_entries
    try:
        primary = await open_store(url, prefix=prefix, max_entries=bound)
    except StoreUnavailable as exc:
        logger.warning("%s; starting on per-process state until it answers", exc.message)
        primary = redis_store(url, prefix=prefix)  # only Redis is ever "unavailable"
    if isinstance(primary, MemoryStore):
        return primary
    logger.info("state store: %s", describe_url(url), extra={"store": primary.kind})
    return ResilientStore(primary, timeout=settings.state_timeout_seconds, metrics=metrics, url=url)


def _utc_now() -> datetime:
    return datetime.now(UTC)


async def _close_session(client: AsyncWebClient) -> None:
    session = client.session
    if session is not None and not session.closed:
        await session.close()
