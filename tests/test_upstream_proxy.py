"""A bot behind a forward proxy: HTTP(S)_PROXY from the environment carries the MCP calls, and
NO_PROXY keeps a host out of it (the MCP client's transport reads them itself)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from bot.errors import Unavailable
from tests.fakes.mcp_servers import FakeDeveloperKnowledge
from tests.fakes.upstream import service_for, settings_for

#: a host nobody resolves: only a proxy can reach "it"
BEHIND_PROXY = "http://docs.invalid/mcp"


class ForwardProxy:
    """Takes absolute-form requests and sends them on to one upstream, noting each target."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.targets: list[str] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.targets.append(str(request.url))
        headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
        async with (
            aiohttp.ClientSession() as session,
            session.request(
                request.method, self.upstream, data=await request.read(), headers=headers
            ) as resp,
        ):
            body = await resp.read()
            kept = {k: v for k, v in resp.headers.items() if k.lower() not in _HOP}
            return web.Response(status=resp.status, body=body, headers=kept)


_HOP = {"content-length", "transfer-encoding", "connection", "content-encoding"}


@pytest.fixture
async def proxy(
    dk_server: FakeDeveloperKnowledge, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[ForwardProxy]:
    """A forward proxy on loopback, named by HTTP_PROXY."""
    forward = ForwardProxy(dk_server.url)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{runner.addresses[0][1]}")
    try:
        yield forward
    finally:
        await runner.cleanup()


async def test_mcp_calls_go_through_the_proxy_the_environment_names(
    dk_server: FakeDeveloperKnowledge, proxy: ForwardProxy
) -> None:
    dk_server.answers["How do I create a bucket?"] = ("Run `gcloud storage buckets create`.", [])
    settings = settings_for(dk_server, developer_knowledge_mcp_url=BEHIND_PROXY)
    async with service_for(settings) as service:
        answer = await service.ask("How do I create a bucket?")
    assert "Run `gcloud storage buckets create`." == answer.text
    assert proxy.targets
    assert all(t == BEHIND_PROXY for t in proxy.targets)


async def test_no_proxy_keeps_a_host_out_of_the_proxy(
    dk_server: FakeDeveloperKnowledge, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "docs.invalid")
    settings = settings_for(dk_server, developer_knowledge_mcp_url=BEHIND_PROXY)
    async with service_for(settings) as service:
        with pytest.raises(Unavailable):
            await service.ask("How do I create a bucket?")
    assert [] == proxy.targets
