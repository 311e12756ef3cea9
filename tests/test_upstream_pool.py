"""The sharded connection pool behind the MCP client."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from bot.upstream._pool import CONNECTIONS_PER_POOL, ShardedTransport
from tests.fakes.mcp_servers import FakeDeveloperKnowledge


async def test_concurrent_requests_spread_over_pools_and_all_complete(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """Requests beyond one pool's connections use the other pools; every slot is returned."""
    dk_server.latency = 0.2
    transport = ShardedTransport(max_connections=4 * CONNECTIONS_PER_POOL)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_documents", "arguments": {"query": "buckets"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "X-Goog-Api-Key": "test-key"}
    async with httpx.AsyncClient(transport=transport) as client:

        async def call() -> int:
            response = await client.post(dk_server.url, json=body, headers=headers)
            return response.status_code

        statuses = await asyncio.gather(*(call() for _ in range(4 * CONNECTIONS_PER_POOL)))
        assert [200] * (4 * CONNECTIONS_PER_POOL) == statuses
        assert 4 == transport.pools
        assert dk_server.max_in_flight > CONNECTIONS_PER_POOL
        assert [0, 0, 0, 0] == transport._busy


async def test_a_failed_request_gives_its_slot_back() -> None:
    """A connection error does not leave the pool counted as busy."""
    transport = ShardedTransport(max_connections=CONNECTIONS_PER_POOL)
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get("http://127.0.0.1:9/")
        assert [0] == transport._busy
