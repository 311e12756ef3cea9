"""Answering one question, whichever surface it came from (command, mention, DM)."""

from __future__ import annotations

import logging

from aiohttp import ClientError
from slack_sdk.errors import SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot.docs import Answer, normalize_doc_ref
from bot.errors import ErrorCode, GdocsError
from bot.render import render_answer, render_error, render_help, render_progress
from bot.slack import documents
from bot.slack.context import BotContext
from bot.slack.guard import RequestRecord
from bot.slack.posting import plain
from bot.slack.replies import Reply
from bot.slack.routing import Route
from bot.slack.stores import wait_message

logger = logging.getLogger(__name__)

DK = "developer_knowledge"


async def answer(
    ctx: BotContext,
    client: AsyncWebClient,
    reply: Reply,
    route: Route,
    record: RequestRecord,
    *,
    question: str,
    name_asker: bool,
    command: str = "/gdocs",
) -> None:
    """Route → rate limit → progress → upstream → rendered answer (or a short reason)."""
    record.route = route.kind
    logger.debug("question routed", extra={"request_id": record.request_id, "question": question})
    if route.kind == "help":
        record.outcome = "help"
        await reply.notice(render_help(command))
        return
    if reply.user is not None:
        retry_after = ctx.limiter.try_acquire(reply.user)
        if retry_after is not None:
            record.outcome = "rate_limited"
            await reply.notice(
                plain(wait_message(ctx.limiter.per_minute, retry_after)), private=True
            )
            return
    await reply.start_progress(render_progress(question))
    try:
        if route.kind == "doc":
            await _document(ctx, client, reply, route, record)
            return
        record.server = "pay" if route.kind == "pay" and ctx.service.pay_configured else DK
        result = await _ask(ctx, client, route, reply.user)
        record.server = "pay" if result.kind == "pay" else DK
        record.tool = result.tool or "-"
        msg = render_answer(
            result,
            asker=reply.user if name_asker else None,
            question=question if name_asker else None,
        )
        posted_ts = await reply.deliver(msg)
        root = reply.thread_ts or posted_ts
        if reply.channel and root:
            ctx.threads.remember(reply.channel, root, route.topic or route.query)
        if result.note:
            record.outcome = "ok_with_note"
    except GdocsError as error:
        record.outcome = error.code.value
        # a problem with what was asked is the asker's business; an outage, the thread's
        await reply.notice(render_error(error), private=error.code is ErrorCode.INVALID_INPUT)
    finally:
        await reply.finish()


async def _ask(ctx: BotContext, client: AsyncWebClient, route: Route, user: str | None) -> Answer:
    service = ctx.service
    if route.kind == "search":
        return await service.search(route.query)
    if route.kind == "pay":
        language = None
        if service.pay_configured and user:
            language = await ctx.locales.locale(user, lambda u: user_locale(client, u))
        return await service.pay(route.query, language)
    return await service.ask(route.query)


async def _document(
    ctx: BotContext, client: AsyncWebClient, reply: Reply, route: Route, record: RequestRecord
) -> None:
    # InvalidInput for anything that is not a doc page; NotFound (with a hint to search)
    # for a page the server does not have
    name = normalize_doc_ref(route.query)
    doc = await documents.fetch(ctx, name, record)
    await documents.show(ctx, client, reply, doc, page=documents.FIRST_PAGE, record=record)


async def user_locale(client: AsyncWebClient, user: str) -> str | None:
    """The user's Slack locale (`it-IT`), or None when Slack will not say."""
    try:
        response = await client.users_info(user=user, include_locale=True)
    except (SlackClientError, ClientError, OSError, TimeoutError) as exc:
        logger.info("users.info failed: %s", type(exc).__name__)
        return None
    info = response.get("user")
    locale = info.get("locale") if isinstance(info, dict) else None
    return locale if isinstance(locale, str) else None
