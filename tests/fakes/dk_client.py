"""The real MCP client (`McpClient`) aimed at a fake Developer Knowledge server, for tests that
need the raw tool call (and its typed errors) rather than the whole docs service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.redact import Redactor
from bot.upstream._aiohttp import AiohttpTransport
from bot.upstream._auth import ApiKeyAuth
from bot.upstream._errors import ServerContext
from bot.upstream._transport import McpClient
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
    transport = AiohttpTransport(max_connections=4)
    client = McpClient(
        dk_context(),
        server.url,
        transport,
        ApiKeyAuth("test-key"),
        timeout=3.0,
        max_response_bytes=1_000_000,
        max_concurrency=4,
        max_retries=1,
        backoff_base=0.001,
    )
    try:
        yield client
    finally:
        await transport.aclose()
