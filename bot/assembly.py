"""The composition root: one place that builds every part, in order, and one that closes
them, in reverse (an `AsyncExitStack`). `serve`, the CLI and the tests all build here.

    async with open_core(settings) as core:      # the CLI: store + docs service
        await core.service.ask("…")
    async with open_feedback(settings) as log:   # the CLI's read of the stored votes
        await log.votes()
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

from bot.feedback import FeedbackLog
from bot.health import Readiness
from bot.observability.metrics import Metrics
from bot.redact import redact_url
from bot.settings import Settings
from bot.store import (
    MemoryStore,
    ResilientStore,
    Store,
    StoreUnavailable,
    open_store,
    redis_store,
    state_file,
)
from bot.upstream import GoogleDocsService, UpstreamConfig, build_service
from bot.worklog import WorkLog

logger = logging.getLogger(__name__)

if TYPE_CHECKING:  # the CLI never loads the Slack side
    from slack_bolt.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.deps import DocsStatus, SlackDeps


@dataclass(frozen=True)
class Core:
    """What every command needs: settings, metrics, the state store and the docs service."""

    settings: Settings
    metrics: Metrics
    store: Store
    service: GoogleDocsService
    #: the SQLite file STATE_URL names did not exist and was not created (a look-only command
    #: ran on per-process state): `check` says so
    state_file_missing: bool = False


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
    create_state_file: bool = True,
) -> AsyncIterator[Core]:
    """Build the store and the docs service; close them (service first) on exit.

    StoreConfigError when STATE_URL cannot work (a wrong URL or password, a file that is not
    a database): start-up stops with its one line. A store that does not answer yet (Redis
    down) is not fatal: the bot starts on per-process state and uses the store once it is up.
    `clock` (aware UTC) and `sleep` (how the quota waits for a minute slot) are for tests.
    `create_state_file=False` (commands that only look: `check`, `search`): an SQLite file
    that does not exist yet is not created; the command runs on per-process state.
    """
    metrics = Metrics() if metrics is None else metrics
    path = state_file(settings.state_url.get_secret_value())
    missing = not create_state_file and path is not None and not path.exists()
    async with AsyncExitStack() as stack:
        if missing:
            store: Store = MemoryStore(max_entries=settings.cache_max_entries)
        else:
            store = await _open_resilient_store(settings, metrics)
        stack.push_async_callback(store.aclose)
        service = build_service(
            UpstreamConfig.from_settings(settings),
            store=store,
            metrics=metrics,
            clock=clock,
            backoff_base=backoff_base,
            sleep=sleep,
        )
        stack.push_async_callback(service.aclose)
        yield Core(
            settings=settings,
            metrics=metrics,
            store=store,
            service=service,
            state_file_missing=missing,
        )


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
        deps = _slack_deps(settings, core, clock=clock, docs_status=readiness.dk_status)
        app = build_bolt_app(deps, client)
        yield Bot(core=core, client=client, app=app, deps=deps, readiness=readiness)


@asynccontextmanager
async def open_feedback(settings: Settings) -> AsyncIterator[FeedbackLog]:
    """The votes and answer records in the store STATE_URL names, read as they are: no
    per-process fallback and no per-call timeout. For `gdocs-bot feedback export`, a store
    that does not answer is an error (StoreError), never an empty result."""
    store = await open_store(
        settings.state_url.get_secret_value(),
        prefix=settings.state_prefix,
        max_entries=settings.cache_max_entries,
    )
    try:
        yield _feedback_log(settings, store, _utc_now)
    finally:
        await store.aclose()


def _slack_deps(
    settings: Settings,
    core: Core,
    *,
    clock: Callable[[], datetime] | None,
    docs_status: DocsStatus,
) -> SlackDeps:
    """What the listeners share, built on the core (nothing is contacted)."""
    from bot.inflight import InFlight
    from bot.slack.deps import SlackConfig, SlackDeps
    from bot.slack.flows.routing import Router
    from bot.slack.identity import SlackIdentity
    from bot.slack.memory.recent import RecentQuestions
    from bot.slack.memory.state import RateLimiter, ThreadMemory, UserProfiles

    config = SlackConfig.from_settings(settings)
    now = clock or _utc_now
    store, metrics = core.store, core.metrics
    return SlackDeps(
        config=config,
        service=core.service,
        metrics=metrics,
        inflight=InFlight(),
        store=store,
        router=Router(settings.answer_min_words, settings.route_pay_questions),
        limiter=RateLimiter(store, config.rate_limit_per_user_per_minute),
        profiles=UserProfiles(store),
        threads=ThreadMemory(store),
        identity=SlackIdentity(),
        quota=core.service.quota,
        clock=now,
        work=WorkLog(
            store,
            lease_seconds=settings.work_lease_seconds,
            max_age_seconds=settings.work_max_age_seconds,
            done_seconds=settings.dedupe_ttl_seconds,
            metrics=metrics,
        ),
        feedback=_feedback_log(settings, store, now),
        recent=RecentQuestions(store, now),
        docs_status=docs_status,
    )


def _feedback_log(settings: Settings, store: Store, clock: Callable[[], datetime]) -> FeedbackLog:
    return FeedbackLog(store, retention_days=settings.feedback_retention_days, clock=clock)


def _utc_now() -> datetime:
    return datetime.now(UTC)


async def _open_resilient_store(settings: Settings, metrics: Metrics) -> Store:
    url = settings.state_url.get_secret_value()
    prefix, bound = settings.state_prefix, settings.cache_max_entries
    try:
        primary = await open_store(url, prefix=prefix, max_entries=bound)
    except StoreUnavailable as exc:
        logger.warning("%s; starting on per-process state until it answers", exc.message)
        primary = redis_store(url, prefix=prefix)  # only Redis is ever "unavailable"
    if isinstance(primary, MemoryStore):
        return primary
    logger.info("state store: %s", redact_url(url), extra={"store": primary.kind})
    return ResilientStore(primary, timeout=settings.state_timeout_seconds, metrics=metrics, url=url)


async def _close_session(client: AsyncWebClient) -> None:
    session = client.session
    if session is not None and not session.closed:
        await session.close()
