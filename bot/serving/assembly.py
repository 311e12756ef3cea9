"""The composition root: one place that builds every part, in order, and one that closes
them, in reverse (an `AsyncExitStack`). `serve`, the CLI and the tests all build here.

    async with open_core(settings) as core:      # the CLI: store + docs service
        await core.service.ask("…")
    async with open_feedback(settings) as log:   # the CLI's read of the stored votes
        await log.votes()
    async with open_report_store(settings) as store:  # `gdocs-bot report`'s reads
        ...
    async with open_bot(settings) as bot:        # serve and the tests: + Slack and health
        ...

Nothing is contacted while building: the store may open a file or a connection pool, the
docs service and Slack's client connect on first use.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.configs import (
    FeedbackConfig,
    StateConfig,
    feedback_config,
    readiness_config,
    slack_client_config,
    slack_config,
    state_config,
    upstream_config,
    work_config,
)
from bot.feedback import FeedbackLog
from bot.observability.metrics import Metrics
from bot.redact import redact_url
from bot.report.tally import DailyTally
from bot.serving.health import Readiness
from bot.settings import Settings
from bot.store import (
    CountingStore,
    MemoryStore,
    ResilientStore,
    Store,
    StoreUnavailable,
    WriteBehind,
    open_store,
    redis_store,
    shared_by_replicas,
    state_file,
)
from bot.upstream import GoogleDocsService, build_service
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
    #: the calls made to the store (round trips, writes), for /metrics and tests
    store_calls: CountingStore
    #: the per-day counters behind `gdocs-bot report`
    tally: DailyTally
    #: writes nobody waits for, taken along by the next "done" batch
    behind: WriteBehind
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

    async def refresh_metrics(self) -> None:
        """Before each /metrics scrape: the quota's gauges, the store's call counts, the
        work waiting for the loop, the garbage collector's passes."""
        self.core.store_calls.publish(self.core.metrics)
        self.deps.inflight.gate.publish(self.core.metrics)
        thresholds = gc.get_threshold()
        for generation, stats in enumerate(gc.get_stats()):
            self.core.metrics.set_counter(
                "python_gc_collections_total",
                "Garbage collector passes, per generation.",
                stats["collections"],
                generation=str(generation),
            )
            self.core.metrics.set_gauge(
                "python_gc_threshold",
                "Garbage collector threshold, per generation (0 for all: it is off).",
                thresholds[generation] if gc.isenabled() else 0,
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
    """Build the store and the docs service; close them (service first) on exit.

    StoreConfigError when STATE_URL cannot work (a wrong URL or password, a file that is not
    a database): start-up stops with its one line. A store that does not answer yet (Redis
    down) is not fatal: the bot starts on per-process state and uses the store once it is up.
    `clock` (aware UTC) and `sleep` (how the quota waits for a minute slot) are for tests.
    `create_state_file=False` (commands that only look: `check`, `search`): an SQLite file
    that does not exist yet is not created; the command runs on per-process state.
    """
    metrics = Metrics() if metrics is None else metrics
    state = state_config(settings)
    path = state_file(state.url)
    missing = not create_state_file and path is not None and not path.exists()
    async with AsyncExitStack() as stack:
        if missing:
            counted = CountingStore(MemoryStore(max_entries=state.max_entries))
            store: Store = counted
        else:
            store, counted = await _open_resilient_store(state, metrics)
        stack.push_async_callback(store.aclose)
        # the writes nobody waits for; written before the store closes (callbacks run last
        # pushed first)
        behind = WriteBehind(store)
        stack.push_async_callback(behind.aclose)
        tally = DailyTally(
            store,
            retention_days=feedback_config(settings).retention_days,
            clock=clock or _utc_now,
            behind=behind,
        )
        service = build_service(
            upstream_config(settings),
            store=store,
            metrics=metrics,
            clock=clock,
            backoff_base=backoff_base,
            sleep=sleep,
            tally=tally.count,
            behind=behind,
        )
        stack.push_async_callback(service.aclose)
        yield Core(
            settings=settings,
            metrics=metrics,
            store=store,
            service=service,
            store_calls=counted,
            tally=tally,
            behind=behind,
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
        slack_client = slack_client_config(settings)
        client = build_web_client(slack_client.token, slack_client.api_url)
        stack.push_async_callback(_close_session, client)
        ready = readiness_config(settings)
        readiness = Readiness(
            core.service,
            store=core.store,
            mode=ready.mode,
            probe_interval=ready.probe_interval,
            probe_timeout=ready.probe_timeout,
        )
        deps = _slack_deps(settings, core, clock=clock, docs_status=readiness.dk_status)
        app = build_bolt_app(deps, client)
        yield Bot(core=core, client=client, app=app, deps=deps, readiness=readiness)


@asynccontextmanager
async def open_feedback(settings: Settings) -> AsyncIterator[FeedbackLog]:
    """The votes and answer records in the store STATE_URL names, read as they are: no
    per-process fallback and no per-call timeout. For `gdocs-bot feedback export`, a store
    that does not answer is an error (StoreError), never an empty result."""
    state = state_config(settings)
    store = await open_store(state.url, prefix=state.prefix, max_entries=state.max_entries)
    try:
        yield _feedback_log(feedback_config(settings), store, _utc_now)
    finally:
        await store.aclose()


@asynccontextmanager
async def open_report_store(settings: Settings) -> AsyncIterator[Store]:
    """The store STATE_URL names, read as it is (no per-process fallback, no per-call
    timeout), for `gdocs-bot report`: a store that does not answer is an error
    (StoreError), never an empty report."""
    state = state_config(settings)
    store = await open_store(state.url, prefix=state.prefix, max_entries=state.max_entries)
    try:
        yield store
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
    from bot.loadgate import LoadGate
    from bot.serving.inflight import InFlight
    from bot.slack.boundary import Boundary
    from bot.slack.deps import SlackDeps
    from bot.slack.flows.routing import Router
    from bot.slack.identity import SlackIdentity
    from bot.slack.memory.channels import ChannelSettingsStore
    from bot.slack.memory.recent import RecentQuestions
    from bot.slack.memory.state import RateLimiter, ThreadMemory, UserProfiles
    from bot.slack.work.active import ActiveStreams
    from bot.slack.work.stops import StopMarks

    config = slack_config(settings)
    work = work_config(settings)
    now = clock or _utc_now
    store, metrics = core.store, core.metrics
    inflight = InFlight(LoadGate(behind=work.gate_lag_seconds))
    return SlackDeps(
        config=config,
        service=core.service,
        metrics=metrics,
        inflight=inflight,
        store=store,
        router=Router(config.answer_min_words, config.route_pay_questions),
        limiter=RateLimiter(store, config.rate_limit_per_user_per_minute),
        profiles=UserProfiles(store),
        threads=ThreadMemory(store),
        identity=SlackIdentity(),
        quota=core.service.quota,
        clock=now,
        work=WorkLog(
            store,
            lease_seconds=work.lease_seconds,
            max_age_seconds=work.max_age_seconds,
            done_seconds=work.done_seconds,
            metrics=metrics,
            behind=core.behind,
        ),
        feedback=_feedback_log(feedback_config(settings), store, now),
        recent=RecentQuestions(store, now),
        docs_status=docs_status,
        boundary=Boundary(inflight=inflight, metrics=metrics),
        channels=ChannelSettingsStore(
            store,
            answer_channels=config.answer_channels,
            retention_seconds=config.channel_settings_retention_seconds,
        ),
        tally=core.tally,
        # on memory:// and SQLite a Stop is always local
        streams=ActiveStreams(StopMarks(store, shared=shared_by_replicas(store))),
    )


def _feedback_log(
    config: FeedbackConfig, store: Store, clock: Callable[[], datetime]
) -> FeedbackLog:
    return FeedbackLog(store, retention_days=config.retention_days, clock=clock)


def _utc_now() -> datetime:
    return datetime.now(UTC)


async def _open_resilient_store(
    state: StateConfig, metrics: Metrics
) -> tuple[Store, CountingStore]:
    """The store the bot runs on: each call bounded and, while the store does not answer,
    per-process state (a memory:// store is used as it is); and the count of its calls."""
    url, prefix, ack_wait = state.url, state.prefix, state.ack_wait_seconds
    try:
        primary = await open_store(
            url, prefix=prefix, max_entries=state.max_entries, ack_wait=ack_wait
        )
    except StoreUnavailable as exc:
        logger.warning("%s; starting on per-process state until it answers", exc.message)
        # only Redis is ever "unavailable"
        primary = redis_store(url, prefix=prefix, ack_wait=ack_wait)
    counted = CountingStore(primary)
    if isinstance(primary, MemoryStore):
        return counted, counted
    logger.info("state store: %s", redact_url(url), extra={"store": primary.kind})
    timeout = state.timeout_seconds
    return ResilientStore(counted, timeout=timeout, metrics=metrics, url=url), counted


async def _close_session(client: AsyncWebClient) -> None:
    session = client.session
    if session is not None and not session.closed:
        await session.close()
