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

from bot.settings import Settings
from bot.slack import actions, commands, events
from bot.slack.context import BotContext
from bot.slack.posting import retry_handlers

logger = logging.getLogger(__name__)

AUTHORIZE_FAILED = (
    "I can't confirm my Slack credentials right now (auth.test failed). "
    "Try again in a moment; if it keeps happening, an admin should check SLACK_BOT_TOKEN."
)
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


def build_web_client(settings: Settings) -> AsyncWebClient:
    """The bot's Web API client: retries 429 (Retry-After), 500/503 and connection errors.

    Inside a running loop it gets one pooled aiohttp session (closed by its owner through
    `client.session`), also used for `response_url` posts: without it slack_sdk opens a new
    connection, with its TLS handshake, for every call.
    """
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    session = None
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # built outside a loop (a test): slack_sdk makes a session per call
    else:
        session = ClientSession(connector=TCPConnector(limit=256))
    return AsyncWebClient(
        token=token,
        base_url=str(settings.slack_api_url),
        timeout=WEB_API_TIMEOUT_SECONDS,
        retry_handlers=retry_handlers(),
        session=session,
    )


def dedupe_key(body: dict[str, Any]) -> str | None:
    """What identifies one delivery: the event id, or the trigger id of a command or click."""
    event_id = body.get("event_id")
    if isinstance(event_id, str) and event_id:
        return f"event:{event_id}"
    trigger_id = body.get("trigger_id")
    if isinstance(trigger_id, str) and trigger_id:
        return f"trigger:{trigger_id}"
    return None


def build_bolt_app(ctx: BotContext, *, client: AsyncWebClient | None = None) -> AsyncApp:
    """The Bolt app with every listener registered. Building it makes no Slack call."""
    settings = ctx.settings
    client = client or build_web_client(settings)
    token = client.token
    # give Bolt a token-less client so it takes our `authorize` (cached auth.test) without
    # a warning; the token goes back on right after
    client.token = None
    signing_secret = (
        settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    )
    app = AsyncApp(
        logger=_bolt_logger(),
        name="gdocs-bot",
        client=client,
        signing_secret=signing_secret,
        authorize=ctx.identity.authorizer(client, token or ""),
        # Socket Mode requests are not signed (Bolt skips them anyway)
        request_verification_enabled=not settings.socket_mode,
        # listeners ack and hand their work to ctx.inflight themselves: with False, Bolt
        # would poll every 10 ms for the ack (a 10 ms floor under every acknowledgement)
        process_before_response=True,
        user_facing_authorize_error_message=AUTHORIZE_FAILED,
    )
    client.token = token

    async def answer_once(
        body: dict[str, Any], next_: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        key = dedupe_key(body)
        if key is not None and not await ctx.dedupe.first_time(key):
            logger.info(
                "duplicate delivery ignored", extra={"kind": "dedupe", "outcome": "duplicate"}
            )
            ctx.metrics.request("dedupe", "duplicate")
            return BoltResponse(status=200, body="")
        await next_()
        return None

    app.use(answer_once)
    commands.register(app, ctx)
    events.register(app, ctx)
    actions.register(app, ctx)
    return app
