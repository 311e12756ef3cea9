"""The Web API and `response_url` calls a reply makes, and a command's ack, used once."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import ClientSession
from slack_bolt.async_app import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.render import Message
from bot.slack import SLACK_CALL_FAILURES

logger = logging.getLogger(__name__)

#: chat.postMessage errors that mean "the bot is not in this conversation"
CANNOT_POST = frozenset({"not_in_channel", "channel_not_found", "is_archived", "restricted_action"})


def retry_handlers(max_retries: int = 3) -> list[AsyncRetryHandler]:
    return [
        AsyncConnectionErrorRetryHandler(max_retry_count=max_retries),
        AsyncRateLimitErrorRetryHandler(max_retry_count=max_retries),
        AsyncServerErrorRetryHandler(max_retry_count=max_retries),
    ]


_NO_UNFURLS: dict[str, Any] = {"unfurl_links": False, "unfurl_media": False}


def payload(msg: Message) -> dict[str, Any]:
    return {"text": msg["text"], **({"blocks": msg["blocks"]} if msg.get("blocks") else {})}


def why(exc: BaseException) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error") or "slack_error")
    return type(exc).__name__


class OnceAck:
    """Bolt's `ack`, used once: by the first reply, or empty if none came in time."""

    def __init__(self, ack: AsyncAck | None) -> None:
        self._ack = ack
        self._claimed = ack is None
        self.done = asyncio.Event()

    async def __call__(self, msg: Message | None = None) -> bool:
        if self._claimed or self._ack is None:
            return False
        self._claimed = True  # before any await: two callers cannot both acknowledge
        try:
            if msg is None:
                await self._ack()
            else:
                await self._ack(**payload(msg), response_type="ephemeral", **_NO_UNFURLS)
        finally:
            self.done.set()
        return True


async def respond(
    response_url: str | None,
    msg: Message | None = None,
    *,
    replace_original: bool = False,
    delete_original: bool = False,
    session: ClientSession | None = None,
) -> bool:
    if not response_url:
        return False
    body: dict[str, Any] = {"response_type": "ephemeral"}
    if msg is not None:
        body |= payload(msg) | _NO_UNFURLS
    if replace_original or msg is not None:
        body["replace_original"] = replace_original
    if delete_original:
        body["delete_original"] = True
    webhook = AsyncWebhookClient(
        url=response_url, timeout=10, retry_handlers=retry_handlers(), session=session
    )
    try:
        response = await webhook.send_dict(body)
    except SLACK_CALL_FAILURES as exc:
        logger.warning("response_url post failed: %s", type(exc).__name__)
        return False
    if response.status_code != 200:
        logger.warning("response_url post refused: HTTP %s", response.status_code)
        return False
    return True


async def post_visibly(
    client: AsyncWebClient,
    *,
    channel: str,
    msg: Message,
    thread_ts: str | None = None,
    strict: bool = False,
) -> str | None:
    """chat.postMessage's ts; None when the bot may not post there (`strict`: raise)."""
    try:
        response = await client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, **_NO_UNFURLS, **payload(msg)
        )
    except SlackApiError as exc:
        error = exc.response.get("error")
        if strict or error not in CANNOT_POST:
            raise
        logger.info("cannot post in channel (%s)", error)
        return None
    return str(response.get("ts", ""))


async def post_ephemeral(
    client: AsyncWebClient,
    *,
    channel: str | None,
    user: str | None,
    msg: Message,
    thread_ts: str | None = None,
    response_url: str | None = None,
) -> bool:
    if channel and user:
        try:
            await client.chat_postEphemeral(
                channel=channel, user=user, thread_ts=thread_ts, **payload(msg)
            )
            return True
        except SlackApiError as exc:
            logger.info("chat.postEphemeral failed: %s", exc.response.get("error"))
    return await respond(response_url, msg, session=client.session)
