"""The MCP client over TLS, on a loopback https server with a certificate made here: a server
nobody vouches for is refused; one the trust store (SSL_CERT_FILE) vouches for answers."""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from bot.errors import Unavailable
from bot.render import error_sentence
from tests.fakes.tls import self_signed
from tests.fakes.upstream import service_for, settings_for

BUCKETS = "documents/docs.cloud.google.com/storage/docs/creating-buckets"


async def _mcp(request: web.Request) -> web.Response:
    """A stateless MCP server with one search result."""
    message = await request.json()
    if message["method"] == "tools/list":
        result: dict[str, object] = {"tools": [{"name": "search_documents"}]}
    else:
        result = {"structuredContent": {"results": [{"parent": BUCKETS, "content": "tls"}]}}
    body = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    return web.Response(text=json.dumps(body), content_type="application/json")


@pytest.fixture
async def https_url(tmp_path: Path) -> AsyncIterator[tuple[str, Path]]:
    cert, key = self_signed(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    app = web.Application()
    app.router.add_post("/mcp", _mcp)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_tls)
    await site.start()
    try:
        yield f"https://127.0.0.1:{runner.addresses[0][1]}/mcp", cert
    finally:
        await runner.cleanup()


async def test_a_server_certificate_nobody_vouches_for_is_refused(
    https_url: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the default trust (the CA bundle), a self-signed server cannot be connected to."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    url, _ = https_url
    settings = settings_for(developer_knowledge_mcp_url=url, mcp_max_retries=0)
    async with service_for(settings) as service:
        with pytest.raises(Unavailable) as caught:
            await service.search("buckets")
    assert "cannot connect" in error_sentence(caught.value)


async def test_a_certificate_the_trust_store_vouches_for_is_accepted(
    https_url: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SSL_CERT_FILE naming the server's certificate: the call goes through, over TLS."""
    url, cert = https_url
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    async with service_for(settings_for(developer_knowledge_mcp_url=url)) as service:
        answer = await service.search("buckets")
    assert ["tls"] == [hit.snippet for hit in answer.hits]
