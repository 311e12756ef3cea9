"""The bot's Slack app served on loopback, and a Slack that signs and sends it requests.

`running_bot(...)` builds the real pieces — settings, the upstream service against the MCP
fakes, the Bolt app behind `bot.slack.http` in an aiohttp server in the test's event loop —
and points the bot's Web API client at a recording `FakeSlack`. `SlackBot.command/event/
action` send what Slack would send (signed form or JSON bodies) to POST /slack/events;
response URLs point at the fake, which records what the bot sends there.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import aiohttp
from aiohttp import web
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.observability.metrics import Metrics
from bot.settings import Settings
from bot.slack.app import build_bolt_app, build_web_client
from bot.slack.context import BotContext, build_context
from bot.slack.http import EVENTS_PATH, slack_events_route
from bot.upstream import build_service
from tests.fakes.mcp_servers import FakeDeveloperKnowledge, FakePay
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.fakes.slack_payloads import slash_command_form

SIGNING_SECRET = "sig-secret-5f3c1a9e7b2d4c6a8e0f"
BOT_TOKEN = "xoxb-bot-token-9d8c7b6a5f4e3d2c1b0a"
API_KEY = "test-key"
#: a well-formed user id, so answers can name the asker
ASKER = "UASKER1"
#: nothing listens on the discard port: anything sent there is refused at once
CLOSED_URL = "http://127.0.0.1:9/mcp"


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


def sign(
    body: str, *, secret: str = SIGNING_SECRET, timestamp: int | None = None
) -> dict[str, str]:
    """Slack's request signature headers for `body`."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    base = f"v0:{ts}:{body}".encode()
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


@dataclass
class Sent:
    """What the bot answered to one HTTP request."""

    status: int
    body: str
    #: the response_url key of a command or action (see `FakeSlack.responses_to`)
    key: str | None = None


