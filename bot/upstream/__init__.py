"""The Google documentation MCP client: `build_service(config)` gives a `GoogleDocsService`
implementing `bot.service.DocsService` over Developer Knowledge and Google Pay & Wallet."""

from __future__ import annotations

from bot.upstream._answering import UpstreamConfig
from bot.upstream._auth import ApiKeyAuth
from bot.upstream._client import McpClient
from bot.upstream._documents import missing_tools, normalise, snippet, title_from_uri
from bot.upstream._errors import ServerContext, quota_signal
from bot.upstream._question_key import FILLERS, question_key
from bot.upstream._service import GoogleDocsService, build_service

__all__ = [
    "FILLERS",
    "ApiKeyAuth",
    "GoogleDocsService",
    "McpClient",
    "ServerContext",
    "UpstreamConfig",
    "build_service",
    "missing_tools",
    "normalise",
    "question_key",
    "quota_signal",
    "snippet",
    "title_from_uri",
]
