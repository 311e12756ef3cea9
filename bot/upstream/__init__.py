"""The Google documentation MCP client: `build_service(config)` gives a `GoogleDocsService`
implementing `bot.service.DocsService` over Developer Knowledge and Google Pay & Wallet.

    service = build_service(upstream_config(settings), store=store)  # bot.configs
    answer = await service.ask("How do I create a Cloud Storage bucket?")
    await service.aclose()
"""

from __future__ import annotations

from bot.upstream._auth import ApiKeyAuth
from bot.upstream._client import McpClient
from bot.upstream._config import UpstreamConfig
from bot.upstream._documents import missing_tools
from bot.upstream._errors import ServerContext
from bot.upstream._question_key import FILLERS, question_key
from bot.upstream._quota_kind import http_quota_signal, rpc_quota_signal, text_quota_signal
from bot.upstream._service import GoogleDocsService, build_service
from bot.upstream._text import normalise, snippet, title_from_uri

__all__ = [
    "FILLERS",
    "ApiKeyAuth",
    "GoogleDocsService",
    "McpClient",
    "ServerContext",
    "UpstreamConfig",
    "build_service",
    "http_quota_signal",
    "missing_tools",
    "normalise",
    "question_key",
    "rpc_quota_signal",
    "snippet",
    "text_quota_signal",
    "title_from_uri",
]
