"""The MCP client's HTTP transport: httpx's API over aiohttp's pool, on real loopback servers."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest
from aiohttp import web

from bot.upstream._aiohttp import AiohttpTransport
from tests.fakes.mcp_servers import FakeDeveloperKnowledge

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
CLOSED_PORT_URL = "http://127.0.0.1:9/mcp"


async def _serve(handler: Handler) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def _client(max_connections: int = 8, timeout: float = 5.0) -> httpx.AsyncClient:
    transport = AiohttpTransport(max_connections=max_connections)
    return httpx.AsyncClient(transport=transport, timeout=timeout, trust_env=False)


async def test_concurrent_requests_share_at_most_the_configured_connections(
    dk_server: FakeDeveloperKnowledge,
) -> None:
    """12 concurrent calls over 4 connections: all answered, never more than 4 at once."""
    dk_server.latency = 0.1
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_documents", "arguments": {"query": "buckets"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "X-Goog-Api-Key": "test-key"}
    async with _client(max_connections=4) as client:
        responses = await asyncio.gather(
            *(client.post(dk_server.url, json=body, headers=headers) for _ in range(12))
        )

    assert [200] * 12 == [r.status_code for r in responses]
    assert "Create buckets" in responses[0].text
    assert 4 == dk_server.max_in_flight


async def test_request_headers_and_body_arrive_as_httpx_built_them() -> None:
    """Method, headers (one value each) and body reach the server unchanged."""
    seen: dict[str, object] = {}

    async def record(request: web.Request) -> web.Response:
        seen.update(
            method=request.method,
            body=await request.read(),
            api_key=request.headers.getall("X-Goog-Api-Key"),
            user_agent=request.headers.get("User-Agent", ""),
        )
        return web.json_response({"ok": True}, headers={"Mcp-Session-Id": "s-1"})

    async for url in _serve(record):
        async with _client() as client:
            response = await client.post(
                url + "/mcp", content=b'{"a":1}', headers={"X-Goog-Api-Key": "k"}
            )

    assert ("POST", b'{"a":1}', ["k"]) == (seen["method"], seen["body"], seen["api_key"])
    assert str(seen["user_agent"]).startswith("python-httpx/")
    assert ({"ok": True}, "s-1") == (response.json(), response.headers["mcp-session-id"])


async def test_a_gzip_answer_is_decoded_exactly_once() -> None:
    """Content-Encoding is httpx's to undo: the JSON comes out readable, not doubly decoded."""

    async def gzipped(request: web.Request) -> web.Response:
        raw = gzip.compress(json.dumps({"answer": "buckets"}).encode())
        return web.Response(
            body=raw, headers={"Content-Encoding": "gzip", "Content-Type": "application/json"}
        )

    async for url in _serve(gzipped):
        async with _client() as client:
            response = await client.get(url + "/mcp")

    assert {"answer": "buckets"} == response.json()


async def test_a_refused_connection_is_httpx_connect_error() -> None:
    """Nothing listening: the caller sees httpx.ConnectError, as with httpx's own transport."""
    async with _client() as client:
        with pytest.raises(httpx.ConnectError):
            await client.post(CLOSED_PORT_URL, content=b"{}")


async def test_a_server_that_never_answers_is_an_httpx_timeout() -> None:
    """No response within the read timeout: httpx.TimeoutException, not a hang."""
    never = asyncio.Event()

    async def hang(request: web.Request) -> web.Response:
        await never.wait()
        return web.Response()

    async for url in _serve(hang):
        async with _client(timeout=0.2) as client:
            with pytest.raises(httpx.TimeoutException):
                await client.post(url + "/mcp", content=b"{}")
        never.set()


async def test_a_body_cut_off_midway_is_an_httpx_transport_error() -> None:
    """The server promises 1000 bytes and hangs up after 10: httpx.TransportError."""

    async def cut(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Length": "1000"})
        await response.prepare(request)
        await response.write(b"0123456789")
        assert request.transport is not None
        request.transport.close()
        return response

    async for url in _serve(cut):
        async with _client() as client:
            with pytest.raises(httpx.TransportError):
                await client.post(url + "/mcp", content=b"{}")


async def test_http_proxy_from_the_environment_carries_requests_unless_no_proxy_says_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HTTP_PROXY routes calls through the proxy; a host in NO_PROXY is reached directly."""
    forwarded: list[str] = []

    async def proxy(request: web.Request) -> web.Response:
        forwarded.append(str(request.url))
        return web.json_response({"via": "proxy"})

    async for proxy_url in _serve(proxy):
        monkeypatch.setenv("HTTP_PROXY", proxy_url)
        async with _client() as client:
            response = await client.post(CLOSED_PORT_URL, content=b"{}")
        assert {"via": "proxy"} == response.json()
        assert [CLOSED_PORT_URL] == forwarded

        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        async with _client() as client:
            with pytest.raises(httpx.ConnectError):  # straight to the closed port
                await client.post(CLOSED_PORT_URL, content=b"{}")
        assert 1 == len(forwarded)
