"""The one mapping from `Settings` to the configs parts define for themselves
(`UpstreamConfig`, `SlackConfig`). The composition root (bot/serving/assembly.py) builds
every part, handing the others their few settings directly; no part reads `Settings`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.quota import QuotaConfig
from bot.settings import Settings, reveal
from bot.upstream import UpstreamConfig

if TYPE_CHECKING:  # the CLI never loads the Slack side
    from bot.slack.deps import SlackConfig


def upstream_config(settings: Settings) -> UpstreamConfig:
    return UpstreamConfig(
        developer_knowledge_url=str(settings.developer_knowledge_mcp_url),
        pay_url=str(settings.pay_mcp_url),
        api_key=reveal(settings.google_api_key),
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

    return SlackConfig(
        socket_mode=settings.socket_mode,
        signing_secret=reveal(settings.slack_signing_secret) or "",
        doc_file_threshold_chars=settings.doc_file_threshold_chars,
        rate_limit_per_user_per_minute=settings.rate_limit_per_user_per_minute,
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
