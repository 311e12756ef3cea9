"""The real MCP client (`McpClient`) aimed at a fake Developer Knowledge server, for tests that
need the raw tool call (and its typed errors) rather than the whole docs service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from bot.redact import Redactor
from bot.settings import Settings
from bot.upstream import ApiKeyAuth, McpClient, ServerContext
from tests.fakes.mcp_servers import FakeDeveloperKnowledge


def dk_context() -> ServerContext:
    return ServerContext(
        key="developer_knowledge",
        url_setting="DEVELOPER_KNOWLEDGE_MCP_URL",
        api_service="developerknowledge.googleapis.com",
        auth="api_key",
        timeout=3.0,
        redact=Redactor(["test-key"]),
    )


@asynccontextmanager
async def dk_client(server: FakeDeveloperKnowledge) -> AsyncIterator[McpClient]:
    """A client with API key `test-key` (the `dk_server` fixture's), closed afterwards."""
    async with httpx.AsyncClient(timeout=3.0) as http:
        yield McpClient(
            dk_context(),
            server.url,
            lambda: http,
            ApiKeyAuth("test-key"),
            Settings(mcp_max_response_bytes=1_000_000, mcp_max_concurrency=4, mcp_max_retries=1),
            backoff_base=0.001,
        )
