"""The MCP transport over TLS, on a loopback https server with a certificate made here: it
verifies the server (a certificate nobody vouches for is refused), and uses the TLS context
it is given."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from aiohttp import web

from bot.upstream._aiohttp import AiohttpTransport
from tests.fakes.tls import self_signed


@pytest.fixture
async def https_url(tmp_path: Path) -> AsyncIterator[tuple[str, Path]]:
    cert, key = self_signed(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)

    async def hello(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/mcp", hello)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_tls)
    await site.start()
    try:
        yield f"https://127.0.0.1:{runner.addresses[0][1]}/mcp", cert
    finally:
        await runner.cleanup()


async def test_a_server_certificate_nobody_vouches_for_is_refused(
    https_url: tuple[str, Path],
) -> None:
    """With the default trust (the CA bundle), a self-signed server is a connection error."""
    url, _ = https_url
    transport = AiohttpTransport(max_connections=2)
    async with httpx.AsyncClient(transport=transport, trust_env=False) as client:
        with pytest.raises(httpx.ConnectError):
            await client.post(url, json={})


async def test_the_tls_context_given_is_the_one_that_verifies(
    https_url: tuple[str, Path],
) -> None:
    """A context that trusts the server's certificate: the call goes through, over TLS."""
    url, cert = https_url
    trusting = ssl.create_default_context(cafile=str(cert))
    transport = AiohttpTransport(max_connections=2, ssl_context=trusting)
    async with httpx.AsyncClient(transport=transport, trust_env=False) as client:
        response = await client.post(url, json={})
    assert 200 == response.status_code
    assert {"ok": True} == response.json()
