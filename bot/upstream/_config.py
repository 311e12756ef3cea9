"""The settings the docs service and its MCP clients use, as one small frozen config
(mapped from Settings by bot/configs.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bot.quota import QuotaConfig


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
