"""The Bolt app: Web API client, authorization, deduplication and the listener tables."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import ClientSession, TCPConnector
from slack_bolt.async_app import AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot.render import AUTHORIZE_FAILED
from bot.slack.boundary import duplicate
from bot.slack.delivery.posting import retry_handlers
from bot.slack.deps import SlackDeps
from bot.slack.listeners import actions, commands, events, shortcuts
from bot.slack.memory.state import delivery_key

logger = logging.getLogger(__name__)

#: Web API calls (chat.postMessage, files upload) give up after this long, retries aside
WEB_API_TIMEOUT_SECONDS = 30


class _NoRequestBodies(logging.Filter):
    """Bolt logs request bodies (user text) at INFO/WARNING for a bad signature or a request
    no listener takes; keep the first words, drop the body."""

    _PREFIXES = ("Invalid request signature detected", "Unhandled request")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.DEBUG:
            message = record.getMessage()
            for prefix in self._PREFIXES:
                if message.startswith(prefix):
                    record.msg, record.args = f"{prefix} (body not logged)", None
        return True


def _bolt_logger() -> logging.Logger:
    base = logging.getLogger("bot.slack.bolt")
    if not any(isinstance(f, _NoRequestBodies) for f in base.filters):
        base.addFilter(_NoRequestBodies())
    return base


def build_web_client(token: str | None, api_url: str) -> AsyncWebClient:
    """The bot's Web API client: retries 429 (Retry-After), 500/503 and connection errors.
    Inside a running loop it gets one pooled aiohttp session (closed by its owner), also
    used for `response_url` posts: without it every call opens a new TLS connection."""
    session = None
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # built outside a loop (a test): slack_sdk makes a session per call
    else:
        session = ClientSession(connector=TCPConnector(limit=256))
    return AsyncWebClient(
        token=token,
        base_url=api_url,
        timeout=WEB_API_TIMEOUT_SECONDS,
        retry_handlers=retry_handlers(),
        session=session,
    )


#: the events whose listener records work (or ignores the event without writing anything)
_RECORDING_EVENTS = frozenset({"app_mention", "message"})


def claims_with_its_record(body: dict[str, Any]) -> bool:
    """Whether this delivery's listener claims it with its work record (`WorkLog.accept`),
    so the middleware must not claim it first: commands, mentions, DMs, channel messages."""
    if isinstance(body.get("command"), str):
        return True
    event = body.get("event")
    return isinstance(event, dict) and event.get("type") in _RECORDING_EVENTS


def build_bolt_app(deps: SlackDeps, client: AsyncWebClient) -> AsyncApp:
    """The Bolt app with every listener registered. Building it makes no Slack call."""
    token = client.token
    # give Bolt a token-less client so it takes our `authorize` (cached auth.test) without
    # a warning; the token goes back on right after
    client.token = None
    app = AsyncApp(
        logger=_bolt_logger(),
        name="gdocs-bot",
        client=client,
        signing_secret=deps.config.signing_secret,
        authorize=deps.identity.authorizer(client, token or ""),
        # Socket Mode requests are not signed (Bolt skips them anyway)
        request_verification_enabled=not deps.config.socket_mode,
        # listeners ack and hand their work to deps.inflight themselves: with False, Bolt
        # would poll every 10 ms for the ack (a 10 ms floor under every acknowledgement)
        process_before_response=True,
        user_facing_authorize_error_message=AUTHORIZE_FAILED,
    )
    client.token = token

    async def drop_repeated_deliveries(
        body: dict[str, Any], next_: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        key = delivery_key(body)
        if key is None or claims_with_its_record(body):
            # the listener claims the delivery and records its work in one store write
            # (`WorkLog.accept`); a message it ignores needs no claim
            await next_()
            return None
        if not await deps.work.claim(key):
            duplicate(deps.metrics)
            return BoltResponse(status=200, body="")
        await next_()  # the listener records its work (under this claim) and acks
        return None

    app.use(drop_repeated_deliveries)
    for listeners in (commands, shortcuts, events, actions):
        listeners.register(app, deps)
    return app
