"""The Google documentation MCP client: `GoogleDocsService(settings)` implements
`bot.service.DocsService` over Developer Knowledge and Google Pay & Wallet."""

from __future__ import annotations

from bot.upstream._auth import ApiKeyAuth as ApiKeyAuth
from bot.upstream._calls import Call as Call
from bot.upstream._calls import UpstreamCalls as UpstreamCalls
from bot.upstream._client import McpClient as McpClient
from bot.upstream._documents import normalise as normalise
from bot.upstream._documents import snippet as snippet
from bot.upstream._documents import title_from_uri as title_from_uri
from bot.upstream._errors import ServerContext as ServerContext
from bot.upstream._errors import quota_signal as quota_signal
from bot.upstream._question_key import FILLERS as FILLERS
from bot.upstream._question_key import question_key as question_key
from bot.upstream._service import GoogleDocsService as GoogleDocsService
from bot.upstream._wire import missing_tools as missing_tools
