"""Getting a message in front of the asker: visibly in the channel or thread when the bot may
post there, otherwise ephemerally through the request's `response_url`.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import ClientSession
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.render import Message, with_not_in_channel_hint
from bot.slack.failures import SLACK_CALL_FAILURES

logger = logging.getLogger(__name__)

#: chat.postMessage errors that mean "the bot is not in this conversation"
CANNOT_POST = frozenset({"not_in_channel", "channel_not_found", "is_archived", "restricted_action"})


def retry_handlers(max_retries: int = 3) -> list[AsyncRetryHandler]:
    """Retry connection errors, 429 (after Retry-After) and 500/503."""
    return [
        AsyncConnectionErrorRetryHandler(max_retry_count=max_retries),
        AsyncRateLimitErrorRetryHandler(max_retry_count=max_retries),
        AsyncServerErrorRetryHandler(max_retry_count=max_retries),
    ]


def _payload(msg: Message) -> dict[str, Any]:
    payload: dict[str, Any] = {"text": msg["text"]}
    if msg.get("blocks"):
        payload["blocks"] = msg["blocks"]
    return payload


async def respond(
    response_url: str | None,
    msg: Message | None = None,
    *,
    replace_original: bool = False,
    delete_original: bool = False,
    session: ClientSession | None = None,
) -> bool:
    """POST to a `response_url` (ephemeral by default). False when it could not be delivered."""
    if not response_url:
        return False
    body: dict[str, Any] = _payload(msg) if msg is not None else {}
    body["response_type"] = "ephemeral"
    if replace_original:
        body["replace_original"] = True
    elif msg is not None:
        body["replace_original"] = False
    if delete_original:
        body["delete_original"] = True
    if msg is not None:
        body["unfurl_links"] = False
        body["unfurl_media"] = False
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


async def post(
    client: AsyncWebClient, *, channel: str, msg: Message, thread_ts: str | None = None
) -> str:
    """chat.postMessage without unfurls or link parsing; the new message's ts."""
    response = await client.chat_postMessage(
        channel=channel,
        thread_ts=thread_ts,
        unfurl_links=False,
        unfurl_media=False,
        **_payload(msg),
    )
    return str(response.get("ts", ""))


async def post_visibly(
    client: AsyncWebClient, *, channel: str, msg: Message, thread_ts: str | None = None
) -> str | None:
    """`post`, or None (nothing was shown) when the bot may not post in that conversation."""
    try:
        return await post(client, channel=channel, msg=msg, thread_ts=thread_ts)
    except SlackApiError as exc:
        error = exc.response.get("error")
        if error not in CANNOT_POST:
            raise
        logger.info("cannot post in channel (%s)", error)
        return None


async def update(client: AsyncWebClient, *, channel: str, ts: str, msg: Message) -> None:
    """chat.update: replace the bot's own message `ts` with `msg`."""
    await client.chat_update(channel=channel, ts=ts, **_payload(msg))


async def post_or_fallback(
    client: AsyncWebClient,
    *,
    channel: str | None,
    msg: Message,
    response_url: str | None,
    thread_ts: str | None = None,
    replace_original: bool = False,
) -> str | None:
    """Post visibly; if the bot may not post there, send it to the asker ephemerally with the
    hint to invite the bot. The posted message's ts, or None when it went ephemerally."""
    if channel and not response_url:
        return await post(client, channel=channel, msg=msg, thread_ts=thread_ts)
    if channel:
        ts = await post_visibly(client, channel=channel, msg=msg, thread_ts=thread_ts)
        if ts is not None:
            return ts
    await respond(
        response_url,
        with_not_in_channel_hint(msg),
        replace_original=replace_original,
        session=client.session,
    )
    return None


async def post_ephemeral(
    client: AsyncWebClient,
    *,
    channel: str | None,
    user: str | None,
    msg: Message,
    thread_ts: str | None = None,
    response_url: str | None = None,
) -> bool:
    """chat.postEphemeral to one user, or the response_url when that is not possible."""
    if channel and user:
        try:
            await client.chat_postEphemeral(
                channel=channel, user=user, thread_ts=thread_ts, **_payload(msg)
            )
            return True
        except SlackApiError as exc:
            logger.info("chat.postEphemeral failed: %s", exc.response.get("error"))
    return await respond(response_url, msg, session=client.session)


async def react(client: AsyncWebClient, *, channel: str, ts: str, name: str, add: bool) -> None:
    """Add or remove a reaction; a progress signal, so failures are only logged."""
    try:
        if add:
            await client.reactions_add(channel=channel, timestamp=ts, name=name)
        else:
            await client.reactions_remove(channel=channel, timestamp=ts, name=name)
    except SLACK_CALL_FAILURES as exc:
        logger.debug("reaction %s failed: %s", "add" if add else "remove", type(exc).__name__)
