"""Everything a listener needs, built once by the composition root and passed in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from bot.feedback import FeedbackLog
from bot.inflight import InFlight
from bot.observability.metrics import Metrics
from bot.quota import AnswerQuota
from bot.service import DocsService
from bot.settings import Settings
from bot.slack.flows.routing import Router
from bot.slack.identity import SlackIdentity
from bot.slack.memory.recent import RecentQuestions
from bot.slack.memory.state import RateLimiter, ThreadMemory, UserProfiles
from bot.slack.work.active import ActiveStreams
from bot.store import Store
from bot.worklog import WorkLog

#: whether Google's documentation servers answer now, and a short detail when they don't:
#: the readiness state behind /readyz (the composition root passes it in; the Home tab shows it)
DocsStatus = Callable[[], tuple[bool, str]]


@dataclass(frozen=True)
class SlackConfig:
    """The settings the Slack side uses."""

    socket_mode: bool
    signing_secret: str
    #: documents longer than this go out as a Markdown file instead of paged messages
    doc_file_threshold_chars: int
    rate_limit_per_user_per_minute: int
    dedupe_ttl_seconds: float
    #: how often unfinished work of a dead replica is looked for
    work_recovery_seconds: float
    #: how long fetched documents (and their page cuts) are kept
    document_ttl_seconds: float
    #: whose follow-ups in the bot's threads are answered without a mention
    thread_followups: Literal["asker", "anyone", "off"] = "asker"
    #: threaded answers streamed with a task timeline (STREAM_ANSWERS)
    stream_answers: bool = True

    @classmethod
    def from_settings(cls, settings: Settings) -> SlackConfig:
        secret = settings.slack_signing_secret
        return cls(
            socket_mode=settings.socket_mode,
            signing_secret=secret.get_secret_value() if secret is not None else "",
            doc_file_threshold_chars=settings.doc_file_threshold_chars,
            rate_limit_per_user_per_minute=settings.rate_limit_per_user_per_minute,
            dedupe_ttl_seconds=settings.dedupe_ttl_seconds,
            work_recovery_seconds=settings.work_recovery_seconds,
            document_ttl_seconds=settings.cache_document_ttl_seconds,
            thread_followups=settings.thread_followups,
            stream_answers=settings.stream_answers,
        )


@dataclass(frozen=True)
class SlackDeps:
    config: SlackConfig
    service: DocsService
    metrics: Metrics
    inflight: InFlight
    store: Store
    router: Router
    limiter: RateLimiter
    profiles: UserProfiles
    threads: ThreadMemory
    #: the bot's own ids (auth.test), fetched once; the runtime may `prime()` it
    identity: SlackIdentity
    #: answer_query's ledger (for `/gdocs quota` and the Home tab)
    quota: AnswerQuota
    #: aware UTC now
    clock: Callable[[], datetime]
    #: acknowledged work, recorded until its reply is delivered
    work: WorkLog
    #: answer records and votes (feedback buttons, `gdocs-bot feedback export`)
    feedback: FeedbackLog
    #: each person's last questions (the Home tab's Ask again)
    recent: RecentQuestions
    docs_status: DocsStatus
    #: streamed answers being worked on, by thread (the Stop button cancels one)
    streams: ActiveStreams = field(default_factory=lambda: ActiveStreams())


def _utc_now() -> datetime:
    return datetime.now(UTC)


def build_deps(
    settings: Settings,
    *,
    service: DocsService,
    quota: AnswerQuota,
    metrics: Metrics,
    store: Store,
    clock: Callable[[], datetime] | None = None,
    docs_status: DocsStatus | None = None,
) -> SlackDeps:
    config = SlackConfig.from_settings(settings)
    now = clock or _utc_now

    def answered_lately() -> tuple[bool, str]:
        return service.recently_healthy(), ""

    return SlackDeps(
        config=config,
        service=service,
        metrics=metrics,
        inflight=InFlight(),
        store=store,
        router=Router(settings.answer_min_words, settings.route_pay_questions),
        limiter=RateLimiter(store, config.rate_limit_per_user_per_minute),
        profiles=UserProfiles(store),
        threads=ThreadMemory(store),
        identity=SlackIdentity(),
        quota=quota,
        clock=now,
        work=WorkLog(
            store,
            lease_seconds=settings.work_lease_seconds,
            max_age_seconds=settings.work_max_age_seconds,
            done_seconds=settings.dedupe_ttl_seconds,
            metrics=metrics,
        ),
        feedback=FeedbackLog(store, retention_days=settings.feedback_retention_days, clock=now),
        recent=RecentQuestions(store, now),
        docs_status=docs_status or answered_lately,
    )
