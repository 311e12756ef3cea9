"""The composition root: builds every part in order and closes them in reverse. `open_core`
(the CLI: store and docs service), `open_bot` (serve, tests: plus Slack and health),
`open_state` (the commands that read what the bot recorded). Nothing is contacted while
building; no part but this one reads `Settings` for another."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.feedback import FeedbackLog
from bot.keys import UNEVICTED
from bot.observability.metrics import Metrics
from bot.redact import redact_url
from bot.report.tally import DailyTally
from bot.serving.health import Readiness
from bot.settings import Settings, reveal
from bot.store import (
    MemoryStore,
    ResilientStore,
    Store,
    StoreUnavailable,
    open_store,
    redis_store,
    state_file,
)
from bot.team import TeamAnswers
from bot.upstream import GoogleDocsService

logger = logging.getLogger(__name__)

if TYPE_CHECKING:  # the CLI never loads the Slack side
    from slack_bolt.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.deps import SlackDeps


@dataclass(frozen=True)
class Core:
    settings: Settings
    metrics: Metrics
    store: ResilientStore
    service: GoogleDocsService
    tally: DailyTally  # the per-day counters behind `gdocs-bot report`
    team: TeamAnswers  # what the team saved, given before Google is asked
    #: a look-only command did not create the missing SQLite file (per-process state)
    state_file_missing: bool = False


@dataclass(frozen=True)
class Bot:
    core: Core
    client: AsyncWebClient
    app: AsyncApp
    deps: SlackDeps
    readiness: Readiness

    async def refresh_metrics(self) -> None:
        """Before each /metrics scrape: the quota's gauges, the garbage collector's thresholds."""
        for generation, threshold in enumerate(gc.get_threshold()):
            self.core.metrics.set_gauge(
                "python_gc_threshold",
                "Garbage collector threshold, per generation (0 for all: it is off).",
                threshold if gc.isenabled() else 0,
                generation=str(generation),
            )
        await self.deps.quota.publish()


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
    """The store and the docs service, closed in reverse. StoreConfigError when STATE_URL
    cannot work; a store that does not answer yet (Redis down) leaves per-process state.
    `create_state_file=False` (commands that only look): a missing SQLite file stays missing."""
    metrics = Metrics() if metrics is None else metrics
    path = state_file(settings.state_url.get_secret_value())
    missing = not create_state_file and path is not None and not path.exists()
    async with AsyncExitStack() as stack:
        if missing:
            memory = MemoryStore(max_entries=settings.cache_max_entries, unevicted=UNEVICTED)
            store = ResilientStore(memory, url="memory://")
        else:
            store = await _open_resilient_store(settings, metrics)
        stack.push_async_callback(store.aclose)
        tally = DailyTally(
            store, retention_days=settings.feedback_retention_days, clock=clock or _utc_now
        )
        service = GoogleDocsService(
            settings,
            store=store,
            metrics=metrics,
            clock=clock,
            backoff_base=backoff_base,
            sleep=sleep,
            tally=tally.count,
        )
        stack.push_async_callback(service.aclose)
        team = TeamAnswers(store, settings.team_answer_review_days, clock or _utc_now)
        yield Core(settings, metrics, store, service, tally, team, state_file_missing=missing)


@asynccontextmanager
async def open_bot(settings: Settings, **options: Any) -> AsyncIterator[Bot]:
    """The core (`options`: open_core's), Slack's Web API client, the listeners' dependencies,
    the Bolt app and the readiness state; no Slack call."""
    from bot.slack.app import build_bolt_app, build_web_client

    async with AsyncExitStack() as stack:
        core = await stack.enter_async_context(open_core(settings, **options))
        clock = options.get("clock")
        # OAuth mode: no token here; each request's client gets its installation's
        client = build_web_client(reveal(settings.slack_bot_token), str(settings.slack_api_url))
        stack.push_async_callback(_close_session, client)
        readiness = Readiness(
            core.service,
            store=core.store,
            mode="socket" if settings.socket_mode else "http",
            probe_interval=settings.readiness_probe_seconds,
            # the service bounds each server's check by MCP_TIMEOUT_SECONDS; this is a backstop
            probe_timeout=settings.mcp_timeout_seconds + 5,
        )
        deps = _slack_deps(settings, core, clock=clock)
        app = build_bolt_app(deps, client)
        yield Bot(core=core, client=client, app=app, deps=deps, readiness=readiness)


@asynccontextmanager
async def open_state(settings: Settings) -> AsyncIterator[Store]:
    """The store STATE_URL names, without per-process fallback or timeout: to a command that
    reads what the bot recorded, a store that does not answer is an error, not an empty result."""
    store = await open_store(
        settings.state_url.get_secret_value(),
        prefix=settings.state_prefix,
        max_entries=settings.cache_max_entries,
        unevicted=UNEVICTED,
    )
    try:
        yield store
    finally:
        await store.aclose()


def feedback_log(
    settings: Settings, store: Store, clock: Callable[[], datetime] | None = None
) -> FeedbackLog:
    return FeedbackLog(
        store, retention_days=settings.feedback_retention_days, clock=clock or _utc_now
    )


def _slack_deps(
    settings: Settings, core: Core, *, clock: Callable[[], datetime] | None
) -> SlackDeps:
    from bot.serving.inflight import InFlight
    from bot.slack.boundary import Boundary
    from bot.slack.deps import SlackDeps
    from bot.slack.flows.routing import Router
    from bot.slack.memory import (
        ChannelSettingsStore,
        RateLimiter,
        RecentQuestions,
        ThreadMemory,
        UserProfiles,
    )
    from bot.slack.oauth import open_installs
    from bot.slack.work.stops import ActiveStreams
    from bot.slack.work.worklog import WorkLog

    now = clock or _utc_now
    store, metrics = core.store, core.metrics
    inflight = InFlight()
    return SlackDeps(
        settings=settings,
        service=core.service,
        metrics=metrics,
        inflight=inflight,
        store=store,
        router=Router(settings.answer_min_words, settings.route_pay_questions),
        limiter=RateLimiter(store, settings.rate_limit_per_user_per_minute),
        profiles=UserProfiles(store),
        threads=ThreadMemory(store),
        quota=core.service.quota,
        clock=now,
        work=WorkLog(
            store,
            lease_seconds=settings.work_lease_seconds,
            max_age_seconds=settings.work_max_age_seconds,
            # a delivery's "done" marker drops Slack's late retries as long as dedupe did
            done_seconds=settings.dedupe_ttl_seconds,
            metrics=metrics,
        ),
        feedback=feedback_log(settings, store, now),
        recent=RecentQuestions(store, now),
        boundary=Boundary(inflight=inflight, metrics=metrics),
        channels=ChannelSettingsStore(
            store,
            answer_channels=settings.answer_channel_ids,
            retention_seconds=settings.channel_settings_retention_days * 86400.0,
        ),
        tally=core.tally,
        team=core.team,
        # only replicas on one Redis share a Stop: on memory:// and SQLite it is always local
        streams=ActiveStreams(store, shared=store.kind == "redis"),
        installs=open_installs(settings, store),  # OAuth mode only
    )


def _utc_now() -> datetime:
    return datetime.now(UTC)


async def _open_resilient_store(settings: Settings, metrics: Metrics) -> ResilientStore:
    url, prefix = settings.state_url.get_secret_value(), settings.state_prefix
    try:
        primary = await open_store(
            url, prefix=prefix, max_entries=settings.cache_max_entries, unevicted=UNEVICTED
        )
    except StoreUnavailable as exc:
        logger.warning("%s; starting on per-process state until it answers", exc.message)
        # only Redis is ever "unavailable"
        primary = redis_store(url, prefix=prefix)
    if not isinstance(primary, MemoryStore):
        logger.info("state store: %s", redact_url(url), extra={"store": primary.kind})
    return ResilientStore(primary, timeout=settings.state_timeout_seconds, metrics=metrics, url=url)


async def _close_session(client: AsyncWebClient) -> None:
    session = client.session
    if session is not None and not session.closed:
        await session.close()
