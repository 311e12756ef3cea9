"""Answering one question, whichever surface it came from (command, mention, DM): route →
rate limit → progress → upstream → rendered answer (or a short reason). Each flow returns
the request's `Outcome`; the boundary logs it."""

from __future__ import annotations

import logging

from aiohttp import ClientError
from slack_sdk.errors import SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import ErrorCode, GdocsError
from bot.models import Answer
from bot.names import normalize_doc_ref
from bot.render import (
    render_answer,
    render_error,
    render_help,
    render_progress,
    render_rate_limited,
)
from bot.slack.boundary import DEVELOPER_KNOWLEDGE, Outcome
from bot.slack.deps import SlackDeps
from bot.slack.replies import Reply
from bot.slack.routing import Route
from bot.slack.show_doc import FIRST_PAGE, fetch_document, show_document
from bot.slack.state import UserProfile

logger = logging.getLogger(__name__)


async def answer_question(
    deps: SlackDeps,
    reply: Reply,
    route: Route,
    *,
    question: str,
    name_asker: bool,
    command: str = "/gdocs",
) -> Outcome:
    """Answer `question` (already routed) through `reply`."""
    logger.debug("question routed", extra={"question": question})
    if route.kind == "help":
        await reply.notify_thread(render_help(command))
        return Outcome(route="help", outcome="help")
    if reply.user is not None:
        retry_after = await deps.limiter.try_acquire(reply.user)
        if retry_after is not None:
            await reply.notify_asker(render_rate_limited(deps.limiter.per_minute, retry_after))
            return Outcome(route=route.kind, outcome="rate_limited")
    await reply.start_progress(render_progress(question))
    server = "pay" if route.kind == "pay" and deps.service.pay_configured else DEVELOPER_KNOWLEDGE
    try:
        if route.kind == "doc":
            doc = await fetch_document(deps, normalize_doc_ref(route.query))
            outcome = await show_document(deps, reply, doc, page=FIRST_PAGE)
            return Outcome(route="doc", outcome=outcome, server=server, tool="get_documents")
        result = await _ask(deps, reply, route)
        await _deliver_answer(deps, reply, route, result, question if name_asker else None)
        return Outcome(
            route=route.kind,
            outcome="ok_with_note" if result.fallback else "ok",
            server="pay" if result.kind == "pay" else DEVELOPER_KNOWLEDGE,
            tool=result.tool or "-",
        )
    except GdocsError as error:
        # a problem with what was asked is the asker's business; an outage, the thread's
        if error.code is ErrorCode.INVALID_INPUT:
            await reply.notify_asker(render_error(error))
        else:
            await reply.notify_thread(render_error(error))
        return Outcome(route=route.kind, outcome=error.code.value, server=server)
    finally:
        await reply.finish()


async def _deliver_answer(
    deps: SlackDeps, reply: Reply, route: Route, result: Answer, shown_question: str | None
) -> None:
    asker = reply.user if shown_question is not None else None
    posted_ts = await reply.deliver(render_answer(result, asker=asker, question=shown_question))
    root = reply.thread_ts or posted_ts
    if reply.channel and root:
        await deps.threads.remember(reply.channel, root, route.topic or route.query)


async def _ask(deps: SlackDeps, reply: Reply, route: Route) -> Answer:
    service = deps.service
    if route.kind == "search":
        return await service.search(route.query)
    if route.kind == "pay":
        language = None
        if service.pay_configured and reply.user:
            client = reply.client
            language = await deps.profiles.locale(reply.user, lambda u: user_profile(client, u))
        return await service.pay(route.query, language)
    return await service.ask(route.query, asker=reply.user)


async def user_profile(client: AsyncWebClient, user: str) -> UserProfile | None:
    """The user's Slack locale (`it-IT`) and time zone, or None when Slack will not say."""
    try:
        response = await client.users_info(user=user, include_locale=True)
    except (SlackClientError, ClientError, OSError, TimeoutError) as exc:
        logger.info("users.info failed: %s", type(exc).__name__)
        return None
    info = response.get("user")
    if not isinstance(info, dict):
        return None
    locale, tz = info.get("locale"), info.get("tz")
    return UserProfile(
        locale=locale if isinstance(locale, str) else None,
        tz=tz if isinstance(tz, str) else None,
    )
