"""The one mapping from `Settings` to each part's small frozen config. The composition root
(bot/assembly.py) builds every part from these; no part reads `Settings` itself.

    service = build_service(upstream_config(settings), store=store)
    deps = ... SlackDeps(config=slack_config(settings), ...)

A part's config lives with the part (`UpstreamConfig` in bot/upstream, `SlackConfig` in
bot/slack) when only it uses it; the few that several parts share are defined here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from bot.quota import QuotaConfig
from bot.settings import Settings
from bot.upstream import UpstreamConfig

if TYPE_CHECKING:  # the CLI never loads the Slack side
    from bot.slack.deps import SlackConfig


@dataclass(frozen=True)
class StateConfig:
    """Where state is kept (STATE_URL) and how the store is bounded."""

    #: STATE_URL, password included (kept out of repr)
    url: str = field(repr=False)
    prefix: str
    max_entries: int
    #: each call's bound once the bot runs on it (the resilient store)
    timeout_seconds: float
    #: how long an acknowledgement's Redis write may hold the event loop (0: pipelined)
    ack_wait_seconds: float = 0.0


@dataclass(frozen=True)
class WorkConfig:
    """How long acknowledged work is leased, kept, and remembered as done; when new work
    waits for the event loop."""

    lease_seconds: float
    max_age_seconds: float
    done_seconds: float
    #: new work waits while the event loop is later than this (None: never; bot/loadgate.py)
    gate_lag_seconds: float | None


@dataclass(frozen=True)
class FeedbackConfig:
    retention_days: int


@dataclass(frozen=True)
class ReadinessConfig:
    """What /readyz reports and how often it looks."""

    mode: Literal["socket", "http"]
    probe_interval: float
    probe_timeout: float


@dataclass(frozen=True)
class SlackClientConfig:
    """Slack's Web API client: the bot token (kept out of repr) and where Slack is."""

    token: str | None = field(repr=False)
    api_url: str


def state_config(settings: Settings) -> StateConfig:
    return StateConfig(
        url=settings.state_url.get_secret_value(),
        prefix=settings.state_prefix,
        max_entries=settings.cache_max_entries,
        timeout_seconds=settings.state_timeout_seconds,
        ack_wait_seconds=settings.state_ack_wait_ms / 1000,
    )


def work_config(settings: Settings) -> WorkConfig:
    return WorkConfig(
        lease_seconds=settings.work_lease_seconds,
        max_age_seconds=settings.work_max_age_seconds,
        # a delivery's "done" marker drops Slack's late retries as long as dedupe did
        done_seconds=settings.dedupe_ttl_seconds,
        gate_lag_seconds=settings.load_gate_lag_ms / 1000 or None,
    )


def feedback_config(settings: Settings) -> FeedbackConfig:
    return FeedbackConfig(retention_days=settings.feedback_retention_days)


def readiness_config(settings: Settings) -> ReadinessConfig:
    return ReadinessConfig(
        mode="socket" if settings.socket_mode else "http",
        probe_interval=settings.readiness_probe_seconds,
        # the service bounds each server's check by MCP_TIMEOUT_SECONDS; this is a backstop
        probe_timeout=settings.mcp_timeout_seconds + 5,
    )


def slack_client_config(settings: Settings) -> SlackClientConfig:
    token = settings.slack_bot_token
    return SlackClientConfig(
        token=token.get_secret_value() if token is not None else None,
        api_url=str(settings.slack_api_url),
    )


def upstream_config(settings: Settings) -> UpstreamConfig:
    key = settings.google_api_key
    return UpstreamConfig(
        developer_knowledge_url=str(settings.developer_knowledge_mcp_url),
        pay_url=str(settings.pay_mcp_url),
        api_key=key.get_secret_value() if key is not None else None,
        credentials_file=settings.google_application_credentials,
        project=settings.google_cloud_project,
        timeout=settings.mcp_timeout_seconds,
        max_concurrency=settings.mcp_max_concurrency,
        max_retries=settings.mcp_max_retries,
        max_response_bytes=settings.mcp_max_response_bytes,
        answer_ttl=settings.cache_answer_ttl_seconds,
        search_ttl=settings.cache_search_ttl_seconds,
        document_ttl=settings.cache_document_ttl_seconds,
        max_query_chars=settings.max_query_chars,
        skip_until_reset=settings.answer_quota_skip_until_reset,
        verify_answers=settings.verify_answers,
        verify_timeout=settings.verify_timeout_seconds,
        quota=QuotaConfig(
            per_minute=settings.answer_quota_per_minute,
            per_day=settings.answer_quota_per_day,
            per_user_per_day=settings.answer_quota_per_user_per_day,
            wait_seconds=settings.answer_quota_wait_seconds,
            pause_check_seconds=settings.answer_quota_pause_check_seconds,
        ),
    )


def slack_config(settings: Settings) -> SlackConfig:
    from bot.slack.deps import SlackConfig

    secret = settings.slack_signing_secret
    return SlackConfig(
        socket_mode=settings.socket_mode,
        signing_secret=secret.get_secret_value() if secret is not None else "",
        doc_file_threshold_chars=settings.doc_file_threshold_chars,
        rate_limit_per_user_per_minute=settings.rate_limit_per_user_per_minute,
        dedupe_ttl_seconds=settings.dedupe_ttl_seconds,
        work_recovery_seconds=settings.work_recovery_seconds,
        document_ttl_seconds=settings.cache_document_ttl_seconds,
        thread_followups=settings.thread_followups,
        answer_min_words=settings.answer_min_words,
        route_pay_questions=settings.route_pay_questions,
        channel_settings_admins_only=settings.channel_settings_admins_only,
        answer_channels=settings.answer_channel_ids,
        channel_settings_retention_seconds=settings.channel_settings_retention_days * 86400.0,
        stream_answers=settings.stream_answers,
    )