class SlackBot:
    """Speaks to the bot as Slack does."""

    def __init__(
        self,
        fake: FakeSlack,
        ctx: BotContext,
        metrics: WatchedMetrics,
        app: AsyncApp,
        base_url: str,
    ) -> None:
        self.fake = fake
        self.ctx = ctx
        self.metrics = metrics
        self.app = app
        self.url = base_url + EVENTS_PATH
        self._ids = itertools.count(1)
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        assert self._session is not None
        return self._session

    def next_id(self) -> int:
        return next(self._ids)

    async def post(
        self, body: Any, *, content_type: str, headers: dict[str, str] | None = None
    ) -> Sent:
        all_headers = {"Content-Type": content_type, **(headers or {})}
        async with self.session.post(self.url, data=body, headers=all_headers) as resp:
            return Sent(resp.status, await resp.text())

    async def post_signed(
        self, body: str, *, content_type: str, headers: dict[str, str] | None = None
    ) -> Sent:
        return await self.post(
            body, content_type=content_type, headers={**sign(body), **(headers or {})}
        )

    def command_body(
        self, text: str, *, user: str = ASKER, channel: str = "C1", key: str | None = None
    ) -> tuple[str, str]:
        n = self.next_id()
        key = key or f"cmd{n}"
        form = slash_command_form(
            text, response_url=self.fake.response_url(key), user=user, channel=channel
        )
        return urlencode(form), key

    async def command(
        self, text: str, *, user: str = ASKER, channel: str = "C1", key: str | None = None
    ) -> Sent:
        """A signed `/gdocs <text>`."""
        body, key = self.command_body(text, user=user, channel=channel, key=key)
        sent = await self.post_signed(body, content_type="application/x-www-form-urlencoded")
        sent.key = key
        return sent

    def event_body(self, event: dict[str, Any], *, event_id: str | None = None) -> str:
        return json.dumps(
            {
                "token": "deprecated-verification-token",
                "team_id": "T1",
                "api_app_id": "A1",
                "type": "event_callback",
                "event_id": event_id or f"Ev{self.next_id():06d}",
                "event_time": int(time.time()),
                "authorizations": [{"team_id": "T1", "user_id": BOT_USER_ID, "is_bot": True}],
                "event": event,
            }
        )

    async def event(
        self,
        event: dict[str, Any],
        *,
        event_id: str | None = None,
        retry_num: int | None = None,
    ) -> Sent:
        """A signed Events API callback (optionally a retry, as Slack marks them)."""
        body = self.event_body(event, event_id=event_id)
        headers = {}
        if retry_num is not None:
            headers = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        return await self.post_signed(body, content_type="application/json", headers=headers)

    async def mention(
        self,
        text: str,
        *,
        user: str = ASKER,
        channel: str = "C1",
        ts: str | None = None,
        thread_ts: str | None = None,
    ) -> Sent:
        event: dict[str, Any] = {
            "type": "app_mention",
            "user": user,
            "text": f"<@{BOT_USER_ID}> {text}",
            "ts": ts or f"1710000000.{self.next_id():06d}",
            "channel": channel,
            "event_ts": ts or "1710000000.000000",
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        return await self.event(event)

    async def dm(self, text: str, *, user: str = ASKER, channel: str = "D1", **extra: Any) -> Sent:
        event = {
            "type": "message",
            "channel_type": "im",
            "user": user,
            "text": text,
            "ts": f"1710000100.{self.next_id():06d}",
            "channel": channel,
            **extra,
        }
        return await self.event(event)

    async def action(
        self,
        action: dict[str, Any],
        *,
        user: str = ASKER,
        channel: str = "C1",
        message_ts: str = "1700000000.000001",
        thread_ts: str | None = None,
        key: str | None = None,
    ) -> Sent:
        """A signed block_actions click on a button of the message at `message_ts`."""
        n = self.next_id()
        key = key or f"act{n}"
        message: dict[str, Any] = {"type": "message", "ts": message_ts, "text": "answer"}
        container: dict[str, Any] = {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel,
            "is_ephemeral": False,
        }
        if thread_ts:
            message["thread_ts"] = thread_ts
            container["thread_ts"] = thread_ts
        payload = {
            "type": "block_actions",
            "team": {"id": "T1", "domain": "test"},
            "user": {"id": user, "username": f"user-{user}", "team_id": "T1"},
            "api_app_id": "A1",
            "token": "deprecated-verification-token",
            "container": container,
            "trigger_id": f"trigger-a{n}.{time.time_ns()}",
            "channel": {"id": channel, "name": "general"},
            "message": message,
            "response_url": self.fake.response_url(key),
            "actions": [{"block_id": "show_docs", "action_ts": str(time.time()), **action}],
        }
        body = urlencode({"payload": json.dumps(payload)})
        sent = await self.post_signed(body, content_type="application/x-www-form-urlencoded")
        sent.key = key
        return sent

    async def socket_mode(self, body: dict[str, Any]) -> BoltResponse:
        """Dispatch a Socket Mode envelope's payload as `AsyncSocketModeHandler` does."""
        return await self.app.async_dispatch(AsyncBoltRequest(body=body, mode="socket_mode"))

    async def finished(self, count: int, within: float = 15.0) -> list[tuple[str, str]]:
        """Wait until the bot has finished `count` requests; (kind, outcome) of each."""
        return await self.metrics.wait_finished(count, within)

    def answers_in(self, channel: str) -> list[dict[str, Any]]:
        return [
            c.args
            for c in self.fake.calls_to("chat.postMessage")
            if c.args.get("channel") == channel
        ]


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
    **overrides: Any,
) -> AsyncIterator[SlackBot]:
    """The bot serving HTTP on 127.0.0.1 in this event loop, talking to a fresh FakeSlack."""
    own_fake = fake is None
    fake = fake or FakeSlack().start()
    settings = bot_settings(dk, pay, fake, **overrides)
    metrics = WatchedMetrics()
    service = build_service(settings, metrics=metrics, backoff_base=0.001)
    ctx = build_context(settings, service, metrics)
    client = build_web_client(settings)
    app = build_bolt_app(ctx, client=client)
    web_app = web.Application(client_max_size=max(max_body_bytes, 1024) * 2)
    web_app.add_routes([slack_events_route(app, max_body_bytes=max_body_bytes)])
    runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    bot = SlackBot(fake, ctx, metrics, app, f"http://127.0.0.1:{port}")
    connector = aiohttp.TCPConnector(limit=0)
    bot._session = aiohttp.ClientSession(connector=connector)
    try:
        yield bot
    finally:
        await bot.session.close()
        await ctx.inflight.drain(10)
        await runner.cleanup()
        await service.aclose()
        if client.session is not None:
            await client.session.close()
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
