"""The settings the docs service and its MCP clients use, as one small frozen config."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bot.quota import QuotaConfig
from bot.settings import Settings


@dataclass(frozen=True)
class UpstreamConfig:
    developer_knowledge_url: str
    pay_url: str
    #: Developer Knowledge API key (kept out of repr)
    api_key: str | None = field(default=None, repr=False)
    credentials_file: Path | None = None
    project: str | None = None
    #: end-to-end bound of one upstream operation, retries included
    timeout: float = 30.0
    max_concurrency: int = 32
    max_retries: int = 3
    max_response_bytes: int = 4_000_000
    answer_ttl: float = 3600.0
    search_ttl: float = 3600.0
    document_ttl: float = 86400.0
    max_query_chars: int = 2000
    #: after a quota error, search instead of answer_query until the quota resets
    skip_until_reset: bool = True
    quota: QuotaConfig = field(default_factory=QuotaConfig)
    #: check generated answers' commands against their cited pages, within this budget
    verify_answers: bool = True
    verify_timeout: float = 2.0

    @property
    def oauth_configured(self) -> bool:
        """OAuth only when asked for (a key file, or a project on Google Cloud): nothing
        probes the metadata server otherwise."""
        return self.credentials_file is not None or bool(self.project)

    @classmethod
    def from_settings(cls, settings: Settings) -> UpstreamConfig:
        key = settings.google_api_key
        return cls(
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
            ),
        )
