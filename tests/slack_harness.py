"""The bot's Slack app served on loopback, for end-to-end tests.

`running_bot(...)` builds the real pieces — settings, the upstream service against the MCP
fakes, the Bolt app behind `bot.slack.app` in an aiohttp server in the test's event loop —
and points the bot's Web API client at a recording `FakeSlack`. The `SlackBot` it yields
sends what Slack would send (`tests.slack_requests`) and waits for the bot to finish.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.observability.metrics import Metrics
from bot.serving.assembly import open_bot
from bot.settings import Settings
from bot.slack.app import EVENTS_PATH, slack_events_route
from bot.slack.deps import SlackDeps
from bot.slack.oauth import oauth_routes
from bot.store import ResilientStore
from tests.fakes.dk_rest import FakeDeveloperKnowledgeRest
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay
from tests.fakes.slack_api import FakeSlack
from tests.slack_requests import (
    API_KEY,
    ASKER,
    BOT_TOKEN,
    CLOSED_URL,
    SIGNING_SECRET,
    Sent,
    SlackRequests,
    sign,
)

__all__ = [
    "API_KEY",
    "ASKER",
    "BOT_TOKEN",
    "CLOSED_URL",
    "SIGNING_SECRET",
    "Relay",
    "Sent",
    "SlackBot",
    "count_tool_calls",
    "running_bot",
    "sign",
]


class WatchedMetrics(Metrics):
    """`Metrics` that lets a test wait until the bot has finished handling requests."""

    def __init__(self) -> None:
        super().__init__()
        #: (kind, outcome) of every finished request, in order
        self.finished: list[tuple[str, str]] = []
        self._changed: asyncio.Event | None = None

    def request(self, kind: str, outcome: str) -> None:
        super().request(kind, outcome)
        self.finished.append((kind, outcome))
        if self._changed is not None:
            self._changed.set()

    async def wait_finished(self, count: int, within: float = 15.0) -> list[tuple[str, str]]:
        """Wait until `count` requests have finished (every reply sent); their outcomes."""
        self._changed = self._changed or asyncio.Event()
        async with asyncio.timeout(within):
            while len(self.finished) < count:
                self._changed.clear()
                await self._changed.wait()
        return list(self.finished)


class SlackBot(SlackRequests):
    """Speaks to the running bot as Slack does, and sees inside it (deps, metrics)."""

    def __init__(
        self,
        fake: FakeSlack,
        deps: SlackDeps,
        metrics: WatchedMetrics,
        app: AsyncApp,
        base_url: str,
    ) -> None:
        super().__init__(fake, base_url + EVENTS_PATH)
        self.deps = deps
        self.metrics = metrics
        self.app = app
        #: every call the bot made to its store (set by `running_bot`)
        self.store_calls: ResilientStore | None = None

    async def socket_mode(self, body: dict[str, Any]) -> BoltResponse:
        """Dispatch a Socket Mode envelope's payload as `AsyncSocketModeHandler` does."""
        return await self.app.async_dispatch(AsyncBoltRequest(body=body, mode="socket_mode"))

    async def finished(self, count: int, within: float = 15.0) -> list[tuple[str, str]]:
        """Wait until the bot has finished `count` requests; (kind, outcome) of each."""
        return await self.metrics.wait_finished(count, within)


def bot_settings(
    dk: FakeDeveloperKnowledge | None, pay: FakePay | None, fake: FakeSlack, **overrides: Any
) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": BOT_TOKEN,
        "slack_signing_secret": SIGNING_SECRET,
        "slack_api_url": fake.url,
        "google_api_key": API_KEY,
        "developer_knowledge_mcp_url": dk.url if dk else CLOSED_URL,
        "pay_mcp_url": pay.url if pay else CLOSED_URL,
        "mcp_timeout_seconds": 5.0,
        "mcp_max_retries": 1,
        # the in-process harness keeps state in memory; tests of the store backends say so
        "state_url": "memory://",
        # the classic path (one finished message) unless a test streams: tests/
        # test_slack_streaming.py and the other streamed tests pass stream_answers=True
        "stream_answers": False,
    }
    values.update(overrides)
    return Settings(**values)


@asynccontextmanager
async def running_bot(
    dk: FakeDeveloperKnowledge | None,
    pay: FakePay | None = None,
    *,
    fake: FakeSlack | None = None,
    max_body_bytes: int = 1_000_000,
    clock: Callable[[], datetime] | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    **overrides: Any,
) -> AsyncIterator[SlackBot]:
    """The bot serving HTTP on 127.0.0.1 in this event loop, talking to a fresh FakeSlack.

    `clock` (aware UTC datetimes) is the bot's time for the quota and its notes, `sleep` how
    it waits for a minute slot: a test's clock and a sleep that moves it keep waits instant."""
    own_fake = fake is None
    fake = fake or FakeSlack().start()
    settings = bot_settings(dk, pay, fake, **overrides)
    metrics = WatchedMetrics()
    try:
        async with open_bot(
            settings, metrics=metrics, backoff_base=0.001, clock=clock, sleep=sleep
        ) as built:
            web_app = web.Application(client_max_size=max(max_body_bytes, 1024) * 2)
            web_app.add_routes([slack_events_route(built.app, max_body_bytes=max_body_bytes)])
            web_app.add_routes(oauth_routes(built.app))  # OAuth mode's install pages
            runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=1.0)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
            await site.start()
            port = runner.addresses[0][1]
            bot = SlackBot(fake, built.deps, metrics, built.app, f"http://127.0.0.1:{port}")
            bot.store_calls = built.core.store
            bot._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
            try:
                yield bot
            finally:
                await bot.session.close()
                await built.deps.inflight.drain(10)
                await runner.cleanup()
    finally:
        if own_fake:
            fake.stop()


class ToolConcurrency:
    """Counts a fake MCP server's tools/call requests in flight (and the peak).

    Wraps the SDK app behind the fake's fault injector. A call counts from the moment its
    request reaches the server until its response body is sent, which is before the client
    can see it, so the peak never over-counts a client that stays within its cap.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.now = 0
        self.peak = 0
        self.total = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.inner(scope, receive, send)
            return
        first = await receive()  # the fake replays the whole body in one message
        is_tool = b'"tools/call"' in first.get("body", b"")
        replayed = False
        done = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return first
            return await receive()

        async def counted_send(message: Any) -> None:
            nonlocal done
            last = message["type"] == "http.response.body" and not message.get("more_body", False)
            if is_tool and not done and last:
                done = True
                self.now -= 1
            await send(message)

        if is_tool:
            self.now += 1
            self.total += 1
            self.peak = max(self.peak, self.now)
        try:
            await self.inner(scope, replay, counted_send)
        finally:
            if is_tool and not done:
                self.now -= 1


def count_tool_calls(server: FakeDeveloperKnowledge) -> ToolConcurrency:
    """Instrument a running fake MCP server (its fault injector's inner app is looked up per
    request, so wrapping it takes effect at once)."""
    injector = server._server._app  # the _FaultyASGI in front of the SDK app
    counter = ToolConcurrency(injector.inner)
    injector.inner = counter
    return counter


class Relay:
    """A TCP relay on a fixed loopback port to a server, switched on and off: while off, a
    client connecting to `url` is refused, as by a server that is down."""

    def __init__(self, target: FakeDeveloperKnowledge) -> None:
        self._target_port = urlsplit(target.url).port
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._server: asyncio.Server | None = None

    async def on(self) -> None:
        self._server = await asyncio.start_server(self._pipe, "127.0.0.1", self.port)

    async def off(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self._target_port)

        async def copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            finally:
                sink.close()

        await asyncio.gather(
            copy(reader, up_writer), copy(up_reader, writer), return_exceptions=True
        )


@asynccontextmanager
async def rest_bot(rest: FakeDeveloperKnowledgeRest, **overrides: Any) -> AsyncIterator[SlackBot]:
    """The bot with DEVELOPER_KNOWLEDGE_API=rest against `rest` (no MCP server at all)."""
    overrides |= {"developer_knowledge_api": "rest", "developer_knowledge_rest_url": rest.url}
    async with running_bot(None, **overrides) as bot:
        yield bot
